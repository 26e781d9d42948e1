"""The plain policy file (`--policy`, the format draguard has always read): switch rules off or change their
severity, and set the webhook's admission-time feasibility mode per kind and namespace. A file of
DraguardPolicy objects is read by `webhook.config.policyobject` instead (`webhook.config.policyfile`
tells them apart).

# draguard policy
rules:
  pool.completeness: off            # disable
  slice.driver.uppercase: error      # raise a warning to an error
  claim.unknown-device-class: {severity: info}
feasibility:                         # the admission webhook only (draguard serve)
  default: warn                      # enforce | warn | off (default: warn)
  kinds: {ResourceClaim: enforce}    # ResourceClaim, Pod
  namespaces:
    ml-prod: enforce                 # every kind in this namespace
    sandbox: {Pod: off}              # one kind in this namespace
driverSchemas:                       # opaque config parameters' JSON Schemas (webhook.config.driverschemas)
- {driver: gpu.acme.com, apiVersion: acme.com/v1, kind: AcmeConfig, schema: {type: object}}
taints:                              # DeviceTaintRules' blast radius (the admission webhook only)
  maxDevices: 64                     # deny a rule tainting more devices ...
  maxPods: 10                        # ... or evicting more Pods (NoExecute) ...
  acknowledgeAnnotation: draguard.io/acknowledge-blast-radius   # ... unless it carries this: "true"
rbac:                                # the admission webhook only (docs/rbac.md)
  enforceNodeBoundStatus: true       # node-bound service accounts: status writes on their node's claims only
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.driverschemas import BadDriverSchema, DriverSchema, from_policy_entry
from webhook.config.policy import (
    ALL_KINDS,
    DEFAULT_ACKNOWLEDGE,
    FEASIBILITY_KINDS,
    FEASIBILITY_MODES,
    FeasibilitySettings,
    Policy,
    PolicySpec,
    RbacPolicy,
    RuleSetting,
    TaintSettings,
    combine,
)
from webhook.model import names
from webhook.model.errors import UsageError

_SETTINGS: dict[str, RuleSetting] = {
    "off": "off",
    "disabled": "off",
    "false": "off",
    "error": "error",
    "warning": "warning",
    "info": "info",
}


def policy_from_data(data: Any, path: str, known_rules: Mapping[str, Any]) -> Policy:
    """The policy a plain policy file's parsed content sets (see `spec_from_data`)."""
    return combine([spec_from_data(data, path, known_rules)])


def spec_from_data(data: Any, path: str, known_rules: Mapping[str, Any]) -> PolicySpec:
    """What a plain policy file sets; unknown rule ids and severities, or the wrong shape, are usage
    errors naming the file."""
    if isinstance(data, dict):
        known = ("rules", "feasibility", "driverSchemas", "taints", "rbac")
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise UsageError(
                f"--policy {path}: unknown section {unknown[0]!r} (a policy file has `rules:`, `feasibility:`, "
                "`driverSchemas:`, `taints:` and `rbac:`)"
            )
    rules = data.get("rules") if isinstance(data, dict) else None
    has_feasibility = isinstance(data, dict) and "feasibility" in data
    has_schemas = isinstance(data, dict) and "driverSchemas" in data
    taints = _taints(data.get("taints"), path) if isinstance(data, dict) and "taints" in data else None
    rbac = _rbac(data.get("rbac"), path) if isinstance(data, dict) and "rbac" in data else None
    if rules is None and (has_feasibility or has_schemas or taints is not None or rbac is not None):
        rules = {}
    if not isinstance(rules, dict):
        raise UsageError(
            f"--policy {path}: expected a mapping `rules: {{<rule id>: off|error|warning|info}}`"
            " (and/or `feasibility:`), or DraguardPolicy objects (apiVersion: draguard.io/v1alpha1)"
        )
    settings: dict[str, RuleSetting] = {}
    for rule_id, setting in rules.items():
        if rule_id == "admission.feasibility":
            raise UsageError(
                f"--policy {path}: admission.feasibility is set in the `feasibility:` section "
                "(default, kinds, namespaces: enforce|warn|off), not under `rules:`"
            )
        if rule_id not in known_rules:
            raise UsageError(
                f"--policy {path}: unknown rule id {rule_id!r} (list them with `draguard rules`)"
            )
        value = setting.get("severity") if isinstance(setting, dict) else setting
        if value is False:  # YAML reads a bare `off` as false
            value = "off"
        if not isinstance(value, str) or value.lower() not in _SETTINGS:
            raise UsageError(
                f"--policy {path}: rule {rule_id}: {value!r} is not one of off, error, warning, info"
            )
        settings[rule_id] = _SETTINGS[value.lower()]
    schemas = _driver_schemas(data.get("driverSchemas"), path) if has_schemas else ()
    if not has_feasibility:
        return PolicySpec(rules=settings, driver_schemas=schemas, taints=taints, rbac=rbac)
    return PolicySpec(
        rules=settings,
        feasibility=_feasibility(data.get("feasibility"), path),
        driver_schemas=schemas,
        taints=taints,
        rbac=rbac,
    )


