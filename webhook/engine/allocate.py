"""allocate(): the claims of one Pod over the candidate nodes, first feasible node wins.

Per call: claims are prepared once (classes, selectors, gates); per node the gathered pools and the
per-slice selector results come from the ClusterState caches. Nodes whose candidate counts cannot cover
some request are pruned without searching; the rest are searched most promising first (ties by name).
The step/time budget is shared by all nodes: when it runs out the answer is undecided (None).
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any

from webhook.engine.eligibility import alt_key, blocker
from webhook.engine.explain import explain
from webhook.engine.outcome import Budget, Outcome
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim, prepare
from webhook.engine.result import claim_results
from webhook.engine.search import NodeSearch, OutOfBudget, Steps
from webhook.engine.selectors import selectable
from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo, pod_allows
from webhook.state.pools import Pool

FILLED_SLICES = 256  # new per-slice selector results in one call that make it a "cold" call


@dataclass(eq=False)
class NodePlan:
    node: NodeInfo
    state: ClusterState
    promise: float = 0.0
    feasible_bound: bool = True
    failure: str = ""
    _pools: list[Pool] | None = None

    @property
    def pools(self) -> list[Pool]:
        if self._pools is None:
            self._pools = self.state.pools_for(self.node)
        return self._pools


def _counts(
    state: ClusterState, alt: Alt, plans: list[NodePlan], f: Features, limit: int
) -> dict[str | None, int]:
    """Per node: devices that could serve `alt` on their own (an upper bound), counted up to `limit`.
    Kept per state version, so repeated requests of the same shape cost one lookup per node."""
    memo = state.memo()
    key = ("counts", alt_key(alt), limit)
    counts: dict[str | None, int] = memo.setdefault(key, {})
    for plan in plans:
        name = plan.node.name
        if name in counts:
            continue
        n = 0
        for p, d, _e in selectable(state, alt, plan.pools, plan.node, f):
            if blocker(state, alt, p, d, f) is None:
                n += 1
                if n >= limit:
                    break
        counts[name] = n
    return counts


def _bound(state: ClusterState, claims: list[PreparedClaim], plans: list[NodePlan], f: Features) -> None:
    """Prune nodes where some request has too few candidates; score the rest (0..1, higher = roomier)."""
    parts = 0
    for pc in claims:
        for req in pc.requests:
            best: dict[str | None, float] = {}
            for alt in req.alts:
                need = max(alt.count, 1)
                for name, have in _counts(state, alt, plans, f, 2 * need).items():
                    if have >= need and have / (2 * need) > best.get(name, 0.0):
                        best[name] = have / (2 * need)
            parts += 1
            for plan in plans:
                if not plan.feasible_bound:
                    continue
                b = best.get(plan.node.name, 0.0)
                if b == 0.0:
                    plan.feasible_bound = False
                    plan.failure = f"claim {pc.label}, request {req.name}"
                else:
                    plan.promise += b
    for plan in plans:
        plan.promise = plan.promise / parts if parts else 1.0


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
    cached = len(state.match_cache)
    try:
        return _allocate(state, claims, pod, node, budget or Budget())
    finally:
        if len(state.match_cache) - cached >= FILLED_SLICES:
            # This call filled the selector caches for many slices (a cold call): collect the garbage
            # generation now rather than in a later, warm call (a full collection costs 50-100 ms),
            # and move what survives (long-lived caches) out of the collector's sight.
            gc.collect()
            gc.freeze()


def _allocate(
    state: ClusterState,
    claims: list[dict[str, Any]],
    pod: dict[str, Any] | None,
    node: str | None,
    budget: Budget,
) -> Outcome:
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
    plans = [NodePlan(n, state) for n in nodes]
    try:
        if has_all:
            for plan in plans:
                NodeSearch(state, prepared, plan.node, plan.pools, f, steps).prepare()
        _bound(state, prepared, plans, f)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], error=str(e))
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
