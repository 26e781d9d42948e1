"""The cost estimator's arithmetic, the DRA size model and the library call estimators (cel-go's
OverloadCostEstimate for ext lists/sets, the Kubernetes library CostEstimator, the DRA `includes` estimate),
used by the walk in `webhook.cel.checker.cost`. Sizes and costs are (min, max) pairs saturating at 2**64-1, as in Go.
"""

from __future__ import annotations

import math
from typing import Any

from webhook.cel.checker import types as t
from webhook.cel.checker.types import Type
from webhook.cel.common.ast import Const, Expr

Path = tuple[str, ...]

U64 = (1 << 64) - 1
Est = tuple[int, int]
UNKNOWN: Est = (0, U64)
STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25
ATTRIBUTE_MAX = 64  # max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)
INCLUDES_MAX = 48  # ResourceSliceMaxAttributeValuesPerDevice


def sat_add(a: int, b: int) -> int:
    return U64 if b > 0 and a > U64 - b else a + b


def sat_mul(a: int, b: int) -> int:
    return U64 if b != 0 and a > U64 // b else a * b


def _factor(x: int, f: float) -> int:
    xf = float(x)
    if xf > 0 and f > 0 and xf > float(U64) / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2.0**64 else int(c)


def add(a: Est, b: Est) -> Est:
    # every estimate lies in [0, U64]: the sum saturates exactly as sat_add does
    x = a[0] + b[0]
    y = a[1] + b[1]
    return (x if x <= U64 else U64), (y if y <= U64 else U64)


def mul(a: Est, b: Est) -> Est:
    return sat_mul(a[0], b[0]), sat_mul(a[1], b[1])


def by_factor(a: Est, f: float) -> Est:
    return _factor(a[0], f), _factor(a[1], f)


def union(a: Est, b: Est) -> Est:
    return min(a[0], b[0]), max(a[1], b[1])


# The DRA size model: declared maximum sizes of the newest `kubernetes.DRADevice` declaration.
# node = (max_elements, fields | None, key node | None, element node | None, is_attribute_value)
_Node = tuple[int, dict[str, Any] | None, Any, Any, bool]
_ATTR: _Node = (ATTRIBUTE_MAX, None, None, None, True)
_DOMAIN: _Node = (63, None, None, None, False)
_ID: _Node = (32, None, None, None, False)
_QUANTITY: _Node = (0, None, None, None, False)
_INNER_ATTRS: _Node = (32, None, _ID, _ATTR, False)
_INNER_CAPS: _Node = (32, None, _ID, _QUANTITY, False)
_DEVICE: _Node = (
    0,
    {
        "driver": (63, None, None, None, False),
        "allowMultipleAllocations": (1, None, None, None, False),
        "attributes": (32, None, _DOMAIN, _INNER_ATTRS, False),
        "capacity": (32, None, _DOMAIN, _INNER_CAPS, False),
    },
    None,
    None,
    False,
)


def dra_size(path: tuple[str, ...] | list[str] | None) -> Est | None:
    """The DRA size estimator: the declared maximum along a path like device.attributes.@values.x."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node[3] is None:
                return None
            node = node[3]
        elif name == "@keys":
            if node[2] is None:
                return None
            node = node[2]
        else:
            fields = node[1]
            if fields is None or name not in fields:
                if node[3] is not None and node[3][4]:
                    node = node[3]
                    continue
                return None
            node = fields[name]
    return 0, node[0]


class Node:
    """cel-go's AstNode handed to call estimators: path, type, expression, computed size."""

    __slots__ = ("path", "type", "expr", "size")

    def __init__(self, path: Path | None, type_: Type, expr: Expr | None, size: Est | None) -> None:
        self.path = path
        self.type = type_
        self.expr = expr
        self.size = size


def _size(c: object, n: Node) -> Est:
    """sizeEstimate of an estimator argument: computed size, else the DRA estimator, else unknown."""
    if n.size is not None:
        return n.size
    s = dra_size(n.path)
    return s if s is not None else UNKNOWN


def _int_literal(n: Node, default: int) -> int:
    e = n.expr
    if not isinstance(e, Const) or e.kind != "int":
        return default
    assert isinstance(e.value, int)
    return max(e.value, 0)


def _alloc_list(factor: float, size: Est) -> tuple[Est, Est | None]:
    cost = add(add(by_factor(size, factor), (1, 1)), (10, 10))
    return cost, size


