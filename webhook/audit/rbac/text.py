"""`draguard audit rbac`'s text output: each finding as subject ← binding → role, the rule, the hazard and
the fix; then the counts."""

from __future__ import annotations

from webhook.audit.rbac.checks import RbacReport


def render_text(report: RbacReport) -> str:
    mode = "on" if report.granular else "off (status writes are not authorized per driver)"
    lines = [f"granular status authorization: {mode}"]
    for f in report.findings:
        lines += [
            f"{f.severity.value}: {f.check}: {f.subject} via {f.binding} -> {f.role}, rule {f.rule.index} "
            f"{f.rule.text()}",
            f"  hazard: {f.hazard}",
            f"  fix: {f.fix}",
        ]
    lines += [f"warning: not judged (the API server would reject it): {u}" for u in report.unread]
    if report.admins:
        lines.append(f"cluster admins (every verb on everything, not judged): {', '.join(report.admins)}")
    c = report.counts()
    lines.append(
        f"{len(report.findings)} finding(s): {c['error']} error(s), {c['warning']} warning(s), {c['info']} "
        f"info; {report.built_in} grant(s) to the control plane's own identities not judged"
    )
    return "\n".join(lines) + "\n"
