"""How a selector uses the device, for lint: every lookup of an attribute or capacity with literal keys
(`device.attributes["gpu.example.com"].model`, `["model"]`, `.?model`, `has(...)`), what is done to the
value (a field selected on it, a literal it is compared with), and the driver names compared with
`device.driver`. Read from the checked AST (`webhook.cel.common.ast`), iteratively.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from webhook.cel.common.ast import Call, Const, Expr, Ident, Select, children

_INDEX = ("_[_]", "_[?_]", "_?._")
_COMPARE = ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_")


@dataclass
class Use:
    """One literal lookup: `map` is "attributes" or "capacity"; `guarded`: inside has() or optional."""

    map: str
    domain: str
    id: str
    guarded: bool = False
    accessor: str = ""  # a field selected on the value: `.bool`
    compared: list[tuple[str, object]] = field(default_factory=list)  # (const kind, value)


@dataclass
class Qualified:
    """`device.attributes["dra.net/rdma"]`: a fully-qualified name used as a domain key (never present:
    a domain has no `/`), or tested with `in`. `accessor`: the field selected on it (`.bool`); `guarded`:
    inside has(), optional, or `in` (false, not an error)."""

    map: str
    key: str
    guarded: bool = False
    accessor: str = ""
    membership: bool = False  # `"dra.net/rdma" in device.attributes`


@dataclass
class Uses:
    lookups: list[Use] = field(default_factory=list)
    drivers: set[str] = field(default_factory=set)  # literals compared with device.driver
    qualified: list[Qualified] = field(default_factory=list)


def _is_device(e: Expr) -> bool:
    return isinstance(e, Ident) and e.name in ("device", ".device")


def _key(e: Expr) -> tuple[Expr, str, bool] | None:
    """(target, literal key, guarded) of `t.key`, `t[lit]`, `t[?lit]`, `t.?key`, `has(t.key)`."""
    if isinstance(e, Select):
        return e.operand, e.field, e.test_only
    if isinstance(e, Call) and e.function in _INDEX and e.target is None and len(e.args) == 2:
        k = e.args[1]
        if isinstance(k, Const) and k.kind == "string" and isinstance(k.value, str):
            return e.args[0], k.value, e.function != "_[_]"
    return None


def _device_map(e: Expr) -> str:
    if (
        isinstance(e, Select)
        and not e.test_only
        and e.field in ("attributes", "capacity")
        and _is_device(e.operand)
    ):
        return e.field
    return ""


def analyse(root: Expr) -> Uses:
    """The lookups and driver literals of one expression."""
    out = Uses()
    parent: dict[int, Expr] = {}
    found: list[tuple[Expr, Use]] = []
    keys: list[tuple[Expr, Qualified]] = []
    stack = [root]
    while stack:
        e = stack.pop()
        kids = children(e)
        for c in kids:
            parent[id(c)] = e
        stack.extend(kids)
        if isinstance(e, Call) and e.function == "_==_" and len(e.args) == 2:
            _driver(e.args[0], e.args[1], out)
            _driver(e.args[1], e.args[0], out)
        if isinstance(e, Call) and e.function == "@in" and len(e.args) == 2:
            _qualified_in(e.args[0], e.args[1], out)
        hit = _key(e)
        if hit is None:
            continue
        target, ident, guarded = hit
        which = _device_map(target)
        if which and "/" in ident:
            q = Qualified(which, ident, guarded)
            out.qualified.append(q)
            keys.append((e, q))
            continue
        inner = _key(target)
        if inner is None:
            continue
        which = _device_map(inner[0])
        if not which or inner[2] or "/" in inner[1]:  # a qualified key: reported as such, not as a domain
            continue
        use = Use(which, inner[1], ident, guarded)
        out.lookups.append(use)
        found.append((e, use))
    for node, q in keys:
        p = parent.get(id(node))
        if isinstance(p, Select) and p.operand is node:
            q.accessor, q.guarded = p.field, q.guarded or p.test_only
        elif isinstance(p, Call) and p.function in _INDEX and p.args and p.args[0] is node:
            k = p.args[1] if len(p.args) == 2 else None
            q.accessor = str(k.value) if isinstance(k, Const) else ""
            q.guarded = q.guarded or p.function != "_[_]"
    for node, use in found:
        p = parent.get(id(node))
        if isinstance(p, Select) and not p.test_only and p.operand is node:
            use.accessor = p.field
        elif isinstance(p, Call) and p.function in _COMPARE and len(p.args) == 2:
            other = p.args[1] if p.args[0] is node else p.args[0]
            if isinstance(other, Const):
                use.compared.append((other.kind, other.value))
    return out


def _driver(x: Expr, y: Expr, out: Uses) -> None:
    if isinstance(x, Select) and x.field == "driver" and not x.test_only and _is_device(x.operand):
        if isinstance(y, Const) and isinstance(y.value, str):
            out.drivers.add(y.value)


def _qualified_in(key: Expr, target: Expr, out: Uses) -> None:
    """`"dra.net/rdma" in device.attributes`: false on every device."""
    which = _device_map(target)
    if which and isinstance(key, Const) and isinstance(key.value, str) and "/" in key.value:
        out.qualified.append(Qualified(which, key.value, guarded=True, membership=True))
