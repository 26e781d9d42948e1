"""`draguard taint preview`: a DeviceTaintRule's blast radius (webhook.engine.blastradius) on a cluster
read from files or listed live, and its text. The state is built as `draguard serve` builds it (a
`StateStore` of the loaded objects); the Pods are judged as upstream's eviction controller judges them
when the input holds Pod objects, else a claim's `reservedFor` is taken as is (as admission does)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.profile import Profile
from webhook.engine.blastradius import SAMPLE, BlastRadius, blast_radius, device_text, outcome
from webhook.simulate.load import Inputs
from webhook.simulate.podclaims import key_of
from webhook.state.store import StateStore


def preview(
    data: Inputs,
    rule: Mapping[str, Any],
    profile: Profile,
    limit: int = SAMPLE,
    pods: Mapping[tuple[str, str], dict[str, Any]] | None = None,
) -> BlastRadius:
    """The blast radius of `rule` on the loaded cluster; `pods`: the Pod objects (default: the input's,
    None when it has none)."""
    store = StateStore(profile)
    store.replace_all(data.state)
    snap = store.publish()
    if pods is None and data.pods:
        pods = {key_of(p.obj): p.obj for p in data.pods}
    view = snap.state
    return blast_radius(rule, view.inventory, snap.objects("ResourceClaim"), pods, view.memo(), limit)


def _when(seconds: int | None) -> str:
    o = outcome(seconds)
    return (
        "evicted now"
        if o == "evicted"
        else (f"evicted after {seconds}s" if o == "delayed" else "tolerates it")
    )


def render_text(r: BlastRadius, limit: int = SAMPLE) -> str:
    lines = [r.summary(), ""]
    lines.append(f"Devices tainted: {r.devices}")
    lines += [f"  {device_text(d)}" for d in r.sample[:limit]]
    if r.devices > len(r.sample[:limit]):
        lines.append(f"  ... and {r.devices - len(r.sample[:limit])} more")
    if r.effect != "NoExecute":
        return "\n".join(lines) + "\n"
    c = r.counts()
    lines += ["", f"Allocated claims holding them: {c['claims']}"]
    lines += [f"  {x.namespace}/{x.name}: {len(x.devices)} device(s), {_when(x.delay)}" for x in r.claims]
    for title, which in (
        ("Pods evicted now", "evicted"),
        ("Pods evicted after their tolerationSeconds", "delayed"),
        ("Pods tolerating the taint", "tolerating"),
    ):
        found = [p for p in r.pods if p.outcome == which]
        lines += ["", f"{title}: {len(found)}"]
        for p in found:
            after = f" (after {p.delay}s)" if which == "delayed" else ""
            lines.append(f"  {p.namespace}/{p.name}{after}: claim(s) {', '.join(p.claims)}")
    return "\n".join(lines) + "\n"
