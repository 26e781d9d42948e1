"""`draguard simulate`: load manifests, build the cluster state from the ones the API server would accept,
and allocate the claims of each Pod in input order — bare Pods, and the Pods each workload's controller
would create (webhook.simulate.workloads) — each placed as the scheduler places it (webhook.simulate.
placement) and added to the state, as the scheduler binds Pods one after another; then each unallocated
claim no Pod uses, on its own, as admission answers a claim CREATE (webhook.simulate.verdict)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.engine import Budget
from webhook.io.findinglines import assign_lines
from webhook.model.budget import Deadline, OutOfBudget, check_seconds
from webhook.model.report import Report
from webhook.simulate.findings import feasibility_findings, feasibility_violations
from webhook.simulate.leftout import LeftOut
from webhook.simulate.load import Inputs, Loaded, load
from webhook.simulate.placement import DEFAULT_PLACEMENT, Placement, Spread
from webhook.simulate.podclaims import claims_named, key_of
from webhook.simulate.run import (
    DEADLINE_PASSED,
    PodRun,
    PodSimulation,
    Subject,
    World,
    claim_subject,
    label_of,
    origin_of,
    pod_label,
)
from webhook.simulate.served import LeftOutNotes
from webhook.simulate.subjects import Origin
from webhook.simulate.workloads import WorkloadReport, expand, run_workload, slice_nodes
from webhook.state import ClusterState
from webhook.validate import InputOptions
from webhook.validate.clusterinput import ClusterInput

EXIT_FEASIBLE, EXIT_INFEASIBLE, EXIT_UNDECIDED = 0, 1, 3
RUN_SECONDS = 60.0  # default deadline of a whole simulation: loading, validation and every Pod


@dataclass(frozen=True, kw_only=True)
class SimulateOptions(InputOptions):
    budget: Budget | None = None
    jobs: int | None = 1  # worker processes for loading (None or 0: all usable cores)
    stdin_text: str | None = None  # `-` was already read
    deadline_seconds: float = RUN_SECONDS  # the whole run (load, validation, allocations): see simulate()
    placement: Placement = DEFAULT_PLACEMENT  # `--placement`: where a Pod goes among the nodes it fits on

    def __post_init__(self) -> None:
        object.__setattr__(self, "deadline_seconds", check_seconds(self.deadline_seconds, "deadline seconds"))


@dataclass
class SimulationReport:
    pods: list[PodSimulation]
    validation: Report
    workloads: list[WorkloadReport] = field(default_factory=list)  # in input order
    left_out: list[LeftOut] = field(default_factory=list)  # objects the simulation did not use, and why
    texts: dict[str, str] = field(default_factory=dict, repr=False)  # inputs that cannot be read again

    @property
    def exit_code(self) -> int:
        """1 if anything is infeasible (or left out of the simulation, or draguard failed on it), else 3
        if anything is undecided or was not checked before the deadline, else 0. Errors that leave
        nothing out (cross-object findings the scheduler handles itself) change no answer, nor this; a
        claim no Pod uses that is busy (fits once devices are freed) is a warning, as in admission."""
        if (
            any((p.feasible is False and p.verdict != "busy") or p.internal for p in self.pods)
            or self.left_out
        ):
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


# Narrows what a simulation decides once its state is built (`validate`'s open world: webhook.simulate.scope)
Scope = Callable[[Inputs, ClusterState, Deadline], None]


def simulate(
    inputs: Sequence[str] | Sequence[dict[str, Any]] | bytes,
    options: SimulateOptions | None = None,
    deadline: Deadline | None = None,
    progress: Callable[[int, int], None] | None = None,
    loaded: Inputs | None = None,
    scope: Scope | None = None,
    independent: bool = False,
) -> SimulationReport:
    """Simulate scheduling of the input's Pods — bare ones and those its workloads' controllers create —
    and ask each unallocated claim no Pod uses on its own, against its cluster state.

    `inputs` are paths (files, directories, `-`), already parsed objects, or one request body (bytes).
    The whole call — reading, validation, building the state, every Pod — ends by
    `options.deadline_seconds` from its start, or by `deadline` if that is earlier (an admission
    request's); each Pod's allocation also has `options.budget`. What the deadline cuts short is never a
    verdict: objects not validated are `input.not-checked` in `validation` (then every Pod and claim is
    undecided: the cluster may be incomplete); Pods not decided are undecided. Raises `UsageError` for a
    bad version/gate and `UnreadableInput` for a missing path.

    `loaded`: the input already loaded and validated (`validate` reads it once; `inputs` is then not
    read, and the caller has left the cluster's own Pods and claims out). `scope(data, state, deadline)`
    may drop Pods and claims from `data.work` / `data.pending` before any is tried. `independent`: each
    Pod and claim is decided on its own, on the input's devices all free and untainted — whether it can
    ever fit there (`validate`'s open world: a repository's examples are not applied together, and the
    allocations and taints of the moment are the cluster's, not the repository's)."""
    options = options or SimulateOptions()
    deadline = Deadline.after(options.deadline_seconds).earliest(deadline)
    # the input is the cluster as stored: claims carry their allocations in status
    ctx = Context(
        profile=load_profile(options.version, dict(options.gates)),
        deadline=deadline,
        as_stored=True,
        runtime_config=options.runtime_config,
        whole_cluster=bool(options.cluster),
    )
    cluster = ClusterInput()
    if loaded is not None:
        data = loaded
    else:
        if options.cluster and not isinstance(inputs, bytes) and all(isinstance(i, str) for i in inputs):
            cluster = ClusterInput.of([str(i) for i in inputs], options.cluster)
            inputs = [*(str(i) for i in inputs), *cluster.files]
        data = load(
            inputs,
            ctx,
            options.jobs,
            options.policy,
            options.stdin_text,
            options.max_bytes,
            progress,
            cluster.files,
            options.exclude,
        )
    running = [p.obj for p in data.pods]  # the cluster's Pods too: they take cpu and memory on their nodes
    if cluster.files:  # the cluster's Pods, workloads and pending claims are its own, not the input's
        data.pods = [p for p in data.pods if p.source not in cluster]
        data.work = [p for p in data.work if p.source not in cluster]
        data.pending = [p for p in data.pending if p.source not in cluster]
        cluster.drop_from(data.report)
    if data.report.not_checked:
        when = f"while the input was loaded and validated ({data.report.not_checked} not checked)"
        return _lined(_too_late(data, when), data, options)
    try:
        state = ClusterState.from_objects(data.state, ctx.profile, deadline)
    except OutOfBudget:
        return _lined(_too_late(data, "while the cluster state was built"), data, options)
    if scope is not None:
        scope(data, state, deadline)
    world = World.of(data)
    notes = LeftOutNotes(data, ctx, options.budget or Budget(), deadline)
    budget = options.budget or Budget()
    spread = None
    if options.placement == "spread" and not independent:  # independent: nothing is committed, no node fills
        spread = Spread(data.nodes)
        spread.bind_running(running)
    run = PodRun(
        world,
        state,
        ctx,
        budget,
        deadline,
        commit=not independent,
        empty_cluster=independent,
        notes=notes,
        spread=spread,
    )
    run.referenced = claims_named(data.work, data.claims)
    sims: list[PodSimulation] = []
    workloads: list[WorkloadReport] = []
    nodes = slice_nodes(data.state)
    for item in data.work:
        if item.kind == "Pod":
            sims.append(run.guarded_pod(item.obj, origin_of(item)))
            continue
        report = WorkloadReport(item.source, item.line, expand(item.obj, data.nodes, nodes))
        report.start = len(sims)
        try_pod = functools.partial(run.guarded_pod, origin=_workload_origin(item, report), workload=report)
        run_workload(report, try_pod, lambda: run.commits)
        sims.extend(report.sims)
        workloads.append(report)
    sims.extend(run.guarded_claim(item) for item in _unused_claims(data, run))
    return _lined(SimulationReport(sims, data.report, workloads, data.left_out), data, options)


def _lined(report: SimulationReport, data: Inputs, options: SimulateOptions) -> SimulationReport:
    """Every finding at the line of its field (stdin's and a request body's text are kept for it, in
    `report.texts`, also for findings a caller adds later: `assign_lines(..., report.texts)`)."""
    report.texts = data.texts
    assign_lines(report.validation, data.texts, max_bytes=options.max_bytes)
    return report


def _unused_claims(data: Inputs, run: PodRun) -> list[Loaded]:
    """The input's unallocated claims that no Pod of the input uses (nor allocated meanwhile)."""
    out = []
    for item in data.pending:
        key = key_of(item.obj)
        current = run.claims.get(key) or {}
        if key not in run.referenced and not (current.get("status") or {}).get("allocation"):
            out.append(item)
    return out


def _workload_origin(item: Loaded, report: WorkloadReport) -> Origin:
    e = report.expansion
    return Origin(item.source, item.line, e.kind, e.namespace, e.name, e.prefix)


def _too_late(data: Inputs, when: str) -> SimulationReport:
    why = f"{DEADLINE_PASSED} {when}"
    sims: list[PodSimulation] = []
    workloads: list[WorkloadReport] = []
    nodes = slice_nodes(data.state)
    for item in data.work:
        if item.kind == "Pod":
            sims.append(PodSimulation.cut_short(label_of(item), why, subjects=[origin_of(item).subject()]))
            continue
        report = WorkloadReport(item.source, item.line, expand(item.obj, data.nodes, nodes))
        report.start = len(sims)
        if report.expansion.count:
            first = report.expansion.pod(0)
            subjects = [_workload_origin(item, report).subject()]
            sim = PodSimulation.cut_short(pod_label(first), why, subjects=subjects, workload=report)
            report.sims.append(sim)
            report.same_as_last = report.expansion.count - 1
            report.rest_reason = f"{report.same_as_last} more Pod(s): undecided as well"
            sims.append(sim)
        workloads.append(report)
    for item in data.pending:
        claim = claim_subject(item)
        sims.append(
            PodSimulation.cut_short(None, why, subjects=[claim], claim=claim.claim, verdict="undecided")
        )
    return SimulationReport(sims, data.report, workloads, data.left_out)


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
