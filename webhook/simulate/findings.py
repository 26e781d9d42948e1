"""`validate --feasibility`: a simulation's answers as findings on the input objects — an infeasible
claim or Pod is an error at the request (or Pod claim entry) the explanation names, an undecided one (or
a claim no Pod uses that is busy: it fits once devices are freed) a warning; the Pods of one workload
give one finding per place in its template, naming how many failed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhook.model.catalogue import RULES
from webhook.model.text import listing
from webhook.model.violation import Violation
from webhook.simulate.subjects import Subject

if TYPE_CHECKING:  # the run module imports this one's callers
    from webhook.simulate import SimulationReport
    from webhook.simulate.run import PodSimulation

OPEN_WORLD = "feasibility.open-world"


def _falls_short(entry: dict[str, Any]) -> bool:
    """An explanation entry whose last stage leaves fewer devices than the request needs."""
    stages, needs = entry.get("stages"), entry.get("needs")
    if not isinstance(stages, list) or not stages or not isinstance(needs, int):
        return False
    last = stages[-1]
    return isinstance(last, (list, tuple)) and len(last) == 2 and isinstance(last[1], int) and last[1] < needs


def feasibility_violations(sim: PodSimulation) -> list[tuple[Subject, Violation]]:
    """Infeasible answers of one PodSimulation as errors, undecided ones as warnings, on the claim
    request (or Pod entry) that the explanation names. Linear in the subjects and the explanation: each
    finding carries its own problem or the Pod's (bounded) reason."""
    if sim.feasible:
        return []
    if sim.internal:
        rule = RULES["internal.engine-crash"]
        targets = [s for s in sim.subjects if not s.claim] or sim.subjects
        return [(s, Violation(rule.id, rule.severity, s.path, sim.reason)) for s in targets]
    if sim.verdict == "busy":  # a claim no Pod uses that fits once devices are freed
        rule = RULES["feasibility.busy"]
    else:
        rule = RULES["feasibility.infeasible" if sim.feasible is False else "feasibility.undecided"]
    message = sim.reason or sim.error or "the claims cannot be allocated"
    if sim.feasible is None and sim.undecided_by is None and sim.verdict is None:
        message = f"undecided (allocator budget exhausted): {message}"
    entries = [e for e in sim.explanation if isinstance(e.get("claim"), str) and e.get("claim")]
    short = [e for e in entries if e.get("cause")] or [e for e in entries if _falls_short(e)]
    named = [(str(e["claim"]), str(e.get("request") or "").split("/", 1)[0]) for e in short or entries]
    by_claim: dict[str, list[Subject]] = {}
    for s in sim.subjects:
        if s.claim:
            by_claim.setdefault(s.claim, []).append(s)
    if not named and sim.error_claim:  # an allocation error about one claim (a CEL runtime error)
        named = [(sim.error_claim, "")]
    out: list[tuple[Subject, Violation]] = []
    seen: set[tuple[int, str]] = set()
    for claim, request in named:
        for s in by_claim.get(claim, ()):
            only = next(iter(s.requests.values())) if len(s.requests) == 1 else s.path
            where = s.requests.get(request, s.path) if request else only
            if (id(s), where) not in seen:
                seen.add((id(s), where))
                out.append((s, Violation(rule.id, rule.severity, where, s.message or message)))
    if not out:  # no request named: the claim the reason names (its own limits), else the Pod
        targets = (
            [s for s in sim.subjects if s.claim and f"claim {s.claim}:" in message]
            or [s for s in sim.subjects if not s.claim]
            or sim.subjects
        )
        for s in targets:
            out.append((s, Violation(rule.id, rule.severity, s.path, s.message or message)))
    return out


def feasibility_findings(report: SimulationReport) -> list[tuple[Subject, Violation]]:
    """Every finding of a SimulationReport: those of bare Pods and claims as they are; those of a
    workload's Pods — on the workload, or on a claim its Pods share — merged per (object, rule, field),
    with how many of its Pods they concern."""
    out: list[tuple[Subject, Violation]] = []
    merged: dict[tuple[Any, ...], tuple[int, Any, list[str]]] = {}  # key -> (position in out, workload, pods)
    for sim in report.pods:
        workload = getattr(sim, "workload", None)
        for subject, v in feasibility_violations(sim):
            if workload is None:
                out.append((subject, v))
                continue
            key = (
                subject.source,
                subject.line,
                subject.kind,
                subject.namespace,
                subject.name,
                v.rule,
                v.field,
            )
            if key in merged:
                merged[key][2].append(str(sim.pod))
                continue
            merged[key] = (len(out), workload, [str(sim.pod)])
            out.append((subject, v))
    for position, workload, pods in merged.values():
        subject, v = out[position]
        failing = len(pods)
        if workload.same_as_last and workload.sims and str(workload.sims[-1].pod) in pods:
            failing += workload.same_as_last
            pods = pods + [f"{workload.same_as_last} more like the last"]
        head = f"{failing} of {workload.expansion.count} Pod(s) of {workload.label()} ({listing(pods)})"
        out[position] = (subject, Violation(v.rule, v.severity, v.field, f"{head}: {v.message}"))
    return out
