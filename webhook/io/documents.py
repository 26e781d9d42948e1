"""From paths or bytes to documents: file discovery and bounded reading (`files`), YAML or JSON parsing,
`List` expansion. Problems are values (`DocumentError`) carrying file and line; nothing an input holds
raises out of `parse` or `parse_bytes`. A document that is a list or a scalar (a JSON array, an Ansible
playbook) is not a Kubernetes object and not an error either: a `Document` with `not_object` set and an
empty `obj` (callers skip and count it, see `not_an_object`).

    parse(text, source, expired=None)        # one file's text → documents and errors, in order
    parse_bytes(body, "<request>")           # a request body: size cap, UTF-8, then parse (for the server)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webhook.io.fastyaml import load_documents
from webhook.io.files import (
    HELM_CHART_FILE,
    MANIFEST_SUFFIXES,
    MAX_FILE_BYTES,
    MAX_REQUEST_BYTES,
    STDIN,
    Discovery,
    HelmChart,
    InputFileError,
    Skipped,
    UnreadableInput,
    decode_text,
    discover,
    discover_all,
    read_bytes,
    read_text,
)
from webhook.io.jsonload import read_stream
from webhook.io.unrendered import Marked, Template, split_templates
from webhook.io.unrendered import message as template_message
from webhook.io.yamlload import RawDocument, YamlError, YamlIssue
from webhook.model.keys import builtin_kind

__all__ = [
    "MANIFEST_SUFFIXES",
    "MAX_FILE_BYTES",
    "MAX_REQUEST_BYTES",
    "STDIN",
    "Discovery",
    "Document",
    "DocumentError",
    "HelmChart",
    "InputFileError",
    "Skipped",
    "UndecodableInput",
    "UnreadableInput",
    "discover",
    "discover_all",
    "not_an_object",
    "parse",
    "could_be_manifest",
    "parse_bytes",
    "read_bytes",
    "read_text",
]

UndecodableInput = InputFileError  # the name callers knew: a file that was read but cannot be used


@dataclass
class Document:
    source: str
    line: int
    obj: dict[str, Any]
    issues: list[YamlIssue] = field(default_factory=list)  # duplicate keys and the like
    root_line: int = 0  # the line of its document's first node (a List's, for an item); 0 = `line`
    prefix: str = ""  # its path in that document: "items[3]." for an item of a List
    not_object: str = ""  # what the document is when it is no object ("a list"); `obj` is then {}
    template: Template | None = None  # a template marker in a document that parses all the same


def not_an_object(doc: Document) -> str:
    """Why `doc` is not a Kubernetes object, or "" when it is one (or a broken one, which gets findings).

    Not objects: a list or a scalar; a mapping with neither `apiVersion` nor `kind` (CI configuration,
    Helm values, docker-compose, OpenAPI, tsconfig); a Helm `Chart.yaml` (its `apiVersion: v2` is the
    chart's, it has no `kind`); a `kind` that is not one of the API server's own without an `apiVersion`
    (a kustomization.yaml, kube-state-metrics' CustomResourceStateMetrics: with no apiVersion not even a
    custom resource); one of the two without `metadata` either (kwok's stage data `kind: Node`, a Helm
    repository's index.yaml `apiVersion: v1`). Any other mapping with one of the two is a manifest
    missing the other."""
    if doc.not_object:
        return doc.not_object
    return mapping_not_an_object(doc.obj, doc.source)


def mapping_not_an_object(obj: dict[str, Any], source: str = "") -> str:
    """`not_an_object` of a mapping read from `source` (a document's, or an item of a bare list)."""
    # a key without a value is not there (`kind:` left empty: istio's release-notes template)
    has_version, has_kind = obj.get("apiVersion") is not None, obj.get("kind") is not None
    if has_version and has_kind:
        return ""
    if not has_version and not has_kind:
        return "no apiVersion and kind"
    if not has_kind and os.path.basename(source) == HELM_CHART_FILE:
        return "a Helm chart's Chart.yaml"
    if "metadata" not in obj:
        return "apiVersion or kind without the other and without metadata: another tool's data"
    kind = obj.get("kind")
    if not has_version and isinstance(kind, str) and kind and not builtin_kind(kind):
        return f"kind {kind} without apiVersion: another tool's configuration"
    return ""


# `apiVersion` anywhere in a text, or `kind` where a key starts (a line, after `- `, `{` or `,`, quoted or
# not; a colon after it or not: `kind Pod` is a broken manifest all the same)
_MANIFEST_KEY = re.compile(r"""apiVersion|(?:^|[{,]|-\s)\s*["']?kind\b""", re.MULTILINE)


def could_be_manifest(text: str) -> bool:
    """Whether a text that does not parse could hold a Kubernetes object: one that names neither an
    `apiVersion` nor a `kind` key anywhere cannot (every object has both; so has a List) — another tool's
    file with its own syntax: a tsconfig.json with comments, a broken CI configuration, a dashboard
    export with a licence header."""
    return _MANIFEST_KEY.search(text) is not None


@dataclass
class DocumentError:
    """A document or file that could not be parsed (reported as an error at file:line)."""

    source: str
    line: int
    message: str
    rule: str = "input.parse"


_LEADING_SPACE = re.compile(r"\s*")
_ITEM_PATH = re.compile(r"items\[(\d+)\]\.")


CUT_SHORT = "input.not-checked"  # the rule of the DocumentError `parse` ends with when `expired()`


FOREIGN = "another tool's file: it does not parse and names no apiVersion or kind"
FOREIGN_TEMPLATE = "another tool's template: it names no apiVersion or kind"


def parse(
    text: str, source: str, expired: Callable[[], bool] | None = None, *, foreign: bool = True
) -> Iterator[Document | DocumentError]:
    """Documents of one file, read as kubectl reads it whatever its suffix: JSON values, then YAML, for a
    text starting with `{` (`jsonload.read_stream`); YAML otherwise.
    `expired()` is asked between documents (empty ones included, which yield nothing): once it is
    true, parsing stops with a `DocumentError` of rule CUT_SHORT at the line reached.
    `foreign`: a syntax failure (not one of the reader's bounds: depth, aliases, digits) in a text that
    cannot hold a Kubernetes object (`could_be_manifest`) is a document that is no object (FOREIGN: a
    tsconfig.json with comments, a broken CI configuration), skipped and counted like the other files of
    other tools; False for a request body, which is an object or an error."""
    original = text

    def others(raw: YamlError) -> bool:
        return foreign and not raw.bounded and not could_be_manifest(original)

    try:
        json_error: YamlError | None = None  # the JSON error that stands for the YAML rest's first failure
        start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
        if text.startswith("{", start):  # as kubectl: JSON values, then perhaps YAML (jsonload.read_stream)
            stream = read_stream(text)
            for raw in stream.documents:
                if expired is not None and expired():
                    yield _cut_short(source, raw)
                    return
                yield from _document(source, raw, None, others)
            if stream.yaml_from is None:
                return
            if stream.documents or source.endswith(".json"):
                json_error = stream.error
            text = "\n" * text.count("\n", 0, stream.yaml_from) + text[stream.yaml_from :]  # lines kept
        text, template, marked = split_templates(text)
        if template is not None and foreign and not could_be_manifest(original):
            # another tool's template (an Envoy bootstrap, an operator's config, a Pod spec fragment
            # that a program fills in): no apiVersion or kind anywhere, so no manifest when rendered either
            yield Document(source, template.line, {}, not_object=FOREIGN_TEMPLATE)
        elif template is not None:  # one finding for the file: render it first
            yield DocumentError(source, template.line, template_message(template), "input.template")
        for raw in load_documents(text):
            if expired is not None and expired():
                yield _cut_short(source, raw)
                return
            if json_error is not None:  # the YAML rest's first document: the JSON error if it fails
                raw = json_error if _not_an_object(raw) else raw
                json_error = None
            yield from _document(source, raw, _marker_of(raw, marked), others)
    except (RecursionError, MemoryError) as e:  # a bound draguard missed: still an error on this file
        yield DocumentError(
            source, 1, f"draguard could not read this file ({type(e).__name__}): please report it"
        )


def body_text(data: bytes, max_bytes: int = MAX_REQUEST_BYTES) -> str | None:
    """The text `parse_bytes` reads from `data`, or None when it reads none (too large, not UTF-8): kept
    by callers that find the lines of findings afterwards."""
    if len(data) > max_bytes:
        return None
    try:
        return decode_text(data, "<request>")
    except InputFileError:
        return None


def parse_bytes(
    data: bytes, source: str = "<request>", max_bytes: int = MAX_REQUEST_BYTES
) -> list[Document | DocumentError]:
    """Documents of a request body (or any bytes) with the bounds of a file: at most `max_bytes`, UTF-8,
    then `parse` (a list or scalar document is an error here: `_as_request`). Never raises for what the
    bytes hold."""
    if len(data) > max_bytes:
        return [
            DocumentError(
                source,
                1,
                f"the body has {len(data)} bytes, more than the limit of {max_bytes}",
                "input.too-large",
            )
        ]
    try:
        text = decode_text(data, source)
    except InputFileError as e:
        return [DocumentError(source, 1, str(e), e.rule)]
    return [_as_request(d) for d in parse(text, source, foreign=False)]


def _as_request(doc: Document | DocumentError) -> Document | DocumentError:
    """A request body's document: a list or scalar is no skipped file of a repository but a request the
    API server rejects (it decodes an object), so an error as it was before files could hold such."""
    if isinstance(doc, Document) and doc.not_object:
        return DocumentError(
            doc.source,
            doc.line,
            f"document is {doc.not_object}, not a Kubernetes object (apiVersion, kind, ...)",
        )
    return doc


def _not_an_object(raw: RawDocument | YamlError) -> bool:
    """A YAML error, or a document that is a scalar or a list (kubectl fails on both)."""
    return isinstance(raw, YamlError) or not isinstance(raw.data, dict | None)


def _cut_short(source: str, raw: RawDocument | YamlError) -> DocumentError:
    return DocumentError(source, raw.line, "the deadline passed while this file was read", CUT_SHORT)


def _marker_of(raw: RawDocument | YamlError, marked: list[Marked]) -> Template | None:
    for m in marked:
        if m.first_line <= raw.line <= m.last_line:
            return m.marker
    return None


def _document(
    source: str,
    raw: RawDocument | YamlError,
    template: Template | None = None,
    others: Callable[[YamlError], bool] | None = None,
) -> Iterator[Document | DocumentError]:
    if isinstance(raw, YamlError):
        if others is not None and others(raw):
            yield Document(source, raw.line, {}, not_object=FOREIGN)
        else:
            yield DocumentError(source, raw.line, raw.message)
    else:
        for doc in _expand(source, raw):
            if isinstance(doc, Document):
                doc.template = template
            yield doc


def _expand(source: str, raw: RawDocument) -> Iterator[Document | DocumentError]:
    data = raw.data
    if data is None:
        return  # empty document
    if not isinstance(data, dict):
        broken = _broken_manifest(data)
        if broken:
            yield DocumentError(source, raw.line, broken)
        else:
            yield Document(source, raw.line, {}, not_object=f"a {_jsontype(data)}")
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and "items" in data:
        if not isinstance(items, list):
            if items is not None:
                yield DocumentError(source, raw.line, f"{kind}: items must be a list, got {_jsontype(items)}")
            return
        lines = raw.item_lines or []
        by_item: dict[int, list[YamlIssue]] = {}
        for iss in raw.issues:
            m = _ITEM_PATH.match(iss.path)
            if m is not None:
                iss.path = iss.path[m.end() :]
                by_item.setdefault(int(m.group(1)), []).append(iss)
        for i, item in enumerate(items):
            line = lines[i] if i < len(lines) else raw.line
            if not isinstance(item, dict):
                yield DocumentError(source, line, f"{kind}: items[{i}] is a {_jsontype(item)}, not an object")
                continue
            yield Document(source, line, item, by_item.get(i, []), raw.line, f"items[{i}].")
        return
    yield Document(source, raw.line, data, raw.issues)


def _broken_manifest(data: Any) -> str:
    """Why a list or scalar document is a manifest gone wrong rather than some other file: a bare list of
    objects, items that `not_an_object` would take for manifests (kubectl reads a `List` or `---`-separated
    documents; items with a `kind` alone, as istio's test topologies, are another tool's), or a string
    holding `apiVersion` (a manifest whose colons are missing reads as one plain scalar). "" otherwise."""
    if isinstance(data, list) and any(
        isinstance(item, dict) and mapping_not_an_object(item) == "" for item in data
    ):
        return (
            "document is a list of Kubernetes objects: write them as a List (apiVersion: v1, kind: List, "
            "items: [...]) or as documents separated by ---"
        )
    if isinstance(data, str) and "apiVersion" in data:
        return (
            "document is a string, not a Kubernetes object: is a `key: value` missing its colon or "
            "indentation?"
        )
    return ""


def _jsontype(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "object"
