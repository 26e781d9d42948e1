"""Scheduling one Pod (or claims: together for an anonymous Pod, or a claim no Pod uses on its own)
against a ClusterState, as `draguard simulate` and admission-time feasibility do: its claims by name,
from templates (as the resource claim controller generates them) or from extended resources backed by
DeviceClasses, pinned to the nodes of its claims that are already allocated. `World` holds what that
reads besides the ClusterState. A Pod comes from an `Origin` — itself, or the workload whose Pod
template made it — which its findings point into."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhook.config.context import Context
from webhook.engine import Budget, ClaimResult, Outcome, allocate
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.plain import deep_copy
from webhook.model.text import listing
from webhook.simulate import extended as ext
from webhook.simulate.load import Inputs, Loaded
from webhook.simulate.placement import (
    FIRST_AVAILABLE_MAX,
    Spread,
    normalized,
    prioritized_requests,
    prioritized_score,
)
from webhook.simulate.podclaims import (
    GeneratedIndex,
    PodClaim,
    add_generated,
    generated_name,
    index_generated,
    key_of,
    merge_node_selector,
    name_of,
    resolve_pod_claims,
)
from webhook.simulate.subjects import Origin, Subject, claim_key, request_paths
from webhook.simulate.subjects import claim_subject as subject_of_claim
from webhook.simulate.verdict import Verdict, decide
from webhook.state import ClusterState
from webhook.state.view import HasView

DEADLINE_PASSED = "the deadline of the run passed"  # why a Pod or claim is undecided, before "when"

if TYPE_CHECKING:
    from webhook.simulate.served import LeftOutNotes
    from webhook.simulate.workloads import WorkloadReport

ClaimKey = tuple[str, str]
Rank = tuple[int, int]  # (-score, candidate index) of the node a Pod was placed on: the least wins


@dataclass
class PodSimulation:
    pod: str | None  # "ns/name"; None for the anonymous Pod of claims without Pods
    feasible: bool | None
    node: str | None = None
    claims: list[ClaimResult] = field(default_factory=list)
    reason: str = ""
    explanation: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    waits: bool = False  # that error ends when the cluster changes (a class or pool to appear)
    subjects: list[Subject] = field(default_factory=list)
    internal: str | None = None  # draguard failed on this Pod (feasible is None: no answer)
    workload: WorkloadReport | None = None  # the workload whose controller creates this Pod
    reused: list[str] = field(default_factory=list)  # its claims allocated already ("ns/name"), shared
    claim: str | None = None  # "ns/name" of a claim no Pod uses, asked on its own
    verdict: Verdict | None = None  # that claim's verdict (busy: feasible is False, but it waits)
    undecided_by: str | None = None  # what ran out before an answer (a budget, the deadline), and where
    error_claim: str | None = None  # the one claim ("ns/name") the allocation error is about, if any

    @classmethod
    def cut_short(
        cls,
        pod: str | None,
        why: str,
        *,
        subjects: list[Subject] | None = None,
        workload: WorkloadReport | None = None,
        claim: str | None = None,
        verdict: Verdict | None = None,
    ) -> PodSimulation:
        """No answer: `why` (the deadline of the run passed, the search budget ran out) before one."""
        return cls(
            pod,
            None,
            reason=f"undecided: {why}",
            undecided_by=why,
            subjects=subjects or [],
            workload=workload,
            claim=claim,
            verdict=verdict,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "feasible": self.feasible,
            "node": self.node,
            "claims": [
                {
                    "namespace": c.namespace,
                    "name": c.name,
                    "results": [
                        {
                            "request": r.request,
                            "driver": r.driver,
                            "pool": r.pool,
                            "device": r.device,
                            "adminAccess": r.admin_access,
                            "consumedCapacity": r.consumed_capacity,
                            "shareID": r.share_id,
                        }
                        for r in c.results
                    ],
                    # the whole status.allocation as an API server would store it (incl. nodeSelector)
                    "allocation": c.allocation,
                }
                for c in self.claims
            ],
            "reason": self.reason,
            "explanation": self.explanation,
            "internalError": self.internal,
            "workload": self.workload.ref() if self.workload is not None else None,
            "reused": self.reused,
            "claim": self.claim,
            "verdict": self.verdict,
        }


def label_of(item: Loaded) -> str:
    ns, name = key_of(item.obj)
    return f"{ns}/{name}"


def pod_label(pod: dict[str, Any]) -> str:
    ns, name = key_of(pod)
    return f"{ns}/{name}"


def origin_of(item: Loaded) -> Origin:
    """A bare Pod of the input: findings point into the Pod itself."""
    ns, name = key_of(item.obj)
    return Origin(item.source, item.line, "Pod", ns, name)


def pod_subject(item: Loaded) -> Subject:
    return origin_of(item).subject()


def claim_subject(item: Loaded) -> Subject:
    return subject_of_claim(item.source, item.line, item.obj)


@dataclass
class _Plan:
    """One way to try a Pod: the Pod (maybe restricted to some nodes) and its special claim."""

    pod: dict[str, Any]
    extra: dict[str, Any] | None = None
    subject: Subject | None = None
    weight: int = 0  # nodes covered: the explanation of the largest group is reported


@dataclass
class World:
    """What scheduling a Pod reads besides the ClusterState: every ResourceClaim (allocated or not) and
    ResourceClaimTemplate by (namespace, name), the Nodes and DeviceClasses, and for reports the loaded
    claims (source, line), the pending claims and why objects were left out.

    `generated` indexes claims by their pod-claim annotation (None: indexed from `claims` when first
    needed); `owned(namespace)` yields the claims of a namespace a Pod may already own (None: all of
    them)."""

    claims: Mapping[ClaimKey, dict[str, Any]]
    templates: Mapping[ClaimKey, dict[str, Any]]
    nodes: Collection[dict[str, Any]] = ()
    classes: Collection[dict[str, Any]] = ()
    loaded: Mapping[ClaimKey, Loaded] = field(default_factory=dict)
    pending: Sequence[Loaded] = ()
    invalid: Mapping[tuple[str, str], str] = field(default_factory=dict)
    generated: GeneratedIndex | None = None
    owned: Callable[[str], Iterable[dict[str, Any]]] | None = None

    @classmethod
    def of(cls, data: Inputs) -> World:
        """What a simulation of loaded inputs reads besides its state."""
        return cls(
            claims={k: v.obj for k, v in data.claims.items()},
            templates={k: v.obj for k, v in data.templates.items()},
            nodes=data.nodes,
            classes=data.classes,
            loaded=data.claims,
            pending=data.pending,
            invalid=data.invalid,
        )


class PodRun:
    """Pods scheduled one after another on one state. With `commit`, each feasible Pod's allocation is
    added to the state (and to `world.claims`, which must then be a dict), as the scheduler binds Pods
    in turn; without, nothing is written. `empty_cluster` decides on the same cluster with nothing
    allocated and device taints ignored (admission: busy or unsatisfiable). `notes` (a simulation's)
    explain infeasible answers by the objects the simulation left out; `referenced` collects the claims
    the Pods use, `committed` the claims this run allocated, in order. `spread` (a simulation's
    `--placement spread`) places each Pod on the node the default scheduler profile scores best among
    the nodes it fits on, and counts its requests there; without it, a Pod goes to the first node in
    name order that fits (`--placement pack`; admission asks whether there is any node)."""

    def __init__(
        self,
        world: World,
        state: HasView,
        ctx: Context,
        budget: Budget,
        deadline: Deadline,
        *,
        commit: bool = True,
        empty_cluster: bool = False,
        notes: LeftOutNotes | None = None,
        spread: Spread | None = None,
    ) -> None:
        self.world, self.state, self.ctx, self.budget = world, state, ctx, budget
        # a committing run adds each allocation to the state it runs on: only a ClusterState is written
        if commit and not isinstance(state, ClusterState):
            raise TypeError(
                f"a committing run writes its allocations to a ClusterState, not {type(state).__name__}"
            )
        self._writer = state if isinstance(state, ClusterState) else None
        self.deadline = deadline
        self.commit = commit
        self.empty_cluster = empty_cluster
        self.claims = world.claims
        self._generated = world.generated
        self.pins: list[dict[str, Any]] = []  # node selectors of the current Pod's allocated claims
        self.templates = world.templates
        self.mapping = ext.class_mapping(world.classes) if ctx.enabled("DRAExtendedResource") else {}
        self.notes = notes
        self.spread = spread
        self.referenced: set[ClaimKey] = set()  # claims some Pod uses (by name, status or ownership)
        self.committed: list[dict[str, Any]] = []  # claims this run allocated, in order

    @property
    def commits(self) -> int:
        """How many allocations this run has added to the state."""
        return len(self.committed)

    @property
    def generated(self) -> GeneratedIndex:
        if self._generated is None:
            self._generated = index_generated(self.claims.values())
        return self._generated

    def _owned(self, namespace: str) -> list[dict[str, Any]]:
        if self.world.owned is not None:
            return list(self.world.owned(namespace))
        return [c for k, c in self.claims.items() if k[0] == namespace]

    def guarded(self, item: Loaded | None) -> PodSimulation:
        """One Pod of the input (None: the pending claims together), undecided once the run's deadline
        has passed; a failure of draguard on it is reported on it, and the run goes on with the next one."""
        if item is None:
            return self.guarded_claims(list(self.world.pending))
        return self.guarded_pod(item.obj, origin_of(item))

    def guarded_pod(
        self, pod: dict[str, Any], origin: Origin, workload: WorkloadReport | None = None
    ) -> PodSimulation:
        """`guarded` for a Pod that `origin` made (the Pod itself, or a workload's template)."""
        label = pod_label(pod)
        subjects = [origin.subject()]
        if self.deadline.expired():
            sim = PodSimulation.cut_short(
                label, f"{DEADLINE_PASSED} before this Pod was tried", subjects=subjects
            )
        else:
            try:
                sim = self.schedule(pod, origin)
            except OutOfBudget:
                why = f"{DEADLINE_PASSED} while this Pod was prepared"
                sim = PodSimulation.cut_short(label, why, subjects=subjects)
            except Exception as e:  # noqa: BLE001 - one object's failure must not lose the others' answers
                detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                sim = _internal(label, detail, subjects)
        sim.workload = workload
        return sim

    def guarded_claims(self, items: list[Loaded]) -> PodSimulation:
        """Claims allocated together for one anonymous Pod (admission: the claim being created)."""
        subjects = [claim_subject(i) for i in items]
        if self.deadline.expired():
            return PodSimulation.cut_short(
                None, f"{DEADLINE_PASSED} before this Pod was tried", subjects=subjects
            )
        try:
            sim = self.anonymous([i.obj for i in items])
        except OutOfBudget:
            why = f"{DEADLINE_PASSED} while this Pod was prepared"
            return PodSimulation.cut_short(None, why, subjects=subjects)
        except Exception as e:  # noqa: BLE001 - as for a Pod
            detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return _internal(None, detail, subjects)
        sim.subjects = subjects
        return sim

    def anonymous(self, claims: list[dict[str, Any]] | None = None) -> PodSimulation:
        """`claims` (default: the world's pending claims) allocated together for one anonymous Pod."""
        self.pins = []
        if claims is None:
            claims = [item.obj for item in self.world.pending]
        sim, outcome = self._attempt(None, None, claims)
        if outcome is not None and outcome.feasible:
            if self.commit:
                self._commit(None, claims, outcome)
            return sim
        if sim.feasible is False and self.notes is not None:
            sim.reason += self.notes.note(None, claims, [], self.committed)
        return sim

    def guarded_claim(self, item: Loaded) -> PodSimulation:
        """A claim no Pod of the input uses, its own question as admission answers a claim CREATE:
        feasible now, busy (only once devices are freed or untainted) or unsatisfiable, on the state as
        the run has left it. Nothing is written: the next claim does not see this one's allocation."""
        subjects = [claim_subject(item)]
        label = claim_key(item.obj)
        if self.deadline.expired():
            why = f"{DEADLINE_PASSED} before this claim was tried"
            sim = PodSimulation.cut_short(None, why, verdict="undecided")
        else:
            try:
                sim = self._claim_alone(item.obj)
            except OutOfBudget:
                why = f"{DEADLINE_PASSED} while this claim was prepared"
                sim = PodSimulation.cut_short(None, why, verdict="undecided")
            except Exception as e:  # noqa: BLE001 - one claim's failure must not lose the others' answers
                detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                sim = _internal(None, detail, subjects, f"claim {label}")
        sim.subjects = subjects
        sim.claim = label
        return sim

    def _claim_alone(self, claim: dict[str, Any]) -> PodSimulation:
        """`guarded_claim` without the guard: now, then (if no) on the empty cluster, as one verdict."""
        self.pins = []
        now, _ = self._attempt(None, None, [claim])
        if now.internal:
            return now

        empty: list[PodSimulation] = []

        def on_empty() -> PodSimulation:
            empty.append(self._attempt(None, None, [claim], empty_cluster=True)[0])
            return empty[0]

        d = decide(now, on_empty, f'ResourceClaim "{claim_key(claim)}"')
        if empty and empty[0].internal:  # draguard failed on the empty cluster: no answer, not undecided
            return empty[0]
        sim = d.sim
        sim.verdict = d.verdict
        if d.verdict == "feasible":
            return sim
        sim.feasible = None if d.verdict == "undecided" else False
        sim.reason = d.message
        if d.verdict == "unsatisfiable" and self.notes is not None:
            sim.reason += self.notes.note(None, [claim], [], self.committed)
        return sim

    def pod(self, item: Loaded) -> PodSimulation:
        """One bare Pod of the input (no deadline or failure guard: see `guarded`)."""
        return self.schedule(item.obj, origin_of(item))

    def schedule(self, pod: dict[str, Any], origin: Origin) -> PodSimulation:
        """One Pod, its findings pointing into `origin`."""
        label = pod_label(pod)
        resolved = resolve_pod_claims(pod, self.claims, self.templates, self.world.invalid, self.generated)
        for pc in resolved:
            if pc.claim is not None and not pc.generated:
                self.referenced.add(key_of(pc.claim))
        problems = [pc for pc in resolved if pc.problem]
        if problems:  # each entry's finding names its own problem; the reason lists a few
            at = [origin.subject(path=str(pc.path), message=pc.problem) for pc in problems]
            reason = listing([pc.problem for pc in problems], "; ")
            return PodSimulation(label, False, reason=reason, subjects=at)
        pending: list[dict[str, Any]] = []
        subjects: list[Subject] = [origin.subject()]
        seen: set[tuple[str, str]] = set()
        pins: dict[str, dict[str, Any]] = {}  # node selectors of allocated claims, each must match
        reused: list[str] = []
        for pc in resolved:
            claim = pc.claim
            assert claim is not None
            key = key_of(claim)
            if key in seen:
                continue
            seen.add(key)
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                reused.append(claim_key(claim))
                sel = allocation.get("nodeSelector")
                if isinstance(sel, dict) and sel.get("nodeSelectorTerms"):
                    pins.setdefault(json.dumps(sel, sort_keys=True, default=str), sel)
                continue
            pending.append(claim)
            subjects.append(self._pod_claim_subject(origin, pc, claim))
        self.pins = list(pins.values())
        if self.notes is not None:
            unserved = self.notes.unserved(pod, self.mapping, list(self.world.nodes))
            if unserved is not None:
                return PodSimulation(label, False, reason=unserved, subjects=[origin.subject()])
        plans = self._plans(origin, pod)
        if isinstance(plans, PodSimulation):
            if self.notes is not None:
                plans.reason += self.notes.note(pod, pending, [], self.committed)
            return plans
        tried: list[tuple[PodSimulation, int, _Plan, list[dict[str, Any]]]] = []
        placed: list[tuple[Rank, PodSimulation, Outcome, _Plan, list[dict[str, Any]]]] = []
        for plan in plans:
            claims = pending + ([plan.extra] if plan.extra is not None else [])
            sim, outcome, rank = self._place(label, plan.pod, claims)
            sim.subjects = subjects + ([plan.subject] if plan.subject is not None else [])
            if outcome is not None and outcome.feasible:
                placed.append((rank, sim, outcome, plan, claims))
                if self.spread is None:
                    break  # the first node that fits
                continue  # spread: the best node of every group of nodes
            tried.append((sim, plan.weight, plan, claims))
        if placed:
            _, sim, outcome, plan, claims = min(placed, key=lambda p: p[0])
            if self.commit:
                self._commit(plan.pod, claims, outcome)
            sim.reused = reused
            return sim
        undecided = [t for t in tried if t[0].feasible is None]
        sim, _, plan, claims = undecided[0] if undecided else max(tried, key=lambda t: t[1])
        if sim.feasible is False and self.notes is not None:
            sim.reason += self.notes.note(plan.pod, claims, self.pins, self.committed)
        return sim

    # -- helpers --------------------------------------------------------------------------------

    def _pod_claim_subject(self, origin: Origin, pc: PodClaim, claim: dict[str, Any]) -> Subject:
        loaded = self.world.loaded.get(key_of(claim))
        if loaded is not None and not pc.generated:
            return claim_subject(loaded)
        paths = {r: str(pc.path) for r in request_paths(claim)}
        return origin.subject(claim_key(claim), paths, str(pc.path))

    def _plans(self, origin: Origin, pod: dict[str, Any]) -> list[_Plan] | PodSimulation:
        """How the Pod is tried: as is, or — with extended resources backed by DRA — once per group of
        nodes that serve the same resources through DRA (Filter builds the special claim per node),
        each restricted to its nodes; or the final answer when no node can provide a resource."""
        if not self.mapping or not ext.needs_special_claim(pod, self.mapping):
            return [_Plan(pod)]
        ns, _ = key_of(pod)
        label = pod_label(pod)
        own_subject = origin.subject()
        existing = ext.find_extended_claim(pod, self._owned(ns))
        if existing is not None:
            allocation = (existing.get("status") or {}).get("allocation")
            if allocation:
                return [_Plan(merge_node_selector(pod, allocation.get("nodeSelector")))]
            if ((existing.get("spec") or {}).get("devices") or {}).get("requests"):
                return PodSimulation(
                    label,
                    False,
                    reason=f"extended resource claim {claim_key(existing)} from an earlier scheduling attempt "
                    "already has requests: the scheduler deletes it and retries (cannot schedule now)",
                    subjects=[own_subject],
                )
        wanted = ext.requested_resources(pod)
        if not self.world.nodes:
            return [self._plan(origin, pod, ext.node_variant(wanted, self.mapping, None).dra, existing, None)]
        groups: dict[frozenset[str], list[str]] = {}
        unfit: list[str] = []
        for n, node in enumerate(sorted(self.world.nodes, key=name_of)):
            if n % 256 == 255 and self.deadline.expired():
                raise OutOfBudget()
            variant = ext.node_variant(wanted, self.mapping, node)
            if variant.unfit is not None:
                unfit.append(f"{name_of(node)} ({variant.unfit})")
            else:
                groups.setdefault(variant.dra, []).append(name_of(node))
        if not groups:
            return PodSimulation(
                label,
                False,
                reason="no node can provide the Pod's extended resources: neither in the node's allocatable "
                "nor served by a DeviceClass on " + listing(unfit),
                subjects=[own_subject],
            )
        restrict = len(groups) > 1 or bool(unfit)
        return [
            self._plan(origin, pod, dra, existing, nodes if restrict else None)
            for dra, nodes in groups.items()
        ]

    def _plan(
        self,
        origin: Origin,
        pod: dict[str, Any],
        dra: frozenset[str],
        existing: dict[str, Any] | None,
        nodes: list[str] | None,
    ) -> _Plan:
        weight = len(nodes) if nodes is not None else len(self.world.nodes)
        if nodes is not None:
            only = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}
            pod = merge_node_selector(pod, {"nodeSelectorTerms": [only]})
        if not dra:
            return _Plan(pod, weight=weight)
        ns, _ = key_of(pod)
        claim_name = name_of(existing) if existing is not None else self._special_name(pod)
        sc = ext.special_claim(pod, ns, claim_name, dra, self.mapping, existing)
        _, n_init = ext.all_containers(pod)
        paths: dict[str, str] = {}
        for m in sc.mappings:
            p = (
                ext.container_path(m.container_index, n_init)
                .child("resources")
                .child("requests")
                .key(m.resource)
            )
            paths.setdefault(m.request, str(p))
        # a cause of the whole claim (its size) is reported where its first request comes from
        first = next(iter(paths.values()), "")
        return _Plan(pod, sc.claim, origin.subject(claim_key(sc.claim), paths, first), weight)

    @staticmethod
    def _special_name(pod: dict[str, Any]) -> str:
        ns, name = key_of(pod)
        return generated_name(f"{name}-extended-resources-", f"{ns}/{name}/<extended-resources>")

    def _place(
        self, label: str, pod: dict[str, Any], claims: list[dict[str, Any]]
    ) -> tuple[PodSimulation, Outcome | None, Rank]:
        """The Pod on the first node that fits, or with `spread` on the node the scheduler's scores
        prefer among those it fits on, and that node's rank (to compare groups of nodes)."""
        if self.spread is None:
            sim, outcome = self._attempt(label, pod, claims)
            return sim, outcome, (0, 0)
        score = self.spread.scorer(pod)
        sim, outcome = self._attempt(label, pod, claims, prefer=score)
        if outcome is None or not outcome.feasible:
            return sim, outcome, (0, 0)
        index = {n.name: i for i, n in enumerate(self.state.view.candidate_nodes())}
        if self.ctx.enabled("DRAPrioritizedList") and prioritized_requests(claims):
            return self._prioritized(label, pod, claims, score, index, (sim, outcome))
        return sim, outcome, (-score(outcome.node), index.get(outcome.node, len(index)))

    def _prioritized(
        self,
        label: str,
        pod: dict[str, Any],
        claims: list[dict[str, Any]],
        score: Callable[[str | None], int],
        index: Mapping[str | None, int],
        first: tuple[PodSimulation, Outcome],
    ) -> tuple[PodSimulation, Outcome | None, Rank]:
        """With claims that choose among subrequests, DynamicResources scores each node by the
        subrequests its allocation there uses (normalized to the best node): the other nodes are
        allocated one by one, best resource score first, until none can beat the best found (at once
        when the first node gets every first choice). The Pod's budget is shared by these calls: when it
        runs out, the best node found so far is taken (the Pod fits there all the same)."""
        top = FIRST_AVAILABLE_MAX * prioritized_requests(claims)
        node = first[1].node
        found = {node: (*first, _raw_score(claims, first[1]))}
        steps, started = first[1].steps, time.monotonic()

        def rank(name: str | None, highest: int) -> Rank:
            return (-(score(name) + normalized(found[name][2], highest)), index.get(name, len(index)))

        others = sorted(
            (n for n in index if n is not None and n != node), key=lambda n: (-score(n), index[n])
        )
        for name in others if found[node][2] < top else ():
            if any(raw == top for _, _, raw in found.values()):
                leader = min(rank(n, top) for n in found)
                if (-(score(name) + normalized(top, top)), index[name]) > leader:
                    break  # no node left can beat the best one found
            left_steps = self.budget.steps - steps
            left_seconds = self.budget.seconds - (time.monotonic() - started)
            if left_steps <= 0 or left_seconds <= 0 or self.deadline.expired():
                break
            left = Budget(left_steps, left_seconds)
            sim, outcome = self._attempt(label, pod, claims, node=name, budget=left)
            if outcome is None or outcome.feasible is None:
                break
            steps += outcome.steps
            if outcome.feasible:
                found[name] = (sim, outcome, _raw_score(claims, outcome))
        highest = max(raw for _, _, raw in found.values())
        chosen = min(found, key=lambda n: rank(n, highest))
        return found[chosen][0], found[chosen][1], rank(chosen, highest)

    def _attempt(
        self,
        label: str | None,
        pod: dict[str, Any] | None,
        claims: list[dict[str, Any]],
        *,
        prefer: Callable[[str | None], int] | None = None,
        node: str | None = None,
        budget: Budget | None = None,
        empty_cluster: bool | None = None,
    ) -> tuple[PodSimulation, Outcome | None]:
        empty = self.empty_cluster if empty_cluster is None else empty_cluster
        outcome = allocate(
            self.state,
            claims,
            pod=pod,
            node=node,
            budget=budget or self.budget,
            deadline=self.deadline,
            node_selectors=self.pins,
            ignore_allocations=empty,
            ignore_taints=empty,
            prefer=prefer,
        )
        if outcome.internal is not None:
            return _internal(label, outcome.internal, []), None
        return _from_outcome(label, outcome), outcome

    def _commit(self, pod: dict[str, Any] | None, claims: list[dict[str, Any]], outcome: Outcome) -> None:
        """Store the allocation (and the Pod's reservation) in the state before the next Pod."""
        by_key = {claim_key(c): c for c in claims}
        for i, result in enumerate(outcome.claims):
            claim = by_key.get(f"{result.namespace}/{result.name}") or (
                claims[i] if i < len(claims) else None
            )
            if claim is None:
                continue
            stored = deep_copy(claim)
            status = stored.setdefault("status", {})
            status["allocation"] = deep_copy(result.allocation)
            if pod is not None:
                meta = pod.get("metadata") or {}
                ref = {"resource": "pods", "name": meta.get("name", "")}
                if meta.get("uid"):
                    ref["uid"] = meta["uid"]
                status["reservedFor"] = [*(status.get("reservedFor") or []), ref]
            assert self._writer is not None  # checked when the run was made
            self._writer.apply(stored)
            owned = self.claims
            assert isinstance(owned, MutableMapping), "a committing run owns its claims"
            owned[key_of(stored)] = stored
            add_generated(self.generated, stored)
            self.committed.append(stored)
        if self.spread is not None and pod is not None:
            self.spread.bind(pod, outcome.node)


def _raw_score(claims: list[dict[str, Any]], outcome: Outcome) -> int:
    """DynamicResources' raw score of an allocation: the subrequests it chose (prioritized_score)."""
    chosen = {f"{c.namespace}/{c.name}": {r.request for r in c.results} for c in outcome.claims}
    return prioritized_score(claims, chosen)


def _internal(label: str | None, detail: str, subjects: list[Subject], what: str = "") -> PodSimulation:
    what = what or (f"Pod {label}" if label else "the claims")
    reason = f"internal error: draguard failed on {what} ({detail}): no answer; please report it"
    return PodSimulation(label, None, reason=reason, error=detail, subjects=subjects, internal=detail)


def _from_outcome(label: str | None, outcome: Outcome) -> PodSimulation:
    reason = outcome.reason
    if outcome.error and outcome.error not in reason:
        reason = f"{reason}: {outcome.error}" if reason else outcome.error
    return PodSimulation(
        label,
        outcome.feasible,
        outcome.node,
        list(outcome.claims) if outcome.feasible else [],
        "" if outcome.feasible else reason,
        list(outcome.explanation),
        outcome.error,
        outcome.error_kind == "waits",
        undecided_by=outcome.undecided_by,
        error_claim=outcome.error_claim,
    )
