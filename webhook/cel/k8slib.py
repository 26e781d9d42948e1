"""The Kubernetes CEL library functions DRA selectors may call, for cel-expr-python.

cel-expr-python cannot carry custom value types, so semver, quantity, IP and CIDR values travel through
CEL as one-entry maps (`{"\\x01v": "1.2.3"}`, `{"\\x01q": "1536"}`): the entry keeps the exact value, so
`==` compares values as Kubernetes does (`1Gi == 1024Mi`), and, as in Kubernetes, `<`, `+`, `string()`
or string methods on them find no overload. The parsing and arithmetic live in
`webhook.model.semver` / `webhook.model.quantity`.
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

SEMVER_KEY = "\x01v"  # the key of the one-entry map that stands for a kubernetes.Semver
QUANTITY_KEY = "\x01q"  # ... for a kubernetes.Quantity
IP_KEY = "\x01ip"  # ... for a net.IP (see webhook.cel.netlib)
CIDR_KEY = "\x01cidr"  # ... for a net.CIDR
TYPE_NAMES = {
    SEMVER_KEY: "kubernetes.Semver",
    QUANTITY_KEY: "kubernetes.Quantity",
    IP_KEY: "net.IP",
    CIDR_KEY: "net.CIDR",
}
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
def semver_tag(v: Semver) -> dict[str, str]:
    """The CEL value of a version: build metadata dropped (it does not take part in ==)."""
    return {SEMVER_KEY: str(v).partition("+")[0]}


@lru_cache(maxsize=8192)
def quantity_tag(q: Quantity) -> dict[str, str]:
    """The CEL value of a quantity: its exact decimal value (equal quantities are equal maps)."""
    try:
        return {QUANTITY_KEY: _decimal(q.value)}
    except OverflowError:  # absurd exponents: the canonical form is still exact enough to compare
        return {QUANTITY_KEY: q.canonical()}


def tag_of(x: Any) -> str:
    """The tag key if `x` is one of our encoded values, else ""."""
    if type(x) is dict and len(x) == 1:
        key = next(iter(x))
        if key in TYPE_NAMES and isinstance(x[key], str):
            return str(key)
    return ""


@lru_cache(maxsize=8192)
def _semver_of(text: str) -> Semver:
    return parse_semver(text)


@lru_cache(maxsize=8192)
def _quantity_of(text: str) -> Quantity:
    return parse_quantity(text)


def _obj(x: Any) -> Semver | Quantity:
    tag = tag_of(x)
    if tag == SEMVER_KEY:
        return _semver_of(x[tag])
    if tag == QUANTITY_KEY:
        return _quantity_of(x[tag])
    raise TypeError(f"no such overload: expected a semver or quantity, got {kind(x)}")


def kind(x: Any) -> str:
    """The CEL type name of a value as Kubernetes would print it."""
    tag = tag_of(x)
    if tag:
        return TYPE_NAMES[tag]
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "double"
    if isinstance(x, str):
        return "string"
    if isinstance(x, bytes):
        return "bytes"
    if isinstance(x, list | tuple):
        return "list"
    if isinstance(x, dict):
        return "map"
    return "null_type" if x is None else type(x).__name__


def _quantity(x: Any) -> Quantity:
    if tag_of(x) == QUANTITY_KEY:
        return _quantity_of(x[QUANTITY_KEY])
    raise TypeError(f"no such overload: expected a kubernetes.Quantity, got {kind(x)}")


def _semver(x: Any) -> Semver:
    if tag_of(x) == SEMVER_KEY:
        return _semver_of(x[SEMVER_KEY])
    raise TypeError(f"no such overload: expected a kubernetes.Semver, got {kind(x)}")


def cel_equal(a: Any, b: Any) -> bool:
    """CEL equality on plain values: bool is not a number; encoded values compare by their entry."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# ---- semver (Kubernetes semver library, version 1) ---------------------------------------------------


def normalize_semver(s: str) -> str:
    """`semver(s, true)`: drop one leading `v`, drop leading zeros of each of the (at most three)
    dot-separated parts, and fill a short `1` / `1.2` up to three parts (which then must not carry
    pre-release or build data). Raises ValueError for the latter."""
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


def k8s_semver(s: str, normalize: bool = False) -> dict[str, str]:
    try:
        return semver_tag(parse_semver(normalize_semver(s) if normalize else s))
    except ValueError as e:
        raise ValueError(str(e)) from None


