"""cel-go extension libraries of the Kubernetes environment at run time: strings (version 2), lists
(version 3), sets; with cel-go's error texts and runtime costs."""

from __future__ import annotations

import math
from typing import Any

from webhook.cel.common.values import (
    LIST_TYPES,
    NONE,
    CelError,
    Optional,
    UInt,
    equal,
    no_such_overload,
    type_name,
)
from webhook.cel.lib import fmtlib
from webhook.cel.lib.functions import (
    TRAVERSAL,
    actual_size,
    check_size,
    cost_first_double_traversal,
    cost_first_traversal,
    register,
)
from webhook.cel.lib.printing import debug
from webhook.cel.lib.timelib import Duration, Timestamp

# ---- strings ------------------------------------------------------------------------------------------


def _str(fn: str, *args: Any) -> None:
    raise no_such_overload(fn, *args)


def char_at(s: Any, i: Any) -> str:
    if type(s) is not str or type(i) is not int:
        _str("charAt", s, i)
    if i < 0 or i > len(s):
        raise CelError(f"index out of range: {i}")
    return s[i : i + 1]


def index_of(s: Any, sub: Any, *rest: Any) -> int:
    offset = rest[0] if rest else 0
    if type(s) is not str or type(sub) is not str or type(offset) is not int:
        _str("indexOf", s, sub, *rest)
    if sub == "":
        return offset  # type: ignore[no-any-return]
    if offset < 0:
        raise CelError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def last_index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if type(s) is not str or type(sub) is not str or (offset is not None and type(offset) is not int):
        _str("lastIndexOf", s, sub, *(() if offset is None else (offset,)))
    if offset is None:
        if sub == "":
            return len(s)
        if len(s.encode("utf-8", "surrogatepass")) < len(sub.encode("utf-8", "surrogatepass")):
            return -1
        offset = len(s) - 1
    if sub == "":
        return offset  # type: ignore[no-any-return]
    if offset < 0:
        raise CelError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    start = min(offset, len(s) - len(sub))
    if start < 0:
        return -1
    return s.rfind(sub, 0, start + len(sub))


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def lower_ascii(s: Any) -> str:
    if type(s) is not str:
        _str("lowerAscii", s)
    return s.translate(_LOWER)  # type: ignore[no-any-return]


def upper_ascii(s: Any) -> str:
    if type(s) is not str:
        _str("upperAscii", s)
    return s.translate(_UPPER)  # type: ignore[no-any-return]


def replace(s: Any, old: Any, new: Any, *rest: Any) -> str:
    n = rest[0] if rest else -1
    if type(s) is not str or type(old) is not str or type(new) is not str or type(n) is not int:
        _str("replace", s, old, new, *rest)
    if n == 0 or (old == new and old):
        return s  # type: ignore[no-any-return]
    count = (len(s) + 1) if old == "" else s.count(old)
    if n > 0:
        count = min(count, n)
    check_size(len(s) + count * (len(new) - len(old)))
    return s.replace(old, new, n if n > 0 else -1)  # type: ignore[no-any-return]


def split(s: Any, sep: Any, *rest: Any) -> list[str]:
    """Go strings.SplitN: n == 0 gives [], n < 0 all parts, "" splits into characters."""
    n = rest[0] if rest else -1
    if type(s) is not str or type(sep) is not str or type(n) is not int:
        _str("split", s, sep, *rest)
    if n == 0:
        return []
    if sep == "":
        check_size(len(s))
        chars = list(s)
        if n < 0 or n >= len(chars):
            return chars
        return chars[: n - 1] + ["".join(chars[n - 1 :])]
    return s.split(sep, n - 1 if n > 0 else -1)  # type: ignore[no-any-return]


def substring(s: Any, start: Any, end: Any = None) -> str:
    if type(s) is not str or type(start) is not int or (end is not None and type(end) is not int):
        _str("substring", s, start, *(() if end is None else (end,)))
    if end is None:
        if start < 0 or start > len(s):
            raise CelError(f"index out of range: {start}")
        return s[start:]  # type: ignore[no-any-return]
    if start > end:
        raise CelError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelError(f"index out of range: {end}")
    return s[start:end]  # type: ignore[no-any-return]


# Go's unicode.IsSpace (strings.TrimSpace)
_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def trim(s: Any) -> str:
    if type(s) is not str:
        _str("trim", s)
    return s.strip(_SPACE)  # type: ignore[no-any-return]


def join(xs: Any, *rest: Any) -> str:
    sep = rest[0] if rest else ""
    # cel-go's runtime type guard of list(string) looks at the first element only
    if type(xs) not in LIST_TYPES or type(sep) is not str or (xs and type(xs[0]) is not str):
        _str("join", xs, *rest)
    for x in xs:
        if type(x) is not str:
            raise CelError(f"join: invalid input: {debug(x)}")
    check_size(sum(len(x) for x in xs) + len(sep) * max(0, len(xs) - 1))
    return sep.join(xs)  # type: ignore[no-any-return]


