"""CEL values in Python, with cel-go's semantics: types, heterogeneous equality, ordering, errors.

Representation (chosen so the common values need no wrapping):

    int -> int (int64, overflow checked by the operators)   uint -> UInt(int)     double -> float
    bool -> bool   string -> str   bytes -> bytes   null -> None   list -> list   map -> dict
    optional -> Optional   type -> CelType   timestamp/duration -> webhook.cel.lib.timelib
    kubernetes.Quantity / kubernetes.Semver -> webhook.model classes; net.IP / net.CIDR -> netlib

Map keys are str, int, UInt or bool; because `True == 1` in Python, a map with a bool key is a
`BoolKeyMap`, whose keys are stored as `BoolKey` (see `map_key` / `key_value`).

Errors are values in CEL; here they are raised (`CelError`) and caught where CEL absorbs them
(`&&`, `||`, comprehension conditions). `EvaluationStopped` (cost/size limits) is not a CelError: nothing
absorbs it.
"""

from __future__ import annotations

import math
from typing import Any

from webhook.model.errors import DraguardError

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class CelError(DraguardError):
    """A CEL runtime error value (cel-go's types.Err): `message` is cel-go's text."""

    cost = 0  # the evaluation's actual cost when it raised (set by the evaluator)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EvaluationStopped(DraguardError):
    """The evaluation exceeded its cost or size limit; `message` in Kubernetes' wording."""

    cost = 0

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"
SIZE_LIMIT_MESSAGE = "operation cancelled: result size limit exceeded"


class UInt(int):
    """A CEL uint (0 .. 2^64-1)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class BoolKey:
    """A bool used as a map key (kept apart from the ints 0 and 1)."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "true" if self.value else "false"


TRUE_KEY = BoolKey(True)
FALSE_KEY = BoolKey(False)


class BoolKeyMap(dict):  # type: ignore[type-arg]
    """A CEL map with at least one bool key (stored as BoolKey)."""

    __slots__ = ()


class DefaultMap(dict):  # type: ignore[type-arg]
    """`device.attributes` / `device.capacity`: looking up an absent key yields an empty map
    (Kubernetes' mapper); `in`, size, iteration and equality see only the real keys."""

    __slots__ = ()


class MutList(list):  # type: ignore[type-arg]
    """The accumulator list of a comprehension: `accu + [x]` appends in place (as cel-go's mutable list)."""

    __slots__ = ()


class MutMap(dict):  # type: ignore[type-arg]
    """The accumulator map of a comprehension (cel.@mapInsert inserts in place)."""

    __slots__ = ()


def map_key(k: Any) -> Any:
    """The dict key for a CEL map key value (raises CelError for an unsupported key type)."""
    t = type(k)
    if t is str or t is int or t is UInt:
        return k
    if t is bool:
        return TRUE_KEY if k else FALSE_KEY
    raise CelError(f"unsupported key type: {type_name(k)}")


def key_value(k: Any) -> Any:
    """The CEL value of a stored dict key."""
    return k.value if type(k) is BoolKey else k


def lookup_key(k: Any) -> Any:
    """The dict key to look `k` up with, or _ABSENT if no key of a map can equal it (heterogeneous:
    a double finds an integral int/uint key; a bool finds only a bool key)."""
    t = type(k)
    if t is str or t is int or t is UInt:
        return k
    if t is bool:
        return TRUE_KEY if k else FALSE_KEY
    if t is float:
        if k != k or math.isinf(k) or not k.is_integer():
            return _ABSENT
        return int(k)
    return _ABSENT


_ABSENT = object()


