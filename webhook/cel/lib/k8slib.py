"""The Kubernetes CEL libraries at run time (k8s.io/apiserver/pkg/cel/library, v1.37): quantity, semver,
lists, regex, URLs, named formats, and DRA's `includes`; with the Kubernetes runtime cost functions.
Values are real Python objects (`webhook.model.quantity.Quantity`, `webhook.model.semver.Semver`)."""

from __future__ import annotations

import math
from typing import Any

from webhook.cel.common.values import (
    LIST_TYPES,
    MAP_TYPES,
    NO_SUCH_OVERLOAD,
    NONE,
    STRICT_EQUALITY,
    TYPE_NAMES,
    CelError,
    Optional,
    UInt,
    compare,
    equal,
    key_value,
    no_such_overload,
)
from webhook.cel.lib import regex, urls
from webhook.cel.lib.extlib import index_of as str_index_of
from webhook.cel.lib.extlib import last_index_of as str_last_index_of
from webhook.cel.lib.formats import FORMATS, NamedFormat
from webhook.cel.lib.functions import TRAVERSAL, actual_size, cost_first_traversal, cost_regex, register
from webhook.cel.lib.stdlib import add
from webhook.cel.lib.timelib import Duration, Timestamp
from webhook.model.quantity import DECIMAL_EXPONENT, INT64_MAX, Quantity, parse_quantity
from webhook.model.semver import Semver, parse_semver

TYPE_NAMES[Quantity] = "kubernetes.Quantity"
TYPE_NAMES[Semver] = "kubernetes.Semver"
STRICT_EQUALITY.update((Quantity, Semver))
LIST_INCLUDES_MAX = 48  # ResourceSliceMaxAttributeValuesPerDevice

# ---- quantity -----------------------------------------------------------------------------------------


def _q(fn: str, *args: Any) -> None:
    for a in args:
        if type(a) is not Quantity:
            raise no_such_overload(fn, *args)


def to_quantity(s: Any) -> Quantity:
    if type(s) is not str:
        raise no_such_overload("quantity", s)
    try:
        return parse_quantity(s, trim=False)
    except ValueError as e:
        raise CelError(str(e)) from None


def is_quantity(s: Any) -> bool:
    if type(s) is not str:
        raise no_such_overload("isQuantity", s)
    try:
        parse_quantity(s, trim=False)
    except ValueError:
        return False
    return True


def q_sign(q: Any) -> int:
    _q("sign", q)
    return q.sign()  # type: ignore[no-any-return]


def q_cmp(a: Any, b: Any, fn: str) -> int:
    _q(fn, a, b)
    return a.cmp(b)  # type: ignore[no-any-return]


def _as_int64(q: Quantity) -> int | None:
    if not q.is_integer:
        return None
    if not q.fits_int64():
        return None
    v = q.int_value()
    return v if -INT64_MAX - 1 <= v <= INT64_MAX else None


def q_is_integer(q: Any) -> bool:
    _q("isInteger", q)
    return _as_int64(q) is not None


def q_as_integer(q: Any) -> int:
    _q("asInteger", q)
    v = _as_int64(q)
    if v is None:
        raise CelError("cannot convert value to integer")
    return v


def q_as_float(q: Any) -> float:
    _q("asApproximateFloat", q)
    mant, exp = q._mant, q._exp
    try:
        return float(mant) * 10.0**exp if abs(exp) < 300 else float(f"{mant}e{exp}")
    except OverflowError:
        return math.copysign(math.inf, mant)


def _arith(fn: str, a: Any, b: Any) -> Quantity:
    if type(a) is not Quantity or (type(b) is not Quantity and type(b) is not int):
        raise no_such_overload(fn, a, b)
    n: Any = b
    other: Quantity = b if type(b) is Quantity else Quantity(n, 0, DECIMAL_EXPONENT)
    try:
        return a + other if fn == "add" else a - other
    except OverflowError:
        raise CelError("quantity arithmetic out of range") from None


# ---- semver -------------------------------------------------------------------------------------------


def normalize_semver(s: str) -> str:
    """`semver(s, true)`: drop one leading `v`, drop leading zeros of each of the (at most three)
    dot-separated parts, fill a short `1` / `1.2` up to three parts (which then must not carry
    pre-release or build data: ValueError)."""
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit() or not p[0].isascii():
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def to_semver(s: Any, *rest: Any) -> Semver:
    normalize = rest[0] if rest else False
    if type(s) is not str or type(normalize) is not bool:
        raise no_such_overload("semver", s, *rest)
    try:
        return parse_semver(normalize_semver(s) if normalize else s)
    except ValueError as e:
        raise CelError(str(e)) from None


