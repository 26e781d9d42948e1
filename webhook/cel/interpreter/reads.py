"""What a compiled selector reads from `device`, from its checked AST (`webhook.cel.common.ast`): the (domain, id)
pairs it looks up with literal keys, and whether it looks at a whole map (iteration, `in`, `size`, computed keys).

The runtime keys selector results on the device's values of exactly these reads (the "projection"),
so devices that agree on them share one evaluation. The walk is iterative (any AST depth).
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.cel.common.ast import Call, Comprehension, Const, Expr, Ident, Select, children

# A read: ("driver",) | ("allowMultipleAllocations",) | ("attributes"|"capacity", domain, id)
#       | ("attributes"|"capacity", domain)  (the whole domain map)
Read = tuple[str, ...]

_INDEX = ("_[_]", "_[?_]", "_?._")
_DEVICE_MAPS = ("attributes", "capacity")


@dataclass(frozen=True)
class Reads:
    """`reads` is only meaningful when `projectable`; `whole_map`: the expression inspects
    `device.attributes`/`device.capacity` as maps (so seeded empty domains would be visible)."""

    reads: tuple[Read, ...]
    projectable: bool
    whole_map: bool


def _is_device(e: Expr | None, bound: frozenset[str]) -> bool:
    return (
        isinstance(e, Ident)
        and e.name in ("device", ".device")
        and (e.name == ".device" or "device" not in bound)
    )


def _literal_key(e: Expr) -> tuple[Expr, str] | None:
    """(target, key) for `t.key`, `t[lit]`, `t[?lit]`, `t.?key` and `has(t.key)`."""
    if isinstance(e, Select):
        return e.operand, e.field
    if isinstance(e, Call) and e.function in _INDEX and len(e.args) == 2 and e.target is None:
        key = e.args[1]
        if isinstance(key, Const) and key.kind == "string" and isinstance(key.value, str):
            return e.args[0], key.value
    return None


def _device_map(e: Expr, bound: frozenset[str]) -> str:
    if isinstance(e, Select) and not e.test_only and e.field in _DEVICE_MAPS and _is_device(e.operand, bound):
        return e.field
    return ""


def _domain(e: Expr, bound: frozenset[str]) -> tuple[str, str] | None:
    """("attributes"|"capacity", domain) when `e` is a literal lookup of one domain map."""
    if isinstance(e, Select) and e.test_only:
        return None
    hit = _literal_key(e)
    if hit is None:
        return None
    which = _device_map(hit[0], bound)
    return (which, hit[1]) if which else None


def _scoped_children(e: Expr, bound: frozenset[str]) -> list[tuple[Expr, frozenset[str]]]:
    if isinstance(e, Comprehension):
        inner = bound | {v for v in (e.iter_var, e.iter_var2, e.accu_var) if v}
        return [
            (e.iter_range, bound),
            (e.accu_init, bound),
            (e.loop_condition, inner),
            (e.loop_step, inner),
            (e.result, bound | {e.accu_var}),
        ]
    return [(c, bound) for c in children(e)]


def analyse(root: Expr) -> Reads:
    """Collect the reads of one checked expression."""
    reads: set[Read] = set()
    projectable = True
    whole_map = False
    stack: list[tuple[Expr, frozenset[str]]] = [(root, frozenset())]
    while stack:
        e, bound = stack.pop()
        k = type(e)
        if k is Const:
            continue
        if k is Call and e.function not in _INDEX:  # type: ignore[attr-defined]
            # neither a lookup nor `device`: only its operands can read
            stack.extend([(c, bound) for c in reversed(children(e))])
            continue
        hit = _literal_key(e)
        if hit is not None:
            dom = _domain(hit[0], bound)
            if dom is not None:
                reads.add((dom[0], dom[1], hit[1]))
                continue
        dom = _domain(e, bound)
        if dom is not None:
            reads.add(dom)
            continue
        if isinstance(e, Select) and _is_device(e.operand, bound):
            if e.field in _DEVICE_MAPS:  # the whole map: iteration, `in`, size, computed key, has()
                projectable = False
                whole_map = True
            else:
                reads.add((e.field,))
            continue
        if _is_device(e, bound):
            projectable = False
            whole_map = True
            continue
        stack.extend(reversed(_scoped_children(e, bound)))
    return Reads(tuple(sorted(reads)), projectable, whole_map)


def attribute_ranges(root: Expr) -> tuple[tuple[str, str], ...]:
    """The (domain, id) attribute values that comprehensions iterate over, looked up with literal keys
    (`device.attributes["d"].ids.exists(...)`): used to word a non-iterable value's error as cel-go does."""
    out: list[tuple[str, str]] = []
    stack = [root]
    while stack:
        e = stack.pop()
        if isinstance(e, Comprehension):
            hit = _literal_key(e.iter_range)
            if hit is not None:
                dom = _domain(hit[0], frozenset())
                if dom is not None and dom[0] == "attributes":
                    out.append((dom[1], hit[1]))
        stack.extend(reversed(children(e)))
    return tuple(out)
