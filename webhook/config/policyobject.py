"""DraguardPolicy objects (`draguard.io/v1alpha1`, cluster-scoped; the CRD is deploy/base/draguardpolicy-crd.yaml):
one object checked as the API server checks it against the CRD's schema (types, enums, required and unknown
fields, names, label selectors), then as only draguard can (rule ids it has, CEL selectors that compile),
and turned into the `PolicySpec` it sets.

    apiVersion: draguard.io/v1alpha1
    kind: DraguardPolicy
    metadata: {name: gpu-tenants}
    spec:
      rules: {pool.completeness: "off", slice.driver.uppercase: error}    # off | error | warning | info
      feasibility:
        default: warn                                 # enforce | warn | off
        kinds: {ResourceClaim: enforce}               # ResourceClaim, Pod
        namespaces:
        - {name: ml-prod, default: enforce}
        - {name: sandbox, kinds: {Pod: "off"}}
      tenants: [...]                                  # webhook.config.tenants
      driverSchemas:                                  # webhook.config.driverschemas
      - {driver: gpu.acme.com, apiVersion: acme.com/v1, kind: AcmeConfig, schema: {type: object, ...}}
      taints: {maxDevices: 64, maxPods: 10, acknowledgeAnnotation: draguard.io/acknowledge-blast-radius}
      rbac: {enforceNodeBoundStatus: true}            # docs/rbac.md

`status` is the server's (webhook.config.policystatus) and is not read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.driverschemas import BadDriverSchema, DriverSchema, from_policy_entry
from webhook.config.fields import FieldError, Reader, duplicate, invalid, required
from webhook.config.policy import (
    ALL_KINDS,
    DEFAULT_ACKNOWLEDGE,
    FEASIBILITY_KINDS,
    FEASIBILITY_MODES,
    RULE_SETTINGS,
    FeasibilitySettings,
    PolicySpec,
    RbacPolicy,
    RuleSetting,
    TaintSettings,
)
from webhook.config.profile import Profile
from webhook.config.tenants import MAX_TENANTS, Tenant, parse_tenant
from webhook.model import names
from webhook.model.path import Path

GROUP = "draguard.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "DraguardPolicy"
PLURAL = "draguardpolicies"
MAX_RULES = 1024
MAX_NAMESPACES = 1024
MAX_DRIVER_SCHEMAS = 64
FEASIBILITY_ONLY = "admission.feasibility"

SPEC = Path("spec")


def is_policy_object(data: Any) -> bool:
    """Whether a document says it is a DraguardPolicy (of any version: a wrong one is then an error)."""
    if not isinstance(data, dict) or data.get("kind") != KIND:
        return False
    api_version = data.get("apiVersion")
    return isinstance(api_version, str) and api_version.split("/")[0] == GROUP


def policy_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def generation_of(obj: Mapping[str, Any]) -> int:
    """`metadata.generation` (0 when absent: an object read from a file)."""
    meta = obj.get("metadata")
    gen = meta.get("generation") if isinstance(meta, dict) else None
    return gen if isinstance(gen, int) and not isinstance(gen, bool) else 0


def _rules(r: Reader, data: Any, known_rules: Mapping[str, Any]) -> dict[str, RuleSetting]:
    path = SPEC.child("rules")
    rules = r.mapping(data, path, None)
    if rules is None:
        return {}
    if len(rules) > MAX_RULES:
        r.add(FieldError(str(path), f"Too many: {len(rules)}: must have at most {MAX_RULES} rules"))
        return {}
    out: dict[str, RuleSetting] = {}
    for rule_id, value in rules.items():
        at = path.key(str(rule_id))
        setting = r.choice(value, at, RULE_SETTINGS)
        if rule_id == FEASIBILITY_ONLY:
            r.add(
                FieldError(
                    str(at),
                    "Invalid value: admission.feasibility is set by spec.feasibility (default, kinds, "
                    "namespaces: enforce | warn | off), not under rules",
                    "UnknownRule",
                )
            )
        elif rule_id not in known_rules:
            r.add(FieldError(str(at), "unknown rule id (list them with `draguard rules`)", "UnknownRule"))
        elif setting is not None:
            out[str(rule_id)] = setting
    return out


def _kinds(r: Reader, data: Any, path: Path) -> dict[str, str]:
    kinds = r.mapping(data, path, FEASIBILITY_KINDS)
    out: dict[str, str] = {}
    for kind in FEASIBILITY_KINDS:
        mode = r.choice((kinds or {}).get(kind), path.child(kind), FEASIBILITY_MODES)
        if mode is not None:
            out[kind] = mode
    return out


def _feasibility(r: Reader, data: Any) -> FeasibilitySettings:
    path = SPEC.child("feasibility")
    f = r.mapping(data, path, ("default", "kinds", "namespaces"))
    if f is None:
        return FeasibilitySettings()
    default = r.choice(f.get("default"), path.child("default"), FEASIBILITY_MODES)
    kinds = _kinds(r, f.get("kinds"), path.child("kinds"))
    ns_path = path.child("namespaces")
    namespaces: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(r.listing(f.get("namespaces"), ns_path, MAX_NAMESPACES) or ()):
        at = ns_path.index(i)
        e = r.mapping(entry, at, ("name", "default", "kinds"), need=("name",))
        if e is None:
            continue
        name = r.string(e.get("name"), at.child("name"))
        if name is not None:
            for p in names.dns_label(name):
                r.add(invalid(at.child("name"), name, p))
            if name in namespaces:
                r.add(duplicate(at.child("name"), name))
        mode = r.choice(e.get("default"), at.child("default"), FEASIBILITY_MODES)
        per_kind = _kinds(r, e.get("kinds"), at.child("kinds"))
        if e.get("default") is None and e.get("kinds") is None:
            r.add(required(at.child("default"), "set default and/or kinds"))
        if name is not None:
            namespaces[name] = {**({ALL_KINDS: mode} if mode else {}), **per_kind}
    return FeasibilitySettings(default, kinds, namespaces)


MAX_LIMIT = 1 << 31


def _taints(r: Reader, data: Any) -> TaintSettings | None:
    path = SPEC.child("taints")
    t = r.mapping(data, path, ("maxDevices", "maxPods", "acknowledgeAnnotation"))
    if t is None:
        return None
    devices = (
        r.integer(t["maxDevices"], path.child("maxDevices"), 0, MAX_LIMIT) if "maxDevices" in t else None
    )
    pods = r.integer(t["maxPods"], path.child("maxPods"), 0, MAX_LIMIT) if "maxPods" in t else None
    ack = DEFAULT_ACKNOWLEDGE
    if "acknowledgeAnnotation" in t:
        at = path.child("acknowledgeAnnotation")
        given = r.string(t["acknowledgeAnnotation"], at)
        if given is not None:
            for p in names.label_key(given):
                r.add(invalid(at, given, p))
            ack = given
    return TaintSettings(devices, pods, ack)


def _rbac(r: Reader, data: Any) -> RbacPolicy | None:
    path = SPEC.child("rbac")
    t = r.mapping(data, path, ("enforceNodeBoundStatus",))
    if t is None:
        return None
    on = (
        r.boolean(t["enforceNodeBoundStatus"], path.child("enforceNodeBoundStatus"))
        if "enforceNodeBoundStatus" in t
        else None
    )
    return RbacPolicy(bool(on))


def _tenants(r: Reader, data: Any, policy: str, profile: Profile) -> tuple[Tenant, ...]:
    path = SPEC.child("tenants")
    out: list[Tenant] = []
    seen: set[str] = set()
    for i, entry in enumerate(r.listing(data, path, MAX_TENANTS) or ()):
        tenant = parse_tenant(r, entry, path.index(i), policy, profile)
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name in seen:
            r.add(duplicate(path.index(i).child("name"), name))
        if isinstance(name, str):
            seen.add(name)
        if tenant is not None:
            out.append(tenant)
    return tuple(out)


def _driver_schemas(r: Reader, data: Any, policy: str) -> tuple[DriverSchema, ...]:
    path = SPEC.child("driverSchemas")
    keys = ("driver", "apiVersion", "kind", "schema")
    out: list[DriverSchema] = []
    for i, entry in enumerate(r.listing(data, path, MAX_DRIVER_SCHEMAS) or ()):
        at = path.index(i)
        item = r.mapping(entry, at, keys, need=keys)
        if item is None or not all(k in item for k in keys):
            continue  # the missing field is reported
        names_ok = [r.string(item[k], at.child(k), 253) for k in keys[:3]]
        schema = r.mapping(item["schema"], at.child("schema"), None)
        if None in names_ok or schema is None:
            continue
        try:
            out.append(from_policy_entry(item, f"DraguardPolicy {policy}: {at}"))
        except BadDriverSchema as e:
            r.add(FieldError(str(at.child("schema")), f"Invalid value: {e}"))
    return tuple(out)


def check_policy_object(
    obj: Any, known_rules: Mapping[str, Any], profile: Profile
) -> PolicySpec | list[FieldError]:
    """The settings of one DraguardPolicy, or every error that keeps it from taking effect."""
    r = Reader()
    top = r.mapping(obj, Path(), ("apiVersion", "kind", "metadata", "spec", "status"), need=("metadata",))
    if top is None:
        return r.errors or [FieldError("", "Invalid value: a DraguardPolicy must be an object")]
    if top.get("apiVersion") != API_VERSION or top.get("kind") != KIND:
        r.add(
            FieldError(
                "apiVersion",
                f"Unsupported value: {top.get('apiVersion')!s} {top.get('kind')!s}: draguard reads "
                f"{API_VERSION} {KIND}",
            )
        )
    meta = r.mapping(top.get("metadata"), Path("metadata"), None, need=("name",)) or {}
    name = r.string(meta.get("name"), Path("metadata").child("name"))
    if name is not None:
        for p in names.dns_subdomain(name):
            r.add(invalid(Path("metadata").child("name"), name, p))
    spec = (
        r.mapping(
            top.get("spec"), SPEC, ("rules", "feasibility", "tenants", "driverSchemas", "taints", "rbac")
        )
        or {}
    )
    rules = _rules(r, spec.get("rules"), known_rules)
    feasibility = _feasibility(r, spec.get("feasibility"))
    tenants = _tenants(r, spec.get("tenants"), name or "", profile)
    driver_schemas = _driver_schemas(r, spec.get("driverSchemas"), name or "")
    taints = _taints(r, spec.get("taints"))
    rbac = _rbac(r, spec.get("rbac"))
    if r.errors:
        return r.errors
    return PolicySpec(
        name or "", rules, feasibility, tenants, driver_schemas=driver_schemas, taints=taints, rbac=rbac
    )
