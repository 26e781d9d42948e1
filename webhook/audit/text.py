"""An audit for people: one line per result that is not a pass (failures first), then the totals."""

from __future__ import annotations

from webhook.audit.results import AuditReport, AuditResult

ORDER = {k: n for n, k in enumerate(("fail", "error", "warn", "skip", "pass"))}


def _line(r: AuditResult) -> str:
    ns = r.resource.get("namespace")
    who = f"{r.resource.get('kind')} {ns + '/' if ns else ''}{r.resource.get('name')}"
    where = f"{r.field}: " if r.field else ""
    return f"{r.result.upper():5} {who}: {where}{r.message} ({r.rule})"


def render_text(report: AuditReport) -> str:
    shown = sorted((r for r in report.results if r.result != "pass"), key=lambda r: ORDER[r.result])
    lines = [_line(r) for r in shown]
    c = report.counts()
    lines.append(
        f"audited {report.resources} object(s) and {report.pending_pods} Pod(s) pending on DRA "
        f"({report.explained} explained): {c['fail']} fail, {c['error']} error, {c['warn']} warn, "
        f"{c['skip']} skip, {c['pass']} pass"
    )
    if report.policies:
        lines.append(f"policies in force: {', '.join(report.policies)}")
    lines += [f"invalid DraguardPolicy (not in force): {p}" for p in report.invalid_policies]
    if report.incomplete:
        lines.append(f"incomplete: {report.incomplete}")
    return "\n".join(lines) + "\n"
