"""The policy file's `feasibility:` section (admission-time feasibility modes per kind and namespace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from webhook.config.policy import FeasibilityPolicy
from webhook.config.policyfile import load_policy
from webhook.model.catalogue import RULES
from webhook.model.errors import UsageError
from webhook.rules import catalog  # noqa: F401


def _load(tmp_path: Path, text: str) -> FeasibilityPolicy:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return load_policy(str(path), RULES).feasibility


def test_modes_resolve_from_the_most_specific_setting(tmp_path: Path) -> None:
    f = _load(
        tmp_path,
        """
rules:
  pool.completeness: off
feasibility:
  default: warn
  kinds: {ResourceClaim: enforce}
  namespaces:
    ml-prod: enforce
    sandbox: {Pod: off}
    batch: off
""",
    )
    assert f.mode("ResourceClaim", "default") == "enforce"
    assert f.mode("Pod", "default") == "warn"
    assert f.mode("Pod", "ml-prod") == "enforce"
    assert f.mode("Pod", "sandbox") == "off"
    assert f.mode("ResourceClaim", "sandbox") == "enforce"  # the namespace sets Pods only
    assert f.mode("ResourceClaim", "batch") == "off"  # YAML's bare `off` (false) is a mode too
    assert f.mode("Pod", None) == "warn"


def test_a_feasibility_only_file_and_a_bare_mode(tmp_path: Path) -> None:
    assert _load(tmp_path, "feasibility: enforce\n") == FeasibilityPolicy("enforce")
    assert _load(tmp_path, "rules: {}\n") == FeasibilityPolicy()
    assert FeasibilityPolicy().mode("Pod", "x") == "warn"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("feasibility: strict\n", "feasibility default: 'strict' is not one of enforce, warn, off"),
        (
            "feasibility: {kinds: {Deployment: warn}}\n",
            "feasibility kinds: 'Deployment' is not a kind the webhook checks (ResourceClaim, Pod)",
        ),
        (
            "feasibility: {kinds: {Pod: maybe}}\n",
            "feasibility kinds Pod: 'maybe' is not one of enforce, warn, off",
        ),
        ("feasibility: {namespaces: [a, b]}\n", "feasibility namespaces: expected a mapping"),
        (
            "feasibility: {mode: warn}\n",
            "feasibility: unknown key 'mode' (expected default, kinds, namespaces)",
        ),
        (
            "feasability: warn\n",
            "unknown section 'feasability' (a policy file has `rules:`, `feasibility:`, `driverSchemas:`, `taints:` and `rbac:`)",
        ),
    ],
)
def test_mistakes_are_usage_errors_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError) as e:
        _load(tmp_path, text)
    assert str(tmp_path / "policy.yaml") in str(e.value) and message in str(e.value)


def test_programmatic_policies_are_checked() -> None:
    with pytest.raises(ValueError, match="feasibility mode 'strict' is not one of enforce, warn, off"):
        FeasibilityPolicy(namespaces={"a": "strict"})
    assert FeasibilityPolicy(namespaces={"a": "off"}).mode("Pod", "a") == "off"


def test_the_feasibility_rule_is_listed_but_set_in_its_own_section(tmp_path: Path) -> None:
    from webhook.admission import feasibility  # noqa: F401  (declares admission.feasibility)

    assert RULES["admission.feasibility"].kinds == ("ResourceClaim", "Pod")
    with pytest.raises(UsageError, match="admission.feasibility is set in the `feasibility:` section"):
        _load(tmp_path, "rules:\n  admission.feasibility: off\n")
