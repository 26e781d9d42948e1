"""YAML read the way kubectl reads it (sigs.k8s.io/yaml on go-yaml v2, i.e. YAML 1.1 scalars).

PyYAML's C parser composes the node graph; scalars are resolved with go-yaml v2's rules (so an
unquoted `y`, `n`, `yes`, `off` is a boolean, a timestamp stays a string) and the Python objects
are built by one small recursive function, which is several times faster than PyYAML's constructor.
Every document keeps the line of its first node; items of `List` documents keep their own lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
YAML11_BOOLEANS = _TRUE | _FALSE
_INT = re.compile(r"[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[1-9][0-9_]*|0)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = frozenset((".nan", ".NaN", ".NAN"))

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_IMPLICIT = "!implicit"  # our marker: resolve the scalar by its plain text when building


class _Composer(yaml.CSafeLoader):
    """The C parser/composer; tag resolution is deferred to `_scalar` (one dict lookup per scalar)."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:  # noqa: D102 - PyYAML hook
        if kind is ScalarNode:
            return _IMPLICIT if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


_scalar_cache: dict[str, Any] = {}


def _plain_scalar(text: str) -> Any:
    """go-yaml v2 resolution of a plain (unquoted) scalar."""
    v = _scalar_cache.get(text, _scalar_cache)
    if v is not _scalar_cache:
        return v
    if text in _NULL:
        v = None
    elif text in _TRUE:
        v = True
    elif text in _FALSE:
        v = False
    elif text and (text[0] in "0123456789+-."):
        v = _number(text)
    else:
        v = text
    if len(_scalar_cache) < 100_000:
        _scalar_cache[text] = v
    return v


def _number(text: str) -> Any:
    if _INT.fullmatch(text):
        t = text.replace("_", "")
        sign = -1 if t[0] == "-" else 1
        body = t.lstrip("+-")
        try:
            if body.startswith("0b"):
                return sign * int(body[2:], 2)
            if body.startswith("0x"):
                return sign * int(body[2:], 16)
            if body.startswith("0o"):
                return sign * int(body[2:], 8)
            if len(body) > 1 and body[0] == "0":
                return sign * int(body[1:], 8)
            return sign * int(body)
        except ValueError:
            return text
    if _FLOAT.fullmatch(text):
        f = float(text.replace("_", ""))
        return (
            int(f) if f.is_integer() and abs(f) < 2**63 and "." not in text and "e" not in text.lower() else f
        )
    if _INF.fullmatch(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if text in _NAN:
        return float("nan")
    return text


MAX_DEPTH = 200  # nesting levels a document may have (every downstream walk is recursive)


class NestingTooDeep(yaml.MarkedYAMLError):
    """A document nests deeper than MAX_DEPTH levels."""


@dataclass
class YamlIssue:
    """A non-fatal problem found while building a document (e.g. a duplicate key)."""

    line: int
    path: str
    message: str


@dataclass
class _Builder:
    issues: list[YamlIssue] = field(default_factory=list)
    memo: dict[int, Any] = field(default_factory=dict)

    def build(self, node: Node, path: str, depth: int = 0) -> Any:
        if type(node) is ScalarNode:
            tag = node.tag
            if tag == _IMPLICIT:
                return _plain_scalar(node.value)
            if tag == _STR or tag == "!":
                return node.value
            return self._tagged(node)
        key = id(node)
        if key in self.memo:  # an alias: the same node again
            return self.memo[key]
        if depth >= MAX_DEPTH:
            raise NestingTooDeep(
                problem=f"nested deeper than {MAX_DEPTH} levels", problem_mark=node.start_mark
            )
        depth += 1
        if type(node) is MappingNode:
            out: dict[str, Any] = {}
            self.memo[key] = out
            for knode, vnode in node.value:
                if knode.tag == "tag:yaml.org,2002:merge" or (knode.tag == _IMPLICIT and knode.value == "<<"):
                    self._merge(out, vnode, path, depth)
                    continue
                k = self.build(knode, path)
                if not isinstance(k, str):
                    k = _json_key(k)
                if k in out:
                    self.issues.append(
                        YamlIssue(
                            knode.start_mark.line + 1, f"{path}.{k}" if path else k, f'duplicate key "{k}"'
                        )
                    )
                out[k] = self.build(vnode, f"{path}.{k}" if path else k, depth)
            return out
        items: list[Any] = []
        self.memo[key] = items
        for i, item in enumerate(node.value):
            items.append(self.build(item, f"{path}[{i}]", depth))
        return items

    def _merge(self, out: dict[str, Any], vnode: Node, path: str, depth: int) -> None:
        sources = vnode.value if type(vnode) is SequenceNode else [vnode]
        for src in sources:
            merged = self.build(src, path, depth)
            if isinstance(merged, dict):
                for k, v in merged.items():
                    out.setdefault(k, v)

    def _tagged(self, node: ScalarNode) -> Any:
        tag = node.tag.rsplit(":", 1)[-1]
        text = node.value
        if tag in ("int", "float", "bool", "null"):
            v = _plain_scalar(text)
            ok = {
                "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
                "float": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
                "bool": lambda x: isinstance(x, bool),
                "null": lambda x: x is None,
            }[tag](v)
            if ok:
                return float(v) if tag == "float" else v
        return text


def _json_key(k: Any) -> str:
    """Non-string keys become strings, as in the YAML → JSON conversion kubectl does."""
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)


@dataclass
class RawDocument:
    line: int  # 1-based line of the document's first node
    data: Any
    issues: list[YamlIssue]
    item_lines: list[int] | None = None  # for `items:` of List documents


@dataclass
class YamlError:
    line: int
    message: str


_DOC_START = re.compile(r"^---", re.M)


def load_documents(text: str) -> Iterator[RawDocument | YamlError]:
    """Every document of a YAML stream; after a syntax error, resume at the next `---` line."""
    offset = 0  # line offset of `text` within the original stream
    while True:
        resume_at: int | None = None
        loader = _Composer(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                builder = _Builder()
                data = builder.build(node, "")
                item_lines = None
                if type(node) is MappingNode:
                    for knode, vnode in node.value:
                        if knode.value == "items" and type(vnode) is SequenceNode:
                            item_lines = [offset + n.start_mark.line + 1 for n in vnode.value]
                for issue in builder.issues:
                    issue.line += offset
                yield RawDocument(offset + node.start_mark.line + 1, data, builder.issues, item_lines)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line if mark is not None else 0
            msg = "; ".join(str(x) for x in (e.context, e.problem) if x)
            if isinstance(e, NestingTooDeep):
                msg = f"document is {msg}: Kubernetes objects never nest that deep; draguard does not read it"
                yield YamlError(offset + line + 1, msg)
            else:
                yield YamlError(offset + line + 1, f"YAML syntax error: {msg}")
            resume_at = _next_document_start(text, line)
        except yaml.YAMLError as e:  # reader errors: bad encoding, control characters
            yield YamlError(offset + 1, f"YAML error: {e}")
        finally:
            loader.dispose()
        if resume_at is None:
            return
        offset += text.count("\n", 0, resume_at)
        text = text[resume_at:]


def _next_document_start(text: str, after_line: int) -> int | None:
    """Character index of the first `---` line after `after_line` (0-based), or None."""
    pos = 0
    for i, line in enumerate(text.splitlines(keepends=True)):
        if i > after_line and line.startswith("---"):
            return pos
        pos += len(line)
    return None
