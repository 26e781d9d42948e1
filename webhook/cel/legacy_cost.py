"""A static worst-case cost estimate for DRA CEL selectors, modelled on cel-go's `EstimateCost`.

Units follow cel-go/Kubernetes: identifiers and field selections cost 1, most calls 1, string
comparisons and searches 0.1 per byte, list/map literals 10/30, and a comprehension costs its range,
init and result plus (loop condition + step) per element. Element counts come from the API bounds of
the `device` variable (≤32 domains and ids, attribute values ≤64) and from literal sizes.
Divergence: where Kubernetes would assume an unbounded size (e.g. the list from `split()`), we assume
`UNKNOWN_SIZE` elements, so we reject fewer expressions than the API server, never more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from webhook.cel.checked import Node

UNKNOWN_SIZE = 64
MAX_ATTRS = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
ATTR_VALUE_SIZE = 64  # max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)
DOMAIN_LEN, ID_LEN, DRIVER_LEN = 63, 32, 63
LIST_INCLUDES = 48

_FREE = {"_&&_", "_||_"}
_STRING_FNS = {
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "split",
    "lowerAscii",
    "upperAscii",
    "replace",
    "trim",
    "indexOf",
    "lastIndexOf",
    "substring",
    "charAt",
    "find",
    "findAll",
    "join",
    "reverse",
    "quote",
    "format",
}


@dataclass(frozen=True)
class Shape:
    """What the estimator knows about a value: element count / byte length and a device role."""

    size: int = UNKNOWN_SIZE
    role: str = ""  # device | attrs | attrs_domain | attr_value | caps | caps_domain | quantity | string


_UNKNOWN = Shape()


def _device_select(parent: Shape, name: str) -> Shape:
    if parent.role == "device":
        return {
            "driver": Shape(DRIVER_LEN, "string"),
            "attributes": Shape(MAX_ATTRS, "attrs"),
            "capacity": Shape(MAX_ATTRS, "caps"),
            "allowMultipleAllocations": Shape(1, ""),
        }.get(name, _UNKNOWN)
    if parent.role == "attrs":
        return Shape(MAX_ATTRS, "attrs_domain")
    if parent.role == "attrs_domain":
        return Shape(ATTR_VALUE_SIZE, "attr_value")
    if parent.role == "caps":
        return Shape(MAX_ATTRS, "caps_domain")
    if parent.role == "caps_domain":
        return Shape(1, "quantity")
    return _UNKNOWN


def _key_shape(range_shape: Shape) -> Shape:
    """The iteration variable over a map is its key; over a list, an element."""
    if range_shape.role in ("attrs", "caps"):
        return Shape(DOMAIN_LEN, "string")
    if range_shape.role in ("attrs_domain", "caps_domain"):
        return Shape(ID_LEN, "string")
    if range_shape.role == "attr_value":
        return Shape(ATTR_VALUE_SIZE, "")
    return _UNKNOWN


def _str_len(n: Node, s: Shape) -> int | None:
    if n.kind == "const" and isinstance(n.value, str):
        return len(n.value.encode())
    if n.type == "string" or s.role == "string":
        return s.size
    return None


class Estimator:
    """`estimate(root)` returns the worst-case cost; comprehension variables are tracked in scope."""

    def __init__(self) -> None:
        self.scope: list[dict[str, Shape]] = [{}]

    def _lookup(self, name: str) -> Shape | None:
        for frame in reversed(self.scope):
            if name in frame:
                return frame[name]
        return None

    def estimate(self, n: Node) -> tuple[int, Shape]:
        k = n.kind
        if k == "const":
            if isinstance(n.value, str | bytes):
                return 0, Shape(len(n.value if isinstance(n.value, bytes) else n.value.encode()), "string")
            return 0, Shape(1)
        if k == "ident":
            bound = self._lookup(n.value)
            if bound is not None:
                return 1, bound
            return 1, Shape(1, "device") if n.value == "device" else _UNKNOWN
        if k == "select":
            assert n.target is not None
            c, s = self.estimate(n.target)
            return c + (0 if n.test_only else 1), (Shape(1) if n.test_only else _device_select(s, n.value))
        if k in ("list", "map", "struct"):
            total = sum(self.estimate(a)[0] for a in n.args)
            base = {"list": 10, "map": 30, "struct": 40}[k]
            count = len(n.args) if k == "list" else len(n.args) // 2
            return base + total, Shape(count, "")
        if k == "comprehension":
            return self._comprehension(n)
        if k == "call":
            return self._call(n)
        return 1, _UNKNOWN

    def _comprehension(self, n: Node) -> tuple[int, Shape]:
        assert n.iter_range is not None
        rc, rs = self.estimate(n.iter_range)
        ic, ishape = self.estimate(n.accu_init) if n.accu_init is not None else (0, _UNKNOWN)
        frame = {n.accu_var: ishape if n.iter_range.kind == "list" and not n.iter_range.args else _UNKNOWN}
        if n.iter_var2:  # two-variable form: index/key and value
            frame[n.iter_var] = Shape(ID_LEN, "string")
            frame[n.iter_var2] = _UNKNOWN
        else:
            frame[n.iter_var] = _key_shape(rs)
        self.scope.append(frame)
        try:
            cc = self.estimate(n.loop_condition)[0] if n.loop_condition is not None else 0
            sc = self.estimate(n.loop_step)[0] if n.loop_step is not None else 0
            res_c, res_s = self.estimate(n.result) if n.result is not None else (0, _UNKNOWN)
        finally:
            self.scope.pop()
        iterations = rs.size
        if res_s is _UNKNOWN or res_s.role == "":
            res_s = Shape(max(iterations, 1), "")  # map()/filter() produce at most one item per element
        return rc + ic + iterations * (cc + sc) + res_c, res_s

    def _call(self, n: Node) -> tuple[int, Shape]:
        fn = n.value
        parts = ([n.target] if n.target is not None else []) + n.args
        est = [self.estimate(p) for p in parts]
        cost = sum(c for c, _ in est)
        shapes = [s for _, s in est]
        if fn == "_?_:_":
            return est[0][0] + max(est[1][0], est[2][0]), shapes[1]
        if fn in _FREE:
            return cost, Shape(1)
        if fn in ("_[_]", "_[?_]", "_?._"):
            return cost + 1, _device_select(shapes[0], "")
        if fn in ("_==_", "_!=_"):
            lens = [_str_len(p, s) for p, s in zip(parts, shapes, strict=False)]
            known = [x for x in lens if x is not None]
            if known:
                return cost + math.ceil(0.1 * min(known)), Shape(1)
            return cost + 1, Shape(1)
        if fn == "@in":
            rhs = shapes[1]
            is_map = rhs.role in ("attrs", "caps", "attrs_domain", "caps_domain") or parts[1].type.startswith(
                "map"
            )
            return cost + (1 if is_map else rhs.size), Shape(1)
        if fn == "includes":
            return cost + LIST_INCLUDES, Shape(1)
        if fn in _STRING_FNS and n.target is not None:
            length = _str_len(n.target, shapes[0])
            size = length if length is not None else UNKNOWN_SIZE
            return cost + _string_fn_cost(fn, size, parts, shapes), Shape(size, "string")
        if fn in ("isSorted", "sum", "min", "max") and shapes:
            return cost + shapes[0].size, Shape(1)
        if fn.startswith("sets."):
            return cost + shapes[0].size * shapes[1].size, Shape(1)
        if fn == "_+_" and any(
            s.role == "string" or p.type == "string" for p, s in zip(parts, shapes, strict=False)
        ):
            size = sum(s.size for s in shapes)
            return cost + math.ceil(0.1 * size), Shape(size, "string")
        if fn == "_+_" and all(p.type.startswith("list") for p in parts):
            size = sum(s.size for s in shapes)
            return cost + math.ceil(0.1 * size), Shape(size, "")
        if fn in ("quantity", "semver", "isQuantity", "isSemver") and n.target is None and parts:
            length = _str_len(parts[0], shapes[0])
            step = math.ceil(0.1 * (length if length is not None else UNKNOWN_SIZE))
            return cost + step, Shape(1, "quantity" if fn == "quantity" else "")
        if fn in ("add", "sub"):
            return cost + 1, Shape(1, "quantity")
        return cost + 1, _UNKNOWN if fn not in ("size", "int", "string", "bool") else Shape(1)


def _arg_len(parts: list[Node], shapes: list[Shape], k: int) -> int:
    if k >= len(parts):
        return 0
    length = _str_len(parts[k], shapes[k])
    return length if length is not None else UNKNOWN_SIZE


def _string_fn_cost(fn: str, size: int, parts: list[Node], shapes: list[Shape]) -> int:
    """The call's own cost for a string function of a `size`-byte target (parts[0]); as the Kubernetes
    library estimator and cel-go price them (0.1 per byte traversed, regexes 0.25 per pattern byte)."""
    if fn in ("lowerAscii", "upperAscii", "substring", "trim", "indexOf", "lastIndexOf"):
        return math.ceil(0.1 * size)
    if fn in ("split", "replace"):
        return math.ceil(0.2 * size)
    if fn in ("find", "findAll", "matches"):
        return math.ceil(0.1 * (size + 1)) * math.ceil(0.25 * _arg_len(parts, shapes, 1))
    if fn == "contains":
        return math.ceil(0.1 * size * _arg_len(parts, shapes, 1))
    if fn in ("startsWith", "endsWith"):
        return math.ceil(0.1 * _arg_len(parts, shapes, 1))
    return 1 + math.ceil(0.1 * size)


def estimate_cost(root: Node) -> int:
    """Worst-case cost of evaluating `root` once."""
    return Estimator().estimate(root)[0]
