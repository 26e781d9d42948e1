"""The node-aware rule of DRAResourceClaimGranularStatusAuthorization, enforced by the webhook for clusters
without it (1.35, or the gate off) when the policy sets `rbac: {enforceNodeBoundStatus: true}`
(docs/rbac.md). Ported from the API server's status authorization (pkg/registry/resource): a ResourceClaim
status UPDATE from a node-bound service account — a `system:serviceaccount:` user whose token carries
exactly one valid `authentication.kubernetes.io/node-name` — may not change `status.allocation` or
`status.reservedFor` (the `resourceclaims/binding` part, the scheduler's), and may change `status.devices`
entries (added, removed or changed, keyed by driver, pool, device and shareID) only of a claim whose new
allocation is on its node (a nodeSelector of exactly one term with exactly one field requirement
`metadata.name In [node]`): what `associated-node:` permits. Anyone else is RBAC's business."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.admission.request import Request
from webhook.model import names
from webhook.model.violation import Severity, Violation

RULE = "admission.node-bound-status"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
SA_PREFIX = "system:serviceaccount:"


def bound_node(req: Request) -> str:
    """The node a service account's bound token ties the request to ('' when the user is none)."""
    if not req.username.startswith(SA_PREFIX):
        return ""
    ns, sep, name = req.username[len(SA_PREFIX) :].partition(":")
    if not (ns and sep and name) or ":" in name:
        return ""
    values = req.extra(NODE_NAME_KEY)
    if len(values) != 1 or names.dns_subdomain(values[0]):
        return ""
    return values[0]


def allocated_node(status: Mapping[str, Any]) -> str:
    """The one node an allocation names, as upstream reads it ('' for none or several)."""
    alloc = status.get("allocation")
    sel = alloc.get("nodeSelector") if isinstance(alloc, Mapping) else None
    terms = sel.get("nodeSelectorTerms") if isinstance(sel, Mapping) else None
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return ""
    fields, exprs = terms[0].get("matchFields"), terms[0].get("matchExpressions")
    if exprs or not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], Mapping):
        return ""
    f = fields[0]
    values = f.get("values")
    if f.get("key") != "metadata.name" or f.get("operator") != "In" or not isinstance(values, list):
        return ""
    return str(values[0]) if len(values) == 1 else ""


def _semantic(v: Any) -> Any:
    """A value as equality.Semantic compares it: an empty list or map is the same as none."""
    if isinstance(v, Mapping):
        return {k: _semantic(x) for k, x in v.items() if x is not None and x != [] and x != {}}
    if isinstance(v, list):
        return [_semantic(x) for x in v]
    return v


def _same(a: Any, b: Any) -> bool:
    if a == b:  # the common case, without normalizing
        return True
    return bool(_semantic({"v": a}) == _semantic({"v": b}))


def _key(d: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(d.get("driver", "")),
        str(d.get("pool", "")),
        str(d.get("device", "")),
        str(d.get("shareID") or ""),
    )


def modified_drivers(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
    """The drivers whose `status.devices` entries were added, removed or changed, sorted."""
    before = {_key(d): d for d in old.get("devices") or [] if isinstance(d, Mapping)}
    out: set[str] = set()
    for d in new.get("devices") or []:
        if not isinstance(d, Mapping):
            continue
        prev = before.pop(_key(d), None)
        if prev is None or not _same(prev, d):
            out.add(str(d.get("driver", "")))
    out.update(str(d.get("driver", "")) for d in before.values())
    return sorted(out)


def _status(obj: dict[str, Any] | None) -> Mapping[str, Any]:
    status = obj.get("status") if obj else None
    return status if isinstance(status, Mapping) else {}


def check(req: Request, enforce: bool) -> Violation | None:
    """The denial of a node-bound service account's status update beyond its node (None: allowed, or
    not such a request)."""
    if not enforce or req.kind.kind != "ResourceClaim" or req.sub_resource != "status":
        return None
    if req.operation != "UPDATE" or req.object is None or req.old_object is None:
        return None
    node = bound_node(req)
    if not node:
        return None
    new, old = _status(req.object), _status(req.old_object)
    who = f"{req.username}, bound to node {node}"
    for field in ("allocation", "reservedFor"):
        if not _same(new.get(field), old.get(field)):
            return Violation(
                RULE,
                Severity.ERROR,
                f"status.{field}",
                f"Forbidden: {who}, may not change status.allocation or status.reservedFor (resourceclaims/"
                "binding: the scheduler's and allocation controllers'); policy rbac.enforceNodeBoundStatus",
            )
    drivers = modified_drivers(new, old)
    on = allocated_node(new)
    if drivers and on != node:
        where = f"allocated to node {on}" if on else "not allocated to a single node"
        return Violation(
            RULE,
            Severity.ERROR,
            "status.devices",
            f"Forbidden: {who}, may not change status.devices of driver(s) {', '.join(drivers)} of a claim "
            f"{where} (associated-node: only claims on its own node); policy rbac.enforceNodeBoundStatus",
        )
    return None
