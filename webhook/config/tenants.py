"""Tenant device policies (`spec.tenants[]` of a DraguardPolicy): which namespaces a tenant entry covers
and what it restricts there. Modelled and validated here; enforced by `webhook.simulate.tenants` (the
admission webhook through `webhook.admission.tenants`, `draguard validate` through
`webhook.offline.tenants`; docs/tenants.md).

    - name: team-a                      # DNS label, unique within its policy; the id is `<policy>/<name>`
      mode: Enforce                     # Enforce | Warn | Audit (default Audit)
      namespaceSelector: {matchLabels: {team: a}}    # required; {} selects every namespace
      exclude: {namespaces: [team-a-sandbox], namespaceSelector: {...}}
      allowedDeviceClasses: [gpu-shared]            # absent: any; []: none
      requiredSelector: {expression: 'device.attributes["gpu.example.com"].tier == "shared"', enforcement: Mutate}
      maxDevicesPerClaim: 4
      maxDevicesPerPod: 8
      adminAccess: false
      extendedResources: true
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from webhook.cel.compiler import CompileError, compile_selector
from webhook.config.fields import FieldError, Reader, duplicate, invalid
from webhook.config.labelselector import LabelSelector, parse_label_selector
from webhook.config.profile import Profile
from webhook.model import names
from webhook.model.path import Path
from webhook.model.text import one_line

TenantMode = Literal["Enforce", "Warn", "Audit"]
TENANT_MODES: tuple[TenantMode, ...] = get_args(TenantMode)
DEFAULT_TENANT_MODE: TenantMode = "Audit"
Enforcement = Literal["Mutate", "Deny"]
ENFORCEMENTS: tuple[Enforcement, ...] = get_args(Enforcement)
DEFAULT_ENFORCEMENT: Enforcement = "Deny"

MAX_TENANTS = 64  # per policy
MAX_CLASSES = 256
MAX_EXCLUDED = 1024
MAX_DEVICES = 1 << 20
FIELDS = (
    "name",
    "mode",
    "namespaceSelector",
    "exclude",
    "allowedDeviceClasses",
    "requiredSelector",
    "maxDevicesPerClaim",
    "maxDevicesPerPod",
    "adminAccess",
    "extendedResources",
)


@dataclass(frozen=True)
class RequiredSelector:
    """A CEL selector every request must carry: added by mutation, or its absence denied."""

    expression: str
    enforcement: Enforcement = DEFAULT_ENFORCEMENT


@dataclass(frozen=True)
class Exclude:
    namespaces: frozenset[str] = frozenset()
    selector: LabelSelector | None = None

    def excludes(self, namespace: str, labels: Mapping[str, str]) -> bool:
        return namespace in self.namespaces or (self.selector is not None and self.selector.matches(labels))


@dataclass(frozen=True)
class Tenant:
    """One tenant entry; None means "not restricted" for every limit."""

    policy: str  # the DraguardPolicy's name
    name: str
    namespace_selector: LabelSelector
    mode: TenantMode = DEFAULT_TENANT_MODE
    exclude: Exclude | None = None
    allowed_device_classes: frozenset[str] | None = None
    required_selector: RequiredSelector | None = None
    max_devices_per_claim: int | None = None
    max_devices_per_pod: int | None = None
    admin_access: bool | None = None
    extended_resources: bool | None = None

    @property
    def id(self) -> str:
        """`<policy>/<tenant>`: unique among every policy in force (policy names are)."""
        return f"{self.policy}/{self.name}"

    def applies_to(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether the entry covers a namespace with these labels."""
        if self.exclude is not None and self.exclude.excludes(namespace, labels):
            return False
        return self.namespace_selector.matches(labels)


def _dns_label(r: Reader, value: Any, path: Path) -> str | None:
    text = r.string(value, path)
    if text is None:
        return None
    problems = names.dns_label(text)
    for p in problems:
        r.add(invalid(path, text, p))
    return None if problems else text


