"""`draguard convert --to v1`: one file's text with its resource.k8s.io beta/alpha objects rewritten as
v1, everything else kept byte for byte.

- YAML: the stream is cut into its `---` pieces (as `webhook.io.yamlload` reads them); a piece without a
  convertible object is kept as it is. One whose only change is `apiVersion` gets that line rewritten in
  place; others (v1beta1 devices and requests, Lists) are re-emitted by a round-trip YAML library
  (ruamel.yaml) with comments, key order, quoting and the piece's indentation kept.
- JSON: a value with a convertible object is re-serialised (key order and indentation kept; JSON has no
  comments); other values are kept as they are.

What each object becomes is decided by the pure `webhook.convert.to_v1` on the object as kubectl reads
it; the rewritten text is read back the same way and must give exactly that, or the file is left alone
with an error (so a YAML 1.1 subtlety such as `on`/`010` can never change meaning silently). A file with
any error (syntax, duplicate keys, an unconvertible object) is not changed at all.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.convert import V1, convertible, to_v1, version_of
from webhook.convert.served import LIFECYCLE
from webhook.io.jsonload import load_json_values
from webhook.io.yamlload import RawDocument, YamlError, load_pieces, pieces_of
from webhook.model.plain import deep_equal, json_dumps, nested_deeper

ROUNDTRIP_DEPTH = 200  # nesting the comment-preserving round trip (ruamel.yaml, recursive) is given
_TOO_DEEP = (
    f"this document nests more than {ROUNDTRIP_DEPTH} levels, deeper than draguard rewrites YAML preserving "
    "comments: convert it by hand, or convert its JSON form"
)
MAX_DOCUMENT_BYTES = 16 << 20  # largest document re-emitted by the round-trip library (the API takes 3 MiB)
_MARKER_LINE = re.compile(r"---[ \t]*(?:#[^\n]*)?(?:\n|$)")
_HINTS = ("resource.k8s.io/v1beta", "resource.k8s.io/v1alpha")


@dataclass
class Problem:
    line: int
    message: str


@dataclass
class FileConversion:
    """What converting one file's text gave: the new text (None when nothing changed or on errors), the
    objects converted per source apiVersion, and the problems (any: the file must not be changed)."""

    text: str | None = None
    converted: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)  # left as they are, on purpose
    cut: bool = False  # the deadline passed before the file was done: nothing changed


class _Unconvertible(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


# -- what an object becomes (plain data) ---------------------------------------------------------------


def _plan(data: Any, counts: dict[str, int], notes: list[str]) -> Any:
    """The document `data` (plain, as kubectl reads it) with every convertible object converted, or
    `data` itself (the same object) when nothing changes. Raises _Unconvertible."""
    if not isinstance(data, dict):
        return data
    kind, api_version = data.get("kind"), data.get("apiVersion")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        new_items = []
        for i, item in enumerate(items):
            try:
                new_items.append(_plan(item, counts, notes))
            except _Unconvertible as e:
                raise _Unconvertible(f"items[{i}]" + ("." + e.path if e.path else ""), e.message) from None
        changed = any(a is not b for a, b in zip(items, new_items, strict=True))
        list_version = version_of(api_version)
        if list_version not in (None, "v1") and kind[: -len("List")] in LIFECYCLE.get(list_version, {}):
            if not convertible(api_version, kind[: -len("List")]):
                raise _Unconvertible("apiVersion", _no_conversion(str(api_version), kind))
            changed = True
        if not changed:
            return data
        out = dict(data)
        if list_version not in (None, "v1"):
            out["apiVersion"] = V1
        out["items"] = new_items
        return out
    version = version_of(api_version)
    if version is None or version == "v1":
        return data
    if not isinstance(kind, str):
        raise _Unconvertible("kind", "an object without kind cannot be converted")
    if not convertible(api_version, kind):
        if kind in LIFECYCLE.get(version, {}):  # an alpha kind with no v1 (ResourcePoolStatusRequest)
            notes.append(f"{api_version} {kind} has no resource.k8s.io/v1 version: left as it is")
            return data
        raise _Unconvertible("apiVersion", _no_conversion(str(api_version), kind))
    converted = to_v1(data)
    if converted.findings:
        first = converted.findings[0]
        more = f" (and {len(converted.findings) - 1} more)" if len(converted.findings) > 1 else ""
        raise _Unconvertible(
            str(first.field),
            f"{first.field}: {first.message}{more}: the API server rejects this {api_version} object; "
            "fix it first",
        )
    counts[str(api_version)] = counts.get(str(api_version), 0) + 1
    return converted.obj


def _no_conversion(api_version: str, kind: str) -> str:
    version = version_of(api_version)
    if version == "v1alpha2":
        return (
            f"{api_version} {kind} is the classic DRA API (removed in Kubernetes 1.31) and has no conversion: "
            "rewrite it for resource.k8s.io/v1 by hand"
        )
    where = [f"resource.k8s.io/{v}" for v, kinds in LIFECYCLE.items() if kind in kinds]
    if where:
        return f"{api_version} has no {kind} ({kind} exists as {', '.join(where)}): fix apiVersion first"
    return f"{api_version} {kind} is not a Kubernetes DRA kind draguard can convert: fix apiVersion or kind"


# -- one file --------------------------------------------------------------------------------------


def convert_text(text: str, source: str, expired: Callable[[], bool] | None = None) -> FileConversion:
    """Convert one file's text (`source` names it: `.json` files take the JSON path, as when reading).
    `expired()` is asked between documents: once true, the file is given up (`cut`, nothing changed)."""
    start = len(text) - len(text.lstrip())
    if source.endswith(".json") or text.startswith("{", start):
        out = _convert_json(text)
        if out is not None:
            return out
    return _convert_yaml(text, expired)


def _convert_yaml(text: str, expired: Callable[[], bool] | None) -> FileConversion:
    result = FileConversion()
    pieces = pieces_of(text)
    parts: list[str] = []
    changed = False
    for start, stop, line0 in pieces:
        if expired is not None and expired():
            return FileConversion(cut=True, problems=[Problem(line0 + 1, "the deadline passed here")])
        piece = text[start:stop]
        if not any(h in piece for h in _HINTS):
            parts.append(piece)
            continue
        raws = list(load_pieces(text, [(start, stop, line0)]))
        new_piece = _convert_piece(piece, line0, raws, result)
        parts.append(piece if new_piece is None else new_piece)
        changed = changed or new_piece is not None
    if changed and not result.problems:
        result.text = "".join(parts)
    return result


def _convert_piece(
    piece: str, line0: int, raws: list[RawDocument | YamlError], result: FileConversion
) -> str | None:
    """The piece rewritten (None: unchanged, or a problem was recorded)."""
    docs = [r for r in raws if isinstance(r, RawDocument) and r.data is not None]
    for r in raws:
        if isinstance(r, YamlError):
            result.problems.append(Problem(r.line, f"{r.message}: fix the YAML first"))
    if result.problems or len(docs) != 1:
        return None
    doc = docs[0]
    counts: dict[str, int] = {}
    notes: list[str] = []
    try:
        planned = _plan(doc.data, counts, notes)
    except _Unconvertible as e:
        result.problems.append(Problem(doc.line, e.message))
        return None
    result.notes.extend(Problem(doc.line, n) for n in notes)
    if planned is doc.data:
        return None
    if doc.issues:  # duplicate keys: kubectl rejects the document; which value counts is unclear
        issue = doc.issues[0]
        result.problems.append(Problem(issue.line, f"{issue.path}: {issue.message}: fix it first"))
        return None
    if len(piece) > MAX_DOCUMENT_BYTES:
        result.problems.append(
            Problem(
                doc.line,
                f"this document has {len(piece)} bytes, more than the {MAX_DOCUMENT_BYTES} draguard converts "
                "preserving comments: split it (a List into its items) or convert it by hand",
            )
        )
        return None
    new_piece = _api_version_only(piece, doc.data, planned)
    if new_piece is None:
        if nested_deeper(doc.data, ROUNDTRIP_DEPTH):  # ruamel recurses, and scans deep flow text slowly
            result.problems.append(Problem(doc.line, _TOO_DEEP))
            return None
        try:
            new_piece = _roundtrip(piece, planned)
        except RecursionError:
            result.problems.append(Problem(doc.line, _TOO_DEEP))
            return None
    back = [
        r
        for r in load_pieces(new_piece, pieces_of(new_piece))
        if not isinstance(r, RawDocument) or r.data is not None
    ]
    if len(back) != 1 or not isinstance(back[0], RawDocument) or not deep_equal(back[0].data, planned):
        result.problems.append(
            Problem(
                doc.line,
                "the converted text would not read back as the converted object (a YAML construct draguard "
                "cannot rewrite faithfully): convert this document by hand, or its JSON form",
            )
        )
        return None
    for version, n in counts.items():
        result.converted[version] = result.converted.get(version, 0) + n
    return new_piece


_API_VERSION_LINE = re.compile(
    r"""^(apiVersion:[ \t]*)(["']?)resource\.k8s\.io/v1(?:beta\d+|alpha\d+)\2(?=[ \t]*(?:#[^\n]*)?\r?$)""",
    re.M,
)


def _api_version_only(piece: str, data: Any, planned: Any) -> str | None:
    """The piece with its top-level apiVersion line rewritten, when that is the only change and the line
    is a plain block-style `apiVersion: ...` (else None: the round trip does it)."""
    if not isinstance(data, dict) or set(data) != set(planned):
        return None
    if any(not deep_equal(data[k], planned[k]) for k in data if k != "apiVersion"):
        return None
    found = list(_API_VERSION_LINE.finditer(piece))
    if len(found) != 1:
        return None
    m = found[0]
    quote = m.group(2)
    return piece[: m.start()] + f"{m.group(1)}{quote}{V1}{quote}" + piece[m.end() :]


# -- the round trip (ruamel.yaml) ------------------------------------------------------------------


def _roundtrip(piece: str, planned: Any) -> str:
    """Re-emit `piece` as `planned` with ruamel.yaml, moving its own nodes (comments travel with them)."""
    from ruamel.yaml import YAML

    from webhook.convert import tree as restructure

    head, tail = "", ""
    body = piece
    if piece.startswith("---"):
        m = _MARKER_LINE.match(piece)
        if m is not None:
            head, body = piece[: m.end()], piece[m.end() :]
    end = _END_LINE.search(body)
    if end is not None:  # `...` and what follows it (comments) are kept as they are
        body, tail = body[: end.start()], body[end.start() :]
    crlf = "\r\n" in body
    if crlf:  # ruamel writes "\n": the piece's CR LF line ends are put back after
        body = body.replace("\r\n", "\n")
    mapping, sequence, offset = guess_indent(body)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 30  # never fold long lines (CEL expressions)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    if head == "" and piece.startswith("---"):
        yaml.explicit_start = True  # a `---` line with content: re-emitted with the document
    tree = yaml.load(body)
    tree = restructure.apply(tree, planned, mapping)
    out = io.StringIO()
    yaml.dump(tree, out)
    text = out.getvalue()
    if not body.endswith("\n") and text.endswith("\n"):
        text = text[:-1]
    if crlf:
        text = text.replace("\n", "\r\n")
    return head + text + tail


_END_LINE = re.compile(r"^\.\.\.(?=[ \t]|$)", re.M)
_KEY_ONLY = re.compile(r"^( *)(?:[^ #\-][^#]*?|- +[^#]*?):[ \t]*(?:#.*)?$")
_ITEM = re.compile(r"^( *)- +(?=[^ #])")
_CONTENT = re.compile(r"^( *)(?=[^ #\n])")


def guess_indent(body: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) of a block-style document, for ruamel's `indent()`:
    from the first nested mapping and the first block sequence under a key; (2, 2, 0) when unknown."""
    mapping = sequence = offset = None
    parent = None  # column of the last `key:` line with nothing after the colon
    for line in body.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        column = len(line) - len(line.lstrip(" "))
        if parent is not None and column > parent:
            if item is not None and sequence is None:
                offset = column - parent
                sequence = item.end() - parent
            elif item is None and mapping is None:
                mapping = column - parent
        key = _KEY_ONLY.match(line)
        if key is not None:
            parent = item.end() if item is not None else column
        else:
            parent = None
        if mapping is not None and sequence is not None:
            break
    mapping = mapping or 2
    if sequence is None:
        offset, sequence = 0, mapping
    return mapping, max(sequence, (offset or 0) + 2), offset or 0


# -- JSON ------------------------------------------------------------------------------------------


def _convert_json(text: str) -> FileConversion | None:
    """JSON values with convertible objects re-serialised; None when the text is not JSON after all."""
    values = list(load_json_values(text))
    raws = [r for r, _ in values]
    errors = [r for r in raws if isinstance(r, YamlError)]
    result = FileConversion()
    if errors and not any(h in text for h in _HINTS):
        return result  # as a YAML piece: nothing to convert in it (a tsconfig.json with comments)
    if errors:
        result.problems.extend(Problem(e.line, f"{e.message}: fix the JSON first") for e in errors)
        return result
    pos = 0
    parts: list[str] = []
    changed = False
    ws = re.compile(r"\s*")
    for raw, end in values:
        assert isinstance(raw, RawDocument)
        begin = ws.match(text, pos).end()  # type: ignore[union-attr]
        parts.append(text[pos:begin])
        counts: dict[str, int] = {}
        notes: list[str] = []
        try:
            planned = _plan(raw.data, counts, notes)
        except _Unconvertible as e:
            result.problems.append(Problem(raw.line, e.message))
            planned = raw.data
        result.notes.extend(Problem(raw.line, n) for n in notes)
        if planned is not raw.data and raw.issues:
            issue = raw.issues[0]
            result.problems.append(Problem(issue.line, f"{issue.path}: {issue.message}: fix it first"))
        if planned is raw.data or result.problems:
            parts.append(text[begin:end])
        else:
            parts.append(_dump_json(planned, text[begin:end]))
            changed = True
            for version, n in counts.items():
                result.converted[version] = result.converted.get(version, 0) + n
        pos = end
    parts.append(text[pos:])
    if changed and not result.problems:
        result.text = "".join(parts)
    return result


def _dump_json(obj: Any, original: str) -> str:
    """`obj` as JSON in the layout of `original` (its indentation; one line if it was one line)."""
    if "\n" not in original.strip():
        return json_dumps(obj, ensure_ascii=False)
    m = re.search(r"\n([ \t]+)\S", original)
    unit = m.group(1) if m else "  "
    return json_dumps(obj, ensure_ascii=False, indent=unit)
