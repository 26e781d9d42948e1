"""CEL strings extension (version 2) in Python, for expressions that also call the Kubernetes list
`indexOf`/`lastIndexOf`: cel-expr-python's native strings extension owns those two names and cannot be
extended, so such expressions compile in a second environment that declares both overload families here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webhook.cel.k8slib import l_index_of, l_last_index_of


def _range_error(i: int) -> ValueError:
    return ValueError(f"index out of range: {i}")


def char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _range_error(i)
    return s[i : i + 1]


def index_of(target: Any, sub: Any, start: int = 0) -> int:
    """`s.indexOf(sub[, start])` for strings, `list.indexOf(v)` for lists (Kubernetes lists library)."""
    if isinstance(target, list):
        return l_index_of(target, sub)
    if not isinstance(target, str) or not isinstance(sub, str):
        raise TypeError("no such overload: indexOf")
    if start < 0 or start > len(target):
        raise _range_error(start)
    return target.find(sub, start)


def last_index_of(target: Any, sub: Any, end: int | None = None) -> int:
    if isinstance(target, list):
        return l_last_index_of(target, sub)
    if not isinstance(target, str) or not isinstance(sub, str):
        raise TypeError("no such overload: lastIndexOf")
    if end is None:
        return target.rfind(sub)
    if end < 0 or end > len(target):
        raise _range_error(end)
    return target.rfind(sub, 0, end + len(sub))


def _ascii(s: str, upper: bool) -> str:
    table = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if upper else "abcdefghijklmnopqrstuvwxyz",
    )
    return s.translate(table)


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n if n >= 0 else -1)


def split(s: str, sep: str, n: int = -1) -> list[str]:
    """Go `strings.SplitN` semantics: n == 0 gives [], n < 0 all parts, "" splits into characters."""
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if n < 0 or n >= len(chars) else chars[: n - 1] + ["".join(chars[n - 1 :])]
    return s.split(sep, n - 1 if n > 0 else -1)


def substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start < 0 or start > len(s):
        raise _range_error(start)
    if end < 0 or end > len(s):
        raise _range_error(end)
    if start > end:
        raise ValueError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def join(xs: list[Any], sep: str = "") -> str:
    if not all(isinstance(x, str) for x in xs):
        raise TypeError("no such overload: join")
    return sep.join(xs)


def quote(s: str) -> str:
    out = []
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    for ch in s:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch in ('"', "\\"):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# (name, overload id, parameter kinds, result kind, implementation, member)
FUNCTIONS: list[tuple[str, str, list[str], str, Callable[..., Any], bool]] = [
    ("charAt", "py_string_char_at_int", ["string", "int"], "string", char_at, True),
    ("indexOf", "py_string_index_of_string", ["string", "string"], "int", index_of, True),
    ("indexOf", "py_string_index_of_string_int", ["string", "string", "int"], "int", index_of, True),
    ("indexOf", "py_list_index_of", ["list", "dyn"], "int", index_of, True),
    ("lastIndexOf", "py_string_last_index_of_string", ["string", "string"], "int", last_index_of, True),
    (
        "lastIndexOf",
        "py_string_last_index_of_string_int",
        ["string", "string", "int"],
        "int",
        last_index_of,
        True,
    ),
    ("lastIndexOf", "py_list_last_index_of", ["list", "dyn"], "int", last_index_of, True),
    ("lowerAscii", "py_string_lower_ascii", ["string"], "string", lambda s: _ascii(s, False), True),
    ("upperAscii", "py_string_upper_ascii", ["string"], "string", lambda s: _ascii(s, True), True),
    ("replace", "py_string_replace_string_string", ["string", "string", "string"], "string", replace, True),
    (
        "replace",
        "py_string_replace_string_string_int",
        ["string", "string", "string", "int"],
        "string",
        replace,
        True,
    ),
    ("split", "py_string_split_string", ["string", "string"], "list", split, True),
    ("split", "py_string_split_string_int", ["string", "string", "int"], "list", split, True),
    ("substring", "py_string_substring_int", ["string", "int"], "string", substring, True),
    ("substring", "py_string_substring_int_int", ["string", "int", "int"], "string", substring, True),
    ("trim", "py_string_trim", ["string"], "string", lambda s: s.strip(), True),
    ("join", "py_list_join", ["list"], "string", join, True),
    ("join", "py_list_join_string", ["list", "string"], "string", join, True),
    ("strings.quote", "py_strings_quote", ["string"], "string", quote, False),
]
