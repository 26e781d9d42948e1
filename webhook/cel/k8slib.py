"""The Kubernetes CEL library functions DRA selectors may call, for cel-expr-python.

cel-expr-python cannot carry custom value types, so semver and quantity values travel through CEL as
tagged strings (`\\x01v:1.2.3`, `\\x01q:1536`); the tag keeps the exact value, so `==` between two
quantities or two versions compares values as Kubernetes does (`1Gi == 1024Mi`). The parsing and
arithmetic live in `webhook.model.semver` / `webhook.model.quantity`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel

from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.semver import Semver, parse_semver

SEMVER_TAG = "\x01v:"
QUANTITY_TAG = "\x01q:"
TAG_PREFIX = "\x01"  # API strings starting with this are refused by the converter (no spoofing)
MAX_INT64 = (1 << 63) - 1
_LIST_INCLUDES_MAX = 48  # ResourceSliceMaxAttributeValuesPerDevice: `includes` looks at no more


def _decimal(v: Fraction) -> str:
    """An exact decimal string for a quantity's value (quantities have finite decimal expansions)."""
    for scale in range(64):
        n = v * 10**scale
        if n.denominator == 1:
            break
    else:  # not a finite decimal: cannot come from a parsed quantity
        return repr(float(v))
    digits = str(abs(n.numerator)).rjust(scale + 1, "0")
    sign = "-" if v < 0 else ""
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}" if scale else sign + digits


# ---- tagged values ---------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def semver_tag(v: Semver) -> str:
    """The CEL representation of a version: build metadata dropped (it does not take part in ==)."""
    return SEMVER_TAG + str(v).partition("+")[0]


@lru_cache(maxsize=8192)
def quantity_tag(q: Quantity) -> str:
    try:
        return QUANTITY_TAG + _decimal(q.value)
    except OverflowError:  # absurd exponents: the canonical form is still exact enough to compare
        return QUANTITY_TAG + q.canonical()


@lru_cache(maxsize=8192)
def _semver_of(tag: str) -> Semver:
    return parse_semver(tag[len(SEMVER_TAG) :])


@lru_cache(maxsize=8192)
def _quantity_of(tag: str) -> Quantity:
    return parse_quantity(tag[len(QUANTITY_TAG) :])


def _obj(x: Any) -> Semver | Quantity:
    if isinstance(x, str):
        if x.startswith(SEMVER_TAG):
            return _semver_of(x)
        if x.startswith(QUANTITY_TAG):
            return _quantity_of(x)
    raise TypeError(f"no such overload: expected a semver or quantity, got {_kind(x)}")


def _kind(x: Any) -> str:
    if isinstance(x, str):
        return (
            "semver" if x.startswith(SEMVER_TAG) else "quantity" if x.startswith(QUANTITY_TAG) else "string"
        )
    return type(x).__name__


def _quantity(x: Any) -> Quantity:
    if isinstance(x, str) and x.startswith(QUANTITY_TAG):
        return _quantity_of(x)
    raise TypeError(f"no such overload: expected a quantity, got {_kind(x)}")


def _semver(x: Any) -> Semver:
    if isinstance(x, str) and x.startswith(SEMVER_TAG):
        return _semver_of(x)
    raise TypeError(f"no such overload: expected a semver, got {_kind(x)}")


# ---- semver (Kubernetes semver library, version 1) ---------------------------------------------------


def normalize_semver(s: str) -> str:
    """`semver(s, true)`: drop a leading `v`, fill in missing minor/patch, drop leading zeros."""
    if s.startswith("v"):
        s = s[1:]
    m = re.search(r"[-+]", s)
    core, rest = (s[: m.start()], s[m.start() :]) if m else (s, "")
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    parts = [(p.lstrip("0") or "0") if p.isdigit() else p for p in parts]
    return ".".join(parts) + rest


def k8s_semver(s: str, normalize: bool = False) -> str:
    try:
        return semver_tag(parse_semver(normalize_semver(s) if normalize else s))
    except ValueError as e:
        raise ValueError(f"string is not a valid SemVer: {e}") from None


