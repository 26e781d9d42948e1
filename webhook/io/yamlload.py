"""YAML read the way kubectl reads it (sigs.k8s.io/yaml on go-yaml v2, i.e. YAML 1.1 scalars), with every
bound applied before anything is built.

libyaml's event parser (iterative: no recursion, whatever the nesting) feeds one loop that builds the
Python objects directly. Bounds, as the events arrive:
- nesting deeper than MAX_DEPTH levels (aliases included) is an error on that document;
- an alias inside its own anchor is an error ("contains itself", as go-yaml says);
- alias expansion is counted, never performed: an alias shares the anchored object, and its expanded size
  is added to go-yaml v2's counters, so a document go-yaml rejects as "excessive aliasing" (a billion
  laughs) is an error here too, before anything walks it;
- the same for bytes: every anchor knows the size of its node written out (scalar text and a little per
  node, aliases inside it included: computed once, when it closes), and a document whose expansion passes
  `expansion_limit` (3 MiB, or 4x the text read if more) is an error at the alias that passes it. go-yaml
  counts nodes only: one 100 KB string aliased 30,000 times passes its ratio and becomes 3 GB of JSON.

A stream is cut into chunks at its `---` lines (`chunks`), which libyaml reads one at a time: a syntax
error costs only its own document, and reading resumes at the next `---` in linear time.
Every document keeps the line of its first node; items of `List` documents keep their own lines.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml._yaml import CParser

from webhook.io.scalars import MERGE_TAG, STR_TAG, json_key, plain_scalar, tagged_scalar

MAX_DEPTH = 10_000  # nesting levels a document may have: Go's encoding/json and go-yaml's limit

# Alias expansion, in bytes of the document written out (about its JSON size). The floor is the API server's
# request limit: kubectl sends every object expanded, in one request, so an object that expands past it
# cannot be created at all. A List (one document, many objects sent one by one) may expand up to a fixed
# multiple of its own text, so no consumer (a size check, `strip`'s output, a rule walking strings) ever
# sees more than a few times what the input itself holds.
EXPANSION_FLOOR = 3 << 20
EXPANSION_FACTOR = 4


def expansion_limit(text_length: int) -> int:
    """The bytes a document read from a text of `text_length` characters may expand to through aliases."""
    return max(EXPANSION_FLOOR, EXPANSION_FACTOR * text_length)


# go-yaml v2 (decode.go): the share of decoded nodes that may come from alias expansion, by document size.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml v2's `allowedAliasRatio`: 99% up to 400,000 decoded nodes, down to 10% at 4,000,000."""
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW))


@dataclass
class YamlIssue:
    """A non-fatal problem found while building a document (e.g. a duplicate key)."""

    line: int
    path: str
    message: str
    rule: str = "input.duplicate-key"


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
    # refused at one of the reader's bounds (nesting depth, alias expansion, a number's digits), not for
    # its syntax: an error whatever the text is (documents.could_be_manifest is not asked)
    bounded: bool = False


class _Stop(Exception):
    """The document cannot be built: (0-based line, message, at a bound of the reader or not)."""

    def __init__(self, line: int, message: str, bounded: bool = False) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.bounded = bounded


_NOKEY = object()  # a mapping frame waiting for its next key
_MERGE = object()  # a mapping frame whose pending key is `<<`


class _Anchor:
    __slots__ = ("value", "open", "size", "levels", "nbytes")

    def __init__(self, value: Any, open_: bool, nbytes: int = 0) -> None:
        self.value = value
        self.open = open_
        self.size = 1  # decoded nodes of the anchored node, expansions included (go-yaml's count)
        self.levels = 0  # nesting levels it adds where an alias puts it (a container: 1 + those below)
        self.nbytes = nbytes  # its bytes written out, expansions included


