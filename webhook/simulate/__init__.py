"""`draguard simulate`: load manifests, build the cluster state from the ones the API server would accept,
and allocate the claims of each Pod in input order — bare Pods, and the Pods each workload's controller
would create (webhook.simulate.workloads) — each success added to the state, as the scheduler binds Pods
one after another; then the unallocated claims no Pod uses, together for one anonymous Pod."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webhook.context import Context
from webhook.engine import Budget, ClaimResult, Outcome, allocate
from webhook.io.files import MAX_FILE_BYTES
from webhook.model.budget import Deadline, OutOfBudget, check_seconds
from webhook.model.text import listing
from webhook.model.violation import Severity
from webhook.model.workloads import WORKLOAD_KINDS
from webhook.policy import Policy
from webhook.profile import DEFAULT_VERSION, load_profile
from webhook.report import Report
from webhook.rules.registry import declare
from webhook.simulate import extended as ext
from webhook.simulate.findings import feasibility_findings, feasibility_violations
from webhook.simulate.leftout import LeftOut
from webhook.simulate.load import Inputs, Loaded, load
from webhook.simulate.podclaims import (
    PodClaim,
    add_generated,
    claims_named,
    generated_name,
    index_generated,
    key_of,
    merge_node_selector,
    name_of,
    resolve_pod_claims,
)
from webhook.simulate.served import LeftOutNotes
from webhook.simulate.subjects import Origin, Subject, claim_key, claim_subject
from webhook.simulate.workloads import WorkloadReport, expand, run_workload, slice_nodes
from webhook.state import ClusterState

declare(
    "feasibility.infeasible",
    summary="`validate --feasibility`: the claim (or the Pod's claims) cannot be allocated on the cluster "
    "described by the input; the message is the allocator's explanation",
    field="spec.devices.requests[i]",
    kinds=("ResourceClaim", "Pod", *WORKLOAD_KINDS),
    tag="alloc",
)
declare(
    "feasibility.undecided",
    summary="`validate --feasibility`: the allocator's step/time budget ran out before it could decide",
    field="spec.devices.requests[i]",
    severity=Severity.WARNING,
    kinds=("ResourceClaim", "Pod", *WORKLOAD_KINDS),
    tag="alloc",
)

declare(
    "internal.engine-crash",
    summary="the allocation engine failed on this Pod or claim (a draguard bug, or a resource limit such "
    "as MemoryError): no answer for it; the other Pods are still simulated",
    field="",
    kinds=("ResourceClaim", "Pod", *WORKLOAD_KINDS),
    tag="alloc",
)

EXIT_FEASIBLE, EXIT_INFEASIBLE, EXIT_UNDECIDED = 0, 1, 3
RUN_SECONDS = 60.0  # default deadline of a whole simulation: loading, validation and every Pod


@dataclass(frozen=True)
class SimulateOptions:
    version: str = DEFAULT_VERSION
    gates: tuple[tuple[str, bool], ...] = ()
    policy: Policy | None = None
    budget: Budget | None = None
    jobs: int = 1
    stdin_text: str | None = None  # `-` was already read
    deadline_seconds: float = RUN_SECONDS  # the whole run (load, validation, allocations): see simulate()
    max_bytes: int = MAX_FILE_BYTES  # one input file or stdin

    def __post_init__(self) -> None:
        object.__setattr__(self, "deadline_seconds", check_seconds(self.deadline_seconds, "deadline seconds"))


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
    workload: WorkloadReport | None = None  # the workload whose controller creates this Pod

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
        }


@dataclass
class SimulationReport:
    pods: list[PodSimulation]
    validation: Report
    workloads: list[WorkloadReport] = field(default_factory=list)  # in input order
    left_out: list[LeftOut] = field(default_factory=list)  # objects the simulation did not use, and why

    @property
    def exit_code(self) -> int:
        """1 if anything is infeasible (or left out of the simulation, or draguard failed on it), else 3
        if anything is undecided or was not checked before the deadline, else 0. Errors that leave
        nothing out (cross-object findings the scheduler handles itself) change no answer, nor this."""
        if any(p.feasible is False or p.internal for p in self.pods) or self.left_out:
            return EXIT_INFEASIBLE
        if any(p.feasible is None for p in self.pods) or self.validation.not_checked:
            return EXIT_UNDECIDED
        return EXIT_FEASIBLE

    def kept_with_errors(self) -> list[Any]:
        """Objects with errors that were simulated all the same (their errors do not change allocation)."""
        out = {id(lo.result) for lo in self.left_out if lo.result is not None}
        return [o for o in self.validation.objects if o.errors and id(o) not in out]

    def to_dict(self) -> dict[str, Any]:
        invalid = [lo.result.to_dict() for lo in self.left_out if lo.result is not None]
        out: dict[str, Any] = {
            "pods": [p.to_dict() for p in self.pods],
            "workloads": [w.to_dict() for w in self.workloads],
            "invalid": invalid,
            "errors": [o.to_dict() for o in self.kept_with_errors()],
        }
        if self.validation.not_checked:
            out["notChecked"] = [o.to_dict() for o in not_checked(self.validation)]
        return out


def not_checked(report: Report) -> list[Any]:
    """The objects (and rests of files) the run's deadline left unvalidated."""
    return [o for o in report.objects if any(v.rule == "input.not-checked" for v in o.violations)]


