"""allocate(): the claims of one Pod over the candidate nodes, first feasible node wins.

Per call: claims are prepared once (classes, selectors, gates); per node the gathered pools and the
per-slice selector results come from the ClusterState caches. Nodes whose candidate counts cannot cover
some request are pruned without searching; the rest are searched most promising first (ties by name).
The step/time budget is shared by all nodes: when it runs out the answer is undecided (None).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from webhook.engine import capacity as cap
from webhook.engine.explain import explain
from webhook.engine.outcome import Budget, Outcome
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim, blocking_taint, prepare
from webhook.engine.result import claim_results
from webhook.engine.search import NodeSearch, OutOfBudget, Steps
from webhook.engine.selectors import selectable
from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo, pod_allows
from webhook.state.pools import Pool


@dataclass(eq=False)
class NodePlan:
    node: NodeInfo
    pools: list[Pool]
    promise: float = 0.0
    feasible_bound: bool = True
    failure: str = ""


def _count(state: ClusterState, alt: Alt, plan: NodePlan, f: Features, limit: int) -> int:
    """Devices that could serve `alt` on the node on their own (an upper bound), counted up to `limit`."""
    n = 0
    exclusive = state.allocated.exclusive
    agg = state.allocated.capacity
    for _p, d, _e in selectable(state, alt, plan.pools, plan.node, f):
        if not alt.admin and d.id in exclusive:
            continue
        if d.consumes and not f.partitionable:
            continue
        if f.taints and (d.taints or state.taint_rules):
            if blocking_taint(state.device_taints(d), alt.tolerations) is not None:
                continue
        if f.consumable_capacity and (d.capacity or alt.capacity):
            if not cap.fits(cap.consumed(alt.capacity, d), d, agg.get(d.id), None):
                continue
        n += 1
        if n >= limit:
            break
    return n


def _bound(state: ClusterState, claims: list[PreparedClaim], plan: NodePlan, f: Features) -> None:
    score = 0.0
    parts = 0
    for pc in claims:
        for req in pc.requests:
            best = 0.0
            for alt in req.alts:
                need = max(alt.count, 1)
                have = _count(state, alt, plan, f, 2 * need)
                if have >= need:
                    best = max(best, have / (2 * need))
            if best == 0.0:
                plan.feasible_bound = False
                plan.failure = f"claim {pc.label}, request {req.name}"
                return
            score += best
            parts += 1
    plan.promise = score / parts if parts else 1.0


def _nodes(state: ClusterState, pod: dict[str, Any] | None, node: str | None) -> list[NodeInfo]:
    if node is None and pod is not None:
        node = (pod.get("spec") or {}).get("nodeName") or None
    nodes = [state.node(node)] if node else state.candidate_nodes()
    if pod is not None:
        nodes = [n for n in nodes if n.name is None or pod_allows(pod, n)]
    return nodes


def _skips_operations(plan_results: Any) -> bool:
    return any(r.skip_node_operations for c in plan_results for r in c.results)


def allocate(
    state: ClusterState,
    claims: list[dict[str, Any]],
    *,
    pod: dict[str, Any] | None = None,
    node: str | None = None,
    budget: Budget | None = None,
) -> Outcome:
    """Allocate `claims` together for one Pod; see the module docstring."""
    budget = budget or Budget()
    f = Features.of(state)
    steps = Steps(budget.steps, time.monotonic() + budget.seconds)
    try:
        prepared = prepare(state, claims, f)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], error=str(e))
    nodes = _nodes(state, pod, node)
    if not nodes:
        return Outcome(
            False, None, [], "no node is a candidate for the Pod (nodeName/nodeSelector/affinity)", []
        )
    has_all = any(a.all_mode for pc in prepared for r in pc.requests for a in r.alts)
    plans = []
    try:
        for n in nodes:
            plan = NodePlan(n, state.pools_for(n))
            if has_all:
                NodeSearch(state, prepared, n, plan.pools, f, steps).prepare()
            _bound(state, prepared, plan, f)
            plans.append(plan)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], nodes_tried=len(plans), error=str(e))
    candidates = sorted(
        (p for p in plans if p.feasible_bound),
        key=lambda p: (-p.promise, p.node.name is None, p.node.name or ""),
    )
    undecided = False
    searched: list[NodePlan] = []
    for plan in candidates:
        search = NodeSearch(state, prepared, plan.node, plan.pools, f, steps)
        searched.append(plan)
        try:
            found = search.run()
        except OutOfBudget:
            undecided = True
            break
        except EngineError as e:
            return Outcome(
                False, None, [], str(e), [], nodes_tried=len(searched), steps=steps.used, error=str(e)
            )
        if not found:
            plan.failure = "no combination of devices satisfies all requests and constraints"
            continue
        results = claim_results(search)
        n = plan.node
        if n.known and _skips_operations(results) and "DRAOptionalNodeOperations" not in n.declared_features:
            plan.failure = (
                "devices skip node operations, but the node does not declare DRAOptionalNodeOperations"
            )
            continue
        return Outcome(True, n.name, results, "", [], nodes_tried=len(searched), steps=steps.used)
    reason, explanation = explain(state, prepared, plans, searched, f)
    if undecided:
        return Outcome(
            None,
            None,
            [],
            f"undecided: the search budget ({budget.steps} steps, {budget.seconds:g} s) ran out after "
            f"{len(searched)} node(s); {reason}",
            explanation,
            nodes_tried=len(searched),
            steps=steps.used,
        )
    return Outcome(False, None, [], reason, explanation, nodes_tried=len(searched), steps=steps.used)
