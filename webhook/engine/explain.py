"""Why claims do not fit: per request the filtering stages with device counts, per node and summed.

Each (sub)request is filtered on its own, in the allocator's eligibility order (class selectors, request
selectors, in use, taints, capacity, counters, compatibility groups), on every node. A request no node
can serve on its own is explained by the node that came closest (`webhook.engine.causes`: "the largest
node has 8 matching devices; 9 requested", never a sum over nodes); when each request fits somewhere but
no node fits them all, by the node that got furthest; when every request fits on its own on that node,
the failure is combinatorial (constraints, counters or devices shared between requests) and the claim
constraints are examined there. The stages summed over nodes stay in the structured explanation.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import compress
from operator import ne
from typing import TYPE_CHECKING, Any, TypeVar

from webhook.engine.causes import (
    Tally,
    closeness_of,
    constraint_causes,
    fits,
    furthest,
    holders,
    in_use_devices,
    left_of,
    node_cause,
    request_cause,
    where,
)
from webhook.engine.eligibility import (
    CAPACITY,
    COUNTERS,
    GATED,
    GROUPS,
    IN_USE,
    TAINTED,
    alt_key,
    blocker,
    counter_block,
    key_bytes,
)
from webhook.engine.requests import Alt, Features, PreparedClaim, blocking_taint
from webhook.engine.selectors import selectable
from webhook.model.bignum import Big, Nano
from webhook.model.budget import Meter
from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.text import listing
from webhook.state.pools import Pool
from webhook.state.view import ClusterView

if TYPE_CHECKING:
    from webhook.engine.plan import NodePlan


T = TypeVar("T")
R = TypeVar("R")  # what `summed` folds the parts into

_LABELS = {
    IN_USE: "not allocated to other claims",
    GATED: "not partitionable (DRAPartitionableDevices off)",
    CAPACITY: "enough capacity",
    GROUPS: "compatible with the groups in use",
}


def funnel(
    state: ClusterView,
    alt: Alt,
    plans: Sequence[NodePlan],
    names: tuple[str | None, ...],
    f: Features,
    meter: Meter,
    stamps: Sequence[int | None] | None = None,
) -> list[list[Any]]:
    """The filtering stages of one (sub)request with device counts over `plans` (kept per version; for
    states without node-independent slices also per node across versions, and their sum over the
    same nodes: `stamps`, the plans' node stamps, may be passed by a caller that has them)."""
    memo = state.memo()
    key = ("funnel", alt_key(alt), alt.class_name, names)
    hit = memo.get(key)
    if hit is not None:
        return [list(r) for r in hit]
    if state.inventory.shared_slices:
        in_class_n, left, why, effects, sets = _funnel_counts(state, alt, plans, f, meter)
    else:
        in_class_n, left, why, effects, sets = _funnel_by_node(state, alt, plans, names, f, meter, stamps)
    rows: list[list[Any]] = [[f"devices in class {alt.class_name}", in_class_n]]
    if alt.selectors:
        rows.append(["match the selector" + ("s" if len(alt.selectors) > 1 else ""), left])
    for b in (IN_USE, GATED, TAINTED, CAPACITY, COUNTERS, GROUPS):
        if not why[b]:
            continue
        left -= why[b]
        if b == TAINTED:
            label = "not tainted " + "/".join(sorted(effects))
        elif b == COUNTERS:
            top = sorted(sets.items(), key=lambda kv: (-kv[1], kv[0]))[:3]  # not by insertion order
            label = "free counters in " + ", ".join(n for n, _ in top)
        else:
            label = _LABELS[b]
        rows.append([label, left])
    rows.append(["left", left])
    memo.put(key, [tuple(r) for r in rows], key_bytes(key[:3]) + 60 * len(names) + 200 * len(rows))
    return rows


def _funnel_counts(
    state: ClusterView, alt: Alt, plans: Iterable[NodePlan], f: Features, meter: Meter
) -> Tally:
    """The funnel's counts over `plans`, each device counted once however many nodes see it."""
    in_class: set[tuple[str, int, int]] = set()
    for plan in plans:
        for _p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter, (alt.class_selectors, ())):
            in_class.add(d.key)
    seen: set[tuple[str, int, int]] = set()
    why: Counter[str] = Counter()
    effects: Counter[str] = Counter()
    sets: Counter[str] = Counter()
    for plan in plans:
        for p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter):
            if d.key in seen:
                continue
            seen.add(d.key)
            b = blocker(state, alt, p, d, f)
            if b is None:
                continue
            why[b] += 1
            if b == TAINTED:
                effects[
                    str((blocking_taint(state.device_taints(d), alt.tolerations) or {}).get("effect"))
                ] += 1
            elif b == COUNTERS:
                sets[counter_block(p, d) or "?"] += 1
    return len(in_class), len(seen), why, effects, sets