def simulate(
    inputs: Sequence[str] | Sequence[dict[str, Any]] | bytes,
    options: SimulateOptions | None = None,
    deadline: Deadline | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationReport:
    """Simulate scheduling of the input's Pods — bare ones and those its workloads' controllers create —
    and of its unallocated claims no Pod uses, against its cluster state.

    `inputs` are paths (files, directories, `-`), already parsed objects, or one request body (bytes).
    The whole call — reading, validation, building the state, every Pod — ends by
    `options.deadline_seconds` from its start, or by `deadline` if that is earlier (an admission
    request's); each Pod's allocation also has `options.budget`. What the deadline cuts short is never a
    verdict: objects not validated are `input.not-checked` in `validation` (then every Pod and claim is
    undecided: the cluster may be incomplete); Pods not decided are undecided. Raises `UsageError` for a
    bad version/gate and `UnreadableInput` for a missing path."""
    options = options or SimulateOptions()
    deadline = Deadline.after(options.deadline_seconds).earliest(deadline)
    ctx = Context(profile=load_profile(options.version, dict(options.gates)), deadline=deadline)
    data = load(inputs, ctx, options.jobs, options.policy, options.stdin_text, options.max_bytes, progress)
    if data.report.not_checked:
        when = f"while the input was loaded and validated ({data.report.not_checked} not checked)"
        return _too_late(data, when)
    try:
        state = ClusterState.from_objects(data.state, ctx.profile, deadline)
    except OutOfBudget:
        return _too_late(data, "while the cluster state was built")
    run = _Run(data, state, ctx, options.budget or Budget(), deadline)
    sims: list[PodSimulation] = []
    workloads: list[WorkloadReport] = []
    nodes = slice_nodes(data.state)
    for item in data.work:
        if item.kind == "Pod":
            sims.append(run.guarded(item.obj, _pod_origin(item)))
            continue
        report = WorkloadReport(item.source, item.line, expand(item.obj, data.nodes, nodes))
        report.start = len(sims)
        origin = _workload_origin(item, report)
        run_workload(
            report, functools.partial(run.guarded, origin=origin, workload=report), lambda: run.commits
        )
        sims.extend(report.sims)
        workloads.append(report)
    unused = run.unused_claims()
    if unused:
        sims.append(run.guarded_claims(unused, after_pods=bool(data.work)))
    return SimulationReport(sims, data.report, workloads, data.left_out)


def _pod_origin(item: Loaded) -> Origin:
    ns, name = key_of(item.obj)
    return Origin(item.source, item.line, "Pod", ns, name)


def _workload_origin(item: Loaded, report: WorkloadReport) -> Origin:
    e = report.expansion
    return Origin(item.source, item.line, e.kind, e.namespace, e.name, e.prefix)


def _too_late(data: Inputs, when: str) -> SimulationReport:
    reason = f"undecided: the deadline of the run passed {when}"
    sims: list[PodSimulation] = []
    workloads: list[WorkloadReport] = []
    nodes = slice_nodes(data.state)
    for item in data.work:
        if item.kind == "Pod":
            sims.append(
                PodSimulation(_label(item.obj), None, reason=reason, subjects=[_pod_origin(item).subject()])
            )
            continue
        report = WorkloadReport(item.source, item.line, expand(item.obj, data.nodes, nodes))
        report.start = len(sims)
        if report.expansion.count:
            origin = _workload_origin(item, report)
            first = report.expansion.pod(0)
            sim = PodSimulation(
                _label(first), None, reason=reason, subjects=[origin.subject()], workload=report
            )
            report.sims.append(sim)
            report.same_as_last = report.expansion.count - 1
            report.rest_reason = f"{report.same_as_last} more Pod(s): undecided as well"
            sims.append(sim)
        workloads.append(report)
    if data.pending:
        subjects = [claim_subject(i.source, i.line, i.obj) for i in data.pending]
        sims.append(PodSimulation(None, None, reason=reason, subjects=subjects))
    return SimulationReport(sims, data.report, workloads, data.left_out)


def _label(pod: dict[str, Any]) -> str:
    ns, name = key_of(pod)
    return f"{ns}/{name}"


@dataclass
class _Plan:
    """One way to try a Pod: the Pod (maybe restricted to some nodes) and its special claim."""

    pod: dict[str, Any]
    extra: dict[str, Any] | None = None
    subject: Subject | None = None
    weight: int = 0  # nodes covered: the explanation of the largest group is reported


class _Run:
    """One simulation: the state grows as Pods are placed."""

    def __init__(
        self, data: Inputs, state: ClusterState, ctx: Context, budget: Budget, deadline: Deadline
    ) -> None:
        self.data, self.state, self.ctx, self.budget = data, state, ctx, budget
        self.deadline = deadline
        self.claims: dict[tuple[str, str], dict[str, Any]] = {k: v.obj for k, v in data.claims.items()}
        self.generated = index_generated(self.claims.values())
        self.pins: list[dict[str, Any]] = []  # node selectors of the current Pod's allocated claims
        self.templates = self._objs(data.templates)
        self.mapping = ext.class_mapping(data.classes) if ctx.enabled("DRAExtendedResource") else {}
        self.referenced = claims_named(
            data.work, data.claims
        )  # input claims some Pod uses (more found as Pods are tried)
        self.committed: list[dict[str, Any]] = []  # claims allocated by this run, in order
        self.notes = LeftOutNotes(data, ctx, budget, deadline)

    @property
    def commits(self) -> int:
        """How many allocations this run has added to the state."""
        return len(self.committed)

    def guarded(
        self, pod: dict[str, Any], origin: Origin, workload: WorkloadReport | None = None
    ) -> PodSimulation:
        """One Pod, undecided once the run's deadline has passed; a failure of draguard on it is
        reported on it, and the run goes on with the next one."""
        label = _label(pod)
        subjects = [origin.subject()]
        if self.deadline.expired():
            reason = "undecided: the deadline of the run passed before this Pod was tried"
            sim = PodSimulation(label, None, reason=reason, subjects=subjects)
        else:
            try:
                sim = self.pod(pod, origin)
            except OutOfBudget:
                reason = "undecided: the deadline of the run passed while this Pod was prepared"
                sim = PodSimulation(label, None, reason=reason, subjects=subjects)
            except Exception as e:  # noqa: BLE001 - one object's failure must not lose the others' answers
                detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                sim = _internal(label, detail, subjects)
        sim.workload = workload
        return sim

    def unused_claims(self) -> list[Loaded]:
        """The input's unallocated claims that no Pod of the input uses (nor allocated meanwhile)."""
        return [
            item
            for item in self.data.pending
            if key_of(item.obj) not in self.referenced
            and not ((self.claims.get(key_of(item.obj)) or {}).get("status") or {}).get("allocation")
        ]

    def guarded_claims(self, items: list[Loaded], after_pods: bool) -> PodSimulation:
        """Claims no Pod uses, allocated together for one anonymous Pod (after the Pods, if any)."""
        subjects = [claim_subject(i.source, i.line, i.obj) for i in items]
        if self.deadline.expired():
            reason = "undecided: the deadline of the run passed before these claims were tried"
            return PodSimulation(None, None, reason=reason, subjects=subjects)
        try:
            sim = self.anonymous([i.obj for i in items], after_pods)
        except OutOfBudget:
            reason = "undecided: the deadline of the run passed while these claims were prepared"
            return PodSimulation(None, None, reason=reason, subjects=subjects)
        except Exception as e:  # noqa: BLE001 - as for a Pod
            detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return _internal(None, detail, subjects)
        sim.subjects = subjects
        return sim

    def anonymous(self, claims: list[dict[str, Any]], after_pods: bool) -> PodSimulation:
        self.pins = []
        placed = self.commits
        sim, outcome = self._attempt(None, None, claims)
        if outcome is not None and outcome.feasible:
            self._commit(None, claims, outcome)
            return sim
        if sim.feasible is False:
            sim.reason += self.notes.note(None, claims, [], self.committed)
            if after_pods and placed:
                sim.reason = self.notes.before_pods(claims, sim.reason)
        return sim

    def pod(self, pod: dict[str, Any], origin: Origin) -> PodSimulation:
        label = _label(pod)
        resolved = resolve_pod_claims(pod, self.claims, self.templates, self.data.invalid, self.generated)
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
            subjects.append(self._pod_claim_subject(origin, pc, claim))
        self.pins = list(pins.values())
        unserved = self.notes.unserved(pod, self.mapping, self.data.nodes)
        if unserved is not None:
            return PodSimulation(label, False, reason=unserved, subjects=[origin.subject()])
        plans = self._plans(origin, pod)
        if isinstance(plans, PodSimulation):
            plans.reason += self.notes.note(pod, pending, [], self.committed)
            return plans
        tried: list[tuple[PodSimulation, int, _Plan, list[dict[str, Any]]]] = []
        for plan in plans:
            claims = pending + ([plan.extra] if plan.extra is not None else [])
            sim, outcome = self._attempt(label, plan.pod, claims)
            sim.subjects = subjects + ([plan.subject] if plan.subject is not None else [])
            if outcome is not None and outcome.feasible:
                self._commit(plan.pod, claims, outcome)
                return sim
            tried.append((sim, plan.weight, plan, claims))
        undecided = [t for t in tried if t[0].feasible is None]
        sim, _, plan, claims = undecided[0] if undecided else max(tried, key=lambda t: t[1])
        if sim.feasible is False:
            sim.reason += self.notes.note(plan.pod, claims, self.pins, self.committed)
        return sim

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _objs(items: dict[tuple[str, str], Loaded]) -> dict[tuple[str, str], dict[str, Any]]:
        return {k: v.obj for k, v in items.items()}

    def _pod_claim_subject(self, origin: Origin, pc: PodClaim, claim: dict[str, Any]) -> Subject:
        loaded = self.data.claims.get(key_of(claim))
        if loaded is not None and not pc.generated:
            return claim_subject(loaded.source, loaded.line, loaded.obj)
        paths = {r: str(pc.path) for r in request_names(claim)}
        return origin.subject(claim_key(claim), paths, str(pc.path))

    def _plans(self, origin: Origin, pod: dict[str, Any]) -> list[_Plan] | PodSimulation:
        """How the Pod is tried: as is, or — with extended resources backed by DRA — once per group of
        nodes that serve the same resources through DRA (Filter builds the special claim per node),
        each restricted to its nodes; or the final answer when no node can provide a resource."""
        if not self.mapping or not ext.needs_special_claim(pod, self.mapping):
            return [_Plan(pod)]
        ns, _ = key_of(pod)
        label = _label(pod)
        existing = ext.find_extended_claim(pod, [c for k, c in self.claims.items() if k[0] == ns])
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
                    subjects=[origin.subject()],
                )
        wanted = ext.requested_resources(pod)
        if not self.data.nodes:
            return [self._plan(origin, pod, ext.node_variant(wanted, self.mapping, None).dra, existing, None)]
        groups: dict[frozenset[str], list[str]] = {}
        unfit: list[str] = []
        for n, node in enumerate(sorted(self.data.nodes, key=name_of)):
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
                subjects=[origin.subject()],
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
        weight = len(nodes) if nodes is not None else len(self.data.nodes)
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
        return _Plan(pod, sc.claim, origin.subject(claim_key(sc.claim), paths), weight)

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
            self.claims[key_of(stored)] = stored
            add_generated(self.generated, stored)
            self.committed.append(stored)


def request_names(claim: dict[str, Any]) -> list[str]:
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    return [r.get("name", "") for r in requests if isinstance(r, dict)]


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


__all__ = [
    "PodSimulation",
    "not_checked",
    "SimulateOptions",
    "SimulationReport",
    "Subject",
    "feasibility_findings",
    "feasibility_violations",
    "simulate",
]
