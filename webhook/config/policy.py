"""Policy files: switch rules off or change their severity, and set the webhook's admission-time
feasibility mode per kind and namespace.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from webhook.model.errors import UsageError
from webhook.model.violation import Severity, Violation

_SEVERITIES = {s.value: s for s in Severity}


FEASIBILITY_MODES = ("enforce", "warn", "off")
FEASIBILITY_KINDS = ("ResourceClaim", "Pod")
DEFAULT_FEASIBILITY_MODE = "warn"


@dataclass(frozen=True)
class FeasibilityPolicy:
    """Admission-time feasibility per kind and namespace: `enforce` denies unsatisfiable requests and
    warns on busy ones, `warn` warns on both, `off` does not run the allocator. The most specific
    setting wins: namespace and kind, namespace, kind, default."""

    default: str = DEFAULT_FEASIBILITY_MODE
    kinds: Mapping[str, str] = field(default_factory=dict)
    # namespace -> mode for every kind, or {kind: mode}
    namespaces: Mapping[str, str | Mapping[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        spaces = {ns: ({"*": m} if isinstance(m, str) else dict(m)) for ns, m in self.namespaces.items()}
        modes = [self.default, *self.kinds.values(), *(m for per in spaces.values() for m in per.values())]
        bad = [m for m in modes if m not in FEASIBILITY_MODES]
        if bad:
            raise ValueError(f"feasibility mode {bad[0]!r} is not one of {', '.join(FEASIBILITY_MODES)}")
        object.__setattr__(self, "namespaces", spaces)

    def mode(self, kind: str, namespace: str | None) -> str:
        per_ns = self.namespaces.get(namespace or "")
        if isinstance(per_ns, Mapping):
            found = per_ns.get(kind) or per_ns.get("*")
            if found is not None:
                return found
        return self.kinds.get(kind, self.default)


@dataclass(frozen=True)
class Policy:
    disabled: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    feasibility: FeasibilityPolicy = field(default_factory=FeasibilityPolicy)

    def enabled(self, rule_id: str) -> bool:
        return rule_id not in self.disabled

    def apply(self, violations: list[Violation]) -> list[Violation]:
        """Drop disabled rules' violations and re-grade the rest."""
        if not self.disabled and not self.severity:
            return violations
        out = []
        for v in violations:
            if v.rule in self.disabled:
                continue
            sev = self.severity.get(v.rule)
            out.append(v if sev is None or sev is v.severity else replace(v, severity=sev))
        return out


def policy_from_data(data: Any, path: str, known_rules: Mapping[str, Any]) -> Policy:
    """A policy from a policy file's parsed content (`webhook.config.policyfile` reads the file); unknown
    rule ids and severities, or the wrong shape, are usage errors naming the file."""
    if isinstance(data, dict):
        unknown = sorted(str(k) for k in data if k not in ("rules", "feasibility"))
        if unknown:
            raise UsageError(
                f"--policy {path}: unknown section {unknown[0]!r} (a policy file has `rules:` and `feasibility:`)"
            )
    rules = data.get("rules") if isinstance(data, dict) else None
    has_feasibility = isinstance(data, dict) and "feasibility" in data
    if rules is None and has_feasibility:
        rules = {}
    if not isinstance(rules, dict):
        raise UsageError(
            f"--policy {path}: expected a mapping `rules: {{<rule id>: off|error|warning|info}}`"
            " (and/or `feasibility:`)"
        )
    disabled: set[str] = set()
    severity: dict[str, Severity] = {}
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
        if value is False or (isinstance(value, str) and value.lower() in ("off", "disabled", "false")):
            disabled.add(rule_id)
        elif isinstance(value, str) and value.lower() in _SEVERITIES:
            severity[rule_id] = _SEVERITIES[value.lower()]
        else:
            raise UsageError(
                f"--policy {path}: rule {rule_id}: {value!r} is not one of off, error, warning, info"
            )
    feasibility = _feasibility(data.get("feasibility"), path) if has_feasibility else FeasibilityPolicy()
    return Policy(frozenset(disabled), severity, feasibility)


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


def _feasibility(data: Any, path: str) -> FeasibilityPolicy:
    """The `feasibility:` section (see the module docstring); a bare mode is the default for all."""
    if data is None:
        return FeasibilityPolicy()
    if not isinstance(data, dict):
        return FeasibilityPolicy(default=_mode(data, path, "default"))
    unknown = sorted(str(k) for k in data if k not in ("default", "kinds", "namespaces"))
    if unknown:
        raise UsageError(
            f"--policy {path}: feasibility: unknown key {unknown[0]!r} (expected default, kinds, namespaces)"
        )
    default = _mode(data.get("default", DEFAULT_FEASIBILITY_MODE), path, "default")
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
            namespaces[ns] = {"*": _mode(setting, path, f"namespaces {ns}")}
    return FeasibilityPolicy(default, kinds, namespaces)