def k8s_is_semver(s: str, normalize: bool = False) -> bool:
    try:
        parse_semver(normalize_semver(s) if normalize else s)
        return True
    except ValueError:
        return False


def k8s_quantity(s: str) -> str:
    try:
        return quantity_tag(parse_quantity(s))
    except ValueError as e:
        raise ValueError(f"quantities must match the regular expression: {e}") from None


def k8s_is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
        return True
    except ValueError:
        return False


def compare_to(a: Any, b: Any) -> int:
    x, y = _obj(a), _obj(b)
    if type(x) is not type(y):
        raise TypeError(f"no such overload: compareTo({_kind(a)}, {_kind(b)})")
    return (x > y) - (x < y)  # type: ignore[operator]


def q_add(a: Any, b: Any) -> str:
    q = _quantity(a)
    other = parse_quantity(b) if isinstance(b, int) and not isinstance(b, bool) else _quantity(b)
    return quantity_tag(q + other)


def q_sub(a: Any, b: Any) -> str:
    q = _quantity(a)
    other = parse_quantity(b) if isinstance(b, int) and not isinstance(b, bool) else _quantity(b)
    return quantity_tag(q - other)


def q_as_integer(a: Any) -> int:
    q = _quantity(a)
    if not q.is_integer or not -MAX_INT64 - 1 <= q.value <= MAX_INT64:
        raise ValueError("cannot convert value to integer")
    return int(q.value)


def q_sign(a: Any) -> int:
    v = _quantity(a).value
    return (v > 0) - (v < 0)


# ---- lists, regex, sets -----------------------------------------------------------------------------


def _items(xs: Any) -> list[Any]:
    if not isinstance(xs, list | tuple):
        raise TypeError(f"no such overload: expected a list, got {_kind(xs)}")
    return list(xs)


def _key(x: Any) -> Any:
    return _obj(x) if isinstance(x, str) and x.startswith(TAG_PREFIX) else x


def l_is_sorted(xs: Any) -> bool:
    items = [_key(x) for x in _items(xs)]
    return all(not (b < a) for a, b in zip(items, items[1:], strict=False))


def l_sum(xs: Any) -> Any:
    items = _items(xs)
    if items and all(isinstance(x, str) and x.startswith(QUANTITY_TAG) for x in items):
        total = _quantity(items[0])
        for x in items[1:]:
            total = total + _quantity(x)
        return quantity_tag(total)
    return sum(items) if items else 0


def l_min(xs: Any) -> Any:
    items = _items(xs)
    if not items:
        raise ValueError("min(list) called on an empty list")
    return min(items, key=_key)


def l_max(xs: Any) -> Any:
    items = _items(xs)
    if not items:
        raise ValueError("max(list) called on an empty list")
    return max(items, key=_key)


def l_index_of(xs: Any, v: Any) -> int:
    items = _items(xs)
    return items.index(v) if v in items else -1


def l_last_index_of(xs: Any, v: Any) -> int:
    items = _items(xs)
    return len(items) - 1 - items[::-1].index(v) if v in items else -1


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def r_find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def r_find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    out = [m.group(0) for m in _regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


def s_contains(a: Any, b: Any) -> bool:
    xs = _items(a)
    return all(y in xs for y in _items(b))


def s_equivalent(a: Any, b: Any) -> bool:
    return s_contains(a, b) and s_contains(b, a)


def s_intersects(a: Any, b: Any) -> bool:
    xs = _items(a)
    return any(y in xs for y in _items(b))


def includes(target: Any, arg: Any) -> bool:
    """DRA `includes()`: membership in a list attribute (first 48 values), equality for a scalar."""
    if isinstance(target, list | tuple):
        return any(x == arg for x in list(target)[:_LIST_INCLUDES_MAX])
    return bool(target == arg)


# ---- declarations -----------------------------------------------------------------------------------

T = cel.Type


def _decl(name: str, overloads: Sequence[tuple[str, list[Any], Any, Callable[..., Any], bool]]) -> Any:
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(oid, return_type=ret, parameters=params, is_member=member, impl=fn)
            for oid, params, ret, fn, member in overloads
        ],
    )