class Optional:
    """optional(T): `value` is the held value, or NONE's sentinel."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def has_value(self) -> bool:
        return self.value is not _NOTHING

    def __eq__(self, other: object) -> bool:
        if type(other) is not Optional:
            return False
        if self.value is _NOTHING or other.value is _NOTHING:
            return self.value is other.value
        return equal(self.value, other.value) is True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "optional.none()" if self.value is _NOTHING else f"optional.of({self.value!r})"


_NOTHING = object()
NONE = Optional(_NOTHING)


class CelType:
    """A type value (`type(x)`, `int`, `kubernetes.Quantity`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return type(other) is CelType and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


# Classes of library values register their CEL type name here (quantity, semver, ip, ...).
TYPE_NAMES: dict[type, str] = {
    bool: "bool",
    int: "int",
    UInt: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    type(None): "null_type",
    list: "list",
    MutList: "list",
    dict: "map",
    BoolKeyMap: "map",
    DefaultMap: "map",
    MutMap: "map",
    Optional: "optional_type",
    CelType: "type",
}
LIST_TYPES = (list, MutList)
MAP_TYPES = (dict, BoolKeyMap, DefaultMap, MutMap)


def type_name(v: Any) -> str:
    """cel-go's runtime type name of a value (`int`, `list`, `kubernetes.Quantity`, ...)."""
    return TYPE_NAMES.get(type(v)) or type(v).__name__


def type_of(v: Any) -> CelType:
    return CelType(type_name(v))


def no_such_overload(function: str, *args: Any) -> CelError:
    """cel-go's error for a library function applied to arguments of the wrong types."""
    return CelError(f"no such overload: {function}({', '.join(type_name(a) for a in args)})")


NO_SUCH_OVERLOAD = "no such overload"


# ---- equality and ordering ------------------------------------------------------------------------

_NUMS = (int, UInt, float)


def _num_cmp(a: Any, b: Any) -> int:
    """cel-go's cross-type numeric comparison (a double is compared in double precision)."""
    if type(a) is float or type(b) is float:
        x, y = float(a), float(b)
        return (x > y) - (x < y)
    return (a > b) - (a < b)


# Kubernetes' own types (quantity, semver, IP, CIDR, URL, named format) compare only with their own type:
# against anything else their Equal is an error ("no such overload"), not false.
STRICT_EQUALITY: set[type] = set()


def equal(a: Any, b: Any) -> bool | None:
    """CEL heterogeneous equality (cel-go `types.Equal(a, b)`, i.e. `a.Equal(b)`): values of unrelated
    types are unequal, except that a Kubernetes type compared with another type is an error (None)."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        if ta is list or ta is MutList:
            return _list_eq(a, b)
        if ta in MAP_TYPES:
            return _map_eq(a, b)
        if ta is Optional:
            if a.value is _NOTHING or b.value is _NOTHING:
                return a.value is b.value
            return equal(a.value, b.value)
        return bool(a == b)
    if ta in _NUMS and tb in _NUMS:
        if (ta is float and a != a) or (tb is float and b != b):
            return False
        return _num_cmp(a, b) == 0
    if ta in LIST_TYPES and tb in LIST_TYPES:
        return _list_eq(a, b)
    if ta in MAP_TYPES and tb in MAP_TYPES:
        return _map_eq(a, b)
    if ta in STRICT_EQUALITY and b is not None:
        return None
    return False


def _list_eq(a: list[Any], b: list[Any]) -> bool:
    """cel-go list equality: an element comparison that errs does not make the lists unequal."""
    if len(a) != len(b):
        return False
    return all(equal(x, y) is not False for x, y in zip(a, b, strict=True))


def _map_eq(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    if len(a) != len(b):
        return False
    for k, v in a.items():
        other = b.get(k, _ABSENT)
        if other is _ABSENT:
            return False
        if equal(v, other) is False:
            return False
    return True


def compare(a: Any, b: Any, function: str) -> int:
    """Ordering for `<`, `<=`, `>`, `>=` (ints, uints and doubles across types; strings, bytes,
    bools, timestamps, durations); raises CelError otherwise."""
    ta = type(a)
    tb = type(b)
    if ta in _NUMS and tb in _NUMS:
        if (ta is float and a != a) or (tb is float and b != b):
            raise CelError("NaN values cannot be ordered")
        return _num_cmp(a, b)
    if ta is tb and ta in _ORDERED:
        return (a > b) - (a < b)  # type: ignore[no-any-return]
    if ta in _NUMS or ta in _ORDERED:
        raise CelError(NO_SUCH_OVERLOAD)
    raise CelError(f"no such overload: {function}")


_ORDERED: set[type] = {str, bytes, bool}  # timelib adds Timestamp and Duration


def register_ordered(cls: type) -> None:
    _ORDERED.add(cls)


def is_zero(v: Any) -> bool:
    """cel-go IsZeroValue (for optional.ofNonZeroValue)."""
    t = type(v)
    if t in LIST_TYPES or t in MAP_TYPES or t is str or t is bytes:
        return len(v) == 0
    if t is bool or t is int or t is UInt or t is float:
        return not v
    if v is None:
        return True
    zero = getattr(v, "is_zero_value", None)
    return bool(zero()) if zero is not None else False


def size_of(v: Any) -> int | None:
    """cel-go Sizer size (strings in code points), None if the value has no size."""
    t = type(v)
    if t is str or t is bytes or t in LIST_TYPES or t in MAP_TYPES:
        return len(v)
    if t is Optional and v.value is not _NOTHING:
        return size_of(v.value)
    return None


def check_int(v: int) -> int:
    if INT64_MIN <= v <= INT64_MAX:
        return v
    raise CelError("integer overflow")


def check_uint(v: int) -> UInt:
    if 0 <= v <= UINT64_MAX:
        return UInt(v)
    raise CelError("unsigned integer overflow")
