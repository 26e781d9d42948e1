"""Root causes of an infeasible answer, in the operator's words.

Per (sub)request, from the per-node counts of the explanation's funnel (`explain.node_tallies`): the
node that came closest and what excluded its devices there — never a sum over nodes ("the largest node
has 8 matching devices; 9 requested"), with the claims that hold the devices in use. For an "All"
request, the node with matching devices and what holds them. When every request fits on its own, the
claim constraints on the node that got furthest: which attribute no candidate has, or how the values
split. The node that got furthest is chosen by how many requests fit there on their own, then by how
many devices the search placed at once, then by how close the rest came (never by name alone).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from webhook.engine.constraints import as_scalar, as_set, lookup
from webhook.engine.eligibility import CAPACITY, COUNTERS, GATED, GROUPS, IN_USE, TAINTED, blocker
from webhook.engine.requests import Alt, ConstraintSpec, Features, PreparedClaim
from webhook.engine.selectors import selectable
from webhook.model.budget import Meter
from webhook.model.records import DeviceRec
from webhook.model.text import listing
from webhook.state.view import ClusterView

if TYPE_CHECKING:
    from webhook.engine.plan import NodePlan

Tally = tuple[int, int, Counter[str], Counter[str], Counter[str]]  # in class, selected, why, effects, sets

_BLOCKED = (IN_USE, GATED, TAINTED, CAPACITY, COUNTERS, GROUPS)


def where(name: str | None) -> str:
    """A node as a sentence names it ("node-a"; the anonymous node of a state without Node objects)."""
    return name if name else "the node"


def devices(n: int, what: str = "device") -> str:
    """`1 device`, `3 devices` (`what` may be "matching device")."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def left_of(t: Tally) -> int:
    return t[1] - sum(t[2].values())


def _all_usable(t: Tally) -> tuple[int, int]:
    """(devices an "All" request would take on this node, how many of them are blocked): devices without
    enough capacity are left out of an "All" request's collection, every other blocker makes it fail."""
    taken = t[1] - t[2][CAPACITY]
    return taken, sum(n for b, n in t[2].items() if b != CAPACITY)


def fits(alt: Alt, t: Tally) -> bool:
    """Whether the (sub)request could be served on this node on its own."""
    if alt.all_mode:
        taken, blocked = _all_usable(t)
        return taken > 0 and blocked == 0
    return left_of(t) >= max(alt.count, 1)


def closeness(alt: Alt, t: Tally) -> float:
    """How close the node came to serving the request on its own: 1.0 or more when it can; below, the
    share of the devices it needs that are free, then (a tie-breaker) the share that match, then the
    share in the class: a node whose matching devices are all in use came closer than one without any."""
    if alt.all_mode:
        taken, blocked = _all_usable(t)
        return 0.0 if taken <= 0 else (taken - blocked) / taken + 1e-3 * min(1.0, taken / (taken + blocked))
    need = max(alt.count, 1)
    left = min(1.0, max(0, left_of(t)) / need)
    return left + 1e-3 * min(1.0, t[1] / need) + 1e-6 * min(1.0, t[0] / need)


def holders(state: ClusterView, devices: set[tuple[str, str, str]]) -> Counter[str]:
    """The allocated claims holding `devices` (exclusively), by "namespace/name", with device counts."""
    out: Counter[str] = Counter()
    if not devices:
        return out
    for key, alloc in state.allocated.claims.items():
        hit = sum(1 for d in alloc.exclusive if d in devices)
        if hit:
            out[claim_label(key)] += hit
    return out


def claim_label(key: Any) -> str:
    """An allocated claim's key in the allocated state as a sentence names it ("namespace/name")."""
    if isinstance(key, tuple) and len(key) == 3:
        return f"{key[1]}/{key[2]}" if key[1] else str(key[2])
    return str(key)


def _held_by(count: int, owners: Counter[str], are: bool) -> str:
    verb = "are allocated" if are else "allocated"
    if not owners:
        return f"{count} {verb} to other claims"
    ranked = sorted(owners.items(), key=lambda kv: (-kv[1], kv[0]))  # not the state's (hash) order
    named = [f"{o} ({n})" if len(owners) > 1 else o for o, n in ranked]
    word = "claim" if len(owners) == 1 else "claims"
    return f"{count} {verb} to {word} {listing(named, ', ', 3)}"


