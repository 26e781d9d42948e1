"""`draguard simulate`: load manifests, build the cluster state from the valid ones, and allocate the
claims of each Pod in file order (each success is added to the state, as the scheduler binds Pods one
after another); without Pods, all unallocated claims are allocated together for one anonymous Pod."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webhook.context import Context
from webhook.convert.served import DEFAULT as DEFAULT_RUNTIME_CONFIG
from webhook.convert.served import RuntimeConfig
from webhook.engine import Budget, ClaimResult, Outcome, allocate
from webhook.io.files import MAX_FILE_BYTES
from webhook.model.budget import Deadline, OutOfBudget, check_seconds
from webhook.model.path import Path
from webhook.model.text import listing
from webhook.model.violation import Severity, Violation
from webhook.policy import Policy
from webhook.profile import DEFAULT_VERSION, load_profile
from webhook.report import Report
from webhook.rules.registry import RULES, declare
from webhook.simulate import extended as ext
from webhook.simulate.load import Inputs, Loaded, load
from webhook.simulate.podclaims import (
    PodClaim,
    add_generated,
    index_generated,
    key_of,
    merge_node_selector,
    name_of,
    resolve_pod_claims,
)
from webhook.state import ClusterState

declare(
    "feasibility.infeasible",
    summary="`validate --feasibility`: the claim (or the Pod's claims) cannot be allocated on the cluster "
    "described by the input; the message is the allocator's explanation",
    field="spec.devices.requests[i]",
    kinds=("ResourceClaim", "Pod"),
    tag="alloc",
)
declare(
    "feasibility.undecided",
    summary="`validate --feasibility`: the allocator's step/time budget ran out before it could decide",
    field="spec.devices.requests[i]",
    severity=Severity.WARNING,
    kinds=("ResourceClaim", "Pod"),
    tag="alloc",
)

declare(
    "internal.engine-crash",
    summary="the allocation engine failed on this Pod or claim (a draguard bug, or a resource limit such "
    "as MemoryError): no answer for it; the other Pods are still simulated",
    field="",
    kinds=("ResourceClaim", "Pod"),
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
    runtime_config: RuntimeConfig = DEFAULT_RUNTIME_CONFIG  # --runtime-config: served beta/alpha versions

    def __post_init__(self) -> None:
        object.__setattr__(self, "deadline_seconds", check_seconds(self.deadline_seconds, "deadline seconds"))


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


@dataclass
class SimulationReport:
    pods: list[PodSimulation]
    validation: Report

    @property
    def exit_code(self) -> int:
        """1 if anything is infeasible (or left out for validation errors, or draguard failed on it),
        else 3 if anything is undecided or was not checked before the deadline, else 0."""
        if any(p.feasible is False or p.internal for p in self.pods) or self.validation.errors:
            return EXIT_INFEASIBLE
        if any(p.feasible is None for p in self.pods) or self.validation.not_checked:
            return EXIT_UNDECIDED
        return EXIT_FEASIBLE

    def to_dict(self) -> dict[str, Any]:
        invalid = [o.to_dict() for o in self.validation.objects if o.errors]
        out = {"pods": [p.to_dict() for p in self.pods], "invalid": invalid}
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
    """Simulate scheduling of the input's Pods (or its unallocated claims) against its cluster state.

    `inputs` are paths (files, directories, `-`), already parsed objects, or one request body (bytes).
    The whole call — reading, validation, building the state, every Pod — ends by
    `options.deadline_seconds` from its start, or by `deadline` if that is earlier (an admission
    request's); each Pod's allocation also has `options.budget`. What the deadline cuts short is never a
    verdict: objects not validated are `input.not-checked` in `validation` (then every Pod and claim is
    undecided: the cluster may be incomplete); Pods not decided are undecided. Raises `UsageError` for a
    bad version/gate and `UnreadableInput` for a missing path."""
    options = options or SimulateOptions()
    deadline = Deadline.after(options.deadline_seconds).earliest(deadline)
    ctx = Context(
        profile=load_profile(options.version, dict(options.gates)),
        deadline=deadline,
        runtime_config=options.runtime_config,
    )
    data = load(inputs, ctx, options.jobs, options.policy, options.stdin_text, options.max_bytes, progress)
    if data.report.not_checked:
        when = f"while the input was loaded and validated ({data.report.not_checked} not checked)"
        return SimulationReport(_too_late(data, when), data.report)
    try:
        state = ClusterState.from_objects(data.state, ctx.profile, deadline)
    except OutOfBudget:
        return SimulationReport(_too_late(data, "while the cluster state was built"), data.report)
    run = _Run(data, state, ctx, options.budget or Budget(), deadline)
    if data.pods:
        sims = [run.guarded(p) for p in data.pods]
    elif data.pending:
        sims = [run.guarded(None)]
    else:
        sims = []
    return SimulationReport(sims, data.report)


def _too_late(data: Inputs, when: str) -> list[PodSimulation]:
    reason = f"undecided: the deadline of the run passed {when}"
    if data.pods:
        return [PodSimulation(_label(p), None, reason=reason, subjects=[_pod_subject(p)]) for p in data.pods]
    if data.pending:
        return [PodSimulation(None, None, reason=reason, subjects=[_claim_subject(i) for i in data.pending])]
    return []


def _label(item: Loaded) -> str:
    ns, name = key_of(item.obj)
    return f"{ns}/{name}"


def _pod_subject(item: Loaded) -> Subject:
    ns, name = key_of(item.obj)
    return Subject(item.source, item.line, "Pod", ns, name)


def _claim_key(claim: dict[str, Any]) -> str:
    ns, name = key_of(claim)
    return f"{ns}/{name}"


def _request_paths(claim: dict[str, Any]) -> dict[str, str]:
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    base = Path("spec").child("devices").child("requests")
    return {r.get("name", ""): str(base.index(i)) for i, r in enumerate(requests) if isinstance(r, dict)}


def _claim_subject(item: Loaded) -> Subject:
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

    def guarded(self, item: Loaded | None) -> PodSimulation:
        """One Pod (None: the pending claims together), undecided once the run's deadline has passed;
        a failure of draguard on it is reported on it, and the run goes on with the next one."""
        subjects = (
            [_pod_subject(item)] if item is not None else [_claim_subject(i) for i in self.data.pending]
        )
        label = _label(item) if item is not None else None
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
        claims = [item.obj for item in self.data.pending]
        sim, outcome = self._attempt(None, None, claims)
        if outcome is not None and outcome.feasible:
            self._commit(None, claims, outcome)
        sim.subjects = [_claim_subject(item) for item in self.data.pending]
        return sim

    def pod(self, item: Loaded) -> PodSimulation:
        pod = item.obj
        ns, name = key_of(pod)
        label = f"{ns}/{name}"
        pod_subject = Subject(item.source, item.line, "Pod", ns, name)
        resolved = resolve_pod_claims(pod, self.claims, self.templates, self.data.invalid, self.generated)
        problems = [pc for pc in resolved if pc.problem]
        if problems:  # each entry's finding names its own problem; the reason lists a few
            at = [
                Subject(item.source, item.line, "Pod", ns, name, path=str(pc.path), message=pc.problem)
                for pc in problems
            ]
            reason = listing([pc.problem for pc in problems], "; ")
            return PodSimulation(label, False, reason=reason, subjects=at)
        pending: list[dict[str, Any]] = []
        subjects: list[Subject] = [pod_subject]
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
                self._commit(plan.pod, claims, outcome)
                return sim
            tried.append((sim, plan.weight))
        undecided = [sim for sim, _ in tried if sim.feasible is None]
        return undecided[0] if undecided else max(tried, key=lambda t: t[1])[0]

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _objs(items: dict[tuple[str, str], Loaded]) -> dict[tuple[str, str], dict[str, Any]]:
        return {k: v.obj for k, v in items.items()}

    def _pod_claim_subject(self, item: Loaded, pc: PodClaim, claim: dict[str, Any]) -> Subject:
        key = key_of(claim)
        loaded = self.data.claims.get(key)
        if loaded is not None and not pc.generated:
            return _claim_subject(loaded)
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
        existing = ext.find_extended_claim(pod, [c for k, c in self.claims.items() if k[0] == ns])
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
        if not self.data.nodes:
            return [self._plan(item, pod, ext.node_variant(wanted, self.mapping, None).dra, existing, None)]
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
        weight = len(nodes) if nodes is not None else len(self.data.nodes)
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
        from webhook.simulate.podclaims import generated_name

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
            self.claims[key_of(stored)] = stored
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


def _falls_short(entry: dict[str, Any]) -> bool:
    """An explanation entry whose last stage leaves fewer devices than the request needs."""
    stages, needs = entry.get("stages"), entry.get("needs")
    if not isinstance(stages, list) or not stages or not isinstance(needs, int):
        return False
    last = stages[-1]
    return isinstance(last, (list, tuple)) and len(last) == 2 and isinstance(last[1], int) and last[1] < needs


def feasibility_violations(sim: PodSimulation) -> list[tuple[Subject, Violation]]:
    """`validate --feasibility`: infeasible answers as errors, undecided ones as warnings, on the
    claim request (or Pod entry) that the explanation names. Linear in the subjects and the
    explanation: each finding carries its own problem or the Pod's (bounded) reason."""
    if sim.feasible:
        return []
    if sim.internal:
        rule = RULES["internal.engine-crash"]
        targets = [s for s in sim.subjects if not s.claim] or sim.subjects
        return [(s, Violation(rule.id, rule.severity, s.path, sim.reason)) for s in targets]
    rule = RULES["feasibility.infeasible" if sim.feasible is False else "feasibility.undecided"]
    message = sim.reason or sim.error or "the claims cannot be allocated"
    if sim.feasible is None and not message.startswith("undecided"):
        message = f"undecided (allocator budget exhausted): {message}"
    entries = [e for e in sim.explanation if isinstance(e.get("claim"), str) and e.get("claim")]
    short = [e for e in entries if _falls_short(e)]
    named = [(str(e["claim"]), str(e.get("request") or "").split("/", 1)[0]) for e in short or entries]
    by_claim: dict[str, list[Subject]] = {}
    for s in sim.subjects:
        if s.claim:
            by_claim.setdefault(s.claim, []).append(s)
    out: list[tuple[Subject, Violation]] = []
    seen: set[tuple[int, str]] = set()
    for claim, request in named:
        for s in by_claim.get(claim, ()):
            where = s.requests.get(request, s.path)
            if (id(s), where) not in seen:
                seen.add((id(s), where))
                out.append((s, Violation(rule.id, rule.severity, where, s.message or message)))
    if not out:
        targets = [s for s in sim.subjects if not s.claim] or sim.subjects
        for s in targets:
            out.append((s, Violation(rule.id, rule.severity, s.path, s.message or message)))
    return out


__all__ = [
    "PodSimulation",
    "not_checked",
    "SimulateOptions",
    "SimulationReport",
    "Subject",
    "feasibility_violations",
    "simulate",
]