def _join_cost(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(actual_size(result) * 2 * TRAVERSAL)


_QUOTE = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(s: Any) -> str:
    if type(s) is not str:
        _str("strings.quote", s)
    check_size(2 * len(s) + 2)
    body = "".join(_QUOTE.get(c, "\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c) for c in s)
    return '"' + body + '"'


def format_(s: Any, args: Any) -> str:
    if type(s) is not str or type(args) not in LIST_TYPES:
        _str("format", s, args)
    return fmtlib.format_string(s, args)


# ---- lists (version 3) --------------------------------------------------------------------------------

_CALL = 1
_LIST_CREATE = 10


def _list_out_cost(args: tuple[Any, ...], result: Any) -> int:
    return actual_size(result) * 1 + _CALL + _LIST_CREATE


def _self_compare_cost(lst: Any) -> int:
    sz = actual_size(lst)
    factor = 2.0
    if sz and type(lst[0]) in (str, bytes):
        factor += TRAVERSAL
    return int(float(sz * sz) * factor) + _CALL + _LIST_CREATE


def _lst(fn: str, xs: Any, *rest: Any) -> None:
    if type(xs) not in LIST_TYPES:
        raise no_such_overload(fn, xs, *rest)


def slice_(xs: Any, start: Any, end: Any) -> list[Any]:
    _lst("slice", xs, start, end)
    if type(start) is not int or type(end) is not int:
        raise no_such_overload("slice", xs, start, end)
    if start < 0 or end < 0:
        raise CelError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(xs) < end:
        raise CelError(f"cannot slice({start}, {end}), list is length {len(xs)}")
    return list(xs[start:end])


def _flatten(xs: list[Any], depth: int, out: list[Any]) -> None:
    stack: list[tuple[list[Any], int, int]] = [(xs, 0, depth)]
    while stack:
        lst, i, d = stack.pop()
        while i < len(lst):
            v = lst[i]
            i += 1
            if type(v) in LIST_TYPES and d > 0:
                stack.append((lst, i, d))
                stack.append((v, 0, d - 1))
                break
            out.append(v)
            if len(out) > 4_000_000:
                check_size(len(out))


def flatten(xs: Any, *rest: Any) -> list[Any]:
    depth = rest[0] if rest else 1
    if type(xs) not in LIST_TYPES:
        raise CelError(f"no such overload: {type_name(xs)}.flatten({', '.join(type_name(r) for r in rest)})")
    if type(depth) is not int:
        raise no_such_overload("flatten", xs, *rest)
    if depth < 0:
        raise CelError("level must be non-negative")
    out: list[Any] = []
    _flatten(xs, depth, out)
    return out


def _flatten_cost(args: tuple[Any, ...], result: Any) -> int:
    depth = float(args[1]) if len(args) == 2 else 1.0
    return int(float(actual_size(args[0])) * depth) + _CALL + _LIST_CREATE


_COMPARABLE = (int, UInt, float, bool, str, bytes, Timestamp, Duration)


def _sort_indices(keys: list[Any]) -> list[int]:
    if not keys:
        return []
    first = type(keys[0])
    if first not in _COMPARABLE:
        raise CelError("list elements must be comparable")
    if len(keys) > 1 and any(type(k) is not first for k in keys):
        raise CelError("list elements must have the same type")
    if first is float and any(k != k for k in keys):
        raise CelError("NaN values cannot be ordered")
    return sorted(range(len(keys)), key=keys.__getitem__)


def sort(xs: Any) -> list[Any]:
    _lst("sort", xs)
    return [xs[i] for i in _sort_indices(list(xs))]


def sort_by_keys(xs: Any, keys: Any) -> list[Any]:
    if type(xs) not in LIST_TYPES or type(keys) not in LIST_TYPES:
        raise no_such_overload("@sortByAssociatedKeys", xs, keys)
    if len(xs) != len(keys):
        raise CelError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
            f"but got {len(xs)} and {len(keys)} elements respectively"
        )
    return [xs[i] for i in _sort_indices(list(keys))]


def lists_range(n: Any) -> list[int]:
    if type(n) is not int:
        raise no_such_overload("lists.range", n)
    check_size(n)
    return list(range(max(n, 0)))


def reverse(xs: Any) -> list[Any]:
    _lst("reverse", xs)
    return list(reversed(xs))


def distinct(xs: Any) -> list[Any]:
    _lst("distinct", xs)
    out: list[Any] = []
    for v in xs:
        if not any(equal(v, o) for o in out):
            out.append(v)
    return out


def first(xs: Any) -> Any:
    _lst("first", xs)
    return Optional(xs[0]) if xs else NONE


def last(xs: Any) -> Any:
    _lst("last", xs)
    return Optional(xs[-1]) if xs else NONE


# ---- sets --------------------------------------------------------------------------------------------


def _contains_all(a: list[Any], b: list[Any]) -> bool:
    return all(any(equal(y, x) for x in a) for y in b)


def sets_contains(a: Any, b: Any) -> bool:
    if type(a) not in LIST_TYPES or type(b) not in LIST_TYPES:
        raise no_such_overload("sets.contains", a, b)
    return _contains_all(a, b)


def sets_equivalent(a: Any, b: Any) -> bool:
    if type(a) not in LIST_TYPES or type(b) not in LIST_TYPES:
        raise no_such_overload("sets.equivalent", a, b)
    return _contains_all(a, b) and _contains_all(b, a)


def sets_intersects(a: Any, b: Any) -> bool:
    if type(a) not in LIST_TYPES or type(b) not in LIST_TYPES:
        raise no_such_overload("sets.intersects", a, b)
    return any(any(equal(x, y) for y in b) for x in a)


def _sets_cost(factor: float) -> Any:
    def cost(args: tuple[Any, ...], result: Any) -> int:
        return _CALL + int(float(actual_size(args[0]) * actual_size(args[1])) * factor)

    return cost


def _register() -> None:
    m = {"member": True}
    register("charAt", 2, char_at, **m)  # type: ignore[arg-type]
    register("indexOf", 2, index_of, **m, cost=lambda a, r: int(actual_size(a[0]) * TRAVERSAL))  # type: ignore[arg-type]
    register("indexOf", 3, index_of, **m, cost=lambda a, r: int(actual_size(a[0]) * TRAVERSAL))  # type: ignore[arg-type]
    register("lastIndexOf", 2, last_index_of, **m, cost=lambda a, r: int(actual_size(a[0]) * TRAVERSAL))  # type: ignore[arg-type]
    register("lastIndexOf", 3, last_index_of, **m, cost=lambda a, r: int(actual_size(a[0]) * TRAVERSAL))  # type: ignore[arg-type]
    register("lowerAscii", 1, lower_ascii, **m, cost=cost_first_traversal)  # type: ignore[arg-type]
    register("upperAscii", 1, upper_ascii, **m, cost=cost_first_traversal)  # type: ignore[arg-type]
    register("replace", 3, replace, **m, cost=cost_first_double_traversal, grows=True)  # type: ignore[arg-type]
    register("replace", 4, replace, **m, cost=cost_first_double_traversal, grows=True)  # type: ignore[arg-type]
    register("split", 2, split, **m, cost=cost_first_double_traversal, grows=True)  # type: ignore[arg-type]
    register("split", 3, split, **m, cost=cost_first_double_traversal, grows=True)  # type: ignore[arg-type]
    register("substring", 2, substring, **m, cost=cost_first_traversal)  # type: ignore[arg-type]
    register("substring", 3, substring, **m, cost=cost_first_traversal)  # type: ignore[arg-type]
    register("trim", 1, trim, **m, cost=cost_first_traversal)  # type: ignore[arg-type]
    register("join", 1, join, **m, cost=_join_cost, grows=True)  # type: ignore[arg-type]
    register("join", 2, join, **m, cost=_join_cost, grows=True)  # type: ignore[arg-type]
    register("strings.quote", 1, quote, cost=cost_first_traversal, grows=True)
    register("format", 2, format_, **m, cost=cost_first_traversal, grows=True)  # type: ignore[arg-type]
    register("slice", 3, slice_, **m, cost=_list_out_cost, grows=True)  # type: ignore[arg-type]
    register("flatten", 1, flatten, **m, cost=_flatten_cost, grows=True)  # type: ignore[arg-type]
    register("flatten", 2, flatten, **m, cost=_flatten_cost, grows=True)  # type: ignore[arg-type]
    register("sort", 1, sort, **m, cost=lambda a, r: _self_compare_cost(a[0]), grows=True)  # type: ignore[arg-type]
    register(
        "@sortByAssociatedKeys",
        2,
        sort_by_keys,
        **m,  # type: ignore[arg-type]
        cost=lambda a, r: _self_compare_cost(a[1]),
        grows=True,
    )
    register("lists.range", 1, lists_range, cost=_list_out_cost, grows=True)
    register("reverse", 1, reverse, **m, cost=_list_out_cost, grows=True)  # type: ignore[arg-type]
    register("distinct", 1, distinct, **m, cost=lambda a, r: _self_compare_cost(a[0]), grows=True)  # type: ignore[arg-type]
    register("first", 1, first, **m)  # type: ignore[arg-type]
    register("last", 1, last, **m)  # type: ignore[arg-type]
    register("sets.contains", 2, sets_contains, cost=_sets_cost(1))
    register("sets.intersects", 2, sets_intersects, cost=_sets_cost(1))
    register("sets.equivalent", 2, sets_equivalent, cost=_sets_cost(2))


_register()