def _driver_schemas(data: Any, path: str) -> tuple[DriverSchema, ...]:
    if not isinstance(data, list):
        raise UsageError(
            f"--policy {path}: driverSchemas: expected a list of {{driver, apiVersion, kind, schema}}"
        )
    out = []
    for i, entry in enumerate(data):
        try:
            out.append(from_policy_entry(entry, f"--policy {path}: driverSchemas[{i}]"))
        except BadDriverSchema as e:
            raise UsageError(f"--policy {path}: driverSchemas[{i}]: {e}") from e
    return tuple(out)


def _taints(data: Any, path: str) -> TaintSettings:
    """The `taints:` section: `maxDevices`, `maxPods` (integers >= 0), `acknowledgeAnnotation`."""
    if not isinstance(data, dict):
        raise UsageError(
            f"--policy {path}: taints: expected a mapping {{maxDevices: N, maxPods: M, acknowledgeAnnotation: KEY}}"
        )
    unknown = sorted(str(k) for k in data if k not in ("maxDevices", "maxPods", "acknowledgeAnnotation"))
    if unknown:
        raise UsageError(
            f"--policy {path}: taints: unknown key {unknown[0]!r} (expected maxDevices, maxPods, acknowledgeAnnotation)"
        )
    limits: dict[str, int | None] = {}
    for key in ("maxDevices", "maxPods"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise UsageError(f"--policy {path}: taints {key}: {value!r} is not an integer >= 0")
        limits[key] = value
    ack = data.get("acknowledgeAnnotation", DEFAULT_ACKNOWLEDGE)
    if not isinstance(ack, str) or names.label_key(ack):
        raise UsageError(f"--policy {path}: taints acknowledgeAnnotation: {ack!r} is not an annotation key")
    return TaintSettings(limits["maxDevices"], limits["maxPods"], ack)


def _rbac(data: Any, path: str) -> RbacPolicy:
    """The `rbac:` section: `enforceNodeBoundStatus` (true or false)."""
    if not isinstance(data, dict) or any(k != "enforceNodeBoundStatus" for k in data):
        raise UsageError(f"--policy {path}: rbac: expected a mapping {{enforceNodeBoundStatus: true|false}}")
    value = data.get("enforceNodeBoundStatus", False)
    if not isinstance(value, bool):
        raise UsageError(f"--policy {path}: rbac enforceNodeBoundStatus: {value!r} is not true or false")
    return RbacPolicy(value)


def _mode(value: Any, path: str, where: str) -> str:
    if value is False:  # YAML reads a bare `off` as false
        value = "off"
    if isinstance(value, str) and value.lower() in FEASIBILITY_MODES:
        return value.lower()
    raise UsageError(f"--policy {path}: feasibility {where}: {value!r} is not one of enforce, warn, off")


def _kind(value: Any, path: str, where: str) -> str:
    if value in FEASIBILITY_KINDS:
        return str(value)
    raise UsageError(
        f"--policy {path}: feasibility {where}: {value!r} is not a kind the webhook checks "
        f"({', '.join(FEASIBILITY_KINDS)})"
    )


def _feasibility(data: Any, path: str) -> FeasibilitySettings:
    """The `feasibility:` section (see the module docstring); a bare mode is the default for all. Only what
    it names is set (alone, a file's unset default is warn; combined, the other policies decide)."""
    if data is None:
        return FeasibilitySettings()
    if not isinstance(data, dict):
        return FeasibilitySettings(_mode(data, path, "default"))
    unknown = sorted(str(k) for k in data if k not in ("default", "kinds", "namespaces"))
    if unknown:
        raise UsageError(
            f"--policy {path}: feasibility: unknown key {unknown[0]!r} (expected default, kinds, namespaces)"
        )
    default = _mode(data["default"], path, "default") if "default" in data else None
    kinds_data = data.get("kinds") or {}
    if not isinstance(kinds_data, dict):
        raise UsageError(f"--policy {path}: feasibility kinds: expected a mapping {{<kind>: <mode>}}")
    kinds = {_kind(k, path, "kinds"): _mode(v, path, f"kinds {k}") for k, v in kinds_data.items()}
    ns_data = data.get("namespaces") or {}
    if not isinstance(ns_data, dict):
        raise UsageError(
            f"--policy {path}: feasibility namespaces: expected a mapping {{<namespace>: <mode> | {{<kind>: <mode>}}}}"
        )
    namespaces: dict[str, dict[str, str]] = {}
    for ns, setting in ns_data.items():
        if not isinstance(ns, str) or not ns:
            raise UsageError(f"--policy {path}: feasibility namespaces: {ns!r} is not a namespace name")
        if isinstance(setting, dict):
            namespaces[ns] = {
                _kind(k, path, f"namespaces {ns}"): _mode(v, path, f"namespaces {ns} {k}")
                for k, v in setting.items()
            }
        else:
            namespaces[ns] = {ALL_KINDS: _mode(setting, path, f"namespaces {ns}")}
    return FeasibilitySettings(default, kinds, namespaces)
