"""allocate(): the claims of one Pod over the candidate nodes, first feasible node wins.

Per call: claims are prepared once (classes, selectors, gates); per node the gathered pools come from
the state version (built when it was published), per-slice selector results and per-node candidate
counts from caches shared by all versions (webhook.state.shared). Nodes whose candidate counts cannot cover
some request are pruned without searching; the rest are searched most promising first (ties by name).
The step/time budget is shared by all nodes and by every selector evaluated for the call; a deadline
(of the whole run, or of one admission request) can stop it earlier. When either runs out the answer is
undecided (None), never "infeasible". The explanation of a failed search gets a short grace period of
its own (EXPLAIN_GRACE of the budget, within the deadline) and is cut short when that runs out too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from webhook.engine.eligibility import alt_key, blocker, key_bytes
from webhook.engine.emptycluster import AdjustedView
from webhook.engine.explain import explain
from webhook.engine.outcome import Budget, Deadline, Outcome
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim, prepare
from webhook.engine.result import claim_results
from webhook.engine.search import NodeSearch
from webhook.engine.selectors import selectable
from webhook.model.bignum import TooLarge
from webhook.model.budget import Meter, OutOfBudget
from webhook.state.nodes import NodeInfo, pod_allows, selector_matches
from webhook.state.pools import Pool
from webhook.state.view import StateView

EXPLAIN_GRACE = 0.25  # share of the budget (steps and seconds) the explanation may spend afterwards


@dataclass(eq=False, slots=True)
class NodePlan:
    node: NodeInfo
    state: StateView
    meter: Meter
    promise: float = 0.0
    feasible_bound: bool = True
    failure: str = ""
    _pools: Sequence[Pool] | None = None

    @property
    def pools(self) -> Sequence[Pool]:
        if self._pools is None:
            self._pools = self.state.pools_for(self.node, self.meter)
        return self._pools


class _Nodes:
    """The candidate nodes of one call with their pruning data: parallel arrays rather than an object
    per node (a warm call on 1,000 nodes then allocates a handful of containers, not thousands, which
    keeps the garbage collector's young generations quiet)."""

    __slots__ = ("state", "meter", "nodes", "canonical", "promise", "feasible", "failure")

    def __init__(
        self, state: StateView, nodes: list[NodeInfo], meter: Meter, canonical: bool = False
    ) -> None:
        self.state = state
        self.meter = meter
        self.nodes = nodes
        self.canonical = canonical  # every node is one of state.candidate_nodes()
        self.promise = [0.0] * len(nodes)
        self.feasible = bytearray(b"\x01") * len(nodes)
        self.failure: dict[int, str] = {}

    def pools(self, i: int) -> Sequence[Pool]:
        return self.state.pools_for(self.nodes[i], self.meter)

    def plan(self, i: int) -> NodePlan:
        return NodePlan(
            self.nodes[i],
            self.state,
            self.meter,
            self.promise[i],
            bool(self.feasible[i]),
            self.failure.get(i, ""),
        )


class _PlanView(Sequence[NodePlan]):
    """Every node's NodePlan for the explanation, made when iterated (the searched ones as they are):
    no list of a thousand plan objects per failed call."""

    def __init__(self, cands: _Nodes, searched: dict[int, NodePlan]) -> None:
        self.cands = cands
        self.searched = searched

    def __len__(self) -> int:
        return len(self.cands.nodes)

    def __getitem__(self, i: int) -> NodePlan:  # type: ignore[override]
        return self.searched.get(id(self.cands.nodes[i])) or self.cands.plan(i)

    def __iter__(self) -> Iterator[NodePlan]:
        for i in range(len(self.cands.nodes)):
            yield self[i]


def _counts(
    state: StateView, alt: Alt, cands: _Nodes, idx: list[int], f: Features, limit: int, meter: Meter
) -> dict[str | None, int]:
    """Per node (of `idx`): devices that could serve `alt` on their own (an upper bound), counted up to
    `limit`. Kept per version (repeated requests of the same shape cost one lookup per node) and across
    versions per node with the node's pools stamp and the taint rules' version: after a change, only
    the nodes it touched are counted again."""
    key = ("counts", alt_key(alt), limit)
    memo = state.memo()
    counts: dict[str | None, int] | None = memo.get(key)
    if counts is None:
        counts = {}
        memo.put(key, counts, key_bytes(key) + 100 * len(cands.nodes))  # a dict entry per node, at most
    cache = state.count_cache
    known: dict[str | None, tuple[int, int, int]] | None = cache.get(key)
    if known is None:
        known = {}
        cache.put(key, known, key_bytes(key) + 120 * len(cands.nodes))
    rules = state.rules.version
    nodes = cands.nodes
    pools_of = state.node_pools.get if cands.canonical else None
    for i in idx:
        node = nodes[i]
        name = node.name
        if name in counts:
            continue
        if pools_of is not None:
            entry = pools_of(name)
            stamp = entry[0] if entry is not None else None
        else:
            stamp = state.node_stamp(node)
        hit = known.get(name)
        if hit is not None and hit[0] == stamp and hit[1] == rules:
            counts[name] = hit[2]
            continue
        meter.tick()
        n = 0
        for p, d, _e in selectable(state, alt, cands.pools(i), node, f, meter):
            if blocker(state, alt, p, d, f) is None:
                n += 1
                if n >= limit:
                    break
        counts[name] = n  # single dictionary operations of finished values (readers share both)
        if stamp is not None:
            known[name] = (stamp, rules, n)
    return counts


def _bound(state: StateView, claims: list[PreparedClaim], cands: _Nodes, f: Features, meter: Meter) -> None:
    """Prune nodes where some request has too few candidates; score the rest (0..1, higher = roomier)."""
    parts = 0
    nodes, feasible, promise = cands.nodes, cands.feasible, cands.promise
    for pc in claims:
        for req in pc.requests:
            best: dict[int, float] = {}
            open_idx = [i for i in range(len(nodes)) if feasible[i]]
            for alt in req.alts:
                # Subrequests in order, as upstream tries them: later ones only for the nodes where
                # no earlier one has enough devices (so unused subrequests cost no selector work).
                need = max(alt.count, 1)
                counts = _counts(state, alt, cands, open_idx, f, 2 * need, meter)
                for i in open_idx:
                    have = counts.get(nodes[i].name, 0)
                    if have >= need and have / (2 * need) > best.get(i, 0.0):
                        best[i] = have / (2 * need)
                open_idx = [i for i in open_idx if i not in best]
                if not open_idx:
                    break
            parts += 1
            for i in range(len(nodes)):
                meter.tick()
                if not feasible[i]:
                    continue
                b = best.get(i, 0.0)
                if b == 0.0:
                    feasible[i] = 0
                    cands.failure[i] = f"claim {pc.label}, request {req.name}"
                else:
                    promise[i] += b
    for i in range(len(nodes)):
        promise[i] = promise[i] / parts if parts else 1.0


def _nodes(
    state: StateView,
    pod: dict[str, Any] | None,
    node: str | None,
    node_selectors: Sequence[dict[str, Any]],
    meter: Meter,
) -> tuple[list[NodeInfo], bool]:
    """The nodes to try, and whether they are all candidate nodes of the state (not a pinned name)."""
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
    return nodes, not node


def _skips_operations(plan_results: Any) -> bool:
    return any(r.skip_node_operations for c in plan_results for r in c.results)


def allocate(
    state: StateView | Any,
    claims: list[dict[str, Any]],
    *,
    pod: dict[str, Any] | None = None,
    node: str | None = None,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
    node_selectors: Sequence[dict[str, Any]] = (),
    ignore_allocations: bool = False,
    ignore_taints: bool = False,
) -> Outcome:
    """Allocate `claims` together for one Pod on `state` (a `Snapshot.state`, or a ClusterState: its
    current version); see the module docstring. `budget` bounds this call,
    `deadline` (e.g. of an admission request or a whole run) bounds it too: whichever ends first.
    `node_selectors` (e.g. of the Pod's claims that are already allocated) must all match a node.

    `ignore_allocations` decides on the same cluster with nothing allocated (a read-only view: the state
    is not changed), `ignore_taints` with device taints ignored (NoSchedule/NoExecute are the only
    effects allocation heeds): together they tell *busy* (would fit once devices are free) from
    *unsatisfiable* (never fits on this cluster) for admission-time feasibility.

    Never raises for what its input holds: a failure of draguard itself (MemoryError, RecursionError, a
    bug) is an Outcome with `internal` set and `feasible` None, never an answer."""
    budget = budget or Budget()
    meter = Meter(budget, deadline)
    try:
        view: StateView = state.view  # a ClusterState's current version, or the view itself
        if ignore_allocations or ignore_taints:
            view = cast(
                StateView,
                AdjustedView(view, ignore_allocations=ignore_allocations, ignore_taints=ignore_taints),
            )
        return _allocate(view, claims, pod, node, node_selectors, budget, deadline, meter, ignore_taints)
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
    state: StateView,
    claims: list[dict[str, Any]],
    pod: dict[str, Any] | None,
    node: str | None,
    node_selectors: Sequence[dict[str, Any]],
    budget: Budget,
    deadline: Deadline | None,
    meter: Meter,
    ignore_taints: bool = False,
) -> Outcome:
    f = Features.of(state)
    if ignore_taints:
        f = replace(f, taints=False)
    try:
        prepared = prepare(state, claims, f, meter.tick)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], error=str(e))
    except OutOfBudget:
        return _undecided(meter, "while the claims were prepared", "", [])
    try:
        nodes, canonical = _nodes(state, pod, node, node_selectors, meter)
    except OutOfBudget:
        return _undecided(meter, "while the candidate nodes were listed", "", [])
    if not nodes:
        return Outcome(
            False, None, [], "no node is a candidate for the Pod (nodeName/nodeSelector/affinity)", []
        )
    has_all = any(a.all_mode for pc in prepared for r in pc.requests for a in r.alts)
    cands = _Nodes(state, nodes, meter, canonical)
    try:
        if has_all:
            for i, n in enumerate(nodes):
                NodeSearch(state, prepared, n, cands.pools(i), f, meter).prepare()
        _bound(state, prepared, cands, f, meter)
    except EngineError as e:
        return Outcome(False, None, [], str(e), [], steps=meter.used, error=str(e))
    except OutOfBudget:
        return _undecided(meter, "while devices were matched against the selectors", "", [])
    order = sorted(
        (i for i in range(len(nodes)) if cands.feasible[i]),
        key=lambda i: (-cands.promise[i], nodes[i].name is None, nodes[i].name or ""),
    )
    undecided = False
    searched: list[NodePlan] = []
    for i in order:
        plan = cands.plan(i)
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
    for plan in searched:
        plan.meter = grace
    cands.meter = grace
    plans = _PlanView(cands, {id(p.node): p for p in searched})
    names = tuple(n.name for n in nodes)
    if searched:
        best = max(searched, key=lambda p: (p.promise, -(len(p.node.name or ""))))
    else:
        top = max(range(len(nodes)), key=lambda i: (cands.promise[i], -(len(nodes[i].name or ""))))
        best = plans[top]
    try:
        reason, explanation = explain(
            state,
            prepared,
            plans,
            searched,
            f,
            grace,
            names,
            best,
            lambda: (cands.pools(i) for i in range(len(nodes))),
            len(nodes) - sum(cands.feasible),
        )
    except OutOfBudget:
        reason, explanation = "the explanation was cut short (its share of the budget ran out)", []
    if undecided:
        out = _undecided(meter, f"after {len(searched)} node(s)", reason, explanation)
        out.nodes_tried = len(searched)
        return out
    return Outcome(False, None, [], reason, explanation, nodes_tried=len(searched), steps=meter.used)
