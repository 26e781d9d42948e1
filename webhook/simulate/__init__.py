"""`draguard simulate`: load manifests, build the cluster state from the valid ones, and allocate the
claims of each Pod in file order (each success is added to the state, as the scheduler binds Pods one
after another); without Pods, all unallocated claims are allocated together for one anonymous Pod."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from webhook.context import Context
from webhook.convert.served import DEFAULT as DEFAULT_RUNTIME_CONFIG
from webhook.convert.served import RuntimeConfig
from webhook.engine import Budget
from webhook.io.files import MAX_FILE_BYTES
from webhook.model.budget import Deadline, OutOfBudget, check_seconds
from webhook.model.violation import Severity, Violation
from webhook.policy import Policy
from webhook.profile import DEFAULT_VERSION, load_profile
from webhook.report import Report
from webhook.rules.registry import RULES, declare
from webhook.simulate.load import Inputs, load
from webhook.simulate.run import (
    PodRun,
    PodSimulation,
    Subject,
    World,
    claim_subject,
    label_of,
    pod_subject,
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
    # the input is the cluster as stored: claims carry their allocations in status
    ctx = Context(
        profile=load_profile(options.version, dict(options.gates)),
        deadline=deadline,
        as_stored=True,
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
    world = World(
        claims={k: v.obj for k, v in data.claims.items()},
        templates={k: v.obj for k, v in data.templates.items()},
        nodes=data.nodes,
        classes=data.classes,
        loaded=data.claims,
        pending=data.pending,
        invalid=data.invalid,
    )
    run = PodRun(world, state, ctx, options.budget or Budget(), deadline)
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
        return [PodSimulation(label_of(p), None, reason=reason, subjects=[pod_subject(p)]) for p in data.pods]
    if data.pending:
        return [PodSimulation(None, None, reason=reason, subjects=[claim_subject(i) for i in data.pending])]
    return []


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
