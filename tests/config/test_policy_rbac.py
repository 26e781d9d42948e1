"""The policy's `rbac:` section (docs/rbac.md): read from a plain policy file and from a DraguardPolicy,
and combined (on when any policy turns it on)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from webhook.config.filepolicy import spec_from_data
from webhook.config.policy import PolicySpec, RbacPolicy, combine
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.model.errors import UsageError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rbac" / "status" / "policy.yaml"


def test_a_policy_file_turns_it_on() -> None:
    spec = spec_from_data(yaml.safe_load(FIXTURE.read_text()), str(FIXTURE), RULES)
    assert spec.rbac == RbacPolicy(True)
    assert combine([spec]).rbac.enforce_node_bound_status


@pytest.mark.parametrize(
    "bad", [{"enforceNodeBoundStatus": "yes"}, {"enforce": True}, ["enforceNodeBoundStatus"]]
)
def test_a_policy_files_mistakes_are_usage_errors(bad: object) -> None:
    with pytest.raises(UsageError, match="rbac"):
        spec_from_data({"rbac": bad}, "p.yaml", RULES)


def test_a_draguard_policy_object() -> None:
    obj = {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": "hardening"},
        "spec": {"rbac": {"enforceNodeBoundStatus": True}},
    }
    spec = check_policy_object(obj, RULES, load_profile())
    assert isinstance(spec, PolicySpec) and spec.rbac == RbacPolicy(True)


def test_on_when_any_policy_turns_it_on_off_by_default() -> None:
    assert not combine([]).rbac.enforce_node_bound_status
    off, on = PolicySpec("a", rbac=RbacPolicy(False)), PolicySpec("b", rbac=RbacPolicy(True))
    assert combine([off, on]).rbac.enforce_node_bound_status
    assert not combine([off, PolicySpec("c")]).rbac.enforce_node_bound_status
