"""Ratcheting, as the webhook does it: a stored object is judged as an UPDATE that changes nothing (the
object is its own `oldObject`) would be by the validating endpoint (`webhook.admission.validating.check`,
against a snapshot of the audited cluster). What that UPDATE denies is a failure; every other error the
object has (on a CREATE of it as stored, the cross-object findings of the whole cluster included) is an
existing violation the UPDATE lets stand: a warning."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.request import GroupVersionKind, Request
from webhook.admission.validating import check
from webhook.admission.wire import ClusterSnapshot
from webhook.model.budget import Deadline
from webhook.model.violation import Severity, Violation

DRA_GROUP = "resource.k8s.io"
RATCHETED_KINDS = {  # what the validating endpoint checks on UPDATE: kind -> resource
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
}
Key = tuple[str, str, str]


def key(v: Violation) -> Key:
    return (v.rule, v.field, v.message)


@dataclass
class Judged:
    """An object's findings sorted: `denied` errors an UPDATE that changes nothing would deny (fail),
    `existing` errors it lets stand (warn), `warnings` (warn)."""

    denied: list[Violation] = field(default_factory=list)
    existing: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)


def update_request(kind: str, obj: dict[str, Any], sub_resource: str = "") -> Request:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    return Request(
        uid="draguard-audit",
        kind=GroupVersionKind(DRA_GROUP, "v1", kind),
        resource=RATCHETED_KINDS[kind],
        sub_resource=sub_resource,
        request_kind=None,
        name=str(meta.get("name") or ""),
        namespace=ns if isinstance(ns, str) and ns else None,
        operation="UPDATE",
        username="system:serviceaccount:draguard-system:draguard-audit",
        object=obj,
        old_object=obj,
        dry_run=True,
    )


def judge(
    kind: str,
    obj: dict[str, Any] | None,
    found: list[Violation],
    snapshot: Callable[[], ClusterSnapshot],
    config: AdmissionConfig,
    deadline: Deadline | None,
) -> Judged:
    """Sort `found` (the object's findings as the pipeline reports them, policy applied) by what an UPDATE
    of `obj` with itself as old object would deny. Only an object with errors is sent through the
    endpoint (one without has nothing to ratchet: an UPDATE rule compares the old object with the new
    one, and they are equal). A ResourceClaim is sent twice, as an UPDATE of its main resource (which
    judges spec and metadata) and of `status` (status and metadata), as the API server splits them.
    Kinds the endpoint does not check on UPDATE (a Pod: CREATE only) deny nothing. `snapshot` is called
    the first time one is needed. Raises `DeadlinePassed` when `deadline` passes."""
    out = Judged()
    errors = [v for v in found if v.severity is Severity.ERROR]
    out.warnings = [v for v in found if v.severity is Severity.WARNING]
    denied: dict[Key, Violation] = {}
    if errors and obj is not None and kind in RATCHETED_KINDS:
        subs = ("", "status") if kind == "ResourceClaim" else ("",)
        for sub in subs:
            for v in check(update_request(kind, obj, sub), snapshot(), config, deadline).errors:
                denied.setdefault(key(v), v)
    known = {key(v) for v in errors}
    for v in errors:
        (out.denied if key(v) in denied else out.existing).append(v)
    out.denied += [v for k, v in denied.items() if k not in known]
    return out
