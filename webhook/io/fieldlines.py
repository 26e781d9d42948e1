"""The line of a field inside a YAML (or single-value JSON) document: where a finding's field path points.

    locate(text, doc_line, ["spec.devices[3].capacity[memory].value"]) -> {"spec.devices[3]...": 14}

Parsing keeps no line per field (that would cost memory for every field of every object); a finding's
lines are found afterwards, by walking libyaml's events over the one document that holds it (its piece of
the stream, `yamlload.pieces_of`), remembering only the lines of the requested paths. A path that does
not exist (a missing required field) gets the line of its deepest existing parent. Anything unexpected
(a syntax error, a piece holding several documents) gives no line: the caller keeps the
object's line.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

import yaml
from yaml import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml._yaml import CParser

from webhook.io.jsonlines import LineStarts, starts_json, walk_json
from webhook.io.jsonlines import trie_child as _child
from webhook.io.yamlload import pieces_of

Segment = str | int
_PART = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


def parse_path(path: str) -> tuple[Segment, ...] | None:
    """`spec.devices[3].capacity[memory]` -> ("spec", "devices", 3, "capacity", "memory"); an index in
    brackets stays an int (it matches a sequence item, or the key "3" of a mapping). None when the text is
    not a field path (placeholders like `<path>`, alternatives with `|`)."""
    if not path or any(c in path for c in "<>| "):
        return None
    out: list[Segment] = []
    pos = 0
    for m in _PART.finditer(path):
        if m.start() != pos:
            return None
        pos = m.end()
        name, key = m.group(1), m.group(2)
        if name is not None:
            out.append(name)
        elif key is not None and key.isdigit():
            out.append(int(key))
        elif key is not None:
            out.append(key)
    return tuple(out) if pos == len(path) and out else None


class _Node:
    """A node of the trie of wanted paths: children by segment, and the line where it was found."""

    __slots__ = ("children", "line")

    def __init__(self) -> None:
        self.children: dict[Segment, _Node] = {}
        self.line = -1  # 0-based line of the key or item (or of the root), -1 = not found


def _trie(paths: list[tuple[Segment, ...]]) -> _Node:
    root = _Node()
    for p in paths:
        n = root
        for seg in p:
            n = n.children.setdefault(seg, _Node())
    return root


class _Frame:
    __slots__ = ("ismap", "node", "index", "pending", "child")

    def __init__(self, ismap: bool, node: _Node | None) -> None:
        self.ismap = ismap
        self.node = node  # the trie node of this collection (None: no wanted path goes below)
        self.index = 0  # the next item of a sequence
        self.pending = False  # a mapping key was read, its value not yet
        self.child: _Node | None = None  # the trie node of the pending key


def _walk(get: object, root: _Node, first_line: int) -> bool:
    """Mark the trie nodes found in the document whose root starts on 0-based line `first_line` with
    their lines; False when that document is not in the events."""
    stack: list[_Frame] = []
    started = False
    skip_doc = False
    while True:
        ev = get()  # type: ignore[operator]
        t = type(ev)
        if t is StreamEndEvent:
            return False
        if t is DocumentStartEvent:
            stack.clear()
            started, skip_doc = False, False
            continue
        if t is DocumentEndEvent:
            if started and not skip_doc:
                return True
            continue
        if skip_doc:
            continue
        line = ev.start_mark.line
        opens = t is MappingStartEvent or t is SequenceStartEvent
        if not started:
            started = True
            if line != first_line:
                skip_doc = True
                continue
            root.line = line
            if opens:
                stack.append(_Frame(t is MappingStartEvent, root))
            continue
        if t is MappingEndEvent or t is SequenceEndEvent:
            stack.pop()
            if stack:
                _value_done(stack[-1])
            continue
        if not stack:
            continue
        top = stack[-1]
        if top.ismap and not top.pending:  # a key
            top.pending = True
            top.child = _child(top.node, ev.value) if t is ScalarEvent else None
            if top.child is not None and top.child.line < 0:
                top.child.line = line
            if opens:  # a complex key: nothing wanted below it
                stack.append(_Frame(t is MappingStartEvent, None))
            continue
        if top.ismap:
            node = top.child
        else:
            node = _child(top.node, top.index)
            if node is not None and node.line < 0:
                node.line = line
        if opens:
            stack.append(_Frame(t is MappingStartEvent, node))
        elif t is ScalarEvent or t is AliasEvent:
            _value_done(top)


def _value_done(frame: _Frame) -> None:
    if frame.ismap:
        frame.pending = False
        frame.child = None
    else:
        frame.index += 1


def _deepest(root: _Node, path: tuple[Segment, ...]) -> int:
    """The 0-based line of the deepest found node on `path` (the root's line at least)."""
    line = root.line
    n: _Node | None = root
    for seg in path:
        n = n.children.get(seg) if n is not None else None
        if n is None:
            break
        if n.line >= 0:
            line = n.line
    return line


def piece_of(pieces: list[tuple[int, int, int]], doc_line: int) -> tuple[int, int, int] | None:
    """The piece of the stream (`pieces_of`, start lines ascending) holding 1-based line `doc_line`."""
    k = bisect_right(pieces, doc_line - 1, key=lambda p: p[2]) - 1
    return pieces[k] if k >= 0 else None


def locate(
    text: str,
    doc_line: int,
    paths: Iterable[str],
    prefix: str = "",
    pieces: list[tuple[int, int, int]] | None = None,
    starts: LineStarts | None = None,
) -> dict[str, int]:
    """The line of each field path in the document of `text` whose first node is on (1-based) line
    `doc_line`; `prefix` is put before every path (`items[3].` for an object of a List). Paths that are
    not field paths are left out; an empty answer means "use the object's line". `pieces` (the text's
    `pieces_of`) and `starts` may be passed by a caller locating fields of many documents of one text.
    A document that is a JSON value (a `.json` file, each value of a JSON stream) is walked as JSON."""
    wanted: list[tuple[Segment, ...]] = []
    names: list[str] = []
    head = parse_path(prefix.rstrip(".")) if prefix else ()
    if head is None:
        return {}
    for p in paths:
        segs = parse_path(p)
        if segs is not None:
            wanted.append(head + segs)
            names.append(p)
    if not wanted:
        return {}
    root = _trie(wanted)
    starts = starts if starts is not None else LineStarts(text)
    at = starts.offset(doc_line - 1)
    if starts_json(text, at):  # a JSON value (of a stream, too); a YAML flow document falls through
        try:
            end = walk_json(text, at, doc_line - 1, root)
        except (ValueError, RecursionError, MemoryError):
            end = -1
        starts.walked += (end if end >= 0 else len(text)) - at
        if end >= 0 and root.line >= 0:
            return {name: _deepest(root, w) + 1 for name, w in zip(names, wanted, strict=True)}
        root = _trie(wanted)
    piece = piece_of(pieces if pieces is not None else pieces_of(text), doc_line)
    if piece is None:
        return {}
    start, stop, line = piece
    parser = CParser(text[start:stop])
    try:
        found = _walk(parser.get_event, root, doc_line - 1 - line)
    except (yaml.YAMLError, RecursionError, MemoryError, IndexError):
        return {}
    finally:
        parser.dispose()
    if not found or root.line < 0:
        return {}
    return {name: _deepest(root, w) + 1 + line for name, w in zip(names, wanted, strict=True)}
