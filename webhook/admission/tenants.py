"""Tenant device policies at admission: the checks of `webhook.simulate.tenants` against the cluster
snapshot, answered by each entry's mode, and the required selectors added by the mutating endpoint.

Validating (CREATE and UPDATE of ResourceClaims and ResourceClaimTemplates, Pod CREATE; never a `status`
update): a finding of an entry in mode Enforce denies (422 at its field, the message naming the entry
`<policy>/<tenant>`), Warn answers a warning, Audit only the audit annotation `tenant-audit`. A finding
draguard could not decide (a device count it cannot tell) is a warning, never a denial. On UPDATE a
finding the stored object already has, no worse (same rule, entry, field; a count not larger), is a
warning: an object stored before its policy can still be updated.

Mutating (CREATE of ResourceClaims and ResourceClaimTemplates): the `requiredSelector` of every entry in
mode Enforce with enforcement Mutate covering the namespace is added, as `{cel: {expression}}`, to every
`exactly` request and `firstAvailable` subrequest that does not carry that exact expression yet (`add`
operations after the version-skew removals; nothing else changes, so a second pass adds nothing). A
(sub)request that would then have more than 32 selectors is not changed: the request is denied at its
`selectors`, naming the entries. The validating endpoint checks the result like any other (a request the
mutating webhook did not see is denied there in mode Enforce: the selector is missing). Mode Warn and Audit
entries change nothing (the validating endpoint warns or annotates). Not on UPDATE: a claim's spec is
immutable. A Pod in a namespace whose Enforce entry forbids extended resources is not translated
(`--extended-resources translate`), so the validating endpoint sees and denies what it asks for.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.patch import pointer
from webhook.admission.request import Request
from webhook.admission.validating import RATCHETED, namespace_labels
from webhook.admission.wire import ClusterSnapshot
from webhook.config.tenants import Tenant
from webhook.engine.allcount import all_mode_count
from webhook.model.budget import Deadline
from webhook.model.plain import as_dict
from webhook.model.text import clip
from webhook.model.violation import Severity, Violation
from webhook.rules.claim import MAX_SELECTORS
from webhook.simulate.tenants import (
    CLAIM_KINDS,
    REQUIRED_SELECTOR,
    TenantFinding,
    TenantWorld,
    check_object,
    covering,
    has_selector,
    not_worse,
    required_expressions,
    targets,
)

AUDIT_KEY = "tenant-audit"
MUTATED_KEY = "tenant-selectors"
CHECKED = (*CLAIM_KINDS, "Pod")


@dataclass
class TenantAnswer:
    errors: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)
    audit: dict[str, str] = field(default_factory=dict)


def _namespace(req: Request, obj: Mapping[str, Any]) -> str:
    ns = as_dict(obj.get("metadata")).get("namespace")
    return req.namespace or (ns if isinstance(ns, str) and ns else "default")


def covered(
    req: Request, obj: Mapping[str, Any], snapshot: ClusterSnapshot, config: AdmissionConfig
) -> tuple[str, list[Tenant]]:
    """The request's namespace and the entries in force that cover it."""
    ns = _namespace(req, obj)
    if not config.policy.tenants:
        return ns, []
    return ns, covering(config.policy.tenants, ns, namespace_labels(snapshot, ns))


def world(
    snapshot: ClusterSnapshot,
    deadline: Deadline | None,
    templates: Mapping[tuple[str, str], dict[str, Any]] | None = None,
) -> TenantWorld:
    """The snapshot as the checks read it (`templates`: ones it does not hold yet)."""
    stored = snapshot.objects("ResourceClaimTemplate")
    return TenantWorld(
        claims=snapshot.objects("ResourceClaim"),
        templates=ChainMap(dict(templates), dict(stored)) if templates else stored,
        classes=snapshot.objects("DeviceClass").values(),
        all_count=lambda r: all_mode_count(snapshot.state, r, deadline=deadline),
    )