def _exclude(r: Reader, data: Any, path: Path) -> Exclude | None:
    ex = r.mapping(data, path, ("namespaces", "namespaceSelector"))
    if ex is None:
        return None
    if ex.get("namespaces") is None and ex.get("namespaceSelector") is None:
        r.add(FieldError(str(path), "Required value: set namespaces and/or namespaceSelector", "Required"))
        return None
    ns_path = path.child("namespaces")
    listed = r.listing(ex.get("namespaces"), ns_path, MAX_EXCLUDED) or []
    spaces = [_dns_label(r, v, ns_path.index(i)) for i, v in enumerate(listed)]
    selector = parse_label_selector(r, ex.get("namespaceSelector"), path.child("namespaceSelector"))
    return Exclude(frozenset(s for s in spaces if s is not None), selector)


def _classes(r: Reader, data: Any, path: Path) -> frozenset[str] | None:
    listed = r.listing(data, path, MAX_CLASSES)
    if listed is None:
        return None
    out: set[str] = set()
    for i, v in enumerate(listed):
        text = r.string(v, path.index(i))
        if text is None:
            continue
        for p in names.dns_subdomain(text):
            r.add(invalid(path.index(i), text, p))
        if text in out:
            r.add(duplicate(path.index(i), text))
        out.add(text)
    return frozenset(out)


def _required_selector(r: Reader, data: Any, path: Path, profile: Profile) -> RequiredSelector | None:
    sel = r.mapping(data, path, ("expression", "enforcement"), need=("expression",))
    if sel is None:
        return None
    enforcement = r.choice(sel.get("enforcement"), path.child("enforcement"), ENFORCEMENTS)
    expr_path = path.child("expression")
    expression = r.string(sel.get("expression"), expr_path)
    if expression is None:
        return None
    compiled = compile_selector(
        expression,
        list_attributes=profile.enabled("DRAListTypeAttributes"),
        consumable_capacity=profile.enabled("DRAConsumableCapacity"),
    )
    if isinstance(compiled, CompileError):
        r.add(invalid(expr_path, expression, one_line(compiled.message), "InvalidExpression"))
        return None
    return RequiredSelector(expression, enforcement or DEFAULT_ENFORCEMENT)


def parse_tenant(r: Reader, data: Any, path: Path, policy: str, profile: Profile) -> Tenant | None:
    """The tenant entry at `path` of policy `policy`, or None with its errors recorded in `r`."""
    before = len(r.errors)
    t = r.mapping(data, path, FIELDS, need=("name", "namespaceSelector"))
    if t is None:
        return None
    name = _dns_label(r, t.get("name"), path.child("name"))
    mode = r.choice(t.get("mode"), path.child("mode"), TENANT_MODES)
    selector = parse_label_selector(r, t.get("namespaceSelector"), path.child("namespaceSelector"))
    exclude = _exclude(r, t.get("exclude"), path.child("exclude"))
    classes = _classes(r, t.get("allowedDeviceClasses"), path.child("allowedDeviceClasses"))
    required_selector = _required_selector(
        r, t.get("requiredSelector"), path.child("requiredSelector"), profile
    )
    per_claim = r.integer(t.get("maxDevicesPerClaim"), path.child("maxDevicesPerClaim"), 1, MAX_DEVICES)
    per_pod = r.integer(t.get("maxDevicesPerPod"), path.child("maxDevicesPerPod"), 1, MAX_DEVICES)
    admin = r.boolean(t.get("adminAccess"), path.child("adminAccess"))
    extended = r.boolean(t.get("extendedResources"), path.child("extendedResources"))
    if len(r.errors) > before or name is None or selector is None:
        return None
    return Tenant(
        policy=policy,
        name=name,
        namespace_selector=selector,
        mode=mode or DEFAULT_TENANT_MODE,
        exclude=exclude,
        allowed_device_classes=classes,
        required_selector=required_selector,
        max_devices_per_claim=per_claim,
        max_devices_per_pod=per_pod,
        admin_access=admin,
        extended_resources=extended,
    )
