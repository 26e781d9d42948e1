"""The CEL standard library at run time (cel-go `common/stdlib` and `common/types` semantics):
arithmetic with int64/uint64 overflow errors, comparisons, `in`, `size`, conversions, string tests,
timestamps and durations, optional values and `type()`."""

from __future__ import annotations

import math
import re
from typing import Any

from webhook.cel.common.values import (
    INT64_MAX,
    INT64_MIN,
    LIST_TYPES,
    MAP_TYPES,
    NO_SUCH_OVERLOAD,
    NONE,
    UINT64_MAX,
    BoolKeyMap,
    CelError,
    MutList,
    MutMap,
    Optional,
    UInt,
    check_int,
    check_uint,
    compare,
    equal,
    is_zero,
    key_value,
    lookup_key,
    map_key,
    no_such_overload,
    type_name,
    type_of,
)
from webhook.cel.lib import regex, timelib
from webhook.cel.lib.functions import (
    TRAVERSAL,
    actual_size,
    check_size,
    cost_first_traversal,
    cost_regex,
    register,
)
from webhook.cel.lib.printing import debug, to_string
from webhook.cel.lib.timelib import Duration, Timestamp

# ---- arithmetic -------------------------------------------------------------------------------------


def _overload(fn: str, a: Any) -> CelError:
    """cel-go's singleton operators: a receiver without the trait -> "no such overload: fn";
    a receiver with the trait but a wrong operand -> "no such overload"."""
    return CelError(NO_SUCH_OVERLOAD) if type(a) in _ARITH else CelError(f"no such overload: {fn}")


_ARITH = {int, UInt, float, str, bytes, list, MutList, Timestamp, Duration}


def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a + b)
    if ta is float and tb is float:
        return a + b
    if ta is str and tb is str:
        check_size(len(a) + len(b))
        return a + b
    if ta is UInt and tb is UInt:
        return check_uint(a + b)
    if ta is MutList and tb in LIST_TYPES:
        check_size(len(a) + len(b))
        a.extend(b)
        return a
    if ta in LIST_TYPES and tb in LIST_TYPES:
        check_size(len(a) + len(b))
        return a + b
    if ta is bytes and tb is bytes:
        check_size(len(a) + len(b))
        return a + b
    if ta is Timestamp and tb is Duration:
        return timelib.add_ts_dur(a, b)
    if ta is Duration and tb is Timestamp:
        return timelib.add_ts_dur(b, a)
    if ta is Duration and tb is Duration:
        return Duration(a.ns + b.ns)
    raise _overload("_+_", a)


def _add_cost(args: tuple[Any, ...], result: Any) -> int:
    a, b = args
    if type(a) in (str, bytes) and type(b) is type(a):
        return math.ceil((len(a) + len(b)) * TRAVERSAL)
    return 1


def _added(args: tuple[Any, ...], result: Any) -> int:
    """What `+` built: an accumulator list grows in place by the appended part only."""
    a, b = args
    if type(a) is MutList:
        return len(b)
    return len(result) if type(result) in (str, bytes, list) else 0


def sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is UInt and tb is UInt:
        return check_uint(a - b)
    if ta is Timestamp and tb is Duration:
        return Timestamp(a.ns - b.ns, a.offset)
    if ta is Timestamp and tb is Timestamp:
        return timelib.sub_ts_ts(a, b)
    if ta is Duration and tb is Duration:
        return Duration(a.ns - b.ns)
    raise _overload("_-_", a)


def mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a * b)
    if ta is float and tb is float:
        return a * b
    if ta is UInt and tb is UInt:
        return check_uint(a * b)
    raise _overload("_*_", a)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError("division by zero")
        return check_int(_trunc_div(a, b))
    if ta is float and tb is float:
        if b == 0.0:
            if a != a or a == 0.0:
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if ta is UInt and tb is UInt:
        if b == 0:
            raise CelError("division by zero")
        return UInt(a // b)
    raise _overload("_/_", a)


def mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError("modulus by zero")
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    if ta is UInt and tb is UInt:
        if b == 0:
            raise CelError("modulus by zero")
        return UInt(a % b)
    raise _overload("_%_", a)


def neg(a: Any) -> Any:
    t = type(a)
    if t is int:
        return check_int(-a)
    if t is float:
        return -a
    if t is Duration:
        return Duration(-a.ns)
    raise CelError("no such overload: -_")


def logical_not(a: Any) -> Any:
    if type(a) is bool:
        return not a
    raise CelError("no such overload")


def _cmp(fn: str) -> Any:
    def less(a: Any, b: Any) -> bool:
        return compare(a, b, fn) < 0

    def less_eq(a: Any, b: Any) -> bool:
        return compare(a, b, fn) <= 0

    def greater(a: Any, b: Any) -> bool:
        return compare(a, b, fn) > 0

    def greater_eq(a: Any, b: Any) -> bool:
        return compare(a, b, fn) >= 0

    return {"_<_": less, "_<=_": less_eq, "_>_": greater, "_>=_": greater_eq}[fn]


def _cmp_cost(args: tuple[Any, ...], result: Any) -> int:
    a, b = args
    if type(a) in (str, bytes) and type(b) is type(a):
        return math.ceil(min(len(a), len(b)) * TRAVERSAL)
    return 1


def in_(x: Any, container: Any) -> bool:
    t = type(container)
    if t in LIST_TYPES:
        tx = type(x)
        if tx is str or tx is bool:
            return any(type(y) is tx and y == x for y in container)
        return any(equal(x, y) for y in container)
    if t in MAP_TYPES:
        k = lookup_key(x)
        try:
            return k in container
        except TypeError:
            return False
    raise CelError(NO_SUCH_OVERLOAD)


def _in_cost(args: tuple[Any, ...], result: Any) -> int:
    c = args[1]
    return len(c) if type(c) in LIST_TYPES else 1


def size(v: Any) -> int:
    t = type(v)
    if t is str or t is bytes or t in LIST_TYPES or t in MAP_TYPES:
        return len(v)
    raise CelError("no such overload: size")


# ---- conversions ------------------------------------------------------------------------------------

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_BOOL_TEXT = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_BOOL_TEXT.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False})


def _conversion_error(v: Any, to: str) -> CelError:
    return CelError(f"type conversion error from '{type_name(v)}' to '{to}'")


def to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v  # type: ignore[no-any-return]
    if t is UInt:
        if v > INT64_MAX:
            raise CelError("integer overflow")
        return int(v)
    if t is float:
        if v != v or math.isinf(v) or v <= -9.223372036854775808e18 or v >= 9.223372036854775807e18:
            raise CelError("integer overflow")
        return int(v)
    if t is str:
        if _INT_TEXT.fullmatch(v) and len(v) < 64:
            n = int(v)
            if INT64_MIN <= n <= INT64_MAX:
                return n
        raise _conversion_error(v, "int")
    if t is Timestamp:
        return v.ns // timelib.NS
    if t is Duration:
        return v.ns
    raise no_such_overload("int", v)


def to_uint(v: Any) -> UInt:
    t = type(v)
    if t is UInt:
        return v  # type: ignore[no-any-return]
    if t is int:
        if v < 0:
            raise CelError("unsigned integer overflow")
        return UInt(v)
    if t is float:
        if v != v or math.isinf(v) or v < 0 or v >= 1.8446744073709552e19:
            raise CelError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        if _INT_TEXT.fullmatch(v) and not v.startswith(("-", "+")) and len(v) < 64:
            n = int(v)
            if n <= UINT64_MAX:
                return UInt(n)
        raise _conversion_error(v, "uint")
    raise no_such_overload("uint", v)


