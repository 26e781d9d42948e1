"""allocate(): the claims of one Pod over the candidate nodes, first feasible node wins.

Per call: claims are prepared once (classes, selectors, gates); per node the gathered pools come from
the state version (built when it was published), per-slice selector results and per-node candidate
counts from caches shared by all versions (webhook.state.shared). Nodes are taken in candidate order
(Node objects by name) — or best score first when the caller scores them (`prefer`: the scheduler's
pick among the nodes that pass Filter) — first fit, as upstream's Filter would accept any of them: in
runs of 1, 2, 4, ... nodes, each run bounded (nodes whose candidate counts cannot cover some request are
pruned without searching) and its other nodes searched in order. A claim that fits on the k-th node
looks at fewer than 2k nodes, so a request with a new selector evaluates it on those nodes' devices only;
one that fits nowhere walks every node, from the per-node counts and explanation parts kept across
versions.
The step/time budget is shared by all nodes and by every selector evaluated for the call; a deadline
(of the whole run, or of one admission request) can stop it earlier. When either runs out the answer is
undecided (None), never "infeasible". The explanation of a failed search gets a short grace period of
its own (EXPLAIN_GRACE of the budget, within the deadline) and is cut short when that runs out too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any

from webhook.engine.eligibility import alt_key, blocker, key_bytes
from webhook.engine.emptycluster import AdjustedView
from webhook.engine.explain import explain
from webhook.engine.outcome import Budget, Deadline, Outcome
from webhook.engine.plan import NodePlan
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim, prepare
from webhook.engine.result import claim_results
from webhook.engine.search import NodeSearch
from webhook.engine.selectors import selectable
from webhook.model.bignum import TooLarge
from webhook.model.budget import Meter, OutOfBudget
from webhook.state.nodes import NodeInfo, pod_allows, selector_matches
from webhook.state.pools import Pool
from webhook.state.view import ClusterView, HasView

EXPLAIN_GRACE = 0.25  # share of the budget (steps and seconds) the explanation may spend afterwards


class _Nodes:
    """The candidate nodes of one call with their pruning data: parallel arrays rather than an object
    per node (a warm call on 1,000 nodes then allocates a handful of containers, not thousands, which
    keeps the garbage collector's young generations quiet)."""

    __slots__ = (
        "state",
        "meter",
        "nodes",
        "canonical",
        "promise",
        "feasible",
        "failure",
        "stamp",
        "_stamped",
    )

    def __init__(
        self, state: ClusterView, nodes: list[NodeInfo], meter: Meter, canonical: bool = False
    ) -> None:
        self.state = state
        self.meter = meter
        self.nodes = nodes
        self.canonical = canonical  # every node is one of state.candidate_nodes()
        self.promise = [0.0] * len(nodes)
        self.feasible = bytearray(b"\x01") * len(nodes)
        self.failure: dict[int, str] = {}
        self.stamp: list[int | None] = []  # node stamps of nodes 0..len-1, filled by stamps()
        self._stamped = 0

    def pools(self, i: int) -> Sequence[Pool]:
        return self.state.pools_for(self.nodes[i], self.meter)

    def stamps(self, limit: int) -> list[int | None]:
        """The node stamps of the first `limit` nodes (None: not a candidate node), read once per call
        (`self.stamp` then holds at least as many)."""
        if limit > self._stamped:
            state = self.state
            more = self.nodes[self._stamped : limit]
            if not self.canonical:
                self.stamp += [state.node_stamp(n) for n in more]
            else:
                get = state.node_pools.get
                self.stamp += [e[0] if (e := get(n.name)) is not None else None for n in more]
            self._stamped = limit
        return self.stamp[:limit]

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

    def __init__(self, cands: _Nodes, searched: dict[int, NodePlan], limit: int) -> None:
        self.cands = cands
        self.searched = searched
        self.limit = limit  # the first `limit` nodes (those that were bounded)

    def __len__(self) -> int:
        return self.limit

    def __getitem__(self, i: int) -> NodePlan:  # type: ignore[override]
        return self.searched.get(id(self.cands.nodes[i])) or self.cands.plan(i)

    def __iter__(self) -> Iterator[NodePlan]:
        for i in range(self.limit):
            yield self[i]


_name = attrgetter("name")
EXACT = 1 << 30  # a count limit no node reaches: the exact number of candidates


def _counts(
    state: ClusterView, alt: Alt, cands: _Nodes, idx: list[int], f: Features, limit: int, meter: Meter
) -> dict[str | None, int]:
    """Per node (of `idx`): devices that could serve `alt` on their own (an upper bound), counted up to
    `limit`. Kept per version (repeated requests of the same shape cost one lookup per node) and across
    versions per node with the node's pools stamp and the taint rules' version: after a change, only
    the nodes it touched are counted again. A count below the limit it was made with is exact and
    serves every limit (a warm-up counts with `EXACT`: requests of any count reuse it)."""
    shape = alt_key(alt)
    key = ("counts", shape, limit)
    memo = state.memo()
    counts: dict[str | None, int] | None = memo.get(key)
    if counts is None:
        counts = {}
        memo.put(key, counts, key_bytes(key) + 100 * len(cands.nodes))  # a dict entry per node, at most
    cache = state.count_cache
    ckey = ("counts", shape)
    known: dict[str | None, tuple[int, int, int, int]] | None = cache.get(ckey)
    if known is None:
        known = {}
        cache.put(ckey, known, key_bytes(ckey) + 130 * len(cands.nodes))
    rules = state.rules.version
    nodes = cands.nodes
    if idx:
        cands.stamps(idx[-1] + 1)  # idx ascends
    stamps = cands.stamp
    for i in idx:
        node = nodes[i]
        name = node.name
        if name in counts:
            continue
        stamp = stamps[i]
        hit = known.get(name)
        if hit is not None and hit[0] == stamp and hit[1] == rules and (hit[2] < hit[3] or limit <= hit[3]):
            counts[name] = hit[2] if hit[2] < limit else limit
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
            known[name] = (stamp, rules, n, limit)
    return counts


def _erring(
    state: ClusterView, claims: list[PreparedClaim], cands: _Nodes, i: int, f: Features, meter: Meter
) -> bool:
    """Whether some (sub)request has a device on node `i` whose selectors fail to evaluate and that is
    not in use: upstream's search over the node evaluates every device that is not in use, so on a node
    where allocation fails it may reach that device and abort with the CEL error (which device it reaches
    first, if any, is the search's business: the caller runs it). Kept per (sub)request shape and node
    with the node's pools stamp, like the counts."""
    node = cands.nodes[i]
    stamp = cands.stamps(i + 1)[i]
    rules = state.rules.version
    cache = state.count_cache
    for pc in claims:
        for req in pc.requests:
            for alt in req.alts:
                ckey = ("errs", alt_key(alt))
                known: dict[str | None, tuple[int, int, bool]] | None = cache.get(ckey)
                if known is None:
                    known = {}
                    cache.put(ckey, known, key_bytes(ckey) + 100 * len(cands.nodes))
                hit = known.get(node.name)
                if hit is not None and hit[0] == stamp and hit[1] == rules:
                    if hit[2]:
                        return True
                    continue
                meter.tick()
                bad = any(
                    e is not None and (alt.admin or d.id not in state.allocated.exclusive)
                    for _p, d, e in selectable(state, alt, cands.pools(i), node, f, meter)
                )
                if stamp is not None:
                    known[node.name] = (stamp, rules, bad)
                if bad:
                    return True
    return False


def _bound(
    state: ClusterView, claims: list[PreparedClaim], cands: _Nodes, idx: list[int], f: Features, meter: Meter
) -> None:
    """Prune the nodes `idx` where some request has too few candidates; score the rest (0..1, higher =
    roomier). Per node, so a node's verdict does not depend on which other nodes are bounded with it."""
    parts = 0
    nodes, feasible, promise = cands.nodes, cands.feasible, cands.promise
    for pc in claims:
        for req in pc.requests:
            best: dict[int, float] = {}
            open_idx = [i for i in idx if feasible[i]]
            for alt in req.alts:
                # Subrequests in order, as upstream tries them: later ones only for the nodes where
                # no earlier one has enough devices (so unused subrequests cost no selector work).
                if not open_idx:
                    break
                need = max(alt.count, 1)
                counts = _counts(state, alt, cands, open_idx, f, 2 * need, meter)
                for i in open_idx:
                    have = counts.get(nodes[i].name, 0)
                    if have >= need and have / (2 * need) > best.get(i, 0.0):
                        best[i] = have / (2 * need)
                open_idx = [i for i in open_idx if i not in best]
            parts += 1
            meter.tick()
            why = f"claim {pc.label}, request {req.name}"
            for i in idx:
                if not feasible[i]:
                    continue
                b = best.get(i, 0.0)
                if b == 0.0:
                    feasible[i] = 0
                    cands.failure[i] = why
                else:
                    promise[i] += b
    for i in idx:
        promise[i] = promise[i] / parts if parts else 1.0


def _chunks(n: int) -> Iterator[range]:
    """Node indexes 0..n-1 in doubling runs (1, 2, 4, ...): a claim that fits on the k-th node bounds
    fewer than 2k nodes, one that fits nowhere walks every node in log2(n) runs."""
    start, size = 0, 1
    while start < n:
        yield range(start, min(n, start + size))
        start += size
        size *= 2


def _nodes(
    state: ClusterView,
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
    state: HasView,
    claims: list[dict[str, Any]],
    *,
    pod: dict[str, Any] | None = None,
    node: str | None = None,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
    node_selectors: Sequence[dict[str, Any]] = (),
    ignore_allocations: bool = False,
    ignore_taints: bool = False,
    prefer: Callable[[str | None], int] | None = None,
) -> Outcome:
    """Allocate `claims` together for one Pod on `state` (a `Snapshot.state`, or a ClusterState: its
    current version); see the module docstring. `budget` bounds this call,
    `deadline` (e.g. of an admission request or a whole run) bounds it too: whichever ends first.
    `node_selectors` (e.g. of the Pod's claims that are already allocated) must all match a node.
    `prefer` scores nodes by name: they are tried highest score first (equal scores in candidate
    order), so the first that fits is the best-scoring feasible node, as the scheduler picks it.

    `ignore_allocations` decides on the same cluster with nothing allocated (a read-only view: the state
    is not changed), `ignore_taints` with device taints ignored (NoSchedule/NoExecute are the only
    effects allocation heeds): together they tell *busy* (would fit once devices are free) from
    *unsatisfiable* (never fits on this cluster) for admission-time feasibility.

    Never raises for what its input holds: a failure of draguard itself (MemoryError, RecursionError, a
    bug) is an Outcome with `internal` set and `feasible` None, never an answer."""
    budget = budget or Budget()
    meter = Meter(budget, deadline)
    try:
        view = state.view  # a ClusterState's current version, or the view itself
        if ignore_allocations or ignore_taints:
            view = AdjustedView(view, ignore_allocations=ignore_allocations, ignore_taints=ignore_taints)
        return _allocate(
            view, claims, pod, node, node_selectors, budget, deadline, meter, ignore_taints, prefer
        )
    except TooLarge as e:  # quantities the API server itself could hardly have stored: no answer
        return Outcome.undecided(str(e), steps=meter.used)
    except Exception as e:  # noqa: BLE001 - the boundary between the engine and its callers
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return Outcome.crashed(detail, steps=meter.used)


def _undecided(meter: Meter, where: str, reason: str, explanation: list[dict[str, Any]]) -> Outcome:
    text = f"{meter.reason()} {where}"
    if reason:
        text += f"; {reason}"
    return Outcome.undecided(text, explanation, steps=meter.used)


def _allocate(
    state: ClusterView,
    claims: list[dict[str, Any]],
    pod: dict[str, Any] | None,
    node: str | None,
    node_selectors: Sequence[dict[str, Any]],
    budget: Budget,
    deadline: Deadline | None,
    meter: Meter,
    ignore_taints: bool = False,
    prefer: Callable[[str | None], int] | None = None,
) -> Outcome:
    f = Features.of(state)
    if ignore_taints:
        f = replace(f, taints=False)
    try:
        prepared = prepare(state, claims, f, meter.tick)
    except EngineError as e:
        return Outcome.failed(str(e), e.kind, claim=e.claim)
    except OutOfBudget:
        return _undecided(meter, "while the claims were prepared", "", [])
    try:
        nodes, canonical = _nodes(state, pod, node, node_selectors, meter)
    except OutOfBudget:
        return _undecided(meter, "while the candidate nodes were listed", "", [])
    if prefer is not None and len(nodes) > 1:
        nodes = sorted(nodes, key=lambda n: -prefer(n.name))  # stable: ties keep the candidate order
    if not nodes:
        return Outcome.infeasible("no node is a candidate for the Pod (nodeName/nodeSelector/affinity)")
    has_all = any(a.all_mode for pc in prepared for r in pc.requests for a in r.alts)
    cands = _Nodes(state, nodes, meter, canonical)
    undecided = False
    searched: list[NodePlan] = []
    bounded = 0  # nodes 0..bounded-1 have been bounded (pruned or scored)
    if has_all:  # "All" requests are pre-collected on every node first: any node's error aborts
        try:
            for i, n in enumerate(nodes):
                NodeSearch(state, prepared, n, cands.pools(i), f, meter).prepare()
        except EngineError as e:
            return Outcome.failed(str(e), e.kind, claim=e.claim, steps=meter.used)
        except OutOfBudget:
            return _undecided(meter, "while devices were matched against the selectors", "", [])
    for chunk in _chunks(len(nodes)):
        idx = list(chunk)
        try:
            _bound(state, prepared, cands, idx, f, meter)
        except EngineError as e:
            return Outcome.failed(str(e), e.kind, claim=e.claim, nodes_tried=len(searched), steps=meter.used)
        except OutOfBudget:
            if not searched:
                return _undecided(meter, "while devices were matched against the selectors", "", [])
            undecided = True
            break
        bounded = chunk.stop
        for i in idx:
            if not cands.feasible[i]:
                # Pruned: no allocation there. Upstream searches it all the same and aborts with a CEL
                # runtime error when the search evaluates a device whose selectors fail: so does ours.
                try:
                    if _erring(state, prepared, cands, i, f, meter):
                        NodeSearch(state, prepared, nodes[i], cands.pools(i), f, meter).run()
                except OutOfBudget:
                    undecided = True
                    break
                except EngineError as e:
                    return Outcome.failed(
                        str(e), e.kind, claim=e.claim, nodes_tried=len(searched) + 1, steps=meter.used
                    )
                continue
            plan = cands.plan(i)
            search = NodeSearch(state, prepared, plan.node, plan.pools, f, meter)
            searched.append(plan)
            try:
                found = search.run()
            except OutOfBudget:
                undecided = True
                break
            except EngineError as e:
                return Outcome.failed(
                    str(e), e.kind, claim=e.claim, nodes_tried=len(searched), steps=meter.used
                )
            plan.depth = search.deepest
            if not found:
                plan.failure = "no combination of devices satisfies all requests and constraints"
                continue
            results = claim_results(search)
            n = plan.node
            if (
                n.known
                and _skips_operations(results)
                and "DRAOptionalNodeOperations" not in n.declared_features
            ):
                plan.failure = (
                    "devices skip node operations, but the node does not declare DRAOptionalNodeOperations"
                )
                continue
            return Outcome.allocated(n.name, results, nodes_tried=len(searched), steps=meter.used)
        if undecided:
            break
    nodes = nodes[:bounded]  # the explanation covers the nodes that were bounded
    grace = Meter(Budget(int(budget.steps * EXPLAIN_GRACE), budget.seconds * EXPLAIN_GRACE), deadline)
    for plan in searched:
        plan.meter = grace
    cands.meter = grace
    plans = _PlanView(cands, {id(p.node): p for p in searched}, bounded)
    names = tuple(map(_name, nodes))
    if searched:
        best = max(searched, key=lambda p: (p.promise, -(len(p.node.name or ""))))
    else:  # the highest promise, then the shortest name, then the first
        promise = cands.promise[:bounded]
        top = max(promise)
        tied = [i for i, v in enumerate(promise) if v == top]
        lengths = [len(names[i] or "") for i in tied]
        best = plans[tied[lengths.index(min(lengths))]]
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
            cands.pools,
            bounded - sum(cands.feasible[:bounded]),
            cands.stamps(bounded),
        )
    except OutOfBudget:
        reason, explanation = "the explanation was cut short (its share of the budget ran out)", []
    if undecided:
        out = _undecided(meter, f"after {len(searched)} node(s)", reason, explanation)
        out.nodes_tried = len(searched)
        return out
    return Outcome.infeasible(reason, explanation, nodes_tried=len(searched), steps=meter.used)