def validate(
    req: Request,
    stored: dict[str, Any],
    old: dict[str, Any] | None,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline | None = None,
    templates: Mapping[tuple[str, str], dict[str, Any]] | None = None,
) -> TenantAnswer:
    """What the entries covering the request's namespace answer for `stored` (the object as the API
    server stores it; `old` the stored object on UPDATE): see the module docstring."""
    out = TenantAnswer()
    if (
        req.kind.kind not in CHECKED
        or req.sub_resource != ""
        or req.kind.group not in ("", "resource.k8s.io")
    ):
        return out
    ns, tenants = covered(req, stored, snapshot, config)
    if not tenants:
        return out
    w = world(snapshot, deadline, templates)
    policy = config.policy
    found = [f for f in check_object(stored, ns, tenants, w) if policy.enabled(f.rule)]
    before: list[TenantFinding] = []
    if found and req.operation == "UPDATE" and old is not None:
        before = check_object(old, ns, tenants, w)
    audited: list[str] = []
    for f in found:
        ratcheted = bool(before) and not_worse(f, before)
        if f.tenant.mode == "Audit":
            audited.append(f"{f.tenant.id} {f.rule} {f.field}")
        elif f.tenant.mode == "Warn" or f.unknown or ratcheted:
            out.warnings.append(
                Violation(f.rule, Severity.WARNING, f.field, f.text() + (RATCHETED if ratcheted else ""))
            )
        else:
            out.errors.append(Violation(f.rule, Severity.ERROR, f.field, f.text()))
    if audited:
        out.audit[AUDIT_KEY] = "; ".join(dict.fromkeys(audited))
    return out


@dataclass
class Mutation:
    ops: list[dict[str, Any]] = field(default_factory=list)
    denied: list[Violation] = field(default_factory=list)
    audit: dict[str, str] = field(default_factory=dict)


def selector_ops(
    obj: dict[str, Any], required: Mapping[str, list[str]], limit: int = MAX_SELECTORS
) -> Mutation:
    """The `add` operations that put every expression of `required` (expression → the ids of the entries
    requiring it) into every request and subrequest of a ResourceClaim or template `obj` lacking it; a
    (sub)request that would have more than `limit` selectors is not changed but named in `denied`."""
    out = Mutation()
    for at, loc, r in targets(obj):
        current = r.get("selectors")
        if current is not None and not isinstance(current, list):
            continue  # not a list: the API server rejects the object anyway, nothing to add to
        missing = [e for e in required if not has_selector(r, e)]
        if not missing:
            continue
        have = len(current or [])
        if have + len(missing) > limit:
            ids = sorted({i for e in missing for i in required[e]})
            out.denied.append(
                Violation(
                    REQUIRED_SELECTOR,
                    Severity.ERROR,
                    str(at.child("selectors")),
                    f"Too many: {have + len(missing)}: must have at most {limit} items: this request has "
                    f"{have} selectors and tenant {', '.join(ids)} requires {len(missing)} more "
                    f"({', '.join(repr(clip(e)) for e in missing)}); not added: remove a selector to make "
                    "room, or add the required one yourself",
                )
            )
            continue
        added = [{"cel": {"expression": e}} for e in missing]
        if current is None:  # absent (or null): the whole list
            out.ops.append({"op": "add", "path": pointer((*loc, "selectors")), "value": added})
        else:
            out.ops.extend(
                {"op": "add", "path": pointer((*loc, "selectors", "-")), "value": a} for a in added
            )
    return out


def mutate(req: Request, obj: dict[str, Any], snapshot: ClusterSnapshot, config: AdmissionConfig) -> Mutation:
    """The selectors to add to `obj` (the request's object after the earlier operations), or why not
    (module docstring)."""
    if (
        req.operation != "CREATE"
        or req.sub_resource != ""
        or req.kind.group != "resource.k8s.io"
        or req.kind.kind not in CLAIM_KINDS
        or not config.policy.tenants
    ):
        return Mutation()
    _, tenants = covered(req, obj, snapshot, config)
    expressions = required_expressions(t for t in tenants if config.policy.enabled(REQUIRED_SELECTOR))
    if not expressions:
        return Mutation()
    required = {
        e: [
            t.id
            for t in tenants
            if t.required_selector is not None and t.required_selector.expression == e and t.mode == "Enforce"
        ]
        for e in expressions
    }
    out = selector_ops(obj, required)
    if out.ops and not out.denied:
        out.audit[MUTATED_KEY] = ",".join(sorted({i for ids in required.values() for i in ids}))
    return out


def forbids_extended(
    req: Request, obj: dict[str, Any], snapshot: ClusterSnapshot, config: AdmissionConfig
) -> bool:
    """Whether an entry in mode Enforce forbids extended resources in the Pod's namespace."""
    if not config.policy.tenants:
        return False
    _, tenants = covered(req, obj, snapshot, config)
    return any(t.mode == "Enforce" and t.extended_resources is False for t in tenants)