def to_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return v  # type: ignore[no-any-return]
    if t is int or t is UInt:
        return float(v)
    if t is str:
        if len(v) < 800:
            if _FLOAT_TEXT.fullmatch(v):
                return float(v)
            if _HEX_FLOAT.fullmatch(v):
                return float.fromhex(v)
        raise _conversion_error(v, "double")
    raise no_such_overload("double", v)


def to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v  # type: ignore[no-any-return]
    if type(v) is str:
        return v.encode("utf-8", "surrogatepass")
    raise no_such_overload("bytes", v)


def to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v  # type: ignore[no-any-return]
    if type(v) is str:
        b = _BOOL_TEXT.get(v)
        if b is None:
            raise _conversion_error(v, "bool")
        return b
    raise no_such_overload("bool", v)


def to_timestamp(v: Any) -> Timestamp:
    t = type(v)
    if t is Timestamp:
        return v  # type: ignore[no-any-return]
    if t is str:
        return timelib.parse_timestamp(v)
    if t is int:
        return timelib.timestamp_of_seconds(v)
    raise no_such_overload("timestamp", v)


def to_duration(v: Any) -> Duration:
    t = type(v)
    if t is Duration:
        return v  # type: ignore[no-any-return]
    if t is str:
        return timelib.parse_duration(v)
    if t is int:
        raise CelError("type conversion error from 'int' to 'google.protobuf.Duration'")
    raise no_such_overload("duration", v)


def dyn(v: Any) -> Any:
    return v


# ---- strings ------------------------------------------------------------------------------------------


def _strings(fn: str, a: Any, b: Any) -> tuple[str, str]:
    if type(a) is str and type(b) is str:
        return a, b
    if fn == "matches":
        raise no_such_overload(fn, a, b)
    raise CelError(NO_SUCH_OVERLOAD)  # contains/startsWith/endsWith: type guards disabled in cel-go


def contains(a: Any, b: Any) -> bool:
    s, sub_ = _strings("contains", a, b)
    return sub_ in s


def starts_with(a: Any, b: Any) -> bool:
    s, p = _strings("startsWith", a, b)
    return s.startswith(p)


def ends_with(a: Any, b: Any) -> bool:
    s, p = _strings("endsWith", a, b)
    return s.endswith(p)


def matches(a: Any, b: Any) -> bool:
    s, p = _strings("matches", a, b)
    return regex.compile_pattern(p).search(s) is not None


