"""What a selector reads from `device`, from its AST: the (domain, id) pairs it looks up with literal keys.

The runtime keys selector results on the device's values of exactly these reads (the "projection"), so
devices that agree on them share one evaluation. An expression that looks at `device`,
`device.attributes` or `device.capacity` as a whole (iteration, `in`, `size`, computed keys) has no
projection.
"""

from __future__ import annotations

from webhook.cel import ast as A

# A read: ("driver",) | ("allowMultipleAllocations",) | ("attributes"|"capacity", domain, id)
#       | ("attributes"|"capacity", domain)  (the whole domain map)
Read = tuple[str, ...]


_INDEX = ("_[_]", "_[?_]", "_?._")
_DEVICE_MAPS = ("attributes", "capacity")


def _literal_key(n: A.Expr) -> tuple[A.Expr, str] | None:
    """(operand, key) for `t.key`, `t[lit]`, `t[?lit]`, `t.?key` and `has(t.key)`."""
    if isinstance(n, A.Select):
        return n.operand, n.field
    if isinstance(n, A.Call) and n.function in _INDEX and len(n.args) == 2:
        key = n.args[1]
        if isinstance(key, A.Const) and isinstance(key.value, str):
            return n.args[0], key.value
    return None


def analyse(root: A.Expr) -> tuple[Read, ...] | None:
    """The reads of one expression, or None when it looks at `device`, `device.attributes` or
    `device.capacity` as a whole (iteration, `in`, `size`, computed keys): no projection then."""
    reads: set[Read] = set()
    stack: list[tuple[A.Expr, frozenset[str]]] = [(root, frozenset())]
    while stack:
        n, bound = stack.pop()
        if isinstance(n, A.Ident):
            if n.name == "device" and "device" not in bound:
                return None
            continue
        if isinstance(n, A.Comprehension):
            inner = bound | {v for v in (n.iter_var, n.iter_var2, n.accu_var) if v}
            stack += [(n.iter_range, bound), (n.accu_init, bound)]
            stack += [(n.loop_condition, inner), (n.loop_step, inner), (n.result, bound | {n.accu_var})]
            continue
        read = _device_read(n, bound)
        if read is not None:
            reads.add(read)
            if isinstance(n, A.Call):  # a computed key still needs looking at
                stack += [(a, bound) for a in n.args[1:]]
            continue
        stack += [(c, bound) for c in A.children(n)]
    return tuple(sorted(reads))


def _is_device(n: A.Expr, bound: frozenset[str]) -> bool:
    return isinstance(n, A.Ident) and n.name == "device" and "device" not in bound


def _device_read(n: A.Expr, bound: frozenset[str]) -> Read | None:
    """The read `n` is, when it is `device.<field>`, `device.<map>[lit]` or `device.<map>[lit][lit]`."""
    hit = _literal_key(n)
    if hit is None:
        return None
    operand, key = hit
    if isinstance(n, A.Select) and n.test_only:
        inner = _literal_key(operand)
        if inner is not None and _is_device_map(inner[0], bound):
            return (_map_name(inner[0]), inner[1], key)
        return None
    if _is_device(operand, bound) and isinstance(n, A.Select):
        return None if key in _DEVICE_MAPS else (key,)
    if _is_device_map(operand, bound):
        return (_map_name(operand), key)
    inner = _literal_key(operand)
    if (
        inner is not None
        and _is_device_map(inner[0], bound)
        and not (isinstance(operand, A.Select) and operand.test_only)
    ):
        return (_map_name(inner[0]), inner[1], key)
    return None


def _is_device_map(n: A.Expr, bound: frozenset[str]) -> bool:
    return (
        isinstance(n, A.Select)
        and not n.test_only
        and n.field in _DEVICE_MAPS
        and _is_device(n.operand, bound)
    )


def _map_name(n: A.Expr) -> str:
    assert isinstance(n, A.Select)
    return n.field
