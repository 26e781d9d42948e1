"""The lines of fields in one JSON value of a text (a `.json` file, a stream of values, a request body):
the JSON counterpart of the libyaml walk in `fieldlines` (which reads only the first value of a stream).

Lines are counted as the JSON loader counts them (`\\n` only), so a value found here starts on the line
its object was given. Strict: a key that is not a string, or anything else that is not JSON, gives up
(False), and the caller falls back to the YAML walk.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(r'[ \t\r\n]*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|([^ \t\r\n{}\[\],:"]+))', re.S)
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.S)
_BLANK = re.compile(r"[ \t\r\n]*")
_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


def trie_child(node: Any, key: str | int) -> Any:
    """The trie node (`fieldlines._Node`) under `node` for a key or index (a key "3" also matches [3])."""
    if node is None or not node.children:
        return None
    hit = node.children.get(key)
    if hit is None and isinstance(key, str) and key.isdigit():
        hit = node.children.get(int(key))
    return hit


class LineStarts:
    """Offsets of line starts in one text, found by moving a cursor forward (the documents of a file are
    located in ascending order: one pass over the text for all of them)."""

    __slots__ = ("text", "pos", "line", "walked")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos, self.line = 0, 0
        self.walked = 0  # bytes of JSON values walked with it (what locating their fields cost)

    def offset(self, line: int) -> int:
        """Where 0-based `line` starts (len(text) when the text has fewer lines)."""
        if line < self.line:
            self.pos, self.line = 0, 0
        text = self.text
        while self.line < line:
            nl = text.find("\n", self.pos)
            if nl < 0:
                return len(text)
            self.pos, self.line = nl + 1, self.line + 1
        return self.pos


def starts_json(text: str, pos: int) -> bool:
    """Whether the first character at or after `pos` that is not blank opens a JSON object or array."""
    m = _BLANK.match(text, pos)
    return m is not None and text.startswith(("{", "["), m.end())


def walk_json(text: str, pos: int, first_line: int, root: Any) -> int:
    """Mark the trie nodes found in the JSON value that starts at offset `pos` (the start of 0-based line
    `first_line`) of `text` with their 0-based lines; the offset where the value ends, or -1 when no
    JSON object or array starts on that line or the value is not JSON."""
    at_pos, at_line = pos, first_line  # lines are counted lazily, only for the nodes marked

    def line_of(p: int) -> int:
        nonlocal at_pos, at_line
        at_line += text.count("\n", at_pos, p)
        at_pos = p
        return at_line

    stack: list[_Frame] = []
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            return -1
        start = m.start(m.lastindex or 0)
        pos = m.end()
        string, punct, literal = m.group(1), m.group(2), m.group(3)
        if not stack:  # the root: an object or an array, on the first line
            if punct not in ("{", "[") or line_of(start) != first_line:
                return -1
            root.line = first_line
            stack.append(_Frame(punct == "{", root))
            continue
        top = stack[-1]
        if punct == "," or punct == ":":
            continue
        if punct == "}" or punct == "]":
            if top.ismap != (punct == "}"):
                return -1
            stack.pop()
            if not stack:
                return pos
            stack[-1].done()
            continue
        if top.ismap and not top.pending:  # a key
            if string is None:
                return -1
            key = json.loads(string) if "\\" in string else string[1:-1]
            top.pending, top.child = True, trie_child(top.node, key)
            if top.child is not None and top.child.line < 0:
                top.child.line = line_of(start)
            continue
        if top.ismap:
            node = top.child
        else:
            node = trie_child(top.node, top.index)
            if node is not None and node.line < 0:
                node.line = line_of(start)
        if punct == "{" or punct == "[":
            if node is None:  # nothing wanted inside: jump to its end
                pos = _skip(text, pos)
                if pos < 0:
                    return -1
                top.done()
                continue
            stack.append(_Frame(punct == "{", node))
            continue
        if literal is not None and _LITERAL.fullmatch(literal) is None:
            return -1
        top.done()
    return -1


def _skip(text: str, pos: int) -> int:
    """The offset after the collection opened just before `pos` (strings skipped whole), or -1."""
    depth = 1
    for m in _STRUCTURE.finditer(text, pos):
        c = text[m.start()]
        if c == '"':
            continue
        depth += 1 if c in "{[" else -1
        if depth == 0:
            return m.end()
    return -1


class _Frame:
    __slots__ = ("ismap", "node", "index", "pending", "child")

    def __init__(self, ismap: bool, node: Any) -> None:
        self.ismap = ismap
        self.node = node  # the trie node of this collection (None: no wanted path goes below)
        self.index = 0  # the next item of an array
        self.pending = False  # a key was read, its value not yet
        self.child: Any = None  # the trie node of the pending key

    def done(self) -> None:
        """A value of this collection is complete."""
        if self.ismap:
            self.pending, self.child = False, None
        else:
            self.index += 1