def k8s_is_semver(s: str, normalize: bool = False) -> bool:
    try:
        parse_semver(normalize_semver(s) if normalize else s)
        return True
    except ValueError:
        return False


def k8s_quantity(s: str) -> dict[str, str]:
    try:
        return quantity_tag(parse_quantity(s))
    except ValueError as e:
        raise ValueError(str(e)) from None


def k8s_is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
        return True
    except ValueError:
        return False


def compare_to(a: Any, b: Any) -> int:
    x, y = _obj(a), _obj(b)
    if type(x) is not type(y):
        raise TypeError(f"no such overload: compareTo({kind(a)}, {kind(b)})")
    return (x > y) - (x < y)  # type: ignore[operator]


def q_add(a: Any, b: Any) -> dict[str, str]:
    q = _quantity(a)
    other = parse_quantity(b) if isinstance(b, int) and not isinstance(b, bool) else _quantity(b)
    return quantity_tag(q + other)


def q_sub(a: Any, b: Any) -> dict[str, str]:
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
        raise TypeError(f"no such overload: expected a list, got {kind(xs)}")
    return list(xs)


def _key(x: Any) -> Any:
    return _obj(x) if tag_of(x) else x


def l_is_sorted(xs: Any) -> bool:
    items = [_key(x) for x in _items(xs)]
    return all(not (b < a) for a, b in zip(items, items[1:], strict=False))


def l_sum(xs: Any) -> Any:
    items = _items(xs)
    if items and all(tag_of(x) == QUANTITY_KEY for x in items):
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
    """Kubernetes lists `indexOf`: the first index of an equal element, or -1."""
    return next((i for i, x in enumerate(_items(xs)) if cel_equal(x, v)), -1)


def l_last_index_of(xs: Any, v: Any) -> int:
    items = _items(xs)
    return next((i for i in range(len(items) - 1, -1, -1) if cel_equal(items[i], v)), -1)


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
    return all(any(cel_equal(x, y) for x in xs) for y in _items(b))


def s_equivalent(a: Any, b: Any) -> bool:
    return s_contains(a, b) and s_contains(b, a)


def s_intersects(a: Any, b: Any) -> bool:
    xs = _items(a)
    return any(any(cel_equal(x, y) for x in xs) for y in _items(b))


def includes(target: Any, arg: Any) -> bool:
    """DRA `includes()`: membership in a list attribute (at most 48 values looked at: a longer list is
    an error once the 49th would be compared), equality for a scalar."""
    if isinstance(target, list | tuple):
        for k, x in enumerate(target):
            if k >= _LIST_INCLUDES_MAX:
                raise ValueError(
                    f"'includes' function cannot be applied to lists longer than {_LIST_INCLUDES_MAX} values"
                )
            if cel_equal(x, arg):
                return True
        return False
    return cel_equal(target, arg)


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


# One overload of a function table (netlib, pystrings): name, overload id, parameter kinds, result kind,
# implementation, member. Kinds: string, int, bool, dyn, list.
FunctionRow = tuple[str, str, list[str], str, Callable[..., Any], bool]


def _kind_type(k: str) -> Any:
    return {"string": T.STRING, "int": T.INT, "bool": T.BOOL, "dyn": T.DYN, "list": T.List(T.DYN)}[k]


def table_declarations(rows: Sequence[FunctionRow]) -> list[Any]:
    """FunctionDecls for a table of overloads, one declaration per function name."""
    by_name: dict[str, list[tuple[str, list[Any], Any, Callable[..., Any], bool]]] = {}
    for name, oid, params, ret, fn, member in rows:
        by_name.setdefault(name, []).append(
            (oid, [_kind_type(p) for p in params], _kind_type(ret), fn, member)
        )
    return [_decl(name, overloads) for name, overloads in by_name.items()]


class K8sLibrary(cel.CelExtension):  # type: ignore[misc]
    """The extension object handed to `cel.NewEnv`; `extra` adds function tables (IP/CIDR, strings)."""

    def __init__(self, list_attributes: bool, extra: Sequence[FunctionRow] = (), name: str = "") -> None:
        super().__init__(
            "k8s_dra" + ("_lists" if list_attributes else "") + name,
            declarations(list_attributes) + table_declarations(extra),
        )
