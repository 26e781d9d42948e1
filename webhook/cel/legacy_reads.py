"""What a compiled selector reads from `device`, from its checked AST: the (domain, id) pairs it looks up
with literal keys, and whether it looks at a whole map (iteration, `in`, `size`, computed keys).

The runtime keys selector results on the device's values of exactly these reads (the "projection"),
so devices that agree on them share one evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.cel.checked import Node

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


def _is_device(n: Node | None, bound: frozenset[str]) -> bool:
    return n is not None and n.kind == "ident" and n.value == "device" and "device" not in bound


def _literal_key(n: Node) -> tuple[Node, str] | None:
    """(target, key) for `t.key`, `t[lit]`, `t[?lit]`, `t.?key` and `has(t.key)`."""
    if n.kind == "select" and n.target is not None:
        return n.target, str(n.value)
    if n.kind == "call" and n.value in _INDEX and len(n.args) == 2:
        key = n.args[1]
        if key.kind == "const" and isinstance(key.value, str):
            return n.args[0], key.value
    return None


def _device_map(n: Node, bound: frozenset[str]) -> str:
    if n.kind == "select" and not n.test_only and n.value in _DEVICE_MAPS and _is_device(n.target, bound):
        return str(n.value)
    return ""


def _domain(n: Node, bound: frozenset[str]) -> tuple[str, str] | None:
    """("attributes"|"capacity", domain) when `n` is a literal lookup of one domain map."""
    if n.kind == "select" and n.test_only:
        return None
    hit = _literal_key(n)
    if hit is None:
        return None
    which = _device_map(hit[0], bound)
    return (which, hit[1]) if which else None


def analyse(root: Node) -> Reads:
    """Collect the reads of one checked expression."""
    reads: set[Read] = set()
    state = {"projectable": True, "whole_map": False}

    def visit(n: Node, bound: frozenset[str]) -> None:
        hit = _literal_key(n)
        if hit is not None:
            dom = _domain(hit[0], bound)
            if dom is not None:
                reads.add((dom[0], dom[1], hit[1]))
                return
        dom = _domain(n, bound)
        if dom is not None:
            reads.add(dom)
            return
        if n.kind == "select" and _is_device(n.target, bound):
            if n.value in _DEVICE_MAPS:  # the whole map: iteration, `in`, size, computed key, has()
                state["projectable"] = False
                state["whole_map"] = True
            else:
                reads.add((str(n.value),))
            return
        if _is_device(n, bound):
            state["projectable"] = False
            state["whole_map"] = True
            return
        if n.kind == "comprehension":
            inner = bound | {v for v in (n.iter_var, n.iter_var2, n.accu_var) if v}
            for part in (n.iter_range, n.accu_init):
                if part is not None:
                    visit(part, bound)
            for part in (n.loop_condition, n.loop_step):
                if part is not None:
                    visit(part, inner)
            if n.result is not None:
                visit(n.result, bound | {n.accu_var})
            return
        for c in n.children():
            visit(c, bound)

    visit(root, frozenset())
    return Reads(tuple(sorted(reads)), state["projectable"], state["whole_map"])


def attribute_ranges(root: Node) -> tuple[tuple[str, str], ...]:
    """The (domain, id) attribute values that comprehensions iterate over, looked up with literal keys
    (`device.attributes["d"].ids.exists(...)`): used to word a non-iterable value's error as cel-go does."""
    out: list[tuple[str, str]] = []

    def visit(n: Node) -> None:
        if n.kind == "comprehension" and n.iter_range is not None:
            hit = _literal_key(n.iter_range)
            if hit is not None:
                dom = _domain(hit[0], frozenset())
                if dom is not None and dom[0] == "attributes":
                    out.append((dom[1], hit[1]))
        for c in n.children():
            visit(c)

    visit(root)
    return tuple(out)
