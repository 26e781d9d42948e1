"""From paths to documents: file discovery (directories recursively, `-` for stdin), YAML or JSON
parsing, `List` expansion. Problems are values (`DocumentError`) carrying file and line."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webhook.io.fastyaml import load_documents
from webhook.io.yamlload import RawDocument, YamlError, YamlIssue

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


@dataclass
class Document:
    source: str
    line: int
    obj: dict[str, Any]
    issues: list[YamlIssue] = field(default_factory=list)  # duplicate keys and the like


@dataclass
class DocumentError:
    """A document or file that could not be parsed (reported as an error at file:line)."""

    source: str
    line: int
    message: str
    rule: str = "input.parse"


class UnreadableInput(Exception):
    """A path that does not exist or cannot be read: a usage error (exit 2)."""


class UndecodableInput(UnreadableInput):
    """A file that was read but is not UTF-8 text: an error on that file; the others are still checked."""

    path = ""


def discover(paths: Iterable[str]) -> list[str]:
    """Expand directories recursively into manifest files (sorted); keep files and `-` as given."""
    out: list[str] = []
    for p in paths:
        if p == STDIN:
            out.append(p)
        elif os.path.isdir(p):
            found: list[str] = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(os.path.join(root, f) for f in files if f.endswith(MANIFEST_SUFFIXES))
            out.extend(sorted(found))
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise UnreadableInput(f"{p}: no such file or directory")
    return out


def read_text(path: str) -> str:
    """The file's text (stdin for `-`); undecodable bytes are an input error, not a traceback."""
    try:
        if path == STDIN:
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise UnreadableInput(f"{path}: {e.strerror or e}") from e
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        err = UndecodableInput(f"not UTF-8 text ({e.reason} at byte {e.start}): save the file as UTF-8")
        err.path = "<stdin>" if path == STDIN else path
        raise err from e


def parse(text: str, source: str) -> Iterator[Document | DocumentError]:
    """Documents of one file; JSON files (and streams starting with `{`) take the fast JSON path."""
    stripped = text.lstrip()
    if source.endswith(".json") or stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if source.endswith(".json"):
                yield DocumentError(source, e.lineno, f"JSON syntax error: {e.msg} (column {e.colno})")
                return
        else:
            yield from _expand(source, RawDocument(1, data, []))
            return
    for raw in load_documents(text):
        if isinstance(raw, YamlError):
            yield DocumentError(source, raw.line, raw.message)
        else:
            yield from _expand(source, raw)


def _expand(source: str, raw: RawDocument) -> Iterator[Document | DocumentError]:
    data = raw.data
    if data is None:
        return  # empty document
    if not isinstance(data, dict):
        yield DocumentError(
            source,
            raw.line,
            f"document is a {_jsontype(data)}, not a Kubernetes object (apiVersion, kind, ...)",
        )
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and "items" in data:
        if not isinstance(items, list):
            if items is not None:
                yield DocumentError(source, raw.line, f"{kind}: items must be a list, got {_jsontype(items)}")
            return
        lines = raw.item_lines or []
        for i, item in enumerate(items):
            line = lines[i] if i < len(lines) else raw.line
            if not isinstance(item, dict):
                yield DocumentError(source, line, f"{kind}: items[{i}] is a {_jsontype(item)}, not an object")
                continue
            issues = [iss for iss in raw.issues if iss.path.startswith(f"items[{i}].")]
            for iss in issues:
                iss.path = iss.path[len(f"items[{i}].") :]
            yield Document(source, line, item, issues)
        return
    yield Document(source, raw.line, data, raw.issues)


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
