"""The JSON text of a decoded value, measured or cut short without writing all of it out: YAML aliases share
objects, so a small input may stand for a huge JSON text, which `json.dumps` would build in full.

    json_size(params, 10240)            # == len(json.dumps(params, separators=(",", ":"),
                                        #        ensure_ascii=False, default=str).encode()) up to the limit
    json_head(value, 120, sort_keys=True)   # json.dumps(...) when it has at most 120 characters, else
                                            # its first 121 characters

The work is bounded by the limit (plus the longest dictionary met, which is sorted when asked): the
walk stops as soon as the text passes it, whatever the value expands to. No recursion (a stack).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from webhook.model.bignum import decimal_str

__all__ = ["json_head", "json_size", "json_text"]

_END = object()
_COMPACT = (",", ":")


def json_size(value: Any, limit: int) -> int:
    """The UTF-8 size of `value` as compact JSON (Go's encoding/json: `json.Marshal`, as the API server
    measures a RawExtension), exact when it is at most `limit`; otherwise some number above `limit`.

    Sizes are added up node by node (the order does not matter); a string without escapes counts as its
    length: no text is made but for strings that need escaping."""
    total = 0
    stack = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is str:
            total += _str_size(v, limit - total)
        elif t is dict or (t is not list and isinstance(v, dict)):
            total += 2 * len(v) + 1 if v else 2  # braces, colons, commas
            for k, x in v.items():
                total += _str_size(k if type(k) is str else _key(k), limit - total)
                push(x)
        elif t is list or isinstance(v, list | tuple):
            total += len(v) + 1 if v else 2  # brackets, commas
            extend(v)
        elif t is int and -_SMALL < v < _SMALL:
            total += len(str(v))
        else:  # None, booleans, numbers, default=str
            text = _scalar(v, limit - total)
            total += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if total > limit:
            return total
    return total


_SMALL = 10**18


def _str_size(s: str, room: int) -> int:
    """UTF-8 bytes of the JSON string of `s` (at least its length + 2: enough once that passes `room`)."""
    if len(s) + 2 > room or (s.isascii() and s.isprintable() and '"' not in s and "\\" not in s):
        return len(s) + 2
    return len(json.dumps(s, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def json_head(value: Any, limit: int, sort_keys: bool = False, separators: tuple[str, str] = _COMPACT) -> str:
    """`json.dumps(value, separators=..., sort_keys=..., ensure_ascii=False, default=str)` when it has at
    most `limit` characters; otherwise its first `limit + 1` characters (a caller adds its "...")."""
    out: list[str] = []
    n = 0
    for piece in _pieces(value, separators, sort_keys, limit):
        out.append(piece)
        n += len(piece)
        if n > limit:
            return "".join(out)[: limit + 1]
    return "".join(out)


def json_text(
    value: Any,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
    indent: int | str | None = None,
    ensure_ascii: bool = True,
) -> str:
    """All of `json.dumps(value, ...)` with these arguments, written from an explicit stack: for values
    nested deeper than its C encoder recurses."""
    if not allow_nan:
        _check_finite(value)
    if isinstance(indent, int):
        indent = " " * indent
    if separators is None:
        separators = (", ", ": ") if indent is None else (",", ": ")
    return "".join(_pieces(value, separators, sort_keys, _NO_CUT, ensure_ascii, indent))


_NO_CUT = 1 << 62  # a `cut` no string reaches


def _check_finite(value: Any) -> None:
    """ValueError for NaN or an infinity anywhere in `value` (json.dumps with allow_nan=False)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise ValueError("Out of range float values are not JSON compliant")
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)


def _pieces(
    value: Any,
    separators: tuple[str, str],
    sort_keys: bool,
    cut: int,
    ascii_only: bool = False,
    indent: str | None = None,
) -> Iterator[str]:
    """The JSON text in pieces (`indent`: as json.dumps's). A string longer than `cut` characters comes
    cut short (its text is then longer than `cut` anyway, and its first `cut + 1` characters are right)."""
    item_sep, key_sep = separators
    stack: list[list[Any]] = []  # [iterator, closer, is a mapping, first entry still to come]
    v = value
    while True:
        if isinstance(v, dict):
            if v:
                yield "{"
                entries = iter(sorted(v.items()) if sort_keys else v.items())
                stack.append([entries, "}", True, True])
            else:
                yield "{}"
        elif isinstance(v, list | tuple):
            if v:
                yield "["
                stack.append([iter(v), "]", False, True])
            else:
                yield "[]"
        else:
            yield _scalar(v, cut, ascii_only)
        while stack:
            frame = stack[-1]
            entry: Any = next(frame[0], _END)
            if entry is _END:
                stack.pop()
                if indent is not None:
                    yield "\n" + indent * len(stack)
                yield frame[1]
                continue
            if frame[3]:
                frame[3] = False
            else:
                yield item_sep
            if indent is not None:
                yield "\n" + indent * len(stack)
            if frame[2]:
                key, v = entry
                yield _string(key if isinstance(key, str) else _key(key), cut, ascii_only)
                yield key_sep
            else:
                v = entry
            break
        else:
            return


def _scalar(v: Any, cut: int, ascii_only: bool = False) -> str:
    if isinstance(v, str):
        return _string(v, cut, ascii_only)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return decimal_str(int(v))  # any size (json.dumps would raise past 4,300 digits)
    if isinstance(v, float):
        return json.dumps(v)  # NaN, Infinity as json.dumps writes them
    return _string(str(v), cut, ascii_only)  # default=str


def _string(s: str, cut: int, ascii_only: bool = False) -> str:
    return json.dumps(s if len(s) <= cut else s[: cut + 1], ensure_ascii=ascii_only)


def _key(k: Any) -> str:
    """json.dumps's text for a key that is not a string."""
    if k is None:
        return "null"
    if k is True:
        return "true"
    if k is False:
        return "false"
    if isinstance(k, float):
        return json.dumps(k)
    return str(k)