class _Frame:
    """An open mapping or sequence."""

    __slots__ = (
        "obj",
        "ismap",
        "key",
        "parent",
        "pkey",
        "anchor",
        "start",
        "depth",
        "deepest",
        "items",
        "merged",
        "start_bytes",
    )

    def __init__(
        self, obj: Any, ismap: bool, parent: _Frame | None, pkey: Any, depth: int, start: int
    ) -> None:
        self.obj = obj
        self.ismap = ismap
        self.key: Any = _NOKEY
        self.parent = parent
        self.pkey = pkey  # key or index in the parent (or _MERGE)
        self.anchor: _Anchor | None = None
        self.start = start  # the decode count when it opened
        self.depth = depth
        self.deepest = depth  # deepest level reached inside
        self.items: list[int] | None = None  # lines of the root mapping's `items` entries
        self.merged: set[str] | None = None  # keys that came from `<<` (an explicit key may override them)
        self.start_bytes = 0  # the document's expanded bytes when it opened


def _path(frame: _Frame | None, last: Any = None) -> str:
    parts: list[Any] = [] if last is None else [last]
    while frame is not None and frame.parent is not None:
        parts.append(frame.pkey)
        frame = frame.parent
    out = ""
    for p in reversed(parts):
        if isinstance(p, int):
            out += f"[{p}]"
        elif p is not _MERGE:
            out += f".{p}" if out else str(p)
    return out


SHOWN_STEPS = 8  # steps of the path a nesting error names (the rest of 10,000 steps says nothing more)


def too_deep_message(limit: int, path: str = "") -> str:
    """The error on a document nested deeper than `limit` levels, at `path` (shortened) if known."""
    where = f" at {path}" if path else ""
    return f"document is nested deeper than {limit} levels{where}: kubectl and the API server stop at {MAX_DEPTH}"


def _short_path(frame: _Frame | None, last: Any = None) -> str:
    """`_path`, but only its first SHOWN_STEPS steps and how many levels there are."""
    parts: list[Any] = [] if last is None or last is _MERGE or last is _NOKEY else [last]
    while frame is not None and frame.parent is not None:
        if frame.pkey is not _MERGE:
            parts.append(frame.pkey)
        frame = frame.parent
    parts.reverse()
    out = ""
    for p in parts[:SHOWN_STEPS]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}" if out else str(p)
    return f"{out}..." if len(parts) > SHOWN_STEPS else out or "the top level"