def blocked_parts(
    t: Tally, owners: Counter[str] | None, are: bool = False, skip: tuple[str, ...] = ()
) -> list[str]:
    """What excluded the matching devices of one node, in eligibility order."""
    why, effects, sets = t[2], t[3], t[4]
    out = []
    for b in _BLOCKED:
        n = why[b]
        if not n or b in skip:
            continue
        if b == IN_USE:
            out.append(_held_by(n, owners or Counter(), are))
        elif b == TAINTED:
            out.append(f"{n} tainted {'/'.join(sorted(effects))} (not tolerated)")
        elif b == CAPACITY:
            out.append(f"{n} without enough free capacity")
        elif b == COUNTERS:
            top = sorted(sets.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            out.append(f"{n} lack free counters in {', '.join(name for name, _ in top)}")
        elif b == GATED:
            out.append(f"{n} partitionable (DRAPartitionableDevices off)")
        else:
            out.append(f"{n} incompatible with the compatibility groups in use")
    return out


OwnersOf = Callable[[int], Counter[str]]  # node index -> the claims holding its in-use devices


def closeness_of(alt: Alt, tallies: Sequence[Tally]) -> list[float]:
    """`closeness` per node (computed once per request and explanation)."""
    return [closeness(alt, t) for t in tallies]


def request_cause(
    alt: Alt,
    tallies: Sequence[Tally],
    names: Sequence[str | None],
    owners: OwnersOf,
    close: Sequence[float] | None = None,
) -> str:
    """Why no node can serve this (sub)request on its own ("" when some node can). `close`: the nodes'
    `closeness` (the caller may have it)."""
    if close is None:
        close = closeness_of(alt, tallies)
    if not close or max(close) >= 1.0:
        return ""
    n = len(tallies)
    if alt.all_mode:
        return _all_cause(alt, tallies, names, owners, close)
    need = max(alt.count, 1)
    keys = [(t[1], t[0], close[i], -i) for i, t in enumerate(tallies)]  # ties: the closest (most free)
    top_sel = max(range(n), key=keys.__getitem__)
    sel = tallies[top_sel][1]
    if sel < need:
        return f"{alt_ref(alt)}: {_too_few(alt, tallies, names, top_sel, need)}"
    # enough matching devices somewhere, but not enough of them free: the node that kept the most
    order = closest_first(close)
    i = order[0]
    t = tallies[i]
    parts = [
        f"{where(names[i])} has {devices(t[1], 'matching device')}",
        *blocked_parts(t, owners(i) if t[2][IN_USE] else None),
    ]
    return f"{alt_ref(alt)}: {', '.join(parts)}; {max(0, left_of(t))} left, {need} requested{_others(t, tallies, names, order[1:])}"


OTHERS = 3  # other nodes a reason sums up after the closest one


def closest_first(close: Sequence[float]) -> list[int]:
    """Node indexes by closeness, the closest first (ties in candidate order)."""
    return sorted(range(len(close)), key=close.__getitem__, reverse=True)  # a stable sort keeps ties' order


def _others(t: Tally, tallies: Sequence[Tally], names: Sequence[str | None], rest: Sequence[int]) -> str:
    """The other nodes with matching devices, the closest first, and what excluded those devices."""
    shown: list[str] = []
    more = 0
    for k in rest:
        tk = tallies[k]
        if tk[1] == 0:
            continue
        if len(shown) >= OTHERS:
            more += 1
            continue
        blocked = blocked_parts(tk, None)
        shown.append(
            f"{where(names[k])}: {', '.join(blocked)}" if blocked else f"{where(names[k])}: {tk[1]} free"
        )
    if not shown:
        return ""
    return "; other nodes: " + "; ".join(shown) + (f"; and {more} more" if more else "")


def alt_ref(alt: Alt) -> str:
    return f"{'subrequest' if alt.parent else 'request'} {alt.ref}"


def _too_few(alt: Alt, tallies: Sequence[Tally], names: Sequence[str | None], i: int, need: int) -> str:
    n = len(tallies)
    t = tallies[i]
    sel, in_class = t[1], t[0]
    if max(x[0] for x in tallies) == 0:
        scope = f"on {where(names[0])}" if n == 1 else f"on any of the {n} nodes"
        return f"no device of class {alt.class_name} {scope}"
    if sel == 0:
        i = max(range(n), key=lambda k: (tallies[k][0], -k))
        s = "s" if len(alt.selectors) > 1 else ""
        k = tallies[i][0]
        if n == 1:
            return f"none of the {devices(k)} of class {alt.class_name} on {where(names[i])} matches the request's selector{s}"
        return (
            f"no device of class {alt.class_name} matches the request's selector{s} on any node "
            f"({where(names[i])} has {devices(k)} of the class)"
        )
    matching = f"{devices(sel)} of class {alt.class_name}"
    if alt.selectors:
        s = "s" if len(alt.selectors) > 1 else ""
        matching += f" matching the request's selector{s}" + (
            f" ({in_class} in the class)" if in_class != sel else ""
        )
    if n == 1:
        return f"{where(names[i])} has {matching}; {need} requested"
    return f"the largest node, {where(names[i])}, has {matching}; {need} requested"


def _all_cause(
    alt: Alt, tallies: Sequence[Tally], names: Sequence[str | None], owners: OwnersOf, close: Sequence[float]
) -> str:
    n = len(tallies)
    head = f"{alt_ref(alt)} (allocationMode All)"
    best = max(range(n), key=lambda k: (_all_usable(tallies[k])[0] > 0, close[k], -k))
    t = tallies[best]
    taken, _ = _all_usable(t)
    if taken <= 0:
        if max(x[0] for x in tallies) == 0:
            scope = f"on {where(names[0])}" if n == 1 else f"on any of the {n} nodes"
            return f"{head}: no device of class {alt.class_name} {scope}; All needs at least one"
        return f"{head}: no node has a device matching the request; All needs at least one"
    parts = blocked_parts(t, owners(best) if t[2][IN_USE] else None, are=True, skip=(CAPACITY,))
    return (
        f"{head}: {where(names[best])} has {devices(taken, 'matching device')}, {', '.join(parts)}; All needs every one"
        " of them"
    )


def in_use_devices(
    state: ClusterView, alt: Alt, plan: NodePlan, f: Features, meter: Meter
) -> set[tuple[str, str, str]]:
    """The devices of one node that match `alt` but are allocated to other claims."""
    out: set[tuple[str, str, str]] = set()
    for p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter):
        if blocker(state, alt, p, d, f) == IN_USE:
            out.add(d.id)
    return out


