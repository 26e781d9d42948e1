"""DraguardPolicy objects (webhook/config/policyobject.py, tenants.py): what a valid one sets, and every
mistake reported at its field path with the reason its status would carry."""

from __future__ import annotations

from typing import Any

import pytest
from policy_cases import BROKEN, broken, example

from webhook.config.fields import FieldError
from webhook.config.labelselector import LabelSelector, Requirement
from webhook.config.policy import ALL_KINDS, FeasibilitySettings, PolicySpec, TaintSettings
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.config.tenants import Exclude, RequiredSelector, Tenant
from webhook.model.catalogue import RULES

PROFILE = load_profile("1.37")


def check(obj: Any) -> PolicySpec | list[FieldError]:
    return check_policy_object(obj, RULES, PROFILE)


def test_the_shipped_examples_set_what_they_say() -> None:
    defaults = check(example("platform-defaults"))
    assert defaults == PolicySpec(
        "platform-defaults",
        {"pool.completeness": "off", "slice.driver.uppercase": "error"},
        FeasibilitySettings(
            "warn",
            {"ResourceClaim": "enforce"},
            {"ml-prod": {ALL_KINDS: "enforce"}, "sandbox": {"Pod": "off"}},
        ),
        taints=TaintSettings(512, 20, "draguard.io/acknowledge-blast-radius"),
    )
    tenants = check(example("gpu-tenants"))
    assert isinstance(tenants, PolicySpec)
    shared, research = tenants.tenants
    assert shared == Tenant(
        policy="gpu-tenants",
        name="shared-gpus",
        mode="Enforce",
        namespace_selector=LabelSelector((("gpu.example.com/tier", "shared"),)),
        exclude=Exclude(frozenset({"ml-platform"})),
        allowed_device_classes=frozenset({"gpu.example.com"}),
        required_selector=RequiredSelector('device.attributes["gpu.example.com"].model == "X100"', "Mutate"),
        max_devices_per_claim=2,
        max_devices_per_pod=4,
        admin_access=False,
        extended_resources=False,
    )
    assert shared.id == "gpu-tenants/shared-gpus"
    # the CRD's defaults: mode Audit; nothing restricted that is not named
    assert research == Tenant(
        "gpu-tenants",
        "research",
        LabelSelector((), (Requirement("gpu.example.com/team", "In", frozenset({"research", "vision"})),)),
        mode="Audit",
        max_devices_per_pod=8,
    )
    assert research.applies_to("r1", {"gpu.example.com/team": "vision"})
    assert not shared.applies_to("ml-platform", {"gpu.example.com/tier": "shared"})  # excluded by name


def test_a_required_selectors_enforcement_defaults_to_deny() -> None:
    obj = example("gpu-tenants")
    del obj["spec"]["tenants"][0]["requiredSelector"]["enforcement"]
    spec = check(obj)
    assert isinstance(spec, PolicySpec)
    assert spec.tenants[0].required_selector == RequiredSelector(
        'device.attributes["gpu.example.com"].model == "X100"', "Deny"
    )


@pytest.mark.parametrize(("name", "where", "value", "path", "reason", "crd"), BROKEN)
def test_each_mistake_is_an_error_at_its_path(
    name: str, where: tuple[str | int, ...], value: Any, path: str, reason: str, crd: bool
) -> None:
    errors = check(broken(name, where, value))
    assert isinstance(errors, list), "accepted"
    assert [(e.field, e.reason) for e in errors] == [(path, reason)], [str(e) for e in errors]


def test_not_an_object_or_another_kind() -> None:
    assert [str(e) for e in check([])] == ["Invalid value: array: must be of type object, not array"]
    other = example("platform-defaults") | {"apiVersion": "draguard.io/v1"}
    errors = check(other)
    assert isinstance(errors, list)
    assert [e.field for e in errors] == ["apiVersion"]
    assert "draguard reads draguard.io/v1alpha1 DraguardPolicy" in str(errors[0])


def test_status_and_server_metadata_are_not_read() -> None:
    obj = example("platform-defaults")
    obj["metadata"] |= {"uid": "u", "generation": 4, "resourceVersion": "9", "managedFields": []}
    obj["status"] = {"observedGeneration": 3, "conditions": [{"type": "Ready", "status": "True"}]}
    assert check(obj) == check(example("platform-defaults"))