class _Builder:
    """Builds one document from parser events. The open collection lives in local variables (`cur`,
    `cur_map`, `key`, `items`); enclosing ones in `_Frame`s."""

    def __init__(self, get_event: Any, memo: dict[str, Any], max_bytes: int) -> None:
        self.get = get_event
        self.issues: list[YamlIssue] = []
        self.anchors: dict[str, _Anchor] = {}
        self.memo = memo  # plain scalar text -> value (short texts, immutable values), per stream
        self.max_bytes = max_bytes  # the document's expanded size may not pass this

    def document(self) -> tuple[Any, int, list[int] | None]:
        """(data, 0-based line of the root node, item lines) from the event after DocumentStart."""
        get, memo, anchors = self.get, self.memo, self.anchors
        decoded = 1  # go-yaml counts the document node
        aliased = 0
        nbytes = 0  # the document's size written out so far, aliases expanded (scalar text + 2 a node)
        root: Any = None
        root_line = -1
        frame: _Frame | None = None  # the open collection's frame
        cur: Any = None  # the open collection
        cur_map = False
        key: Any = _NOKEY  # its pending key (mappings)
        items: list[int] | None = None  # lines of entries, if it is the root's `items` sequence
        item_lines: list[int] | None = None
        while True:
            ev = get()
            t = type(ev)
            if t is ScalarEvent:
                decoded += 1
                tag = ev.tag
                text = ev.value
                nbytes += len(text) + 2
                if cur_map and key is _NOKEY:  # a mapping key
                    if tag is None and ev.implicit[0]:
                        if text == "<<":
                            key = _MERGE
                            continue
                        k = memo.get(text, memo)
                        if k is memo:
                            k = plain_scalar(text)
                            if len(text) <= 64:
                                memo[text] = k
                        if type(k) is not str:
                            k = json_key(k)
                    elif tag is None or tag == STR_TAG or tag == "!":
                        k = text
                    elif tag == MERGE_TAG:
                        key = _MERGE
                        continue
                    else:
                        k = json_key(tagged_scalar(tag, text))
                    if k in cur:
                        self._duplicate(frame, k, ev)  # type: ignore[arg-type]
                    if ev.anchor is not None:
                        anchors[ev.anchor] = _Anchor(k, False, len(text) + 2)
                    key = k
                    continue
                if tag is None:
                    if ev.implicit[0]:
                        value = memo.get(text, memo)
                        if value is memo:
                            value = plain_scalar(text)
                            if len(text) <= 64:
                                memo[text] = value
                    else:
                        value = text
                elif tag == STR_TAG or tag == "!":
                    value = text
                else:
                    value = tagged_scalar(tag, text)
                if ev.anchor is not None:
                    anchors[ev.anchor] = _Anchor(value, False, len(text) + 2)
                if cur_map:
                    if key is _MERGE:
                        raise _Stop(ev.start_mark.line, _MERGE_ERROR)
                    cur[key] = value
                    key = _NOKEY
                elif frame is not None:
                    cur.append(value)
                    if items is not None:
                        items.append(ev.start_mark.line)
                else:
                    root, root_line = value, ev.start_mark.line
            elif t is MappingStartEvent or t is SequenceStartEvent:
                decoded += 1
                ismap = t is MappingStartEvent
                obj: Any = {} if ismap else []
                line = ev.start_mark.line
                if frame is None:
                    depth = 1
                    root, root_line = obj, line
                    pkey: Any = None
                else:
                    depth = frame.depth + 1
                    if cur_map:
                        if key is _NOKEY:
                            raise _Stop(line, "a mapping key must be a scalar in a Kubernetes object")
                        pkey = key
                        if key is not _MERGE:
                            cur[key] = obj
                    else:
                        pkey = len(cur)
                        cur.append(obj)
                        if items is not None:
                            items.append(line)
                    frame.key, frame.items = key, items
                if depth > MAX_DEPTH:
                    raise _Stop(line, too_deep_message(MAX_DEPTH, _short_path(frame, pkey)), bounded=True)
                frame = _Frame(obj, ismap, frame, pkey, depth, decoded)
                frame.start_bytes = nbytes
                nbytes += 2
                if ev.anchor is not None:
                    frame.anchor = anchors[ev.anchor] = _Anchor(obj, True)
                items = None
                if not ismap and depth == 2 and pkey == "items" and frame.parent.parent is None:  # type: ignore[union-attr]
                    items = item_lines = []
                cur, cur_map, key = obj, ismap, _NOKEY
            elif t is MappingEndEvent or t is SequenceEndEvent:
                done = frame
                assert done is not None
                if done.anchor is not None:
                    done.anchor.open = False
                    done.anchor.size = decoded - done.start + 1
                    done.anchor.levels = done.deepest - done.depth + 1
                    done.anchor.nbytes = nbytes - done.start_bytes
                frame = done.parent
                if frame is None:
                    continue
                if done.deepest > frame.deepest:
                    frame.deepest = done.deepest
                cur, cur_map, key, items = frame.obj, frame.ismap, frame.key, frame.items
                if key is _MERGE:
                    self._merge(frame, done.obj, ev, many=not done.ismap)
                    key = _NOKEY
                elif cur_map:
                    key = _NOKEY
            elif t is AliasEvent:
                line = ev.start_mark.line
                target = anchors.get(ev.anchor)
                if target is None:
                    raise _Stop(line, f"unknown anchor '{ev.anchor}' referenced")
                if target.open:
                    raise _Stop(line, f"anchor '{ev.anchor}' value contains itself")
                decoded += 1 + target.size
                aliased += target.size
                if aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded):
                    raise _Stop(line, _ALIAS_ERROR, bounded=True)
                nbytes += target.nbytes
                if nbytes > self.max_bytes:
                    raise _Stop(line, expansion_error(self.max_bytes), bounded=True)
                depth = (0 if frame is None else frame.depth) + target.levels
                if depth > MAX_DEPTH:
                    last = None if frame is None else key if cur_map else len(cur)
                    raise _Stop(line, too_deep_message(MAX_DEPTH, _short_path(frame, last)), bounded=True)
                value = target.value
                if frame is None:
                    root, root_line = value, line
                    continue
                if depth > frame.deepest:
                    frame.deepest = depth
                if cur_map:
                    if key is _NOKEY:
                        raise _Stop(line, "an alias cannot be a mapping key in a Kubernetes object")
                    if key is _MERGE:
                        self._merge(frame, value, ev, many=False)
                    else:
                        cur[key] = value
                    key = _NOKEY
                else:
                    cur.append(value)
                    if items is not None:
                        items.append(line)
            elif t is DocumentEndEvent:
                return root, root_line, item_lines

    def _duplicate(self, frame: _Frame, k: str, ev: Any) -> None:
        if frame.merged is not None and k in frame.merged:
            frame.merged.discard(k)  # an explicit key overrides a merged one
            return
        self.issues.append(YamlIssue(ev.start_mark.line + 1, _path(frame, k), f'duplicate key "{k}"'))

    def _merge(self, frame: _Frame, value: Any, ev: Any, many: bool) -> None:
        """`<<: map`, `<<: *alias` or `<<: [maps]`: go-yaml v2 merges in order (later entries win; in
        a list, earlier maps take precedence); anything else is an error there."""
        if isinstance(value, dict):
            sources = [value]
        elif many and isinstance(value, list) and all(isinstance(v, dict) for v in value):
            sources = value[::-1]
        else:
            raise _Stop(ev.start_mark.line, _MERGE_ERROR)
        if frame.merged is None:
            frame.merged = set()
        for src in sources:
            for k, v in src.items():
                frame.obj[k] = v
                frame.merged.add(k)


