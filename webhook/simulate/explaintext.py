"""Text rendering of `draguard explain pod`: the answer in one line, then under headings why, per claim
and request (and per node: what holds the devices, the taints), the changes verified to make the Pod
fit, how far the search went, and the objects left out. Every line is passed through `one_line`: names
and messages from the cluster cannot print lines of their own."""

from __future__ import annotations

from webhook.model.text import one_line
from webhook.simulate.explainpod import ClaimReport, NodeReport, PodExplanation
from webhook.simulate.podchanges import Change

CHANGES_SHOWN = 10  # changes listed in text (JSON lists every one)
LEFT_OUT_SHOWN = 10
VERDICT_WORDS = {
    "fits-alone": "fits on its own (the failure is in combination with the others)",
    "busy": "busy: matching devices exist, but other claims hold them",
    "tainted": "tainted: matching devices exist, but carry taints it does not tolerate",
    "unsatisfiable": "unsatisfiable: no device on any node could ever serve it",
}
HEADLINES = {
    "fits": "fits now",
    "does-not-fit": "does not fit",
    "undecided": "undecided",
    "not-pending": "not pending",
    "no-dra": "uses no DRA",
    "left-out": "invalid",
}


def render_text(out: PodExplanation) -> str:
    head = HEADLINES[out.status]
    if out.status == "does-not-fit" and out.verdict:
        head += f" ({out.verdict})"
    lines = [f"Pod {out.pod}: {head}", f"  {out.summary}"]
    if out.reason and out.status != "fits" and out.reason not in out.summary:
        lines += ["", "Why", f"  {out.reason}"]
        if out.reason_on_empty and out.reason_on_empty != out.reason:
            lines.append(f"  with every device free and untainted: {out.reason_on_empty}")
    if out.claims and out.status == "does-not-fit":
        lines += ["", "Claims"]
        for c in out.claims:
            lines += _claim(c, out.reason)
    if out.search is not None:
        lines += [
            "",
            "Changes that make it fit (each verified by running the allocator again; smallest first)",
        ]
        lines += _changes(out.changes) or ["  none found: no single change of those tried makes it fit"]
        s = out.search
        tail = f"; cut short: {s.cut_short}" if s.cut_short else ""
        lines.append(f"  ({s.tried} allocator run(s), {s.fits} change(s) fit{tail})")
    if out.left_out and out.status in ("does-not-fit", "undecided"):
        lines += ["", "Objects left out (invalid: draguard cannot use them)"]
        for lo in out.left_out[:LEFT_OUT_SHOWN]:
            lines.append(f"  {lo.label}: {lo.why}")
        if len(out.left_out) > LEFT_OUT_SHOWN:
            lines.append(f"  and {len(out.left_out) - LEFT_OUT_SHOWN} more (-o json lists them all)")
    return "".join(one_line(line) + "\n" for line in lines)


def _claim(c: ClaimReport, reason: str) -> list[str]:
    if not c.claim:
        return [f"  pod claim {c.pod_claim}: {c.problem}"]
    name = c.claim or f"(pod claim {c.pod_claim})"
    what = [f"pod claim {c.pod_claim}"] if c.pod_claim and c.claim else []
    what.append(c.origin())
    if c.allocated:
        what.append("allocated already")
    lines = [f"  claim {name} ({'; '.join(what)})"]
    if c.problem:
        lines.append(f"    {c.problem}")
    for r in c.requests:
        needs = "all matching devices" if r.needs == "all" else f"{r.needs} device(s)"
        lines.append(f"    request {r.request} (class {r.device_class}, {needs}): {VERDICT_WORDS[r.verdict]}")
        if r.verdict != "fits-alone" and r.cause and r.cause not in reason:  # else said under "Why"
            lines.append(f"      {r.cause}")
        for n in r.nodes:
            lines += _node(n)
    return lines


def _node(n: NodeReport) -> list[str]:
    blocked = ", ".join(f"{count} {why}" for why, count in n.blocked.items())
    state = "fits here on its own" if n.fits else f"{n.left} usable"
    lines = [
        f"      node {n.node or '(any)'}: {n.matching} matching, {state}"
        + (f"; blocked: {blocked}" if blocked else "")
    ]
    for h in n.held_by:
        users = f", reserved for {', '.join(h.reserved_for)}" if h.reserved_for else ", reserved for nothing"
        lines.append(f"        held by claim {h.claim}: {h.devices} device(s){users}")
    for t in n.taints:
        value = f"={t.get('value')}" if t.get("value") else ""
        lines.append(f"        taint {t.get('key')}{value}:{t.get('effect')} (not tolerated)")
    return lines


def _changes(changes: list[Change]) -> list[str]:
    lines = []
    for i, c in enumerate(changes[:CHANGES_SHOWN], 1):
        where = f"on node {c.node}" if c.node else "on any node"
        lines.append(f"  {i}. {c.description}: then it fits {where}")
        if c.kind != "release-claim":
            lines.append(f"     in {c.target}")
    if len(changes) > CHANGES_SHOWN:
        lines.append(f"  and {len(changes) - CHANGES_SHOWN} more (-o json lists them all)")
    return lines
