"""A fast, line-oriented reader for the block-style YAML that kubectl, PyYAML and Helm write.

`load_documents` yields exactly what `yamlload.load_documents` yields (data, document lines, item
lines, issues, errors). Each distinct line is parsed once by one regular expression (and remembered for
the rest of the stream), each document is built by one loop over an indentation stack; a document outside
the subset (flow collections with content, anchors, tags, block scalars, multi-line scalars, duplicate
keys, tabs, lines over MAX_LINE characters, ...) raises `Fallback` and that document alone is read by the
libyaml path, so errors and rare constructs behave exactly as there.

Subset: block mappings and sequences (indentless sequences under a key, `- key: value` compact
mappings, `- - x` compact sequences), single-line plain, single- and double-quoted scalars, `[]` and
`{}`, comments, `---` and `...` markers.

Memory: what is remembered (parsed lines, scalar values, keys) belongs to one call and holds lines of at
most MAX_LINE characters, so it is bounded by the stream's own size and freed with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from webhook.io.scalars import json_key, plain_scalar
from webhook.io.yamlload import MAX_DEPTH, RawDocument, YamlError, load_pieces, marker_lines, pieces_of

__all__ = ["Fallback", "fast_document", "load_documents", "load_pieces"]

MAX_LINE = 2000  # longer lines go to libyaml (linear in memory whatever their length)


class Fallback(Exception):
    """The document is outside the fast subset (or not certainly valid): libyaml reads it."""


# -- one line -------------------------------------------------------------------------------------
# A plain scalar on one line, block context: it does not start with an indicator (`-`, `?`, `:` only
# when a non-space follows), never holds `: ` or ` #`, never ends with `:`. Runs of spaces must be
# followed by an ordinary character, so trailing spaces are not part of it. Only ' ' and '\n' are
# whitespace here: tabs send the document to libyaml before this is used.
_PLAIN = r"""(?:[^ \n\-?:,\[\]{}#&*!|>'"%@`]|[-?:](?=[^ \n]))(?:[^ \n:]|:(?=[^ \n])| +[^ \n#:])*"""
_SINGLE = r"'(?:[^'\n]|'')*'"
_DOUBLE = r'"(?:[^"\\\n]|\\[^\n])*"'
_KEY = rf"{_PLAIN}|{_SINGLE}|{_DOUBLE}"
_VALUE = rf"{_PLAIN}|{_SINGLE}|{_DOUBLE}|\[\]|\{{\}}"
_BLANK_OR_COMMENT = re.compile(r"(?: *(?:(?<![^ \n])#[^\n]*)?\n)* *(?:(?<![^ \n])#[^\n]*)?")
_MARKER_REST = re.compile(r" *(?:(?<= )#[^\n]*)?")
# Characters libyaml rejects (its reader error names them) and line breaks other than \n and \r\n
# (NEL, LS, PS) and the BOM, which the fast path does not handle.
_UNSAFE = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)

_MISS = object()


class _Memo:
    """What one stream remembers: parsed lines, scalar values (immutable ones), keys."""

    __slots__ = ("lines", "values", "keys")

    def __init__(self) -> None:
        self.lines: dict[str, tuple[int, Any, Any, int, int, str]] = {}
        self.values: dict[str, Any] = {}  # raw scalar text (quotes included) -> value
        self.keys: dict[str, str] = {}  # raw key text -> the JSON key


_ESCAPES = {
    "0": "\x00",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")


def _unescape(body: str) -> str:
    """The value of a one-line double-quoted scalar (libyaml's escapes); Fallback on anything else."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        j = body.find("\\", i)
        if j < 0:
            out.append(body[i:])
            break
        out.append(body[i:j])
        ch = body[j + 1]  # the row pattern guarantees a character after every backslash
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
            i = j + 2
            continue
        width = _HEX_LEN.get(ch)
        digits = body[j + 2 : j + 2 + width] if width else ""
        if not width or len(digits) != width or not set(digits) <= _HEX:
            raise Fallback("escape")
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise Fallback("escape")
        out.append(chr(code))
        i = j + 2 + width
    return "".join(out)


def _value(raw: str, memo: _Memo) -> Any:
    """The value of a scalar, `[]` or `{}` as written on a line (the cache-miss path)."""
    first = raw[0]
    if first == "'":
        v: Any = raw[1:-1].replace("''", "'")
    elif first == '"':
        v = _unescape(raw[1:-1])
    elif raw == "[]":
        return []
    elif raw == "{}":
        return {}
    else:
        v = plain_scalar(raw)
    memo.values[raw] = v
    return v


def _key(raw: str, memo: _Memo) -> str:
    """The mapping key for a raw key (the cache-miss path); merge keys and overlong keys fall back."""
    if len(raw) > 1000:  # libyaml's simple keys end within 1024 characters
        raise Fallback("long key")
    first = raw[0]
    if first == "'" or first == '"':
        k = _value(raw, memo)
    elif raw == "<<":
        raise Fallback("merge key")
    else:
        v = plain_scalar(raw)
        k = v if isinstance(v, str) else json_key(v)
    memo.keys[raw] = k
    return k


# -- one document ---------------------------------------------------------------------------------
# A line is parsed once (then found in `memo.lines`) into (sig, key, value, column, op, dash):
# sig = column * 8 + op lets the loop recognise the two commonest rows with one comparison.
_BLANK, _KV, _K, _KNEW, _DASH, _SCALAR = 0, 1, 2, 3, 4, 5
_PENDING = object()  # `key:` / `-` with nothing after it: the value is on the next lines (or null)
_NEW_LIST = object()  # `[]`
_NEW_DICT = object()  # `{}`
_BLANK_LINE = (-1, None, None, 0, _BLANK, "")
_LINE = re.compile(rf"( *)((?:-(?: +|$))*)(?:({_KEY}):(?: +|$))?({_VALUE})? *(?:(?<![^ \n])#[^\n]*)?")


def _scalar(raw: str, memo: _Memo) -> Any:
    if raw == "[]":
        return _NEW_LIST
    if raw == "{}":
        return _NEW_DICT
    v = memo.values.get(raw, _MISS)
    return _value(raw, memo) if v is _MISS else v


def _parse_line(line: str, memo: _Memo) -> tuple[int, Any, Any, int, int, str]:
    """The parsed form of one line (the cache-miss path); Fallback if it is outside the subset."""
    if len(line) > MAX_LINE:
        raise Fallback("long line")
    m = _LINE.fullmatch(line)
    if m is None:
        raise Fallback("line outside the subset")
    ind, dash, key, val = m.groups()
    c = len(ind)
    p: tuple[int, Any, Any, int, int, str]
    if not dash and key is None:
        p = _BLANK_LINE if val is None else (-1, None, _scalar(val, memo), c, _SCALAR, "")
    else:
        k = None if key is None else memo.keys.get(key) or _key(key, memo)
        v = _PENDING if val is None else _scalar(val, memo)
        if dash:
            op = _DASH
        elif v is _PENDING:
            op = _K
        elif v is _NEW_LIST or v is _NEW_DICT:
            op = _KNEW
        else:
            op = _KV
        p = (c * 8 + op if op != _DASH else -1, k, v, c, op, dash)
    if _UNSAFE.search(line):
        raise Fallback("character libyaml rejects")
    memo.lines[line] = p
    return p


def _build(lines: list[str], memo: _Memo) -> tuple[Any, int, list[int] | None]:
    """(data, index of the root node's line, item line indexes) of one document's lines.

    Raises Fallback for anything outside the subset; returns index -1 when there is no node."""
    get, parse, pending, new_list, new_dict = memo.lines.get, _parse_line, _PENDING, _NEW_LIST, _NEW_DICT
    root: Any = None
    cont: Any = None  # the open collection
    col = -1  # its column
    islist = False
    indentless = False  # a sequence at the column of the key that holds it
    stack: list[tuple[Any, int, bool, bool]] = []
    want_kv = want_k = -100  # sig of `key: value` / `key:` rows that continue the open mapping
    pend = 0  # 1: the value of `pkey` in cont follows; 2: the next item of list cont follows
    pkey: Any = None
    pline = 0
    doc_row = -1
    items: list[Any] | None = None  # the root mapping's `items` sequence
    item_rows: list[int] | None = None
    for i, line in enumerate(lines):
        p = get(line)
        if p is None:
            p = parse(line, memo)
        sig, k, v, c, op, dash = p
        if sig == want_kv:
            if k in cont:
                raise Fallback("duplicate key")  # libyaml's builder reports it with its path
            cont[k] = v
            continue
        if sig == want_k:
            if k in cont:
                raise Fallback("duplicate key")
            pend, pkey, want_kv, want_k = 1, k, -100, -100
            continue
        if op == _BLANK:
            continue
        if op == _SCALAR:
            if root is None and (v is new_list or v is new_dict):
                root = [] if v is new_list else {}
                doc_row, cont, col = i, None, 1 << 30  # nothing may follow
                continue
            raise Fallback("scalar line")
        if root is None:
            root = cont = [] if dash else {}
            col, islist, doc_row = c, bool(dash), i
        elif pend:
            if c > col or (dash and c == col and not islist):  # the pending node is a collection
                new: Any = [] if dash else {}
                if pend == 1:
                    cont[pkey] = new
                    if dash and cont is root and pkey == "items":
                        items, item_rows = new, []
                else:
                    cont.append(new)
                    if cont is items:
                        item_rows.append(i)  # type: ignore[union-attr]
                stack.append((cont, col, islist, indentless))
                if len(stack) >= MAX_DEPTH:
                    raise Fallback("deep nesting")  # the libyaml path reports it
                indentless = c == col
                cont, col, islist = new, c, bool(dash)
            elif pend == 1:
                cont[pkey] = None
            else:
                cont.append(None)
                if cont is items:
                    item_rows.append(pline)  # type: ignore[union-attr]
            pend = 0
        if dash:
            if c != col or not islist:
                while c < col and stack:
                    cont, col, islist, indentless = stack.pop()
                if c != col or not islist:
                    raise Fallback("indentation")
            if dash != "- ":
                # `-` alone, `-   x`, `- - x`: one nested sequence per further dash
                d = dash.find("-", 1)
                while d > 0:
                    new = []
                    cont.append(new)
                    if cont is items:
                        item_rows.append(i)  # type: ignore[union-attr]
                    stack.append((cont, col, True, indentless))
                    if len(stack) >= MAX_DEPTH:
                        raise Fallback("deep nesting")  # the libyaml path reports it
                    cont, col, indentless = new, c + d, False
                    d = dash.find("-", d + 1)
            if k is not None:  # `- key: ...`: a mapping at the column of the key
                new = {}
                cont.append(new)
                if cont is items:
                    item_rows.append(i)  # type: ignore[union-attr]
                stack.append((cont, col, True, indentless))
                if len(stack) >= MAX_DEPTH:
                    raise Fallback("deep nesting")  # the libyaml path reports it
                cont, col, islist, indentless = new, c + len(dash), False, False
            elif v is pending:
                pend, pline, want_kv, want_k = 2, i, -100, -100
                continue
            else:
                cont.append([] if v is new_list else {} if v is new_dict else v)
                if cont is items:
                    item_rows.append(i)  # type: ignore[union-attr]
                want_kv = want_k = -100
                continue
        elif c != col or islist:
            while c < col and stack:
                cont, col, islist, indentless = stack.pop()
            if c == col and islist and indentless:
                cont, col, islist, indentless = stack.pop()
            if c != col or islist:
                raise Fallback("indentation")
        if k in cont:
            raise Fallback("duplicate key")
        if v is pending:
            pend, pkey, want_kv, want_k = 1, k, -100, -100
            continue
        if v is new_list:
            v = []
            if cont is root and k == "items":
                items, item_rows = None, []
        elif v is new_dict:
            v = {}
        cont[k] = v
        want_kv, want_k = col * 8 + _KV, col * 8 + _K
    if pend == 1:
        cont[pkey] = None
    elif pend == 2:
        cont.append(None)
        if cont is items:
            item_rows.append(pline)  # type: ignore[union-attr]
    return root, doc_row, item_rows


def fast_document(text: str) -> tuple[Any, int, list[int] | None]:
    """(data, 0-based line of the root node, item lines) of one document without markers.

    Raises Fallback outside the subset; line -1: no node."""
    if "\t" in text:
        raise Fallback("tab")
    return _build(text.split("\n"), _Memo())


# -- a stream -------------------------------------------------------------------------------------


def load_documents(text: str) -> Iterator[RawDocument | YamlError]:
    """Every document of a YAML stream, as `yamlload.load_documents` reads it, but faster: the stream's
    pieces (`yamlload.chunks`) are read one at a time by the fast path; runs of pieces outside it go to
    libyaml together (`yamlload.load_pieces`)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # libyaml reads CR LF as one line break
        if "\r" in text:  # a lone CR is a line break too: not worth a fast path
            yield from load_pieces(text, pieces_of(text))
            return
    memo = _Memo()
    libyaml_memo: dict[str, Any] = {}
    pending: list[tuple[int, int, int]] = []  # pieces outside the fast subset, not read yet
    misses = 0  # pieces in a row outside the fast subset: after 8, the fast path is tried on every 32nd
    for n, (start, stop, line) in enumerate(pieces_of(text)):
        if misses >= 8 and n % 32:
            pending.append((start, stop, line))
            continue
        try:
            doc = _fast_chunk(text, start, stop, line + 1, memo)
        except Fallback:
            pending.append((start, stop, line))
            misses += 1
            continue
        misses = 0
        if pending:
            yield from load_pieces(text, pending, libyaml_memo)
            pending = []
        if doc is not None:
            yield doc
    if pending:
        yield from load_pieces(text, pending, libyaml_memo)


def _fast_chunk(text: str, start: int, stop: int, line: int, memo: _Memo) -> RawDocument | None:
    """The document of one piece of the stream (None: only comments); Fallback outside the subset."""
    content = start
    explicit = text.startswith("---", start) and text[start + 3 : start + 4] in ("", " ", "\t", "\n")
    if explicit:  # the `---` line: nothing but a comment may follow the marker
        eol = text.find("\n", start, stop)
        eol = stop if eol < 0 else eol
        if not _MARKER_REST.fullmatch(text, start + 3, eol) or _UNSAFE.search(text, start, eol):
            raise Fallback("content on the --- line")
        if eol == stop:
            raise Fallback("empty document")
        content, line = eol + 1, line + 1
    end = stop
    dots = marker_lines(text, "...", content, stop)
    if dots:
        d = dots[0]
        if not _BLANK_OR_COMMENT.fullmatch(text, d + 3, stop) or _UNSAFE.search(text, d, stop):
            raise Fallback("content after ...")
        end = d
    if text.find("\t", content, end) >= 0:
        raise Fallback("tab")
    data, row, item_rows = _build(text[content:end].split("\n"), memo)
    if row < 0:
        if explicit or dots:
            raise Fallback("empty document")
        return None  # only comments before the first `---`
    item_lines = None if item_rows is None else [line + r for r in item_rows]
    return RawDocument(line + row, data, [], item_lines)