# --- the node that got furthest ------------------------------------------------------------------


def furthest(
    claims: Sequence[PreparedClaim],
    close: Mapping[int, Sequence[float]],
    depth: Sequence[int],
) -> tuple[int, int]:
    """(index of the node that got furthest, how many requests fit there on their own): most requests
    that fit on their own, then most devices the search placed at once (`depth`, 0 when not searched),
    then the closest the other requests came; ties go to the first node in candidate order. `close`:
    each (sub)request's closeness per node, by id of its Alt."""
    n = len(depth)
    reqs = [req for pc in claims for req in pc.requests]
    if len(reqs) == 1 and len(reqs[0].alts) == 1 and not any(depth):  # one request: its closest node
        one = close[id(reqs[0].alts[0])]
        i = max(range(n), key=one.__getitem__)  # the first of equals
        return i, int(one[i] >= 1.0)
    ok = [0] * n
    total = [0.0] * n
    for pc in claims:
        for req in pc.requests:
            per = [close[id(a)] for a in req.alts]
            best = list(map(max, *per)) if len(per) > 1 else list(per[0])
            ok = [o + (b >= 1.0) for o, b in zip(ok, best, strict=True)]
            total = [s + (b if b < 1.0 else 1.0) for s, b in zip(total, best, strict=True)]
    keys = list(zip(ok, depth, total, range(0, -n, -1), strict=True))
    i = max(range(n), key=keys.__getitem__)
    return i, ok[i]