_MERGE_ERROR = "map merge requires map or sequence of maps as the value"
_ALIAS_ERROR = "document contains excessive aliasing (as go-yaml counts it: kubectl rejects it too)"


def expansion_error(limit: int) -> str:
    """The error for a document that expands past `limit` bytes."""
    return (
        f"aliases expand this document to more than {limit:,} bytes (the API server's 3 MiB request limit, "
        f"or {EXPANSION_FACTOR} times the document's own size if that is larger): kubectl would send it "
        "expanded; use fewer aliases or split the document"
    )


def _error_line(e: yaml.YAMLError, text: str) -> tuple[int, str]:
    """(0-based line, message) of a libyaml error."""
    if isinstance(e, yaml.reader.ReaderError):
        # the position is a byte offset into the UTF-8 encoding of the text
        before = text.encode("utf-8", "surrogatepass")[: e.position].decode("utf-8", "ignore")
        return before.count(
            "\n"
        ), f"YAML error: {e.reason}: character #x{e.character:04x} is not allowed in YAML"
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        msg = "; ".join(str(x) for x in (e.context, e.problem) if x)
        return (mark.line if mark is not None else 0), f"YAML syntax error: {msg}"
    return 0, f"YAML error: {e}"


def load_chunk(
    text: str, line_offset: int = 0, memo: dict[str, Any] | None = None
) -> Iterator[RawDocument | YamlError]:
    """Every document of `text` read by libyaml; lines are shifted by `line_offset`. After an error,
    nothing more of this text is read. `memo` (scalar values) may be shared by the pieces of a stream."""
    parser = CParser(text)
    if memo is None:
        memo = {}
    max_bytes = expansion_limit(len(text))
    try:
        get = parser.get_event
        get()  # StreamStart
        while True:
            ev = get()
            if type(ev) is StreamEndEvent:
                return
            builder = _Builder(get, memo, max_bytes)
            try:
                data, row, items = builder.document()
            except _Stop as e:
                yield YamlError(line_offset + e.line + 1, e.message, e.bounded)
                return
            for issue in builder.issues:
                issue.line += line_offset
            item_lines = None if items is None else [line_offset + r + 1 for r in items]
            yield RawDocument(line_offset + row + 1, data, builder.issues, item_lines)
    except yaml.YAMLError as e:
        line, msg = _error_line(e, text)
        yield YamlError(line_offset + line + 1, msg)
    finally:
        parser.dispose()