def _contains_cost(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(actual_size(args[0]) * TRAVERSAL) * math.ceil(actual_size(args[1]) * TRAVERSAL)


# ---- time accessors ---------------------------------------------------------------------------------


def _getter(name: str) -> tuple[Any, Any]:
    def one(v: Any) -> int:
        if type(v) is Timestamp:
            return timelib.timestamp_get(v, name)
        if type(v) is Duration and name in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
            return timelib.duration_get(v, name)
        raise no_such_overload(name, v)

    def with_tz(v: Any, tz: Any) -> int:
        if type(v) is Timestamp and type(tz) is str:
            return timelib.timestamp_get(v, name, tz)
        raise no_such_overload(name, v, tz)

    return one, with_tz


# ---- optional ---------------------------------------------------------------------------------------


def opt_of(v: Any) -> Optional:
    return Optional(v)


def opt_of_non_zero(v: Any) -> Optional:
    return NONE if is_zero(v) else Optional(v)


def opt_none() -> Optional:
    return NONE


def opt_value(o: Any) -> Any:
    if type(o) is not Optional:
        raise no_such_overload("value", o)
    if not o.has_value():
        raise CelError("optional.none() dereference")
    return o.value


def opt_has_value(o: Any) -> bool:
    if type(o) is not Optional:
        raise no_such_overload("hasValue", o)
    return o.has_value()


def opt_or(o: Any, other: Any) -> Any:
    if type(o) is not Optional or type(other) is not Optional:
        raise no_such_overload("or", o, other)
    return o if o.has_value() else other


def opt_or_value(o: Any, other: Any) -> Any:
    if type(o) is not Optional:
        raise no_such_overload("orValue", o, other)
    return o.value if o.has_value() else other


def _insert(m: Any, k: Any, v: Any) -> Any:
    mk = map_key(k)
    if lookup_key(k) in m:
        raise CelError(f"insert failed: key {_fmt(k)} already exists")
    out = m if type(m) is MutMap else (BoolKeyMap(m) if type(m) is BoolKeyMap else dict(m))
    if type(k) is bool and type(out) is dict:
        out = BoolKeyMap(out)
    out[mk] = v
    return out


def _fmt(k: Any) -> str:
    if type(k) is bool:
        return "true" if k else "false"
    return str(k)


def opt_unwrap(xs: Any) -> list[Any]:
    """optional.unwrap(list) / list.unwrapOpt(): the values of the optionals that hold one."""
    if type(xs) not in LIST_TYPES:
        raise no_such_overload("optional.unwrap", xs)
    out = []
    for o in xs:
        if type(o) is not Optional:
            raise CelError(f"value {debug(o)} is not optional")
        if o.has_value():
            out.append(o.value)
    return out


def map_insert(m: Any, k: Any, v: Any) -> Any:
    """cel.@mapInsert(map, key, value) (transformMap / transformMapEntry macros)."""
    if type(m) not in MAP_TYPES:
        raise no_such_overload("cel.@mapInsert", m, k, v)
    return _insert(m, k, v)


def map_insert_all(m: Any, entries: Any) -> Any:
    """cel.@mapInsert(map, entries)."""
    if type(m) not in MAP_TYPES or type(entries) not in MAP_TYPES:
        raise no_such_overload("cel.@mapInsert", m, entries)
    for k, v in list(entries.items()):
        m = _insert(m, key_value(k), v)
    return m


def _register() -> None:
    register("_+_", 2, add, cost=_add_cost, grows=_added)
    register("_-_", 2, sub)
    register("_*_", 2, mul)
    register("_/_", 2, div)
    register("_%_", 2, mod)
    register("-_", 1, neg)
    register("!_", 1, logical_not)
    for fn in ("_<_", "_<=_", "_>_", "_>=_"):
        register(fn, 2, _cmp(fn), cost=_cmp_cost)
    register("@in", 2, in_, cost=_in_cost)
    register("_in_", 2, in_, cost=_in_cost)  # cel-go's former names of `in`, still callable
    register("in", 2, in_, cost=_in_cost)
    register("size", 1, size, both=True)
    register("int", 1, to_int)
    register("uint", 1, to_uint)
    register("double", 1, to_double)
    register("string", 1, to_string)
    register("bytes", 1, to_bytes, cost=cost_first_traversal)
    register("bool", 1, to_bool)
    register("timestamp", 1, to_timestamp)
    register("duration", 1, to_duration)
    register("dyn", 1, dyn)
    register("type", 1, type_of)
    register("contains", 2, contains, member=True, cost=_contains_cost)
    register("startsWith", 2, starts_with, member=True, cost=cost_first_traversal)
    register("endsWith", 2, ends_with, member=True, cost=cost_first_traversal)
    register("matches", 2, matches, both=True, cost=cost_regex)
    for name in (
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ):
        one, with_tz = _getter(name)
        register(name, 1, one, member=True)
        register(name, 2, with_tz, member=True)
    register("optional.of", 1, opt_of)
    register("optional.ofNonZeroValue", 1, opt_of_non_zero)
    register("optional.none", 0, opt_none)
    register("value", 1, opt_value, member=True)
    register("hasValue", 1, opt_has_value, member=True)
    register("or", 2, opt_or, member=True)
    register("orValue", 2, opt_or_value, member=True)
    register("optional.unwrap", 1, opt_unwrap, grows=True)
    register("unwrapOpt", 1, opt_unwrap, member=True, grows=True)
    register("cel.@mapInsert", 3, map_insert)
    register("cel.@mapInsert", 2, map_insert_all)


_register()
