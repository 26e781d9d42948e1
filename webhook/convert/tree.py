"""Reshape a ruamel.yaml round-trip tree into a planned (plain) object by moving its own nodes, so comments,
quoting and key order travel with them: the YAML half of `draguard convert` (see `rewrite`).

For each mapping, the planned keys are taken in the planned order from the node itself, from a `basic`
mapping the plan dissolves (v1beta1 devices), or gathered into a new `exactly` mapping (v1beta1
requests); keys the plan drops go, their comments kept before the next key. Moved subtrees have their
full-line comments re-indented by the level they moved. The only scalar changed is `apiVersion` (in its
quoting style); every other scalar is kept as written. The caller checks the result reads back as the plan.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

DISSOLVED = "basic"  # a v1beta1 device's mapping whose fields move up a level
GATHERED = "exactly"  # a v1 request's mapping whose fields come from the level above
API_VERSION = "apiVersion"  # the only scalar a conversion changes


def apply(tree: Any, planned: Any, indent: int) -> Any:
    """`tree` reshaped in place into `planned` (returns the new root when the root itself is replaced)."""
    return _reshape(tree, planned, indent)


def _reshape(node: Any, planned: Any, indent: int) -> Any:
    """Collections are reshaped; scalars are kept as written (the plan moves values, never changes them:
    a plain `n` or `010` must stay what kubectl's YAML 1.1 reads, whatever ruamel's YAML 1.2 thinks)."""
    if isinstance(node, CommentedMap) and isinstance(planned, dict):
        _reshape_map(node, planned, indent)
        return node
    if isinstance(node, CommentedSeq) and isinstance(planned, list) and len(node) == len(planned):
        for i, p in enumerate(planned):
            node[i] = _reshape(node[i], p, indent)
        return node
    return node


def _replace_scalar(node: Any, planned: Any) -> Any:
    """A scalar the plan changes (apiVersion), in the quoting style it was written in."""
    if isinstance(node, str) and isinstance(planned, str):
        return type(node)(planned) if type(node) is not str else planned
    return planned


def _reshape_map(node: CommentedMap, planned: dict[str, Any], indent: int) -> None:
    basic = node.get(DISSOLVED) if DISSOLVED not in planned else None
    if not isinstance(basic, CommentedMap):
        basic = None
    entries: list[tuple[Any, Any, Any]] = []  # key, value, comment entry
    used: set[Any] = set()
    for key, want in planned.items():
        if key in node and not (key == GATHERED and not isinstance(node[key], CommentedMap)):
            value = node[key]
            if key == API_VERSION and value != want:
                value = _replace_scalar(value, want)
            entries.append((key, _reshape(value, want, indent), node.ca.items.get(key)))
            used.add(key)
        elif key == GATHERED and isinstance(want, dict) and all(k in node for k in want):
            gathered = CommentedMap()
            for k, w in want.items():
                value = _reshape(node[k], w, indent)
                ca = node.ca.items.get(k)
                _reindent(indent, ca, value)
                gathered[k] = value
                if ca is not None:
                    gathered.ca.items[k] = ca
                used.add(k)
            entries.append((key, gathered, None))
        elif basic is not None and key in basic:
            value = _reshape(basic[key], want, indent)
            ca = basic.ca.items.get(key)
            _reindent(-indent, ca, value)
            entries.append((key, value, ca))
        else:
            entries.append((key, want, None))
    carried = _comment_lines(node.ca.items.get(DISSOLVED)) if basic is not None else []
    for key in node:
        if key not in used and key != DISSOLVED:
            carried.extend(_comment_lines(node.ca.items.get(key)))
    column = node.lc.col if node.lc.col is not None else 0
    for key in list(node):
        del node[key]
    node.ca.items.clear()
    for key, value, ca in entries:
        node[key] = value
        if ca is not None:
            node.ca.items[key] = ca
    if carried and entries:
        _comment_after(node, entries, carried, column)


def _comment_lines(entry: Any) -> list[str]:
    """The comment texts of a key's comment entry (its end-of-line comment and the lines after it)."""
    out: list[str] = []
    for token in _tokens(entry):
        for line in token.value.split("\n"):
            line = line.strip()
            if line.startswith("#"):
                out.append(line[1:].lstrip() if line.startswith("# ") else line[1:])
    return out


def _comment_after(
    node: CommentedMap, entries: list[tuple[Any, Any, Any]], lines: list[str], column: int
) -> None:
    """Put `lines` as full-line comments after the first key whose value is a scalar (before the next
    key), or before the first key."""
    text = "".join(" " * column + "# " + line + "\n" for line in lines)
    for key, value, _ in entries:
        if not isinstance(value, (CommentedMap, CommentedSeq)):
            entry = node.ca.items.setdefault(key, [None, None, None, None])
            token = entry[2]
            if token is None:
                entry[2] = CommentToken("\n" + text, CommentMark(0), None)
            else:
                token.value = token.value + text
            return
    first = entries[0][0]
    node.yaml_set_comment_before_after_key(first, before="\n".join(lines), indent=column)


def _tokens(entry: Any) -> list[CommentToken]:
    """Every comment token in a ruamel comment entry (nested lists of tokens)."""
    out: list[CommentToken] = []
    stack = [entry]
    while stack:
        item = stack.pop()
        if isinstance(item, CommentToken):
            out.append(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


def _shift(token: CommentToken, delta: int) -> None:
    """Re-indent the full-line comments of a token (its first line is an end-of-line comment or empty)."""
    first, sep, rest = token.value.partition("\n")
    if not sep:
        return
    lines = []
    for line in rest.split("\n"):
        if line.strip():
            if delta < 0:
                cut = min(-delta, len(line) - len(line.lstrip(" ")))
                line = line[cut:]
            else:
                line = " " * delta + line
        lines.append(line)
    token.value = first + "\n" + "\n".join(lines)


def _reindent(delta: int, entry: Any, node: Any) -> None:
    """Re-indent by `delta` columns every comment of a moved key: its own comment entry and every comment
    inside its value (each token once: ruamel shares some between a key and its flow-style value)."""
    seen: set[int] = set()
    entries = [entry]
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (CommentedMap, CommentedSeq)):
            entries.extend(n.ca.items.values())
            entries.extend(e for e in (n.ca.comment, n.ca.end) if e)
            stack.extend(n.values() if isinstance(n, CommentedMap) else n)
    for e in entries:
        _reindent_entry(e, delta, seen)


def _reindent_entry(entry: Any, delta: int, seen: set[int]) -> None:
    """Tokens directly in a comment entry carry following full-line comments in their text; tokens in a
    nested list are full-line comments before a node, placed by their column."""
    items = entry if isinstance(entry, list) else [entry]
    for item in items:
        if isinstance(item, CommentToken):
            if id(item) in seen:
                continue
            seen.add(id(item))
            _shift(item, delta)
            column = getattr(item.start_mark, "column", None)
            if item.value.startswith("#") and isinstance(column, int):  # an end-of-line comment moves along
                item.start_mark = CommentMark(max(0, column + delta))  # type: ignore[assignment]
        elif isinstance(item, list):
            for token in _tokens(item):
                if id(token) in seen:
                    continue
                seen.add(id(token))
                column = getattr(token.start_mark, "column", None)
                if isinstance(column, int):
                    token.start_mark = CommentMark(max(0, column + delta))  # type: ignore[assignment]