def overload_estimate(
    c: object, oid: str, target: Node | None, args: list[Node]
) -> tuple[Est, Est | None] | None:
    """ext lists v3 and sets estimators (checker.OverloadCostEstimate); every id they know starts with
    "list" (callers skip the others)."""
    if oid.startswith("list_sets_") and len(args) == 2:
        f = 2.0 if oid == "list_sets_equivalent_list" else 1.0
        return add(by_factor(mul(_size(c, args[0]), _size(c, args[1])), f), (1, 1)), None
    if target is None:
        if oid == "lists_range" and len(args) == 1:
            n = _int_literal(args[0], U64)
            return _alloc_list(1, (n, n))
        return None
    if oid == "list_slice" and len(args) == 2:
        sz = _size(c, target)
        start, end = _int_literal(args[0], 0), _int_literal(args[1], sz[1])
        n = (end - start) % (1 << 64)
        return _alloc_list(1, (n, n))
    if oid == "list_reverse" and not args:
        return _alloc_list(1, _size(c, target))
    if oid in ("list_flatten", "list_flatten_int") and len(args) <= 1:
        depth = _int_literal(args[0], U64) if args else 1
        return _alloc_list(float(depth), _size(c, target))
    if oid == "list_distinct" and not args:
        sz = _size(c, target)
        return _alloc_list(2.0, mul(sz, sz))
    if oid.endswith("_sort") and oid.startswith("list_") and not args:
        sz = _size(c, target)
        f = 2.1 if oid in ("list_string_sort", "list_bytes_sort") else 2.0
        return _alloc_list(f, mul(sz, sz))
    if oid.endswith("_sortByAssociatedKeys") and len(args) == 1:
        sz = _size(c, args[0])
        f = 2.1 if oid in ("list_string_sortByAssociatedKeys", "list_bytes_sortByAssociatedKeys") else 2.0
        return _alloc_list(f, mul(sz, sz))
    return None


_ONE: tuple[Est, None] = ((1, 1), None)
_CONSTANT_ONE = frozenset(
    "serviceAccount path group resource subresource namespace name allowed reason error errored format.named "
    "masked prefixLength family isUnspecified isLoopback isLinkLocalMulticast isLinkLocalUnicast isGlobalUnicast "
    "sign asInteger isInteger asApproximateFloat isGreaterThan isLessThan compareTo add sub major minor patch "
    "getScheme getHostname getHost getPort getEscapedPath getQuery".split()
)
_EQ_ONE = frozenset(
    {
        "net.IP",
        "net.CIDR",
        "kubernetes.Quantity",
        "kubernetes.Semver",
        "kubernetes.authorization.Authorizer",
        "kubernetes.authorization.PathCheck",
        "kubernetes.authorization.GroupCheck",
        "kubernetes.authorization.ResourceCheck",
        "kubernetes.authorization.Decision",
    }
)


# Every function name `k8s_estimate` knows (callers skip the others).
K8S_FNS = _CONSTANT_ONE | {
    "includes",
    "check",
    "fieldSelector",
    "labelSelector",
    "isSorted",
    "sum",
    "max",
    "min",
    "indexOf",
    "lastIndexOf",
    "url",
    "lowerAscii",
    "upperAscii",
    "substring",
    "trim",
    "replace",
    "split",
    "join",
    "find",
    "findAll",
    "cidr",
    "isIP",
    "isCIDR",
    "ip",
    "ip.isCanonical",
    "containsIP",
    "containsCIDR",
    "quantity",
    "isQuantity",
    "semver",
    "isSemver",
    "validate",
    "_==_",
}


def _list_elem(c: object, lst: Node) -> Node | None:
    if not lst.type.params:
        return None
    p = (*lst.path, "@items") if lst.path is not None else None
    return Node(p, lst.type.params[0], None, None)


