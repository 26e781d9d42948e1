"""The validating endpoint's checks of one object: the validation pipeline (`webhook.validate`) with the
old object on UPDATE, the cross-object invariants against the cluster snapshot, and ratcheting.

- UPDATE rules see the stored object (`oldObject`, defaulted as stored) as `ctx.old`, as the CLI's
  update tables do. A ResourceClaim UPDATE of the main resource is judged on its spec and metadata
  (the API server copies `status` from the stored object), a `status` UPDATE on status and metadata
  (it copies `spec`): findings outside that scope are not the request's doing.
- Admin access: when the state holds the request's Namespace, `adminAccess: true` in a claim or
  template (and in a new allocation written through `status`) needs its label
  `resource.kubernetes.io/admin-access: "true"`, as the API server checks; without the Namespace the
  check is skipped (unknown is never a denial).
- Ratcheting: on UPDATE, an error the stored object already has (same rule, field and message) is
  reported as a warning, never a denial, so an object stored before a rule existed can still be
  updated (its finalizers removed, its status written).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.request import Request
from webhook.admission.wire import ClusterSnapshot
from webhook.apiserver.defaults import apply_defaults
from webhook.model.budget import Deadline
from webhook.model.plain import deep_copy
from webhook.model.violation import Severity, Violation
from webhook.rules.crossobject import violations_for
from webhook.validate import checked_object

# Kinds whose rules read the namespace's labels (admin access: `resource.kubernetes.io/admin-access`).
NAMESPACE_RULED = ("ResourceClaim", "ResourceClaimTemplate")
RATCHETED = " (the stored object already has this problem: not denied on update)"


@dataclass
class Findings:
    stored: dict[str, Any] | None  # the object as the API server stores it (None: cannot be decoded)
    old: dict[str, Any] | None = None  # the stored object on UPDATE, defaulted
    errors: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)


def _scoped(violations: list[Violation], req: Request) -> list[Violation]:
    if req.kind.kind != "ResourceClaim" or req.operation != "UPDATE":
        return violations
    if req.sub_resource == "status":
        return [v for v in violations if not (v.field == "spec" or v.field.startswith(("spec.", "spec[")))]
    return [v for v in violations if not (v.field == "status" or v.field.startswith(("status.", "status[")))]


def _stored_old(req: Request) -> dict[str, Any] | None:
    if req.operation != "UPDATE" or req.old_object is None:
        return None
    old = deep_copy(req.old_object)
    apply_defaults(old)
    return old


def namespace_labels(snapshot: ClusterSnapshot, namespace: str | None) -> dict[str, str] | None:
    """The labels of the request's Namespace when the state holds it (None: unknown, as offline)."""
    if not namespace:
        return None
    ns = snapshot.objects("Namespace").get(("", namespace))
    if ns is None:
        return None
    meta = ns.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if not isinstance(labels, dict):
        return {}
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)}


def _namespace(obj: dict[str, Any], req: Request) -> str | None:
    if req.namespace:
        return req.namespace
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) and ns else None


def _violations(
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    req: Request,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline | None,
) -> tuple[dict[str, Any] | None, list[Violation]]:
    policy = config.policy
    labels = namespace_labels(snapshot, _namespace(obj, req)) if req.kind.kind in NAMESPACE_RULED else None
    ctx = config.context(old=old, operation=req.operation, namespace_labels=labels, deadline=deadline)
    stored, found = checked_object(deep_copy(obj), ctx, policy)
    found = _scoped(found, req)
    if stored is not None and req.sub_resource != "status":
        meta = stored.get("metadata")
        if req.namespace and isinstance(meta, dict) and not meta.get("namespace"):
            meta["namespace"] = req.namespace  # the API server has set it; a hand-made review may not
        cross = violations_for(snapshot.state.inventory, stored, old)
        found.extend(policy.apply(list(cross)))
    return stored, found


def _key(v: Violation) -> tuple[str, str, str]:
    return (v.rule, v.field, v.message)


def check(
    req: Request, snapshot: ClusterSnapshot, config: AdmissionConfig, deadline: Deadline | None = None
) -> Findings:
    """Errors (deny) and warnings for `req.object` (CREATE/UPDATE of a handled kind). Raises
    `DeadlinePassed` when `deadline` passes while the rules run (costly CEL: between compilations)."""
    assert req.object is not None
    old = _stored_old(req)
    stored, found = _violations(req.object, old, req, snapshot, config, deadline)
    out = Findings(stored, old)
    for v in found:
        if v.severity is Severity.ERROR:
            out.errors.append(v)
        elif v.severity is Severity.WARNING:
            out.warnings.append(v)
    if out.errors and old is not None:
        # The stored object's own errors, judged as on its creation against the same snapshot.
        create = replace(req, operation="CREATE", old_object=None)
        _, before = _violations(old, None, create, snapshot, config, deadline)
        known = {_key(v) for v in before if v.severity is Severity.ERROR}
        kept: list[Violation] = []
        for v in out.errors:
            if _key(v) in known:
                out.warnings.append(Violation(v.rule, Severity.WARNING, v.field, v.message + RATCHETED))
            else:
                kept.append(v)
        out.errors = kept
    return out


def warning_text(v: Violation) -> str:
    """One warning line: `<field>: <message> (<rule id>)`."""
    where = f"{v.field}: " if v.field else ""
    return f"{where}{v.message} ({v.rule})"