def prime(
    state: HasView,
    claims: list[dict[str, Any]],
    *,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
    ignore_allocations: bool = False,
    ignore_taints: bool = False,
) -> bool:
    """What a Pod with `claims` that fits on no node would compute over every candidate node, done
    now: per (sub)request and node the exact number of devices that could serve it, and the per-node
    parts of the explanation with their sums. All are kept in the caches every later version shares
    (per node, with the node's pools stamp), so after a change only the nodes it touched are computed
    again. `ignore_allocations`/`ignore_taints` prime the caches of that mode of `allocate()`. False if
    the budget or deadline ran out first (what was done stays done)."""
    view = state.view
    if ignore_allocations or ignore_taints:
        view = AdjustedView(view, ignore_allocations=ignore_allocations, ignore_taints=ignore_taints)
    budget = budget or Budget()
    meter = Meter(budget, deadline)
    f = Features.of(view)
    if ignore_taints:
        f = replace(f, taints=False)
    try:
        prepared = prepare(view, claims, f, meter.tick)
        cands = _Nodes(view, view.candidate_nodes(), meter, True)
        if not cands.nodes:
            return True
        n = len(cands.nodes)
        for pc in prepared:
            for req in pc.requests:
                for alt in req.alts:
                    _counts(view, alt, cands, list(range(n)), f, EXACT, meter)
        plans = _PlanView(cands, {}, n)
        names = tuple(map(_name, cands.nodes))
        explain(view, prepared, plans, [], f, meter, names, plans[0], cands.pools, 0, cands.stamps(n))
    except (EngineError, OutOfBudget, TooLarge):
        return False
    return True
