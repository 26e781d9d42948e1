"""Text rendering of a simulation: validation errors of objects left out (and of objects simulated in
spite of errors that do not change what can be allocated), objects the deadline left unchecked, then one block per
bare Pod or workload (its Pods indented), in input order, and each claim no Pod uses. Every line is passed
through `one_line`: names and messages from the input cannot print lines of their own."""

from __future__ import annotations

from collections.abc import Sequence

from webhook.model.report import ObjectResult, unread_line
from webhook.model.text import compact, one_line
from webhook.simulate import PodSimulation, SimulationReport, not_checked
from webhook.simulate.workloads import WorkloadReport


def _result_line(r: object) -> str:
    request = getattr(r, "request", "")
    where = f"{getattr(r, 'driver', '')}/{getattr(r, 'pool', '')}/{getattr(r, 'device', '')}"
    extras = []
    if getattr(r, "admin_access", None):
        extras.append("adminAccess")
    capacity = getattr(r, "consumed_capacity", None)
    if capacity:
        extras.append("consumedCapacity " + ", ".join(f"{k}={v}" for k, v in sorted(capacity.items())))
    share = getattr(r, "share_id", None)
    if share:
        extras.append(f"shareID {share}")
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"    {request}: {where}{tail}"


BINDING_TIMEOUT = 600  # seconds: DynamicResourcesArgs.bindingTimeout's default


def _binding_lines(results: Sequence[object]) -> list[str]:
    """Devices with binding conditions: the Pod is not bound until the driver reports them."""
    pending = [r for r in results if getattr(r, "binding_conditions", None)]
    if not pending:
        return []
    lines = []
    for r in pending:
        device = f"{getattr(r, 'driver', '')}/{getattr(r, 'pool', '')}/{getattr(r, 'device', '')}"
        conds = ", ".join(getattr(r, "binding_conditions", None) or [])
        fails = ", ".join(getattr(r, "binding_failure_conditions", None) or [])
        lines.append(
            f"    binding conditions pending on {device}: {conds}"
            + (f" (failure conditions: {fails})" if fails else "")
        )
    lines.append(
        "    the scheduler waits in PreBind until every binding condition is True in the claim's "
        f"status.devices (up to bindingTimeout, {BINDING_TIMEOUT} s by default); a failure condition or the "
        "timeout clears the allocation and the Pod is scheduled again"
    )
    return lines


def _node_selector(sel: object) -> str:
    """`metadata.name In [n1]; gpu=a100` from an allocation's nodeSelector (none: usable on every node)."""
    if not isinstance(sel, dict) or not sel.get("nodeSelectorTerms"):
        return "none (the allocation can be used on every node)"
    terms = []
    for term in sel["nodeSelectorTerms"]:
        reqs = [*(term.get("matchFields") or []), *(term.get("matchExpressions") or [])]
        terms.append(", ".join(f"{r.get('key')} {r.get('operator')} {r.get('values') or []}" for r in reqs))
    return " OR ".join(terms)


CLAIM_VERDICTS = {
    "busy": "busy (it fits once devices are freed or untainted)",
    "unsatisfiable": "unsatisfiable",
    "undecided": "undecided (allocator budget or deadline exhausted)",
}


def render_pod(sim: PodSimulation) -> list[str]:
    if sim.pod:
        title = f"Pod {sim.pod}"
    elif sim.claim:
        title = f"ResourceClaim {sim.claim} (no Pod in the input uses it)"
    else:
        title = "Claims (allocated together for one Pod)"
    if sim.feasible:
        on = f" on node {sim.node}" if sim.node else " (on any node)"
        if sim.claim:  # not allocated: a Pod that uses it would be placed where it fits
            on = f" now (it fits on node {sim.node})" if sim.node else " now (on any node)"
        lines = [f"{title}: feasible{on}"]
        lines.extend(
            f"  claim {c}: allocated already (shared; the Pod goes where it is usable)" for c in sim.reused
        )
        if not sim.claims and not sim.reused:
            lines.append("  nothing to allocate through DRA")
        for c in sim.claims:
            ns = f"{c.namespace}/" if c.namespace else ""
            lines.append(f"  claim {ns}{c.name}")
            lines.extend(_result_line(r) for r in c.results)
            selector = _node_selector(c.allocation.get("nodeSelector"))
            lines.append(f"    node selector: {selector}")
            lines.extend(_binding_lines(c.results))
        return lines
    if sim.verdict in CLAIM_VERDICTS:
        verdict = CLAIM_VERDICTS[sim.verdict]
    elif sim.feasible is False:
        verdict = "infeasible"
    elif sim.internal:
        verdict = "internal error (no answer)"
    else:
        verdict = "undecided (allocator budget or deadline exhausted)"
    lines = [f"{title}: {verdict}"]
    if sim.reason:
        lines.append(f"  {sim.reason}")
    return lines