def marker_lines(text: str, marker: str, start: int = 0, stop: int | None = None) -> list[int]:
    """Positions in [start, stop) of the lines that are a `---` or `...` marker: the marker at the start
    of a line, then a blank, a line break or the end of the text."""
    stop = len(text) if stop is None else stop
    found = []
    if text.startswith(marker, start) and (start == 0 or text[start - 1] == "\n"):
        pos = start
    else:
        pos = text.find("\n" + marker, start, stop) + 1 or -1
    while pos >= 0:
        if text[pos + 3 : pos + 4] in ("", " ", "\t", "\r", "\n"):
            found.append(pos)
        pos = text.find("\n" + marker, pos, stop) + 1 or -1
    return found


def chunks(text: str) -> list[tuple[int, int]]:
    """(start, stop) of the stream's pieces: the text before the first `---` line, then one piece per
    `---` line. A piece holding a directive (`%YAML`) is joined to the next (the directive is its)."""
    starts = [0, *(p for p in marker_lines(text, "---") if p > 0), len(text)]
    out: list[tuple[int, int]] = []
    pending = -1
    for start, stop in zip(starts, starts[1:], strict=False):
        first = start if pending < 0 else pending
        if text.startswith("%", start) or text.find("\n%", start, stop) >= 0:
            pending = first
            continue
        pending = -1
        out.append((first, stop))
    if pending >= 0:
        out.append((pending, len(text)))
    return out


RUN_BYTES, RUN_PIECES = 64 << 10, 256  # read by one parser together (an error re-reads at most this)


def load_pieces(
    text: str, pieces: list[tuple[int, int, int]], memo: dict[str, Any] | None = None
) -> Iterator[RawDocument | YamlError]:
    """The documents of consecutive pieces (start, stop, 0-based line of start), exactly as reading each
    piece alone would give them, but small pieces are read by one parser (a parser per 100-byte document
    costs more than the document). After an error, the piece of the last good document is read alone
    and reading goes on after it."""
    memo = {} if memo is None else memo
    i = 0
    while i < len(pieces):
        j = i + 1
        end = min(len(pieces), i + RUN_PIECES)
        while j < end and pieces[j][1] - pieces[i][0] <= RUN_BYTES:
            j += 1
        if j == i + 1:
            start, stop, line = pieces[i]
            yield from load_chunk(text[start:stop], line, memo)
            i = j
            continue
        firsts = [p[2] for p in pieces[i:j]]
        last, done = i, 0  # the piece of the last good document, and how many came from it
        failed = False
        for item in load_chunk(text[pieces[i][0] : pieces[j - 1][1]], pieces[i][2], memo):
            if isinstance(item, YamlError):
                failed = True
                break
            k = i + bisect_right(firsts, item.line - 1) - 1
            if k != last:
                last, done = k, 0
            done += 1
            yield item
        if not failed:
            i = j
            continue
        start, stop, line = pieces[last]
        for n, item in enumerate(load_chunk(text[start:stop], line, memo)):
            if n >= done:
                yield item
        i = last + 1


def pieces_of(text: str) -> list[tuple[int, int, int]]:
    """`chunks` with the 0-based line each starts at, lines counted as libyaml counts them (CR, NEL, LS
    and PS are line breaks too; CR LF is one)."""
    out = []
    line = 0
    exotic = any(c in text for c in "\r\x85\u2028\u2029")
    for start, stop in chunks(text):
        out.append((start, stop, line))
        line += text.count("\n", start, stop)
        if exotic:
            line += sum(text.count(c, start, stop) for c in "\r\x85\u2028\u2029") - text.count(
                "\r\n", start, stop
            )
    return out


def load_documents(text: str) -> Iterator[RawDocument | YamlError]:
    """Every document of a YAML stream; after a syntax error, reading resumes at the next `---` line."""
    return load_pieces(text, pieces_of(text))