def is_semver(s: Any, *rest: Any) -> bool:
    normalize = rest[0] if rest else False
    if type(s) is not str or type(normalize) is not bool:
        raise no_such_overload("isSemver", s, *rest)
    try:
        parse_semver(normalize_semver(s) if normalize else s)
    except ValueError:
        return False
    return True


def _v(fn: str, *args: Any) -> None:
    for a in args:
        if type(a) is not Semver:
            raise no_such_overload(fn, *args)


def _part(name: str) -> Any:
    def get(v: Any) -> int:
        _v(name, v)
        return int(getattr(v, name))

    return get


# ---- ordering functions shared by quantity and semver ---------------------------------------------------


def is_greater_than(a: Any, b: Any) -> bool:
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b) == 1
    return q_cmp(a, b, "isGreaterThan") == 1


def is_less_than(a: Any, b: Any) -> bool:
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b) == -1
    return q_cmp(a, b, "isLessThan") == -1


def compare_to(a: Any, b: Any) -> int:
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b)
    return q_cmp(a, b, "compareTo")


# ---- lists --------------------------------------------------------------------------------------------

_COMPARERS = (int, UInt, float, bool, str, bytes, Timestamp, Duration)


def _items(fn: str, xs: Any, elements: tuple[type, ...] = ()) -> Any:
    """The list argument; `elements`: the element types the overloads take (cel-go's runtime type guard
    looks at the first element only)."""
    if type(xs) not in LIST_TYPES or (elements and xs and type(xs[0]) not in elements):
        raise no_such_overload(fn, xs)
    return xs


def _try_compare(a: Any, b: Any) -> int | None:
    try:
        return compare(a, b, "compare")
    except CelError:
        return None


def is_sorted(xs: Any) -> bool:
    prev = None
    first = True
    for x in _items("isSorted", xs, _COMPARERS):
        if type(x) not in _COMPARERS:
            raise CelError(NO_SUCH_OVERLOAD)
        if not first and _try_compare(prev, x) == 1:
            return False
        prev, first = x, False
    return True


_ZERO: dict[type, Any] = {int: 0, UInt: UInt(0), float: 0.0, Duration: Duration(0)}
_SUMMABLE = (int, UInt, float, Duration)


def sum_(xs: Any) -> Any:
    items = _items("sum", xs, _SUMMABLE)
    acc = _ZERO.get(type(items[0]), 0) if items else 0
    for x in items:
        if type(x) not in (int, UInt, float, Duration, str, bytes, list, Timestamp):
            raise CelError(NO_SUCH_OVERLOAD)
        acc = add(acc, x)
    return acc


def _extreme(fn: str, prefer: int) -> Any:
    def pick(xs: Any) -> Any:
        result = None
        seen = False
        for x in _items(fn, xs, _COMPARERS):
            if type(x) not in _COMPARERS:
                raise CelError(NO_SUCH_OVERLOAD)
            if not seen:
                result, seen = x, True
            elif _try_compare(result, x) == prefer:
                result = x
        if not seen:
            raise CelError(f"{fn} called on empty list")
        return result

    return pick


def index_of(target: Any, item: Any, *rest: Any) -> int:
    """`list.indexOf(v)` (Kubernetes lists) or `string.indexOf(sub[, offset])` (strings extension)."""
    if type(target) in LIST_TYPES and not rest:
        for i, x in enumerate(target):
            if equal(x, item):
                return i
        return -1
    return str_index_of(target, item, *rest)


def last_index_of(target: Any, item: Any, *rest: Any) -> int:
    if type(target) in LIST_TYPES and not rest:
        for i in range(len(target) - 1, -1, -1):
            if equal(target[i], item):
                return i
        return -1
    return str_last_index_of(target, item, *rest)


def traversal_cost(v: Any) -> int:
    """Kubernetes' traversalCost: 0.1 per string/bytes element (truncated), 1 per other leaf."""
    t = type(v)
    if t is str or t is bytes:
        return int(len(v) * TRAVERSAL)
    if t in LIST_TYPES:
        return sum(traversal_cost(x) for x in v)
    if t in MAP_TYPES:
        return sum(traversal_cost(key_value(k)) + traversal_cost(x) for k, x in v.items())
    return 1


def _traversal_first(args: tuple[Any, ...], result: Any) -> int:
    return traversal_cost(args[0])


# ---- DRA includes ----------------------------------------------------------------------------------------


def includes(target: Any, arg: Any) -> bool:
    """DRA `includes()`: membership in a list attribute (no more than 48 values are looked at),
    equality for a scalar."""
    if type(target) in LIST_TYPES:
        for k, x in enumerate(target):
            if k >= LIST_INCLUDES_MAX:
                raise CelError(
                    f"'includes' function cannot be applied to lists longer than {LIST_INCLUDES_MAX} values"
                )
            if equal(x, arg):
                return True
        return False
    return equal(target, arg) is True