def k8s_estimate(
    c: object, fn: str, oid: str, target: Node | None, args: list[Node]
) -> tuple[Est, Est | None] | None:
    """The DRA `includes` estimate and the Kubernetes library CostEstimator.EstimateCallCost (the branches
    are on distinct function names: `_==_`, the most frequent, first)."""
    if fn == "_==_":
        if len(args) == 2 and args[0].type.name == args[1].type.name:
            tt = args[0].type
            if tt.kind in (t.OPAQUE, t.STRUCT) and tt.name in _EQ_ONE:
                if tt.kind == t.OPAQUE and tt.name not in ("net.IP", "net.CIDR"):
                    return None
                return _ONE
            if tt.kind == t.STRUCT and tt.name == "kubernetes.NamedFormat":
                return by_factor((1, 64), STRING_FACTOR), None
            if tt.kind == t.STRUCT and tt.name == "kubernetes.URL":
                size: Est = (1, 1)
                if args[1].size is not None:
                    size = union(args[1].size, args[1].size)
                return by_factor((1, size[1]), STRING_FACTOR), None
        return None
    if fn == "includes" and oid == "dra_includes_dyn_dyn" and target is not None:
        return (0, INCLUDES_MAX), None
    if fn == "check":
        return (350000, 350000), None
    if fn in _CONSTANT_ONE:
        if fn == "ip":
            return None
        return _ONE
    if fn in ("fieldSelector", "labelSelector") and len(args) == 1:
        sz = _size(c, args[0])
        tokens = sat_add(_factor(sz[1], 0.5), 1)
        return add(by_factor((sz[0], sz[1]), STRING_FACTOR), (1, tokens)), None
    if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        el = _list_elem(c, target)
        if el is not None:
            elc: Est = (1, 1)
            if el.type.kind in (t.STRING, t.BYTES):
                elc = add(elc, by_factor(_size(c, el), STRING_FACTOR))
            return mul(_size(c, target), elc), None
        return by_factor(_size(c, target), STRING_FACTOR), None
    if fn == "url" and len(args) == 1:
        sz = _size(c, args[0])
        return by_factor(sz, STRING_FACTOR), sz
    if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        sz = _size(c, target)
        return by_factor(sz, STRING_FACTOR), sz
    if fn == "replace" and target is not None and len(args) >= 2:
        return _replace(c, target, args)
    if fn == "split" and target is not None:
        sz = _size(c, target)
        mx = sz[1]
        if len(args) > 1:
            e = args[1].expr
            if isinstance(e, Const) and e.kind == "int":
                assert isinstance(e.value, int)
                mx = e.value % (1 << 64)
        return by_factor(sz, 2 * STRING_FACTOR), (0, mx)
    if fn == "join" and target is not None:
        lst = _size(c, target)
        joined: Est = (0, 0)
        el = _list_elem(c, target)
        if el is not None:
            joined = mul(lst, _size(c, el))
        if args:
            sep = _size(c, args[0])
            seps = (lst[0] - 1 if lst[0] > 0 else 0, lst[1] - 1 if lst[1] > 0 else 0)
            joined = add(joined, mul(sep, seps))
        return by_factor(joined, STRING_FACTOR), joined
    if fn in ("find", "findAll") and target is not None and args:
        sz = _size(c, target)
        s = by_factor(add(sz, (1, 1)), STRING_FACTOR)
        r = by_factor(_size(c, args[0]), REGEX_FACTOR)
        return mul(s, r), (0, sz[1])
    if fn in ("cidr", "isIP", "isCIDR") and args:
        return by_factor(_size(c, args[0]), STRING_FACTOR), None
    if fn == "ip":
        if oid == "cidr_ip":
            return _ONE
        if args:
            return by_factor(_size(c, args[0]), STRING_FACTOR), None
        return None
    if fn == "ip.isCanonical" and args:
        return by_factor(_size(c, args[0]), 2 * STRING_FACTOR), None
    if fn in ("containsIP", "containsCIDR") and args:
        ipc = by_factor((8, 32), STRING_FACTOR)
        if fn == "containsCIDR":
            ipc = add(add(ipc, by_factor((4, 16), STRING_FACTOR)), (1, 1))
        if oid in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            ipc = add(ipc, by_factor(_size(c, args[0]), STRING_FACTOR))
        return ipc, None
    if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
        return by_factor(_size(c, args[0]), STRING_FACTOR), None
    if fn == "validate" and args:
        return by_factor(by_factor(_size(c, args[0]), STRING_FACTOR), 128 * REGEX_FACTOR), None
    return None


def _replace(c: object, target: Node, args: list[Node]) -> tuple[Est, Est | None]:
    sz = _size(c, target)
    old = _size(c, args[0])
    new = _size(c, args[1])
    if old[0] == 0:
        cnt_max = sat_add(sz[1], 1) if sz[1] < U64 else sz[1]
        kept_max = sz[1]
    elif new[1] <= old[0]:
        cnt_max, kept_max = 0, sz[1]
    else:
        cnt_max, kept_max = math.ceil(sz[1] / old[0]), 0
    if old[1] == 0:
        cnt_min = sat_add(sz[0], 1) if sz[0] < U64 else sz[0]
        kept_min = sz[0]
    elif old[1] <= new[0]:
        cnt_min, kept_min = 0, sz[0]
    else:
        cnt_min, kept_min = math.ceil(sz[0] / old[1]), 0
    size = add(mul((cnt_min, cnt_max), new), (kept_min, kept_max))
    return by_factor(sz, 2 * STRING_FACTOR), size