def _error_lines(o: ObjectResult) -> list[str]:
    ns = f"{o.namespace}/" if o.namespace else ""
    label = f" [{o.kind or '?'} {ns}{o.name or '?'}]" if o.kind or o.name else ""  # else not an object
    out = []
    for v in o.violations:
        if v.severity.value != "error":
            continue
        where = f"{v.field}: " if v.field else ""
        out.append(f"{o.source}:{v.line or o.line}: error {v.rule}: {where}{compact(v.message)}{label}")
    return out


def _dropped_lines(report: SimulationReport) -> list[str]:
    """The fields stored-state objects were kept without (`schema.unknown-field-dropped`: a driver's
    client-go wrote a field this version does not know): warnings, the objects are simulated."""
    out = []
    for o in report.validation.objects:
        ns = f"{o.namespace}/" if o.namespace else ""
        for v in o.violations:
            if v.rule == "schema.unknown-field-dropped":
                out.append(
                    f"{o.source}:{v.line or o.line}: warning {v.rule}: {v.field}: {compact(v.message)}"
                    f" [{o.kind or '?'} {ns}{o.name or '?'}]"
                )
    return out + [""] if out else out


def render_workload(w: WorkloadReport) -> list[str]:
    """A workload's header (how many Pods, and their verdicts), then its Pods indented."""
    e = w.expansion
    counts = w.counts()
    verdicts = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    lines = [
        f"{w.label()} ({w.source}:{w.line}): {e.count} Pod(s) ({e.how}){': ' + verdicts if verdicts else ''}"
    ]
    for node, why in e.skipped:
        lines.append(f"  no Pod on node {node}: {why}")
    for sim in w.sims:
        lines.extend("  " + line for line in render_pod(sim))
    if w.same_as_last:
        lines.append(f"  {w.rest_reason}")
    return lines


def render_text(report: SimulationReport, deadline_seconds: float | None = None) -> str:
    """The simulation as text; two or more files the deadline left unread are one line
    (`deadline_seconds`: the run's, named there)."""
    lines: list[str] = []
    for lo in report.left_out:
        if lo.result is not None:
            lines.extend(_error_lines(lo.result))
    if report.left_out:
        lines.append(
            f"{len(report.left_out)} object(s) with validation errors were left out of the simulation (the "
            "API server would reject them, or they repeat a name)"
        )
        lines.append("")
    kept = report.kept_with_errors()
    for o in kept:
        lines.extend(_error_lines(o))
    if kept:
        lines.append(
            f"{len(kept)} object(s) with errors were simulated all the same: their errors do not change "
            "what can be allocated (the API server accepts them and the scheduler handles what they describe, "
            "or they are the first of several definitions of a name)"
        )
        lines.append("")
    lines.extend(_dropped_lines(report))
    unchecked = not_checked(report.validation)
    unread = [o for o in unchecked if o.unread]
    for o in unchecked:
        ns = f"{o.namespace}/" if o.namespace else ""
        label = f"{o.kind or '?'} {ns}{o.name or '?'}" if o.kind else "file"
        violations = o.violations
        if len(unread) > 1 and o.unread:
            if o is unread[0]:
                lines.append(unread_line(unread, deadline_seconds))
            violations = violations[1:]  # its own "not read" finding is on the line above
        for v in violations:
            if v.rule == "input.not-checked":
                lines.append(f"{o.source}:{o.line}: {v.severity.value} {v.rule}: {v.message} [{label}]")
    if report.validation.not_checked:
        lines.append(
            "the deadline of the run passed before the input was checked: "
            "every Pod and claim is undecided (exit 3)"
        )
        lines.append("")
    if not report.pods and not report.workloads and not report.validation.not_checked:
        lines.append("nothing to simulate: the input has no Pods, workloads or unallocated ResourceClaims")
    starts: dict[int, list[WorkloadReport]] = {}
    for w in report.workloads:
        starts.setdefault(w.start, []).append(w)
    for i, sim in enumerate(report.pods):
        for w in starts.pop(i, []):
            lines.extend(render_workload(w))
        if sim.workload is None:
            lines.extend(render_pod(sim))
    for position in sorted(starts):
        for w in starts[position]:
            lines.extend(render_workload(w))
    return "\n".join(one_line(line) for line in lines) + "\n"  # input cannot start a line of its own
