"""Why claims do not fit: per request, the filtering stages with device counts, aggregated over nodes.

Each (sub)request is filtered on its own, in the allocator's eligibility order (class selectors, request
selectors, in use, taints, capacity, counters, compatibility groups); the first stage that leaves fewer
devices than the request needs is the one that emptied it. When every request has enough devices on its
own, the failure is combinatorial (constraints, counters or devices shared between requests).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

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
from webhook.state.view import StateView

if TYPE_CHECKING:
    from webhook.engine.allocate import NodePlan


_LABELS = {
    IN_USE: "not allocated to other claims",
    GATED: "not partitionable (DRAPartitionableDevices off)",
    CAPACITY: "enough capacity",
    GROUPS: "compatible with the groups in use",
}


def _funnel(
    state: StateView,
    alt: Alt,
    plans: Sequence[NodePlan],
    names: tuple[str | None, ...],
    f: Features,
    meter: Meter,
) -> list[list[Any]]:
    memo = state.memo()
    key = ("funnel", alt_key(alt), alt.class_name, names)
    hit = memo.get(key)
    if hit is not None:
        return [list(r) for r in hit]
    if state.inventory.shared_slices:
        in_class_n, left, why, effects, sets = _funnel_counts(state, alt, plans, f, meter)
    else:
        in_class_n, left, why, effects, sets = _funnel_by_node(state, alt, plans, f, meter)
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
            label = "free counters in " + ", ".join(n for n, _ in sets.most_common(3))
        else:
            label = _LABELS[b]
        rows.append([label, left])
    rows.append(["left", left])
    memo.put(key, [tuple(r) for r in rows], key_bytes(key) + 200 * len(rows))
    return rows


Tally = tuple[int, int, Counter[str], Counter[str], Counter[str]]  # in class, selected, why, effects, sets


def _funnel_counts(state: StateView, alt: Alt, plans: Iterable[NodePlan], f: Features, meter: Meter) -> Tally:
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


def _funnel_by_node(
    state: StateView, alt: Alt, plans: Sequence[NodePlan], f: Features, meter: Meter
) -> Tally:
    """`_funnel_counts` for a state without node-independent slices (every device is on one node):
    summed per node, each node's part remembered across versions with its pools stamp, so after a
    change only the nodes it touched are counted again."""
    cache = state.count_cache
    ckey = ("funnel-node", alt_key(alt), alt.class_name)
    known: dict[str | None, tuple[int, int, Tally]] | None = cache.get(ckey)
    if known is None:
        known = {}
        cache.put(ckey, known, key_bytes(ckey) + 400 * len(plans))
    rules = state.rules.version
    in_class_n = selected = 0
    why: Counter[str] = Counter()
    effects: Counter[str] = Counter()
    sets: Counter[str] = Counter()
    for plan in plans:
        meter.tick()
        stamp = state.node_stamp(plan.node)
        entry = known.get(plan.node.name)
        if entry is not None and entry[0] == stamp and entry[1] == rules:
            part = entry[2]
        else:
            part = _funnel_counts(state, alt, (plan,), f, meter)
            if stamp is not None:
                known[plan.node.name] = (stamp, rules, part)  # one dictionary operation of a finished value
        in_class_n += part[0]
        selected += part[1]
        why.update(part[2])
        effects.update(part[3])
        sets.update(part[4])
    return in_class_n, selected, why, effects, sets


def _sentence(alt: Alt, rows: list[list[Any]]) -> str:
    parts = [f"{rows[0][1]} devices in class {alt.class_name}"]
    prev = rows[0][1]
    for label, n in rows[1:-1]:
        if label.startswith("match"):
            parts.append(f"{n} {label}")
        else:
            removed = prev - n
            what = label.removeprefix("not ").replace(
                "allocated to other claims", "allocated to other claims"
            )
            if label.startswith("not "):
                parts.append(f"{removed} {what}")
            elif label.startswith("free counters in "):
                parts.append(f"{removed} lack {label}")
            else:
                parts.append(f"{removed} without {label}")
        prev = n
    parts.append(f"{rows[-1][1]} left")
    return f"request {alt.ref}: " + "; ".join(parts)


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


def _counter_contention(state: StateView, alt: Alt, plan: NodePlan, f: Features, meter: Meter) -> str:
    """When every candidate of a request draws on one counter set, whether that set can hold `count`
    of them at all (the smallest consumptions summed): a proof of why counters block the request."""
    need = alt.count
    if alt.all_mode or alt.admin or need < 2:
        return ""
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
    state: StateView,
    claims: list[PreparedClaim],
    plans: Sequence[NodePlan],
    searched: list[NodePlan],
    f: Features,
    meter: Meter,
    names: tuple[str | None, ...] | None = None,
    best: NodePlan | None = None,
    pools: Callable[[], Iterable[Sequence[Pool]]] | None = None,
    pruned: int | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """The reason paragraph and the structured explanation of an infeasible (or undecided) outcome.
    `names` (of the plans' nodes), `best` (the most promising plan), `pools` (every plan's pools) and
    `pruned` (plans pruned by device counts) may be passed when the caller knows them without making
    every plan."""
    if not plans:
        return "no candidate node", []
    if names is None:
        names = tuple(p.node.name for p in plans)
    if best is None:
        best = max(searched or plans, key=lambda p: (p.promise, -(len(p.node.name or ""))))
    best_name = best.node.name
    structured: list[dict[str, Any]] = []
    emptied: list[str] = []
    for pc in claims:
        for req in pc.requests:
            for alt in req.alts:
                meter.tick()
                rows = _funnel(state, alt, plans, names, f, meter)
                need = max(alt.count, 1)
                entry = {
                    "claim": pc.label,
                    "request": alt.ref,
                    "class": alt.class_name,
                    "needs": need if not alt.all_mode else "all",
                    "stages": rows,
                    "best_node": best_name,
                }
                structured.append(entry)
                if rows[-1][1] < need:
                    emptied.append(_sentence(alt, rows) + (f" (needs {need})" if need > 1 else ""))
    reasons = []
    if emptied:
        reasons.append(listing(emptied, " | "))  # a few requests; the structured explanation has them all
    else:
        contention = [
            m
            for pc in claims
            for req in pc.requests
            for alt in req.alts
            if (m := _counter_contention(state, alt, best, f, meter))
        ]
        if contention:
            reasons.append(listing(contention, " | "))
        cons = [f"{c.kind}Attribute {c.attribute}" for pc in claims for c in pc.constraints]
        reasons.append(
            "every request has enough devices on its own, but no combination satisfies them together"
            + (f" (constraints: {listing(cons)})" if cons else " (devices or shared counters are contended)")
        )
    invalid = False
    skipped: set[str] = set()
    if pruned is None:
        pruned = sum(1 for p in plans if not p.feasible_bound)
    for node_pools in pools() if pools is not None else (plan.pools for plan in plans):
        meter.tick()
        for p in node_pools:
            invalid = invalid or bool(p.invalid)
            if p.incomplete:
                skipped.add(f"{p.id[0]}/{p.id[1]}")
    if invalid:
        reasons.append("invalid resource pools were encountered")
    incomplete = sorted(skipped)
    if incomplete:
        reasons.append("incomplete resource pools skipped: " + listing(incomplete))
    where = f"{len(plans)} node(s) considered, {pruned} pruned by device counts"
    if best_name:
        where += f", best node {best_name}"
    for e in structured:
        e["nodes"] = len(plans)
    return f"{'; '.join(reasons)} ({where})", structured
