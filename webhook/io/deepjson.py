"""One JSON value decoded with an explicit stack: for values nested deeper than the standard library's
decoder reaches (it recurses in C, within the interpreter's recursion limit: ~1,000 levels), up to the
10,000 levels Go's encoding/json (kubectl, the API server) accepts.

    value, end = decode(text, pos, pairs_hook, max_depth)
    value = loads(text_or_bytes, max_depth)    # json.loads, falling back to `decode` for deep values

It reads what `json.JSONDecoder(object_pairs_hook=pairs_hook).raw_decode` reads, the same way (strings by
the standard library's own `scanstring`, numbers by its NUMBER_RE), and raises what it raises: a
`json.JSONDecodeError` with the same position, ValueError for a number past Python's int-str limit,
`Constant` for NaN/Infinity (which Go does not read). Nesting past `max_depth` raises `TooDeep`, with the
path of the container that passes it. Slower than the C decoder (pure Python): used only for the values
the C decoder cannot take.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json import JSONDecodeError
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner (not in typeshed)
from json.scanner import NUMBER_RE
from typing import Any

from webhook.io.yamlload import SHOWN_STEPS
from webhook.model.errors import DraguardError

_WS = re.compile(r"[ \t\n\r]*")


class Constant(DraguardError, ValueError):
    """NaN, Infinity or -Infinity: JSON has no such value (Python's decoder reads them, Go's does not)."""


class TooDeep(DraguardError, ValueError):
    """A container nested deeper than the limit: where it opens (offset) and its path (shortened)."""

    def __init__(self, pos: int, path: str, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels at {path}")
        self.pos = pos
        self.path = path
        self.limit = limit


def decode(
    text: str, pos: int, pairs_hook: Callable[[list[tuple[str, Any]]], Any], max_depth: int
) -> tuple[Any, int]:
    """The JSON value starting at `pos` (no leading blanks) and the offset after it."""
    ws = _skip
    number = NUMBER_RE.match
    # the open containers: their items (pairs for an object), whether each is an object, its pending key
    items: list[list[Any]] = []
    is_object: list[bool] = []
    keys: list[str] = []
    n = len(text)
    while True:
        c = text[pos] if pos < n else ""
        if c == "{" or c == "[":
            if len(items) >= max_depth:
                raise TooDeep(pos, _path(items, is_object, keys), max_depth)
            close = "}" if c == "{" else "]"
            pos = ws(text, pos + 1)
            if text.startswith(close, pos):
                value: Any = pairs_hook([]) if c == "{" else []
                pos += 1
            else:
                items.append([])
                is_object.append(c == "{")
                if c == "{":
                    key, pos = _key(text, pos)
                    keys.append(key)
                else:
                    keys.append("")
                continue
        elif c == '"':
            value, pos = scanstring(text, pos + 1, True)
        elif c == "n" and text.startswith("null", pos):
            value, pos = None, pos + 4
        elif c == "t" and text.startswith("true", pos):
            value, pos = True, pos + 4
        elif c == "f" and text.startswith("false", pos):
            value, pos = False, pos + 5
        else:
            m = number(text, pos)
            if m is not None:
                integer, frac, exp = m.groups()
                value = float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)
                pos = m.end()
            elif text.startswith(("NaN", "Infinity", "-Infinity"), pos):
                raise Constant(next(w for w in ("NaN", "Infinity", "-Infinity") if text.startswith(w, pos)))
            else:
                raise JSONDecodeError("Expecting value", text, pos)
        # a value is complete: it goes into the open container, which then continues or closes
        while True:
            if not items:
                return value, pos
            top = items[-1]
            obj = is_object[-1]
            top.append((keys[-1], value) if obj else value)
            pos = ws(text, pos)
            c = text[pos] if pos < n else ""
            if c == ",":
                pos = ws(text, pos + 1)
                if obj:
                    keys[-1], pos = _key(text, pos)
                break
            if c == ("}" if obj else "]"):
                pos += 1
                items.pop()
                is_object.pop()
                keys.pop()
                value = pairs_hook(top) if obj else top
                continue
            raise JSONDecodeError("Expecting ',' delimiter", text, pos)


def _skip(text: str, pos: int) -> int:
    """The offset after the blanks at `pos`."""
    m = _WS.match(text, pos)
    return m.end() if m is not None else pos


def _key(text: str, pos: int) -> tuple[str, int]:
    """A key, its `:` and the blanks after it, from `pos` (at the key's opening quote)."""
    if not text.startswith('"', pos):
        raise JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = scanstring(text, pos + 1, True)
    pos = _skip(text, pos)
    if not text.startswith(":", pos):
        raise JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _skip(text, pos + 1)


def _path(items: list[list[Any]], is_object: list[bool], keys: list[str]) -> str:
    """`spec.devices.config[0].opaque.parameters.a.a...` of the open containers: the first steps only."""
    out = ""
    for i, (held, obj) in enumerate(zip(items, is_object, strict=True)):
        if i == SHOWN_STEPS:
            return f"{out}..."
        if obj:
            out += f".{keys[i]}" if out else keys[i]
        else:
            out += f"[{len(held)}]"
    return out or "the top level"


def loads(
    text: str | bytes, max_depth: int, pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """`json.loads(text)`; a value nested deeper than its C decoder recurses is decoded by `decode`
    (ValueError past `max_depth` levels, as for anything else that is not one JSON value). `pairs_hook`
    makes the objects (json's `object_pairs_hook`; webhook.io.sharedjson)."""
    try:
        return json.loads(text, object_pairs_hook=pairs_hook)
    except RecursionError:
        s = text if isinstance(text, str) else text.decode("utf-8")  # JSON from an API server is UTF-8
        value, end = decode(s, _skip(s, 0), pairs_hook or dict, max_depth)
        end = _skip(s, end)
        if end != len(s):
            raise JSONDecodeError("Extra data", s, end) from None
        return value
