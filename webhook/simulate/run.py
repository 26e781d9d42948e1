"""Scheduling one Pod (or the pending claims together) against a ClusterState, as `draguard simulate` and
admission-time feasibility do: its claims by name, from templates (as the resource claim controller
generates them) or from extended resources backed by DeviceClasses, pinned to the nodes of its claims
that are already allocated. `World` holds what that reads besides the ClusterState."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webhook.context import Context
from webhook.engine import Budget, ClaimResult, Outcome, allocate
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.path import Path
from webhook.model.text import listing
from webhook.simulate import extended as ext
from webhook.simulate.load import Loaded
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
from webhook.state import ClusterState

ClaimKey = tuple[str, str]


@dataclass
class Subject:
    """An input object a feasibility finding is reported on, and where in it each request lives."""

    source: str
    line: int
    kind: str
    namespace: str | None
    name: str | None
    claim: str = ""  # "ns/name" of the claim as the engine names it ("" for the Pod itself)
    requests: dict[str, str] = field(default_factory=dict)  # request name → field path
    path: str = ""  # where to report when no request is named
    message: str = ""  # what is wrong at `path` itself (else the Pod's reason)


@dataclass
class PodSimulation:
    pod: str | None  # "ns/name"; None for the anonymous Pod of claims without Pods
    feasible: bool | None
    node: str | None = None
    claims: list[ClaimResult] = field(default_factory=list)
    reason: str = ""
    explanation: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    subjects: list[Subject] = field(default_factory=list)
    internal: str | None = None  # draguard failed on this Pod (feasible is None: no answer)

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
        }


def label_of(item: Loaded) -> str:
    ns, name = key_of(item.obj)
    return f"{ns}/{name}"


def pod_subject(item: Loaded) -> Subject:
    ns, name = key_of(item.obj)
    return Subject(item.source, item.line, "Pod", ns, name)


def _claim_key(claim: dict[str, Any]) -> str:
    ns, name = key_of(claim)
    return f"{ns}/{name}"


def _request_paths(claim: dict[str, Any]) -> dict[str, str]:
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    base = Path("spec").child("devices").child("requests")
    return {r.get("name", ""): str(base.index(i)) for i, r in enumerate(requests) if isinstance(r, dict)}


def claim_subject(item: Loaded) -> Subject:
    ns, name = key_of(item.obj)
    return Subject(
        item.source,
        item.line,
        "ResourceClaim",
        ns,
        name,
        f"{ns}/{name}",
        _request_paths(item.obj),
        "spec.devices.requests",
    )


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


class PodRun:
    """Pods scheduled one after another on one state. With `commit`, each feasible Pod's allocation is
    added to the state (and to `world.claims`, which must then be a dict), as the scheduler binds Pods
    in turn; without, nothing is written. `empty_cluster` decides on the same cluster with nothing
    allocated and device taints ignored (admission: busy or unsatisfiable)."""

    def __init__(
        self,
        world: World,
        state: ClusterState,
        ctx: Context,
        budget: Budget,
        deadline: Deadline,
        *,
        commit: bool = True,
        empty_cluster: bool = False,
    ) -> None:
        self.world, self.state, self.ctx, self.budget = world, state, ctx, budget
        self.deadline = deadline
        self.commit = commit
        self.empty_cluster = empty_cluster
        self.claims = world.claims
        self._generated = world.generated
        self.pins: list[dict[str, Any]] = []  # node selectors of the current Pod's allocated claims
        self.templates = world.templates
        self.mapping = ext.class_mapping(world.classes) if ctx.enabled("DRAExtendedResource") else {}

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
        """One Pod (None: the pending claims together), undecided once the run's deadline has passed;
        a failure of draguard on it is reported on it, and the run goes on with the next one."""
        subjects = [pod_subject(item)] if item is not None else [claim_subject(i) for i in self.world.pending]
        label = label_of(item) if item is not None else None
        if self.deadline.expired():
            reason = "undecided: the deadline of the run passed before this Pod was tried"
            return PodSimulation(label, None, reason=reason, subjects=subjects)
        try:
            return self.pod(item) if item is not None else self.anonymous()
        except OutOfBudget:
            reason = "undecided: the deadline of the run passed while this Pod was prepared"
            return PodSimulation(label, None, reason=reason, subjects=subjects)
        except Exception as e:  # noqa: BLE001 - one object's failure must not lose the others' answers
            detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return _internal(label, detail, subjects)

    def anonymous(self) -> PodSimulation:
        self.pins = []
        claims = [item.obj for item in self.world.pending]
        sim, outcome = self._attempt(None, None, claims)
        if outcome is not None and outcome.feasible:
            if self.commit:
                self._commit(None, claims, outcome)
        sim.subjects = [claim_subject(item) for item in self.world.pending]
        return sim

    def pod(self, item: Loaded) -> PodSimulation:
        pod = item.obj
        ns, name = key_of(pod)
        label = f"{ns}/{name}"
        own_subject = Subject(item.source, item.line, "Pod", ns, name)
        resolved = resolve_pod_claims(pod, self.claims, self.templates, self.world.invalid, self.generated)
        problems = [pc for pc in resolved if pc.problem]
        if problems:  # each entry's finding names its own problem; the reason lists a few
            at = [
                Subject(item.source, item.line, "Pod", ns, name, path=str(pc.path), message=pc.problem)
                for pc in problems
            ]
            reason = listing([pc.problem for pc in problems], "; ")
            return PodSimulation(label, False, reason=reason, subjects=at)
        pending: list[dict[str, Any]] = []
        subjects: list[Subject] = [own_subject]
        seen: set[tuple[str, str]] = set()
        pins: dict[str, dict[str, Any]] = {}  # node selectors of allocated claims, each must match
        for pc in resolved:
            claim = pc.claim
            assert claim is not None
            key = key_of(claim)
            if key in seen:
                continue
            seen.add(key)
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                sel = allocation.get("nodeSelector")
                if isinstance(sel, dict) and sel.get("nodeSelectorTerms"):
                    pins.setdefault(json.dumps(sel, sort_keys=True, default=str), sel)
                continue
            pending.append(claim)
            subjects.append(self._pod_claim_subject(item, pc, claim))
        self.pins = list(pins.values())
        plans = self._plans(item, pod)
        if isinstance(plans, PodSimulation):
            return plans
        tried: list[tuple[PodSimulation, int]] = []
        for plan in plans:
            claims = pending + ([plan.extra] if plan.extra is not None else [])
            sim, outcome = self._attempt(label, plan.pod, claims)
            sim.subjects = subjects + ([plan.subject] if plan.subject is not None else [])
            if outcome is not None and outcome.feasible:
                if self.commit:
                    self._commit(plan.pod, claims, outcome)
                return sim
            tried.append((sim, plan.weight))
        undecided = [sim for sim, _ in tried if sim.feasible is None]
        return undecided[0] if undecided else max(tried, key=lambda t: t[1])[0]

    # -- helpers --------------------------------------------------------------------------------

    def _pod_claim_subject(self, item: Loaded, pc: PodClaim, claim: dict[str, Any]) -> Subject:
        key = key_of(claim)
        loaded = self.world.loaded.get(key)
        if loaded is not None and not pc.generated:
            return claim_subject(loaded)
        ns, pod_name = key_of(item.obj)
        paths = {r: str(pc.path) for r in _request_paths(claim)}
        return Subject(item.source, item.line, "Pod", ns, pod_name, _claim_key(claim), paths, str(pc.path))

    def _plans(self, item: Loaded, pod: dict[str, Any]) -> list[_Plan] | PodSimulation:
        """How the Pod is tried: as is, or — with extended resources backed by DRA — once per group of
        nodes that serve the same resources through DRA (Filter builds the special claim per node),
        each restricted to its nodes; or the final answer when no node can provide a resource."""
        if not self.mapping or not ext.needs_special_claim(pod, self.mapping):
            return [_Plan(pod)]
        ns, name = key_of(pod)
        label = f"{ns}/{name}"
        pod_subject = Subject(item.source, item.line, "Pod", ns, name)
        existing = ext.find_extended_claim(pod, self._owned(ns))
        if existing is not None:
            allocation = (existing.get("status") or {}).get("allocation")
            if allocation:
                return [_Plan(merge_node_selector(pod, allocation.get("nodeSelector")))]
            if ((existing.get("spec") or {}).get("devices") or {}).get("requests"):
                return PodSimulation(
                    label,
                    False,
                    reason=f"extended resource claim {_claim_key(existing)} from an earlier scheduling attempt "
                    "already has requests: the scheduler deletes it and retries (cannot schedule now)",
                    subjects=[pod_subject],
                )
        wanted = ext.requested_resources(pod)
        if not self.world.nodes:
            return [self._plan(item, pod, ext.node_variant(wanted, self.mapping, None).dra, existing, None)]
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
                subjects=[pod_subject],
            )
        restrict = len(groups) > 1 or bool(unfit)
        return [
            self._plan(item, pod, dra, existing, nodes if restrict else None) for dra, nodes in groups.items()
        ]

    def _plan(
        self,
        item: Loaded,
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
        ns, name = key_of(pod)
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
        subject = Subject(item.source, item.line, "Pod", ns, name, _claim_key(sc.claim), paths, "")
        return _Plan(pod, sc.claim, subject, weight)

    @staticmethod
    def _special_name(pod: dict[str, Any]) -> str:
        ns, name = key_of(pod)
        return generated_name(f"{name}-extended-resources-", f"{ns}/{name}/<extended-resources>")

    def _attempt(
        self, label: str | None, pod: dict[str, Any] | None, claims: list[dict[str, Any]]
    ) -> tuple[PodSimulation, Outcome | None]:
        outcome = allocate(
            self.state,
            claims,
            pod=pod,
            budget=self.budget,
            deadline=self.deadline,
            node_selectors=self.pins,
            ignore_allocations=self.empty_cluster,
            ignore_taints=self.empty_cluster,
        )
        if outcome.internal is not None:
            return _internal(label, outcome.internal, []), None
        return _from_outcome(label, outcome), outcome

    def _commit(self, pod: dict[str, Any] | None, claims: list[dict[str, Any]], outcome: Outcome) -> None:
        """Store the allocation (and the Pod's reservation) in the state before the next Pod."""
        by_key = {_claim_key(c): c for c in claims}
        for i, result in enumerate(outcome.claims):
            claim = by_key.get(f"{result.namespace}/{result.name}") or (
                claims[i] if i < len(claims) else None
            )
            if claim is None:
                continue
            stored = copy.deepcopy(claim)
            status = stored.setdefault("status", {})
            status["allocation"] = copy.deepcopy(result.allocation)
            if pod is not None:
                meta = pod.get("metadata") or {}
                ref = {"resource": "pods", "name": meta.get("name", "")}
                if meta.get("uid"):
                    ref["uid"] = meta["uid"]
                status["reservedFor"] = [*(status.get("reservedFor") or []), ref]
            self.state.apply(stored)
            owned = self.claims
            assert isinstance(owned, MutableMapping), "a committing run owns its claims"
            owned[key_of(stored)] = stored
            add_generated(self.generated, stored)


def _internal(label: str | None, detail: str, subjects: list[Subject]) -> PodSimulation:
    what = f"Pod {label}" if label else "the claims"
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
    )
