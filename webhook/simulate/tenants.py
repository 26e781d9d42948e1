"""Tenant device policies enforced: which tenant entries (`spec.tenants[]` of the DraguardPolicies in force,
`webhook.config.tenants`) cover a namespace, and what an object in it does against them. The one code
path of the admission webhook (`webhook.admission.tenants`) and of `draguard validate --policy`
(`webhook.offline.tenants`); they differ only in where they look things up (`TenantWorld`) and in what
they do with a finding (deny, warn, annotate, report).

    covered = covering(policy.tenants, "team-a", {"team": "a"})
    for f in check_object(claim, "team-a", covered, world):
        f.rule, f.field, f.text()        # tenant.device-class, spec.devices.requests[0].exactly..., "...
                                         # (tenant gpu-tenants/team-a, mode Enforce)"

What is checked, per tenant entry covering the object's namespace:

- ResourceClaim, ResourceClaimTemplate (`spec.devices`, `spec.spec.devices`): every `exactly` request and
  every `firstAvailable` subrequest names an allowed DeviceClass (`tenant.device-class`) and carries the
  required selector, the exact expression (`tenant.required-selector`; offline, one the mutating webhook
  would add is an info, unless adding it makes more than 32 selectors); no `adminAccess: true` where the
  entry forbids it (`tenant.admin-access`); the devices the claim asks for are at most
  `maxDevicesPerClaim` (`tenant.max-devices-per-claim`).
- Pod (and a workload's Pod template, offline): the claims and templates it names (those the state or
  input holds) use allowed DeviceClasses only (`tenant.device-class`, at the reference); its claims
  together at most `maxDevicesPerPod` (`tenant.max-devices-per-pod`); no container asks for an extended resource a DeviceClass serves where
  the entry forbids them (`tenant.extended-resources`).

Counting devices: ExactCount is its `count` (default 1); a `firstAvailable` request the largest of its
subrequests (the allocator may settle on any); `allocationMode: All` what it would take on the cluster
state (`webhook.engine.allcount`; offline, the input's devices). What cannot be counted (no state, the
class unknown, a selector failing) is a finding with `unknown` set: a warning, never a denial. A Pod's
claims are those its `resourceClaimName` and `resourceClaimTemplateName` references name in the state
(or input); a reference to neither is not counted (`pod.unknown-claim` says so).

Namespaces: the API server gives every Namespace the label `kubernetes.io/metadata.name: <name>`, so it
is always known. A namespace whose other labels are unknown (the webhook's state or the input does not
hold it) is covered only by entries whose selectors read no other label: unknown is never a denial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webhook.config.tenants import Tenant
from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list, deep_copy
from webhook.model.quantity import parse_quantity
from webhook.model.text import clip
from webhook.model.violation import Severity
from webhook.model.workloads import pod_view, prefixed, template_of, template_prefix
from webhook.rules.claim import MAX_SELECTORS
from webhook.simulate import extended as ext

DEVICE_CLASS = "tenant.device-class"
REQUIRED_SELECTOR = "tenant.required-selector"
PER_CLAIM = "tenant.max-devices-per-claim"
PER_POD = "tenant.max-devices-per-pod"
ADMIN_ACCESS = "tenant.admin-access"
EXTENDED_RESOURCES = "tenant.extended-resources"
RULE_IDS = (ADMIN_ACCESS, DEVICE_CLASS, EXTENDED_RESOURCES, PER_CLAIM, PER_POD, REQUIRED_SELECTOR)

NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every Namespace, immutable
CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
LISTED = 5  # names listed in one message

# What a count for an `allocationMode: All` (sub)request is: a number, or None (unknown)
AllCount = Callable[[dict[str, Any]], "int | None"]


# -- which entries cover a namespace -----------------------------------------------------------------


def _selector_keys(t: Tenant) -> set[str]:
    keys: set[str] = set()
    selectors = [t.namespace_selector]
    if t.exclude is not None and t.exclude.selector is not None:
        selectors.append(t.exclude.selector)
    for s in selectors:
        keys.update(k for k, _ in s.match_labels)
        keys.update(r.key for r in s.match_expressions)
    return keys


def covering(tenants: Iterable[Tenant], namespace: str, labels: Mapping[str, str] | None) -> list[Tenant]:
    """The entries that cover `namespace` with these labels (None: unknown, see the module docstring)."""
    out = []
    for t in tenants:
        if labels is None:
            if not _selector_keys(t) <= {NAME_LABEL}:
                continue  # it reads a label nobody knows here: not decided, so not applied
            known: Mapping[str, str] = {NAME_LABEL: namespace}
        else:
            known = {**labels, NAME_LABEL: namespace}
        if t.applies_to(namespace, known):
            out.append(t)
    return out


# -- findings ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TenantFinding:
    """What an object does against one tenant entry. `detail` and `amount` are for ratcheting: an UPDATE
    is not denied for a finding the stored object has too (same rule, entry, field and detail) unless its
    amount grew (a device count)."""

    tenant: Tenant
    rule: str
    field: str
    message: str
    detail: str = ""
    amount: int = 0
    unknown: bool = False  # not decided (a count draguard could not tell): a warning at most
    added: bool = False  # a required selector the mutating webhook adds on create: an info

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.rule, self.tenant.id, self.field, self.detail)

    def text(self) -> str:
        """The message with the entry's id and mode."""
        return f"{self.message} (tenant {self.tenant.id}, mode {self.tenant.mode})"

    @property
    def severity(self) -> Severity:
        """Offline: the entry's mode (Enforce error, Warn warning, Audit info); unknown: a warning at most."""
        if self.tenant.mode == "Audit" or self.added:
            return Severity.INFO
        if self.tenant.mode == "Warn" or self.unknown:
            return Severity.WARNING
        return Severity.ERROR