def declarations(list_attributes: bool) -> list[Any]:
    """Function declarations of the Kubernetes libraries we implement (DRA `includes` when enabled)."""
    D, S, B, I = T.DYN, T.STRING, T.BOOL, T.INT  # noqa: E741, N806
    decls = [
        _decl(
            "semver",
            [
                ("k8s_semver", [S], D, k8s_semver, False),
                ("k8s_semver_norm", [S, B], D, k8s_semver, False),
            ],
        ),
        _decl(
            "isSemver",
            [
                ("k8s_is_semver", [S], B, k8s_is_semver, False),
                ("k8s_is_semver_norm", [S, B], B, k8s_is_semver, False),
            ],
        ),
        _decl("quantity", [("k8s_quantity", [S], D, k8s_quantity, False)]),
        _decl("isQuantity", [("k8s_is_quantity", [S], B, k8s_is_quantity, False)]),
        _decl("major", [("k8s_major", [D], I, lambda v: _semver(v).major, True)]),
        _decl("minor", [("k8s_minor", [D], I, lambda v: _semver(v).minor, True)]),
        _decl("patch", [("k8s_patch", [D], I, lambda v: _semver(v).patch, True)]),
        _decl("compareTo", [("k8s_compare_to", [D, D], I, compare_to, True)]),
        _decl("isGreaterThan", [("k8s_is_greater", [D, D], B, lambda a, b: compare_to(a, b) > 0, True)]),
        _decl("isLessThan", [("k8s_is_less", [D, D], B, lambda a, b: compare_to(a, b) < 0, True)]),
        _decl("add", [("k8s_add", [D, D], D, q_add, True)]),
        _decl("sub", [("k8s_sub", [D, D], D, q_sub, True)]),
        _decl("sign", [("k8s_sign", [D], I, q_sign, True)]),
        _decl("isInteger", [("k8s_is_integer", [D], B, lambda v: _quantity(v).is_integer, True)]),
        _decl("asInteger", [("k8s_as_integer", [D], I, q_as_integer, True)]),
        _decl(
            "asApproximateFloat",
            [("k8s_as_float", [D], T.DOUBLE, lambda v: float(_quantity(v).value), True)],
        ),
        _decl("isSorted", [("k8s_is_sorted", [D], B, l_is_sorted, True)]),
        _decl("sum", [("k8s_sum", [D], D, l_sum, True)]),
        _decl("min", [("k8s_min", [D], D, l_min, True)]),
        _decl("max", [("k8s_max", [D], D, l_max, True)]),
        # list indexOf/lastIndexOf: cel-expr-python's strings extension owns these names (see report)
        _decl("find", [("k8s_find", [S, S], S, r_find, True)]),
        _decl(
            "findAll",
            [
                ("k8s_find_all", [S, S], T.List(S), r_find_all, True),
                ("k8s_find_all_n", [S, S, I], T.List(S), r_find_all, True),
            ],
        ),
        _decl("sets.contains", [("k8s_sets_contains", [D, D], B, s_contains, False)]),
        _decl("sets.equivalent", [("k8s_sets_equivalent", [D, D], B, s_equivalent, False)]),
        _decl("sets.intersects", [("k8s_sets_intersects", [D, D], B, s_intersects, False)]),
    ]
    if list_attributes:
        decls.append(_decl("includes", [("dra_includes_dyn_dyn", [D, D], B, includes, True)]))
    return decls


class K8sLibrary(cel.CelExtension):  # type: ignore[misc]
    """The extension object handed to `cel.NewEnv`."""

    def __init__(self, list_attributes: bool) -> None:
        super().__init__("k8s_dra" + ("_lists" if list_attributes else ""), declarations(list_attributes))