def node_cause(
    alt: Alt, t: Tally, name: str | None, owners: Counter[str] | None, fits_on: Sequence[str | None] = ()
) -> str:
    """Why one node cannot serve the (sub)request on its own (`fits_on`: nodes where it could)."""
    elsewhere = f" (it fits on {listing([where(n) for n in fits_on], ', ', 3)})" if fits_on else ""
    return _node_cause(alt, t, name, owners) + elsewhere


def _node_cause(alt: Alt, t: Tally, name: str | None, owners: Counter[str] | None) -> str:
    if alt.all_mode:
        taken, _ = _all_usable(t)
        if taken <= 0:
            return f"{alt_ref(alt)} (allocationMode All): {where(name)} has no matching device"
        parts = blocked_parts(t, owners, are=True, skip=(CAPACITY,))
        return (
            f"{alt_ref(alt)} (allocationMode All): {where(name)} has {devices(taken, 'matching device')}, "
            + ", ".join(parts)
        )
    need = max(alt.count, 1)
    if t[0] == 0:
        return f"{alt_ref(alt)}: {where(name)} has no device of class {alt.class_name}"
    if t[1] < need:
        return f"{alt_ref(alt)}: {where(name)} has {devices(t[1], 'matching device')}; {need} requested"
    parts = [f"{where(name)} has {devices(t[1], 'matching device')}", *blocked_parts(t, owners)]
    return f"{alt_ref(alt)}: {', '.join(parts)}; {max(0, left_of(t))} left, {need} requested"


# --- constraints ---------------------------------------------------------------------------------


def _applies(spec: ConstraintSpec, alt: Alt) -> bool:
    return not spec.requests or alt.base in spec.requests or alt.ref in spec.requests


def _value_text(v: Any) -> str:
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(map(str, v))) + "}"
    return str(v)


def constraint_causes(
    state: ClusterView, claims: Sequence[PreparedClaim], plan: NodePlan, f: Features, meter: Meter, nodes: int
) -> list[str]:
    """Per claim constraint, on one node: the attribute no candidate device has, or values too split
    for the devices the constrained requests need (matchAttribute) or too few distinct ones
    (distinctAttribute). Requests with subrequests are taken at their first subrequest."""
    out = []
    at = where(plan.node.name)
    scope = f" on {at}" if nodes > 1 or plan.node.name else ""
    for pc in claims:
        for spec in pc.constraints:
            alts = [req.alts[0] for req in pc.requests if req.alts and _applies(spec, req.alts[0])]
            if not alts:
                continue
            cands: dict[tuple[str, str, str], DeviceRec] = {}
            for alt in alts:
                for p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter):
                    if blocker(state, alt, p, d, f) is None:
                        cands[d.id] = d
            need = sum(max(a.count, 1) for a in alts if not a.all_mode)
            label = f"constraint {spec.kind}Attribute `{spec.attribute}`"
            values: Counter[Any] = Counter()
            lacking = 0
            for d in cands.values():
                attr = lookup(d, spec.attribute)
                v = None
                if attr is not None:
                    v = as_set(attr) if f.list_attributes else as_scalar(attr)
                if v is None:
                    lacking += 1
                else:
                    values[v[1]] += 1
            checked = len(cands)
            if not values:
                if checked:
                    out.append(f"{label}: no candidate device has this attribute ({checked} checked{scope})")
                continue
            lack = f"; {lacking} of {checked} candidates lack it" if lacking else ""
            shown = listing([f"{_value_text(v)} ×{n}" for v, n in values.most_common()], ", ", 4)
            if spec.kind == "match":
                top = values.most_common(1)[0][1]
                if top < need:
                    out.append(
                        f"{label}: at most {top} candidate devices share one value{scope} ({shown}){lack}; "
                        f"the constrained requests need {need}"
                    )
            elif len(values) < need:
                out.append(
                    f"{label}: only {len(values)} distinct values among the candidates{scope} ({shown}){lack}; "
                    f"the constrained requests need {need} devices"
                )
    return out