def not_worse(new: TenantFinding, old: Iterable[TenantFinding]) -> bool:
    """Whether the stored object already had this finding at least as badly (ratcheting)."""
    return any(o.key == new.key and o.amount >= new.amount for o in old)


# -- what the checks look up -----------------------------------------------------------------------------


@dataclass
class TenantWorld:
    """Where the checks look things up: the cluster snapshot (admission) or the input (offline).

    `claims` and `templates` by (namespace, name); `classes` the DeviceClass objects (which extended
    resource names DRA serves); `all_count` how many devices an `allocationMode: All` (sub)request takes
    (None: unknown; no function: nothing can be counted)."""

    claims: Mapping[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    templates: Mapping[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    classes: Iterable[dict[str, Any]] = ()
    all_count: AllCount | None = None
    _mapping: dict[str, str] | None = None

    def served(self) -> dict[str, str]:
        """Extended resource name → the DeviceClass serving it."""
        if self._mapping is None:
            self._mapping = ext.class_mapping(self.classes)
        return self._mapping


# -- counting devices ---------------------------------------------------------------------------------


@dataclass
class Count:
    """Devices a claim asks for: at least `low`; `unknown` names what could not be counted."""

    low: int = 0
    parts: list[str] = field(default_factory=list)  # "<request>=<n>" for the message
    unknown: list[str] = field(default_factory=list)


def _one(r: dict[str, Any], world: TenantWorld) -> int | None:
    mode = r.get("allocationMode") or "ExactCount"
    if mode == "All":
        return world.all_count(r) if world.all_count is not None else None
    count = r.get("count")
    if count is None:
        return 1
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def count_devices(devices: Any, world: TenantWorld) -> Count:
    """How many devices a claim's `devices` ask for (see the module docstring)."""
    out = Count()
    for r in as_list(as_dict(devices).get("requests")):
        r = as_dict(r)
        name = clip(str(r.get("name") or "?"), 63)
        subs = [as_dict(s) for s in as_list(r.get("firstAvailable"))]
        if subs:
            counts = [_one(s, world) for s in subs]
            known = [c for c in counts if c is not None]
            n = max(known, default=0)
            if len(known) < len(counts):
                out.unknown.append(name)
        elif isinstance(r.get("exactly"), dict):
            c = _one(r["exactly"], world)
            if c is None:
                out.unknown.append(name)
            n = c or 0
        else:
            continue
        out.low += n
        out.parts.append(f"{name}={n}")
    return out


def _listing(parts: Sequence[str]) -> str:
    shown = ", ".join(parts[:LISTED])
    return shown + (f" and {len(parts) - LISTED} more" if len(parts) > LISTED else "")


# -- claims and templates ------------------------------------------------------------------------------


def claim_devices(obj: dict[str, Any]) -> tuple[Any, Path] | None:
    """(`devices`, its path) of a ResourceClaim or ResourceClaimTemplate; None for other kinds."""
    kind = obj.get("kind")
    spec = as_dict(obj.get("spec"))
    if kind == "ResourceClaim":
        return spec.get("devices"), Path("spec").child("devices")
    if kind == "ResourceClaimTemplate":
        return as_dict(spec.get("spec")).get("devices"), Path("spec").child("spec", "devices")
    return None


Location = tuple[str | int, ...]  # JSON Pointer steps (webhook.admission.patch)


def targets(obj: dict[str, Any]) -> Iterator[tuple[Path, Location, dict[str, Any]]]:
    """Every `exactly` request and `firstAvailable` subrequest of a ResourceClaim or template, with its
    field path and its location (a JSON Pointer's steps)."""
    found = claim_devices(obj)
    if found is None:
        return
    devices, base = found
    loc: Location = ("spec", "devices") if obj.get("kind") == "ResourceClaim" else ("spec", "spec", "devices")
    for i, r in enumerate(as_list(as_dict(devices).get("requests"))):
        at = base.child("requests").index(i)
        r = as_dict(r)
        if isinstance(r.get("exactly"), dict):
            yield at.child("exactly"), (*loc, "requests", i, "exactly"), r["exactly"]
        for j, sub in enumerate(as_list(r.get("firstAvailable"))):
            if isinstance(sub, dict):
                yield at.child("firstAvailable").index(j), (*loc, "requests", i, "firstAvailable", j), sub


def has_selector(request: dict[str, Any], expression: str) -> bool:
    """Whether a (sub)request carries the CEL selector `expression`, exactly as written."""
    for s in as_list(request.get("selectors")):
        cel = as_dict(as_dict(s).get("cel"))
        if cel.get("expression") == expression:
            return True
    return False


def with_selectors(obj: dict[str, Any], expressions: Sequence[str]) -> dict[str, Any]:
    """A copy of a claim or template with `expressions` added to every (sub)request lacking them, as the
    mutating webhook adds them (a request it would not change, for too many selectors, unchanged)."""
    out = deep_copy(obj)
    for _, _, r in targets(out):
        current = r.get("selectors")
        if current is not None and not isinstance(current, list):
            continue
        missing = [e for e in expressions if not has_selector(r, e)]
        if missing and len(current or []) + len(missing) <= MAX_SELECTORS:
            r["selectors"] = [*(current or []), *({"cel": {"expression": e}} for e in missing)]
    return out


def _missing_selector(
    t: Tenant, expression: str, at: Path, r: dict[str, Any], namespace: str, added: list[str] | None
) -> TenantFinding:
    """A (sub)request without the selector `t` requires; `added`: the expressions the mutating webhook
    adds on create (offline: the manifest is changed, not denied, unless that makes too many)."""
    where = str(at.child("selectors"))
    sel = f"{{cel: {{expression: {clip(expression)!r}}}}}"
    if added is not None and expression in added:
        have = len(as_list(r.get("selectors")))
        more = [e for e in added if not has_selector(r, e)]
        if have + len(more) <= MAX_SELECTORS:
            return TenantFinding(
                t,
                REQUIRED_SELECTOR,
                where,
                f'the admission webhook adds the selector {sel} on create in namespace "{namespace}"',
                detail=expression,
                added=True,
            )
        return TenantFinding(
            t,
            REQUIRED_SELECTOR,
            where,
            f"Too many: {have + len(more)}: must have at most {MAX_SELECTORS} items: the admission webhook "
            f'must add the selector {sel} in namespace "{namespace}" but the request has {have} selectors '
            "already: it denies the object instead; remove a selector to make room, or add it yourself",
            detail=expression,
        )
    how = (
        "the mutating webhook adds it on create: was it skipped?"
        if t.required_selector is not None and t.required_selector.enforcement == "Mutate"
        else "add it to the request's selectors"
    )
    return TenantFinding(
        t,
        REQUIRED_SELECTOR,
        where,
        f'Required value: in namespace "{namespace}" every request and subrequest must carry the selector '
        f"{sel} ({how})",
        detail=expression,
    )


def _claim_checks(
    obj: dict[str, Any], namespace: str, tenants: Sequence[Tenant], world: TenantWorld, mutated: bool
) -> list[TenantFinding]:
    found = claim_devices(obj)
    if found is None:
        return []
    devices, base = found
    added = required_expressions(tenants) if mutated else None
    out: list[TenantFinding] = []
    count: Count | None = None
    for t in tenants:
        for at, _, r in targets(obj):
            cls = r.get("deviceClassName")
            allowed = t.allowed_device_classes
            if allowed is not None and isinstance(cls, str) and cls not in allowed:
                listed = _listing(sorted(f'"{clip(c)}"' for c in allowed)) if allowed else "none"
                out.append(
                    TenantFinding(
                        t,
                        DEVICE_CLASS,
                        str(at.child("deviceClassName")),
                        f'Forbidden: DeviceClass "{clip(cls)}" may not be used in namespace "{namespace}" '
                        f"(allowed: {listed})",
                        detail=cls,
                    )
                )
            rs = t.required_selector
            if rs is not None and not has_selector(r, rs.expression):
                out.append(_missing_selector(t, rs.expression, at, r, namespace, added))
            if t.admin_access is False and r.get("adminAccess") is True:
                out.append(
                    TenantFinding(
                        t,
                        ADMIN_ACCESS,
                        str(at.child("adminAccess")),
                        f'Forbidden: admin access to devices is not allowed in namespace "{namespace}"',
                    )
                )
        limit = t.max_devices_per_claim
        if limit is not None:
            if count is None:
                count = _claim_count(obj, devices, added, world)
            out.extend(_limit(t, PER_CLAIM, str(base.child("requests")), count, limit, "claim", namespace))
    return out


def _claim_count(obj: dict[str, Any], devices: Any, added: Sequence[str] | None, world: TenantWorld) -> Count:
    """The devices a claim asks for; with `added` (offline), once the mutating webhook has added those
    selectors (an `allocationMode: All` request then takes fewer)."""
    if added:
        found = claim_devices(with_selectors(obj, added))
        devices = found[0] if found is not None else devices
    return count_devices(devices, world)


def _limit(
    t: Tenant, rule: str, where: str, count: Count, limit: int, what: str, namespace: str
) -> list[TenantFinding]:
    per = "maxDevicesPerClaim" if what == "claim" else "maxDevicesPerPod"
    if count.low > limit:
        return [
            TenantFinding(
                t,
                rule,
                where,
                f"Forbidden: this {what} asks for {count.low} devices ({_listing(count.parts)}): namespace "
                f'"{namespace}" allows at most {limit} ({per})',
                amount=count.low,
            )
        ]
    if count.unknown:
        return [
            TenantFinding(
                t,
                rule,
                where,
                f"cannot tell how many devices {_listing(count.unknown)} (allocationMode All, or a class or "
                f"device state unknown here) would take; the rest ask for {count.low}, namespace "
                f'"{namespace}" allows at most {limit} ({per}): not denied',
                detail="unknown",
                unknown=True,
            )
        ]
    return []


# -- Pods ------------------------------------------------------------------------------------------------


def pod_count(
    pod: dict[str, Any], namespace: str, world: TenantWorld, added: Sequence[str] | None = None
) -> Count:
    """The devices of a Pod's claims the world holds, together (`added`: see `_claim_count`)."""
    out = Count()
    for entry in as_list(as_dict(pod.get("spec")).get("resourceClaims")):
        entry = as_dict(entry)
        name = clip(str(entry.get("name") or "?"), 63)
        claim_name, template_name = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
        obj = None
        if isinstance(claim_name, str):
            obj = world.claims.get((namespace, claim_name))
        elif isinstance(template_name, str):
            obj = world.templates.get((namespace, template_name))
        if obj is None:
            continue  # not known here: pod.unknown-claim reports it
        found = claim_devices(obj)
        if found is None:
            continue
        c = _claim_count(obj, found[0], added, world)
        out.low += c.low
        out.parts.append(f"{name}={c.low}")
        out.unknown.extend(f"{name}/{u}" for u in c.unknown)
    return out


def _pod_checks(
    pod: dict[str, Any],
    namespace: str,
    tenants: Sequence[Tenant],
    world: TenantWorld,
    mutated: bool,
    prefix: str = "",
) -> list[TenantFinding]:
    out: list[TenantFinding] = []
    count: Count | None = None
    added = required_expressions(tenants) if mutated else None
    for t in tenants:
        limit = t.max_devices_per_pod
        if limit is not None:
            count = count if count is not None else pod_count(pod, namespace, world, added)
            where = prefixed(prefix, "spec.resourceClaims") if prefix else "spec.resourceClaims"
            out.extend(_limit(t, PER_POD, where, count, limit, "Pod", namespace))
        if t.allowed_device_classes is not None:
            out.extend(_pod_classes(pod, namespace, t, world, prefix))
        if t.extended_resources is False:
            out.extend(_extended(pod, namespace, t, world, prefix))
    return out


def _pod_classes(
    pod: dict[str, Any], namespace: str, t: Tenant, world: TenantWorld, prefix: str
) -> list[TenantFinding]:
    """The DeviceClasses of the claims and templates a Pod names (those the world holds) that `t` does not
    allow: one finding per reference, at the reference."""
    allowed = t.allowed_device_classes
    assert allowed is not None
    out: list[TenantFinding] = []
    for k, entry in enumerate(as_list(as_dict(pod.get("spec")).get("resourceClaims"))):
        entry = as_dict(entry)
        for key, kind, index in (
            ("resourceClaimName", "ResourceClaim", world.claims),
            ("resourceClaimTemplateName", "ResourceClaimTemplate", world.templates),
        ):
            name = entry.get(key)
            obj = index.get((namespace, name)) if isinstance(name, str) else None
            if obj is None:
                continue
            used = sorted(
                {
                    c
                    for _, _, r in targets(obj)
                    if isinstance(c := r.get("deviceClassName"), str) and c not in allowed
                }
            )
            if not used:
                continue
            at = f"spec.resourceClaims[{k}].{key}"
            quoted = [f'"{clip(c)}"' for c in used]
            listed = _listing(sorted(f'"{clip(c)}"' for c in allowed)) if allowed else "none"
            out.append(
                TenantFinding(
                    t,
                    DEVICE_CLASS,
                    prefixed(prefix, at) if prefix else at,
                    f'Forbidden: {kind} "{clip(str(name))}" uses DeviceClass {_listing(quoted)}, '
                    f'which may not be used in namespace "{namespace}" (allowed: {listed})',
                    detail=",".join(used),
                )
            )
    return out


def _nonzero(qty: Any) -> bool:
    try:
        return not parse_quantity(qty).is_zero()
    except (ValueError, TypeError):
        return False


def _extended(
    pod: dict[str, Any], namespace: str, t: Tenant, world: TenantWorld, prefix: str
) -> list[TenantFinding]:
    served = world.served()
    out: list[TenantFinding] = []
    containers, n_init = ext.all_containers(pod)
    for i, c in enumerate(containers):
        requested = ext.container_requests(c)
        for resource, qty in requested.items():
            if not isinstance(resource, str) or resource not in served or not _nonzero(qty):
                continue
            part = (
                "requests" if resource in as_dict(as_dict(c.get("resources")).get("requests")) else "limits"
            )
            at = str(ext.container_path(i, n_init).child("resources").child(part).key(resource))
            out.append(
                TenantFinding(
                    t,
                    EXTENDED_RESOURCES,
                    prefixed(prefix, at) if prefix else at,
                    f'Forbidden: extended resource {clip(resource)} is served by DeviceClass "{served[resource]}" '
                    f'(DRA): namespace "{namespace}" may not use DRA devices through extended resources; use '
                    "a ResourceClaim",
                    detail=resource,
                )
            )
    return out


# -- any object ------------------------------------------------------------------------------------------


def check_object(
    obj: dict[str, Any],
    namespace: str,
    tenants: Sequence[Tenant],
    world: TenantWorld,
    mutated: bool = False,
) -> list[TenantFinding]:
    """What `obj` (as stored: defaulted) in `namespace` does against the entries `tenants` (those that
    cover it: `covering`). ResourceClaims, ResourceClaimTemplates, Pods and workloads' Pod templates;
    nothing for other kinds. `mutated`: `obj` is a manifest the mutating webhook will see on create
    (offline), so a required selector it adds is an info (`added`), not a missing one."""
    if not tenants:
        return []
    kind = obj.get("kind")
    if kind in CLAIM_KINDS:
        return _claim_checks(obj, namespace, tenants, world, mutated)
    if kind == "Pod":
        return _pod_checks(obj, namespace, tenants, world, mutated)
    found = template_of(obj)
    if found is not None:
        keys, template = found
        return _pod_checks(pod_view(template), namespace, tenants, world, mutated, template_prefix(keys))
    return []


def required_expressions(tenants: Iterable[Tenant]) -> list[str]:
    """The selectors the mutating webhook adds: of entries in mode Enforce with enforcement Mutate, each
    expression once, in the entries' order."""
    out: list[str] = []
    for t in tenants:
        rs = t.required_selector
        if t.mode == "Enforce" and rs is not None and rs.enforcement == "Mutate" and rs.expression not in out:
            out.append(rs.expression)
    return out
