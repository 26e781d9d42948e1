"""DeviceTaintRule admission: the rule's blast radius (webhook.engine.blastradius) on the snapshot, as a
warning and the audit annotation `taint-blast-radius`; above the policy's `taints:` limits a rule is
denied unless it carries every acknowledgement annotation the policies name, set to "true".

An UPDATE that leaves `spec` as stored is never denied (the stored rule already taints what it taints:
its finalizers or labels can still change); a `status` UPDATE is not looked at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.request import Request
from webhook.admission.wire import ClusterSnapshot
from webhook.engine.blastradius import BlastRadius, blast_radius
from webhook.model.violation import Severity, Violation

RULE = "admission.taint-blast-radius"
AUDIT_KEY = "taint-blast-radius"


@dataclass(frozen=True)
class TaintCheck:
    radius: BlastRadius
    warning: str  # the counts, one line
    audit: str  # the counts as compact JSON
    denied: Violation | None


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return ann if isinstance(ann, dict) else {}


def audit_value(radius: BlastRadius, acknowledged: bool = False) -> str:
    data: dict[str, Any] = {"effect": radius.effect, "everyDevice": radius.every_device, **radius.counts()}
    if acknowledged:
        data["acknowledged"] = True
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def check(
    req: Request,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
) -> TaintCheck | None:
    """The blast radius of a DeviceTaintRule being created or updated (None: not one, or not served)."""
    if req.kind.kind != "DeviceTaintRule" or req.operation not in ("CREATE", "UPDATE") or req.sub_resource:
        return None
    if not config.profile.enabled("DRADeviceTaintRules"):
        return None
    view = snapshot.state
    radius = blast_radius(obj, view.inventory, snapshot.objects("ResourceClaim"), memo=view.memo())
    limits = config.policy.taints
    over = limits.over(radius.devices, radius.evicted)
    unchanged = old is not None and old.get("spec") == obj.get("spec")
    ann = _annotations(obj)
    acknowledged = bool(limits.acknowledge) and all(ann.get(k) == "true" for k in limits.acknowledge)
    denied = None
    warning = radius.summary()
    if over and not unchanged and not acknowledged:
        keys = ", ".join(f'{k}: "true"' for k in limits.acknowledge)
        denied = Violation(
            RULE,
            Severity.ERROR,
            "spec.deviceSelector",
            f"Forbidden: {warning}: above the policy's limits ({'; '.join(over)}); to apply it anyway, "
            f"set the annotation {keys}",
        )
    elif over:
        why = "acknowledged" if acknowledged else "spec unchanged"
        warning += f" (above the policy's limits: {'; '.join(over)}; {why})"
    return TaintCheck(radius, f"{warning} ({RULE})", audit_value(radius, acknowledged and bool(over)), denied)
