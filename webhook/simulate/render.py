"""Text rendering of a simulation: validation errors of objects left out, objects the deadline left
unchecked, then one block per Pod. Every line is passed through `one_line`: names and messages from the
input cannot print lines of their own."""

from __future__ import annotations

from collections.abc import Sequence

from webhook.model.text import compact, one_line
from webhook.simulate import PodSimulation, SimulationReport, not_checked


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


def render_pod(sim: PodSimulation) -> list[str]:
    title = f"Pod {sim.pod}" if sim.pod else "Claims (allocated together for one Pod)"
    if sim.feasible:
        on = f" on node {sim.node}" if sim.node else " (on any node)"
        lines = [f"{title}: feasible{on}"]
        if not sim.claims:
            lines.append("  nothing to allocate through DRA")
        for c in sim.claims:
            ns = f"{c.namespace}/" if c.namespace else ""
            lines.append(f"  claim {ns}{c.name}")
            lines.extend(_result_line(r) for r in c.results)
            selector = _node_selector(c.allocation.get("nodeSelector"))
            lines.append(f"    node selector: {selector}")
            lines.extend(_binding_lines(c.results))
        return lines
    if sim.feasible is False:
        verdict = "infeasible"
    elif sim.internal:
        verdict = "internal error (no answer)"
    else:
        verdict = "undecided (allocator budget or deadline exhausted)"
    lines = [f"{title}: {verdict}"]
    if sim.reason:
        lines.append(f"  {sim.reason}")
    return lines


def render_text(report: SimulationReport) -> str:
    lines: list[str] = []
    invalid = [o for o in report.validation.objects if o.errors]
    for o in invalid:
        ns = f"{o.namespace}/" if o.namespace else ""
        label = f" [{o.kind or '?'} {ns}{o.name or '?'}]" if o.kind or o.name else ""  # else not an object
        for v in o.violations:
            if v.severity.value != "error":
                continue
            where = f"{v.field}: " if v.field else ""
            lines.append(f"{o.source}:{v.line or o.line}: error {v.rule}: {where}{compact(v.message)}{label}")
    if invalid:
        lines.append(f"{len(invalid)} object(s) with validation errors were left out of the simulation")
        lines.append("")
    unchecked = not_checked(report.validation)
    for o in unchecked:
        ns = f"{o.namespace}/" if o.namespace else ""
        label = f"{o.kind or '?'} {ns}{o.name or '?'}" if o.kind else "file"
        for v in o.violations:
            if v.rule == "input.not-checked":
                lines.append(f"{o.source}:{o.line}: {v.severity.value} {v.rule}: {v.message} [{label}]")
    if report.validation.not_checked:
        lines.append(
            "the deadline of the run passed before the input was checked: "
            "every Pod and claim is undecided (exit 3)"
        )
        lines.append("")
    if not report.pods and not report.validation.not_checked:
        lines.append("nothing to simulate: the input has no Pods and no unallocated ResourceClaims")
    for sim in report.pods:
        lines.extend(render_pod(sim))
    return "\n".join(one_line(line) for line in lines) + "\n"  # input cannot start a line of its own
