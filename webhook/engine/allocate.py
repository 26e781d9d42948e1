"""allocate(): the claims of one Pod over the candidate nodes, first feasible node wins.

Per call: claims are prepared once (classes, selectors, gates); per node the gathered pools and the
per-slice selector results come from the ClusterState caches. Nodes whose candidate counts cannot cover
some request are pruned without searching; the rest are searched most promising first (ties by name).
The step/time budget is shared by all nodes and by every selector evaluated for the call; a deadline
(of the whole run, or of one admission request) can stop it earlier. When either runs out the answer is
undecided (None), never "infeasible". The explanation of a failed search gets a short grace period of
its own (EXPLAIN_GRACE of the budget, within the deadline) and is cut short when that runs out too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webhook.engine.eligibility import alt_key, blocker, key_bytes
from webhook.engine.explain import explain
from webhook.engine.outcome import Budget, Deadline, Outcome
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim, prepare
from webhook.engine.result import claim_results
from webhook.engine.search import NodeSearch
from webhook.engine.selectors import selectable
from webhook.model.bignum import TooLarge
from webhook.model.budget import Meter, OutOfBudget
from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo, pod_allows, selector_matches
from webhook.state.pools import Pool

EXPLAIN_GRACE = 0.25  # share of the budget (steps and seconds) the explanation may spend afterwards


@dataclass(eq=False, slots=True)
class NodePlan:
    node: NodeInfo
    state: ClusterState
    meter: Meter
    promise: float = 0.0
    feasible_bound: bool = True
    failure: str = ""
    _pools: list[Pool] | None = None

    @property
    def pools(self) -> list[Pool]:
        if self._pools is None:
            self._pools = self.state.pools_for(self.node, self.meter)
        return self._pools


def _counts(
    state: ClusterState, alt: Alt, plans: list[NodePlan], f: Features, limit: int, meter: Meter
) -> dict[str | None, int]:
    """Per node: devices that could serve `alt` on their own (an upper bound), counted up to `limit`.
    Kept per state version, so repeated requests of the same shape cost one lookup per node."""
    memo = state.memo()
    key = ("counts", alt_key(alt), limit)
    counts: dict[str | None, int] | None = memo.get(key)
    if counts is None:
        counts = {}
        memo.put(key, counts, key_bytes(key) + 100 * len(plans))  # a dict entry per node, at most
    for plan in plans:
        name = plan.node.name
        if name in counts:
            continue
        meter.tick()
        n = 0
        for p, d, _e in selectable(state, alt, plan.pools, plan.node, f, meter):
            if blocker(state, alt, p, d, f) is None:
                n += 1
                if n >= limit:
                    break
        counts[name] = n
    return counts


def _bound(
    state: ClusterState, claims: list[PreparedClaim], plans: list[NodePlan], f: Features, meter: Meter
) -> None:
    """Prune nodes where some request has too few candidates; score the rest (0..1, higher = roomier)."""
    parts = 0
    for pc in claims:
        for req in pc.requests:
            best: dict[str | None, float] = {}
            open_plans = [p for p in plans if p.feasible_bound]
            for alt in req.alts:
                # Subrequests in order, as upstream tries them: later ones only for the nodes where
                # no earlier one has enough devices (so unused subrequests cost no selector work).
                need = max(alt.count, 1)
                counts = _counts(state, alt, open_plans, f, 2 * need, meter)
                for name, have in counts.items():
                    if have >= need and have / (2 * need) > best.get(name, 0.0):
                        best[name] = have / (2 * need)
                open_plans = [p for p in open_plans if p.node.name not in best]
                if not open_plans:
                    break
            parts += 1
            for plan in plans:
                meter.tick()
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


def _nodes(
    state: ClusterState,
    pod: dict[str, Any] | None,
    node: str | None,
    node_selectors: Sequence[dict[str, Any]],
    meter: Meter,
) -> list[NodeInfo]:
    if node is None and pod is not None:
        node = (pod.get("spec") or {}).get("nodeName") or None
    nodes = [state.node(node)] if node else state.candidate_nodes()
    if pod is not None or node_selectors:
        allowed = []
        for n in nodes:
            meter.tick()
            if n.name is None or (
                (pod is None or pod_allows(pod, n)) and all(selector_matches(s, n) for s in node_selectors)
            ):
                allowed.append(n)
        nodes = allowed
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
    deadline: Deadline | None = None,
    node_selectors: Sequence[dict[str, Any]] = (),
) -> Outcome:
    """Allocate `claims` together for one Pod; see the module docstring. `budget` bounds this call,
    `deadline` (e.g. of an admission request or a whole run) bounds it too: whichever ends first.
    `node_selectors` (e.g. of the Pod's claims that are already allocated) must all match a node.

    Never raises for what its input holds: a failure of draguard itself (MemoryError, RecursionError, a
    bug) is an Outcome with `internal` set and `feasible` None, never an answer."""
    budget = budget or Budget()
    meter = Meter(budget, deadline)
    try:
        return _allocate(state, claims, pod, node, node_selectors, budget, deadline, meter)
    except TooLarge as e:  # quantities the API server itself could hardly have stored: no answer
        return Outcome(None, None, [], f"undecided: {e}", [], steps=meter.used)
    except Exception as e:  # noqa: BLE001 - the boundary between the engine and its callers
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return Outcome(
            None,
            None,
            [],
            f"internal error in the allocator ({detail}): please report it",
            [],
            steps=meter.used,
            internal=detail,
        )


def _undecided(meter: Meter, where: str, reason: str, explanation: list[dict[str, Any]]) -> Outcome:
    text = f"undecided: {meter.reason()} {where}"
    if reason:
        text += f"; {reason}"
    return Outcome(None, None, [], text, explanation, steps=meter.used)


def _allocate(
    state: ClusterState,
    claims: list[dict[str, Any]],
    pod: dict[str, Any] | None,
    node: str | None,
    node_selectors: Sequence[dict[str, Any]],
    budget: Budget,
    deadline: Deadline | None,
    meter: Meter,
) -> Outcome:
    f = Features.of(state)
    try:
        prepared = prepare(state, claims, f, meter.tick)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], error=str(e))
    except OutOfBudget:
        return _undecided(meter, "while the claims were prepared", "", [])
    try:
        nodes = _nodes(state, pod, node, node_selectors, meter)
    except OutOfBudget:
        return _undecided(meter, "while the candidate nodes were listed", "", [])
    if not nodes:
        return Outcome(
            False, None, [], "no node is a candidate for the Pod (nodeName/nodeSelector/affinity)", []
        )
    has_all = any(a.all_mode for pc in prepared for r in pc.requests for a in r.alts)
    plans = [NodePlan(n, state, meter) for n in nodes]
    try:
        if has_all:
            for plan in plans:
                NodeSearch(state, prepared, plan.node, plan.pools, f, meter).prepare()
        _bound(state, prepared, plans, f, meter)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], steps=meter.used, error=str(e))
    except OutOfBudget:
        return _undecided(meter, "while devices were matched against the selectors", "", [])
    candidates = sorted(
        (p for p in plans if p.feasible_bound),
        key=lambda p: (-p.promise, p.node.name is None, p.node.name or ""),
    )
    undecided = False
    searched: list[NodePlan] = []
    for plan in candidates:
        search = NodeSearch(state, prepared, plan.node, plan.pools, f, meter)
        searched.append(plan)
        try:
            found = search.run()
        except OutOfBudget:
            undecided = True
            break
        except EngineError as e:
            return Outcome(
                False, None, [], str(e), [], nodes_tried=len(searched), steps=meter.used, error=str(e)
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
        return Outcome(True, n.name, results, "", [], nodes_tried=len(searched), steps=meter.used)
    grace = Meter(Budget(int(budget.steps * EXPLAIN_GRACE), budget.seconds * EXPLAIN_GRACE), deadline)
    for plan in plans:
        plan.meter = grace
    try:
        reason, explanation = explain(state, prepared, plans, searched, f, grace)
    except OutOfBudget:
        reason, explanation = "the explanation was cut short (its share of the budget ran out)", []
    if undecided:
        out = _undecided(meter, f"after {len(searched)} node(s)", reason, explanation)
        out.nodes_tried = len(searched)
        return out
    return Outcome(False, None, [], reason, explanation, nodes_tried=len(searched), steps=meter.used)