def _node_parts(
    state: ClusterView,
    alt: Alt,
    plans: Sequence[NodePlan],
    names: tuple[str | None, ...],
    f: Features,
    meter: Meter,
    stamps: Sequence[int | None] | None = None,
) -> tuple[Callable[[int], Tally], Sequence[int | None], Hashable]:
    """`part(i)`: the funnel's counts on the i-th node alone, remembered across versions with the node's
    pools stamp (a state without node-independent slices; see `_funnel_by_node`); the stamps; the key."""
    cache = state.count_cache
    ckey = ("funnel-node", alt_key(alt), alt.class_name)
    known: dict[str | None, tuple[int, int, Tally]] | None = cache.get(ckey)
    if known is None:
        known = {}
        cache.put(ckey, known, key_bytes(ckey) + 400 * len(plans))
    rules = state.rules.version
    if stamps is None:
        stamps = [state.node_stamp(plan.node) for plan in plans]
    got_stamps = stamps

    def part(i: int) -> Tally:
        meter.tick()
        name, stamp = names[i], got_stamps[i]
        entry = known.get(name)
        if entry is not None and entry[0] == stamp and entry[1] == rules:
            return entry[2]
        got = _funnel_counts(state, alt, (plans[i],), f, meter)
        if stamp is not None:
            known[name] = (stamp, rules, got)  # one dictionary operation of a finished value
        return got

    return part, stamps, ckey


def node_tallies(
    state: ClusterView,
    alt: Alt,
    plans: Sequence[NodePlan],
    names: tuple[str | None, ...],
    f: Features,
    meter: Meter,
    stamps: Sequence[int | None] | None = None,
) -> list[Tally]:
    """The funnel's counts of one (sub)request per node (never summed: "the largest node has 8"), kept
    per version; without node-independent slices each node's part is the one `funnel` remembers."""
    memo = state.memo()
    key = ("tallies", alt_key(alt), alt.class_name, names)
    hit = memo.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    if state.inventory.shared_slices:
        out = [_funnel_counts(state, alt, (plans[i],), f, meter) for i in range(len(plans))]
    else:
        part = _node_parts(state, alt, plans, names, f, meter, stamps)[0]
        out = [part(i) for i in range(len(plans))]
    memo.put(key, out, key_bytes(key[:3]) + 60 * len(names) + 120 * len(out))
    return out


def _funnel_by_node(
    state: ClusterView,
    alt: Alt,
    plans: Sequence[NodePlan],
    names: tuple[str | None, ...],
    f: Features,
    meter: Meter,
    stamps: Sequence[int | None] | None = None,
) -> Tally:
    """`_funnel_counts` for a state without node-independent slices (every device is on one node):
    summed per node, each node's part remembered across versions with its pools stamp, and the sum over
    `names` too, so after a change only the nodes it touched are counted and re-added."""
    part, stamps, ckey = _node_parts(state, alt, plans, names, f, meter, stamps)
    skey = ("funnel-sum", ckey, names)
    return summed(state.count_cache, skey, state.rules.version, stamps, part, _fold_tally, 400 * len(names))


_NO_TALLY: Tally = (0, 0, Counter(), Counter(), Counter())