# ---- regex ---------------------------------------------------------------------------------------------


def find(s: Any, pattern: Any) -> str:
    if type(s) is not str or type(pattern) is not str:
        raise no_such_overload("find", s, pattern)
    return regex.find(s, pattern)


def find_all(s: Any, pattern: Any, *rest: Any) -> list[str]:
    limit = rest[0] if rest else -1
    if type(s) is not str or type(pattern) is not str or type(limit) is not int:
        raise no_such_overload("findAll", s, pattern, *rest)
    return regex.find_all(s, pattern, limit)


# ---- named formats ---------------------------------------------------------------------------------------


TYPE_NAMES[urls.URL] = "kubernetes.URL"
STRICT_EQUALITY.add(urls.URL)


def format_named(name: Any) -> Optional:
    if type(name) is not str:
        raise no_such_overload("format.named", name)
    f = FORMATS.get(name)
    return Optional(f) if f is not None else NONE


def format_validate(f: Any, s: Any) -> Optional:
    if type(f) is not NamedFormat or type(s) is not str:
        raise no_such_overload("validate", f, s)
    errors = f.validate(s)
    return Optional(list(errors)) if errors else NONE


def _validate_cost(args: tuple[Any, ...], result: Any) -> int:
    f = args[0]
    if type(f) is not NamedFormat:
        return 1
    str_cost = math.ceil((1.0 + actual_size(args[1])) * TRAVERSAL)
    return str_cost * math.ceil(f.max_regex_size * 0.25)


def _url(s: Any) -> urls.URL:
    if type(s) is not str:
        raise no_such_overload("url", s)
    return urls.parse_url(s)


def _is_url(s: Any) -> bool:
    if type(s) is not str:
        raise no_such_overload("isURL", s)
    return urls.is_url(s)


def _url_part(name: str) -> Any:
    def get(u: Any) -> Any:
        if type(u) is not urls.URL:
            raise no_such_overload(name, u)
        return getattr(u, name)()

    return get


def _register() -> None:
    m = {"member": True}
    register("quantity", 1, to_quantity, cost=cost_first_traversal)
    register("isQuantity", 1, is_quantity, cost=cost_first_traversal)
    register("sign", 1, q_sign)
    register("isInteger", 1, q_is_integer, **m)  # type: ignore[arg-type]
    register("asInteger", 1, q_as_integer, **m)  # type: ignore[arg-type]
    register("asApproximateFloat", 1, q_as_float, **m)  # type: ignore[arg-type]
    register("add", 2, lambda a, b: _arith("add", a, b), **m)  # type: ignore[arg-type]
    register("sub", 2, lambda a, b: _arith("sub", a, b), **m)  # type: ignore[arg-type]
    register("semver", 1, to_semver, cost=cost_first_traversal)
    register("semver", 2, to_semver, cost=cost_first_traversal)
    register("isSemver", 1, is_semver, cost=cost_first_traversal)
    register("isSemver", 2, is_semver, cost=cost_first_traversal)
    for part in ("major", "minor", "patch"):
        register(part, 1, _part(part), **m)  # type: ignore[arg-type]
    register("isGreaterThan", 2, is_greater_than, **m)  # type: ignore[arg-type]
    register("isLessThan", 2, is_less_than, **m)  # type: ignore[arg-type]
    register("compareTo", 2, compare_to, **m)  # type: ignore[arg-type]
    register("isSorted", 1, is_sorted, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("sum", 1, sum_, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("min", 1, _extreme("min", 1), **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("max", 1, _extreme("max", -1), **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("indexOf", 2, index_of, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("indexOf", 3, index_of, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("lastIndexOf", 2, last_index_of, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("lastIndexOf", 3, last_index_of, **m, cost=_traversal_first)  # type: ignore[arg-type]
    register("includes", 2, includes, **m, cost=lambda a, r: 1)  # type: ignore[arg-type]
    register("find", 2, find, **m, cost=cost_regex)  # type: ignore[arg-type]
    register("findAll", 2, find_all, **m, cost=cost_regex, grows=True)  # type: ignore[arg-type]
    register("findAll", 3, find_all, **m, cost=cost_regex, grows=True)  # type: ignore[arg-type]
    register("url", 1, _url, cost=cost_first_traversal)
    register("isURL", 1, _is_url)
    for part in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery"):
        register(part, 1, _url_part(part), **m)  # type: ignore[arg-type]
    register("format.named", 1, format_named)
    register("validate", 2, format_validate, **m, cost=_validate_cost)  # type: ignore[arg-type]


def _register_formats() -> None:
    for name, f in FORMATS.items():
        register(f"format.{name}", 0, lambda f=f: f)


_register()
_register_formats()
