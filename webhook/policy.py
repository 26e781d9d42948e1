"""Policy files: switch rules off or change their severity.

# draguard policy
rules:
  pool.completeness: off            # disable
  slice.driver.uppercase: error      # raise a warning to an error
  claim.unknown-device-class: {severity: info}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.model.errors import UsageError
from webhook.model.violation import Severity, Violation

_SEVERITIES = {s.value: s for s in Severity}


@dataclass(frozen=True)
class Policy:
    disabled: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)

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
            out.append(v if sev is None or sev is v.severity else Violation(v.rule, sev, v.field, v.message))
        return out


def policy_from_data(data: Any, path: str, known_rules: Mapping[str, Any]) -> Policy:
    """A policy from a policy file's parsed content (`webhook.io.policyfile` reads the file); unknown
    rule ids and severities, or the wrong shape, are usage errors naming the file."""
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, dict):
        raise UsageError(
            f"--policy {path}: expected a mapping `rules: {{<rule id>: off|error|warning|info}}`"
        )
    disabled: set[str] = set()
    severity: dict[str, Severity] = {}
    for rule_id, setting in rules.items():
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
    return Policy(frozenset(disabled), severity)