def _fold_tally(total: Tally | None, removed: Iterable[Tally], added: Iterable[Tally]) -> Tally:
    """`total` without the parts `removed`, with the parts `added` (new Counters: totals are shared)."""
    t = total or _NO_TALLY
    in_class, selected = t[0], t[1]
    why, effects, sets = Counter(t[2]), Counter(t[3]), Counter(t[4])
    for p in removed:
        in_class -= p[0]
        selected -= p[1]
        why.subtract(p[2])
        effects.subtract(p[3])
        sets.subtract(p[4])
    for p in added:
        in_class += p[0]
        selected += p[1]
        why.update(p[2])
        effects.update(p[3])
        sets.update(p[4])
    return in_class, selected, +why, +effects, +sets


def summed(
    cache: Any,
    key: Hashable,
    rules: int,
    stamps: Sequence[int | None],
    part: Callable[[int], T],
    fold: Callable[[R | None, Iterable[T], Iterable[T]], R],
    nbytes: int,
) -> R:
    """The fold of `part(i)` over the nodes i of one node list, kept in `cache` (shared by versions)
    with the nodes' stamps: a later call whose stamps differ in a few nodes recomputes only those parts
    and folds the difference in (old parts out, new parts in). A node without a stamp (not a candidate
    node) is always recomputed. The cache holds one slot per key (put once, `nbytes` its estimate); the
    slot's content is a finished tuple replaced with one assignment, never changed (readers of other
    versions may hold it, and check its stamps against theirs)."""
    if all(s is None for s in stamps):
        return fold(None, (), [part(i) for i in range(len(stamps))])
    slot: list[Any] | None = cache.get(key)
    if slot is None:
        slot = [None]
        cache.put(key, slot, nbytes)
    prev = slot[0]
    if prev is not None and prev[0] == rules and len(prev[1]) == len(stamps):
        old_stamps, old_parts, total = prev[1], prev[2], prev[3]
        if old_stamps == stamps and None not in stamps:
            done: R = total
            return done
        if None in stamps:
            changed = [
                i for i, (a, b) in enumerate(zip(old_stamps, stamps, strict=True)) if a != b or b is None
            ]
        else:
            changed = list(compress(range(len(stamps)), map(ne, old_stamps, stamps)))
        if len(changed) * 4 < len(stamps):
            parts = list(old_parts)
            for i in changed:
                parts[i] = part(i)
            total = fold(total, [old_parts[i] for i in changed], [parts[i] for i in changed])
            slot[0] = (rules, list(stamps), parts, total)
            return total
    parts = [part(i) for i in range(len(stamps))]
    total = fold(None, (), parts)
    slot[0] = (rules, list(stamps), parts, total)
    return total


PoolFlags = tuple[bool, tuple[str, ...]]  # a node's pools: any invalid; the incomplete ones


def _fold_flags(
    total: tuple[int, Counter[str]] | None, removed: Iterable[PoolFlags], added: Iterable[PoolFlags]
) -> tuple[int, Counter[str]]:
    """(nodes with an invalid pool, incomplete pools by the nodes that skip them) as parts change."""
    invalid, skipped = (total[0], Counter(total[1])) if total is not None else (0, Counter())
    for bad, ids in removed:
        invalid -= bad
        skipped.subtract(ids)
    for bad, ids in added:
        invalid += bad
        skipped.update(ids)
    return invalid, +skipped


def _nano(n: Nano) -> str:
    """A nano-unit counter value as a short quantity string: binary suffix when exact (8Gi), else decimal."""
    if isinstance(n, Big):
        return Quantity.from_nano(n).canonical()
    if n % 10**9 == 0:
        units = n // 10**9
        for suffix, power in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
            if units and units % (1 << power) == 0:
                return f"{units >> power}{suffix}"
        return str(units)
    return parse_quantity(f"{n}n").canonical()


