"""Why claims do not fit: per request, the filtering stages with device counts, aggregated over nodes.

Each (sub)request is filtered on its own, in the allocator's eligibility order (class selectors, request
selectors, in use, taints, capacity, counters, compatibility groups); the first stage that leaves fewer
devices than the request needs is the one that emptied it. When every request has enough devices on its
own, the failure is combinatorial (constraints, counters or devices shared between requests).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from webhook.engine import capacity as cap
from webhook.engine.requests import Alt, Features, PreparedClaim, blocking_taint
from webhook.engine.selectors import selectable
from webhook.state.cluster import ClusterState
from webhook.state.pools import Pool, group_admits
from webhook.state.records import DeviceRec

if TYPE_CHECKING:
    from webhook.engine.allocate import NodePlan


def _counter_block(pool: Pool, d: DeviceRec) -> str | None:
    """The counter set this device alone would overdraw (given what is allocated), if any."""
    if pool.over_committed:
        for name, counters in pool.available.items():
            if any(v < 0 for v in counters.values()):
                return name
    for c in d.consumes:
        have = pool.available.get(c.counter_set, {})
        for counter, v in c.counters:
            if counter in have and v > have[counter]:
                return c.counter_set
    return None


def _funnel(state: ClusterState, alt: Alt, plans: list[NodePlan], f: Features) -> list[list[Any]]:
    seen_class: set[tuple[str, int, int]] = set()
    for plan in plans:
        for _p, d, _e in selectable(state, alt, plan.pools, plan.node, f, (alt.class_selectors, ())):
            seen_class.add(d.key)
    rows: list[list[Any]] = [[f"devices in class {alt.class_name}", len(seen_class)]]
    survivors: dict[tuple[str, int, int], tuple[Pool, DeviceRec]] = {}
    for plan in plans:
        for p, d, _e in selectable(state, alt, plan.pools, plan.node, f):
            survivors.setdefault(d.key, (p, d))
    if alt.selectors:
        rows.append(["match the selector" + ("s" if len(alt.selectors) > 1 else ""), len(survivors)])
    exclusive = state.allocated.exclusive
    agg = state.allocated.capacity

    def stage(label: str, keep: Any) -> None:
        nonlocal survivors
        before = len(survivors)
        survivors = {k: v for k, v in survivors.items() if keep(*v)}
        if len(survivors) != before:
            rows.append([label, len(survivors)])

    if not alt.admin:
        stage("not allocated to other claims", lambda p, d: d.id not in exclusive)
    if not f.partitionable:
        stage("not partitionable (DRAPartitionableDevices off)", lambda p, d: not d.consumes)
    if f.taints:
        effects = Counter(
            str((blocking_taint(state.device_taints(d), alt.tolerations) or {}).get("effect"))
            for p, d in survivors.values()
        )
        effects.pop("None", None)
        label = "not tainted " + "/".join(sorted(effects)) if effects else "not tainted"
        stage(label, lambda p, d: blocking_taint(state.device_taints(d), alt.tolerations) is None)
    if f.consumable_capacity:
        stage(
            "enough capacity",
            lambda p, d: (
                not (d.capacity or alt.capacity)
                or cap.fits(cap.consumed(alt.capacity, d), d, agg.get(d.id), None)
            ),
        )
    if f.partitionable:
        blocked = Counter(
            s for p, d in survivors.values() if not alt.admin and (s := _counter_block(p, d)) is not None
        )
        if blocked:
            names = ", ".join(n for n, _ in blocked.most_common(3))
            stage(f"free counters in {names}", lambda p, d: alt.admin or _counter_block(p, d) is None)
    if f.groups and not alt.admin:
        stage(
            "compatible with the groups in use",
            lambda p, d: all(group_admits(p.groups.get(c.counter_set), c.groups) for c in d.consumes),
        )
    rows.append(["left", len(survivors)])
    return rows


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


def explain(
    state: ClusterState,
    claims: list[PreparedClaim],
    plans: list[NodePlan],
    searched: list[NodePlan],
    f: Features,
) -> tuple[str, list[dict[str, Any]]]:
    """The reason paragraph and the structured explanation of an infeasible (or undecided) outcome."""
    if not plans:
        return "no candidate node", []
    best = max(searched or plans, key=lambda p: (p.promise, -(len(p.node.name or ""))))
    best_name = best.node.name
    structured: list[dict[str, Any]] = []
    emptied: list[str] = []
    for pc in claims:
        for req in pc.requests:
            for alt in req.alts:
                rows = _funnel(state, alt, plans, f)
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
        reasons.append("; ".join(emptied) if len(emptied) == 1 else " | ".join(emptied))
    else:
        cons = [f"{c.kind}Attribute {c.attribute}" for pc in claims for c in pc.constraints]
        reasons.append(
            "every request has enough devices on its own, but no combination satisfies them together"
            + (
                f" (constraints: {', '.join(cons)})"
                if cons
                else " (devices or shared counters are contended)"
            )
        )
    if any(p.invalid for plan in plans for p in plan.pools):
        reasons.append("invalid resource pools were encountered")
    incomplete = sorted({f"{p.id[0]}/{p.id[1]}" for plan in plans for p in plan.pools if p.incomplete})
    if incomplete:
        reasons.append("incomplete resource pools skipped: " + ", ".join(incomplete[:5]))
    pruned = sum(1 for p in plans if not p.feasible_bound)
    where = f"{len(plans)} node(s) considered, {pruned} pruned by device counts"
    if best_name:
        where += f", best node {best_name}"
    for e in structured:
        e["nodes"] = len(plans)
    return f"{'; '.join(reasons)} ({where})", structured