def _counter_contention(state: ClusterView, alt: Alt, plan: NodePlan, f: Features, meter: Meter) -> str:
    """When every candidate of a request draws on one counter set, whether that set can hold `count`
    of them at all (the smallest consumptions summed): a proof of why counters block the request.
    Kept across versions per (request shape, count, node) with the node's pools stamp."""
    if alt.all_mode or alt.admin or alt.count < 2:
        return ""
    stamp = state.node_stamp(plan.node)
    key = ("contention", alt_key(alt), alt.count)
    rules = state.rules.version
    known: dict[str | None, tuple[int, int, str]] | None = state.count_cache.get(key)
    if known is None:
        known = {}
        state.count_cache.put(key, known, key_bytes(key) + 2000)  # a few best nodes per shape
    hit = known.get(plan.node.name)
    if hit is not None and stamp is not None and hit[0] == stamp and hit[1] == rules:
        return hit[2]
    msg = _contention(state, alt, plan, f, meter)
    if stamp is not None:
        if len(known) >= 16:
            known.clear()  # best nodes come and go: keep a few
        known[plan.node.name] = (stamp, rules, msg)  # one dictionary operation of a finished value
    return msg


def _contention(state: ClusterView, alt: Alt, plan: NodePlan, f: Features, meter: Meter) -> str:
    need = alt.count
    where: tuple[Pool, str] | None = None
    uses: list[dict[str, Nano]] = []
    for p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter):
        if blocker(state, alt, p, d, f) is not None:
            continue
        if len(d.consumes) != 1 or (where is not None and where != (p, d.consumes[0].counter_set)):
            return ""  # candidates on several sets: no single-set argument
        where = (p, d.consumes[0].counter_set)
        uses.append(dict(d.consumes[0].counters))
    if where is None or len(uses) < need:
        return ""
    pool, set_name = where
    for counter, free in sorted(pool.available.get(set_name, {}).items()):
        smallest = sum(sorted(u.get(counter, 0) for u in uses)[:need])
        if smallest > free:
            return (
                f"request {alt.ref}: all {len(uses)} candidate devices draw on counter set {set_name} of pool "
                f"{pool.id[0]}/{pool.id[1]}, whose counter {counter} has {_nano(free)} free, but any {need} of "
                f"them need at least {_nano(smallest)}"
            )
    return ""


def explain(
    state: ClusterView,
    claims: list[PreparedClaim],
    plans: Sequence[NodePlan],
    searched: list[NodePlan],
    f: Features,
    meter: Meter,
    names: tuple[str | None, ...] | None = None,
    best: NodePlan | None = None,
    pools: Callable[[int], Sequence[Pool]] | None = None,
    pruned: int | None = None,
    stamps: Sequence[int | None] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """The reason paragraph and the structured explanation of an infeasible (or undecided) outcome.
    `names` (of the plans' nodes), `pools` (the i-th plan's pools), `pruned` (plans pruned by device
    counts) and `stamps` (the plans' node stamps) may be passed when the caller knows them without making
    every plan. The node named as the best is the one that got furthest (`causes.furthest`); `best` is
    only used when no plan can be compared."""
    if not plans:
        return "no candidate node", []
    if names is None:
        names = tuple(p.node.name for p in plans)
    tallies: dict[int, list[Tally]] = {}
    close: dict[int, list[float]] = {}
    rows_of: dict[int, list[list[Any]]] = {}
    cause_of: dict[int, str] = {}
    failing: list[str] = []  # requests no node can serve on their own
    names_used = [req.name for pc in claims for req in pc.requests]
    shared = len(set(names_used)) < len(names_used)  # two claims with a request of the same name
    for pc in claims:
        of_claim = f"claim {pc.label}, " if shared else ""  # which claim's request, when names repeat
        for req in pc.requests:
            causes = []
            for alt in req.alts:
                meter.tick()
                rows_of[id(alt)] = funnel(state, alt, plans, names, f, meter, stamps)
                t = tallies[id(alt)] = node_tallies(state, alt, plans, names, f, meter, stamps)
                c = close[id(alt)] = _closeness(state, alt, t, names)
                cause_of[id(alt)] = request_cause(alt, t, names, _owners(state, alt, plans, f, meter), c)
                causes.append(cause_of[id(alt)])
            if all(causes):
                failing.append(of_claim + " | ".join(causes))
    depth = [0] * len(plans)
    if searched:
        at = {name: i for i, name in enumerate(names)}
        for p in searched:
            i = at.get(p.node.name)
            if i is not None:
                depth[i] = p.depth
    bi, fit = furthest(claims, close, depth) if tallies else (0, 0)
    chosen = plans[bi] if tallies or best is None else best
    best_name = chosen.node.name
    total = sum(len(pc.requests) for pc in claims)
    reasons = []
    if failing:
        reasons.append(listing(failing, " | "))  # a few requests; the structured explanation has them all
    elif fit < total:
        local = []
        for pc in claims:
            of_claim = f"claim {pc.label}, " if shared else ""
            for req in pc.requests:
                alts = req.alts
                if any(fits(a, tallies[id(a)][bi]) for a in alts):
                    continue
                for a in alts:
                    here = tallies[id(a)][bi]
                    who = _owners(state, a, plans, f, meter)(bi) if here[2][IN_USE] else None
                    fits_on = [names[k] for k, v in enumerate(close[id(a)]) if v >= 1.0]
                    cause_of[id(a)] = node_cause(a, here, best_name, who, fits_on)
                    local.append(of_claim + cause_of[id(a)])
        reasons.append(
            f"no node can serve every request on its own; on {where(best_name)}, the node that got furthest "
            f"({fit} of {total} requests fit): " + listing(local, " | ")
        )
    else:
        found = constraint_causes(state, claims, chosen, f, meter, len(plans))
        found += [
            m
            for pc in claims
            for req in pc.requests
            for alt in req.alts
            if (m := _counter_contention(state, alt, chosen, f, meter))
        ]
        found += _shared_demand(claims, tallies, bi, best_name, shared)
        placed = f"; the search placed at most {depth[bi]} devices together" if depth[bi] else ""
        if found:
            on = f" on {where(best_name)}" if best_name else ""
            reasons.append(
                f"every request fits{on} on its own, but not together: " + listing(found, " | ") + placed
            )
        else:
            cons = [f"{c.kind}Attribute {c.attribute}" for pc in claims for c in pc.constraints]
            reasons.append(
                "every request has enough devices on its own, but no combination satisfies them together"
                + (
                    f" (constraints: {listing(cons)})"
                    if cons
                    else " (devices or shared counters are contended)"
                )
                + placed
            )
    structured: list[dict[str, Any]] = []
    for pc in claims:
        for req in pc.requests:
            for alt in req.alts:
                entry = _entry(pc, alt, rows_of[id(alt)], tallies[id(alt)], close[id(alt)], names, best_name)
                entry["cause"] = cause_of.get(id(alt), "")
                structured.append(entry)
    if pruned is None:
        pruned = sum(1 for p in plans if not p.feasible_bound)
    pools_of = pools if pools is not None else (lambda i: plans[i].pools)

    def flags(i: int) -> PoolFlags:
        meter.tick()
        node_pools = pools_of(i)
        return (
            any(p.invalid for p in node_pools),
            tuple(f"{p.id[0]}/{p.id[1]}" for p in node_pools if p.incomplete),
        )

    if stamps is None:
        stamps = [None] * len(plans)  # nothing to remember them by: every node's flags computed
    invalid, skipped = summed(
        state.count_cache, ("pool-flags", names), 0, stamps, flags, _fold_flags, 100 * len(names)
    )
    if invalid:
        reasons.append("invalid resource pools were encountered")
    incomplete = sorted(skipped)
    if incomplete:
        reasons.append("incomplete resource pools skipped: " + listing(incomplete))
    where_ = f"{len(plans)} node(s) considered, {pruned} pruned by device counts"
    if best_name:
        where_ += f", best node {best_name}"
    for e in structured:
        e["nodes"] = len(plans)
    return f"{'; '.join(reasons)} ({where_})", structured


def _shared_demand(
    claims: Sequence[PreparedClaim],
    tallies: dict[int, list[Tally]],
    bi: int,
    best_name: str | None,
    name_claims: bool,
) -> list[str]:
    """Requests that each fit on the best node but draw on the same devices (same class and selectors)
    and together need more than it has free: "requests gpu (claim a), gpu (claim b) need 2 devices of
    class x together; node-a has 1 free". Requests with subrequests or admin access are left out (their
    devices are not simply taken)."""
    groups: dict[Any, list[tuple[PreparedClaim, Alt]]] = {}
    for pc in claims:
        for req in pc.requests:
            if len(req.alts) != 1 or req.alts[0].admin or req.alts[0].all_mode:
                continue
            alt = req.alts[0]
            groups.setdefault((alt.class_name, alt.signature), []).append((pc, alt))
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        need = sum(max(a.count, 1) for _, a in members)
        free = max(max(0, left_of(tallies[id(a)][bi])) for _, a in members)
        if need <= free:
            continue
        refs = [f"{a.ref} (claim {pc.label})" if name_claims else a.ref for pc, a in members]
        out.append(
            f"requests {listing(refs)} draw on the same devices and need {need} of class "
            f"{members[0][1].class_name} together; {where(best_name)} has {free} free"
        )
    return out


PER_NODE = 5  # nodes listed per request in the structured explanation (the closest first)


def _entry(
    pc: PreparedClaim,
    alt: Alt,
    rows: list[list[Any]],
    tallies: list[Tally],
    close: list[float],
    names: tuple[str | None, ...],
    best_name: str | None,
) -> dict[str, Any]:
    """One request's structured explanation: the stages summed over nodes (each device once), and per
    node (the closest first, at most PER_NODE) what excluded its matching devices; the caller adds
    `cause`, the sentence of the reason ("" when the request is not what failed)."""
    need = max(alt.count, 1)
    order = heapq.nlargest(PER_NODE, range(len(tallies)), key=close.__getitem__)  # ties: the first nodes
    per_node = []
    for i in order:
        t = tallies[i]
        per_node.append(
            {
                "node": names[i],
                "inClass": t[0],
                "matching": t[1],
                "blocked": {b: n for b, n in sorted(t[2].items()) if n},
                "left": t[1] - sum(t[2].values()),
                "fits": close[i] >= 1.0,
            }
        )
    return {
        "claim": pc.label,
        "request": alt.ref,
        "class": alt.class_name,
        "needs": need if not alt.all_mode else "all",
        "stages": rows,
        "best_node": best_name,
        "perNode": per_node,
    }


def _closeness(
    state: ClusterView, alt: Alt, tallies: list[Tally], names: tuple[str | None, ...]
) -> list[float]:
    """`causes.closeness` per node, kept per version and, across versions, per node with the tally it
    was computed from (the funnel keeps a node's tally while its pools do not change)."""
    memo = state.memo()
    key = ("close", alt_key(alt), alt.class_name, alt.count, alt.all_mode, names)
    hit = memo.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    cache = state.count_cache
    ckey = ("close-node", alt_key(alt), alt.class_name, alt.count, alt.all_mode)  # closeness depends on both
    known: dict[str | None, tuple[Tally, float]] | None = cache.get(ckey)
    if known is None:
        known = {}
        cache.put(ckey, known, key_bytes(ckey) + 150 * len(names))
    out = []
    get = known.get
    for name, t in zip(names, tallies, strict=True):
        e = get(name)
        if e is not None and e[0] is t:
            out.append(e[1])
            continue
        c = closeness_of(alt, (t,))[0]
        known[name] = (t, c)  # one dictionary operation of a finished value
        out.append(c)
    memo.put(key, out, key_bytes(key[:5]) + 60 * len(names) + 40 * len(out))
    return out


def _owners(
    state: ClusterView, alt: Alt, plans: Sequence[NodePlan], f: Features, meter: Meter
) -> Callable[[int], Counter[str]]:
    """node index -> the claims holding that node's devices that match `alt` but are in use."""
    return lambda i: holders(state, in_use_devices(state, alt, plans[i], f, meter))
