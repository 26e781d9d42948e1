"""DraguardPolicy objects (webhook/config/policyobject.py, tenants.py): what a valid one sets, and every
mistake reported at its field path with the reason its status would carry."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from webhook.config.fields import FieldError
from webhook.config.labelselector import LabelSelector, Requirement
from webhook.config.policy import ALL_KINDS, FeasibilitySettings, PolicySpec
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.config.tenants import Exclude, RequiredSelector, Tenant
from webhook.model.catalogue import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "examples" / "draguard-policy.yaml"
PROFILE = load_profile("1.37")


def example(name: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    return copy.deepcopy(next(d for d in docs if d["metadata"]["name"] == name))


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


def _set(obj: dict[str, Any], where: tuple[str | int, ...], value: Any) -> None:
    """Set (or, with value ..., delete) the field at `where`."""
    *head, last = where
    cur: Any = obj
    for part in head:
        cur = cur[part]
    if value is ...:
        del cur[last]
    else:
        cur[last] = value


T0, T1 = ("spec", "tenants", 0), ("spec", "tenants", 1)
NS = ("spec", "feasibility", "namespaces")
# (which example, where, the new value (... deletes), the expected error's path, its reason)
BROKEN: list[tuple[str, tuple[str | int, ...], Any, str, str]] = [
    (
        "platform-defaults",
        ("spec", "rules", "no-such-rule"),
        "error",
        "spec.rules[no-such-rule]",
        "UnknownRule",
    ),
    (
        "platform-defaults",
        ("spec", "rules", "admission.feasibility"),
        "off",
        "spec.rules[admission.feasibility]",
        "UnknownRule",
    ),
    (
        "platform-defaults",
        ("spec", "rules", "pool.completeness"),
        False,
        "spec.rules[pool.completeness]",
        "InvalidValue",
    ),
    (
        "platform-defaults",
        ("spec", "rules", "pool.completeness"),
        "Warning",
        "spec.rules[pool.completeness]",
        "InvalidValue",
    ),
    (
        "platform-defaults",
        ("spec", "feasibility", "default"),
        "enforced",
        "spec.feasibility.default",
        "InvalidValue",
    ),
    (
        "platform-defaults",
        ("spec", "feasibility", "kinds", "Deployment"),
        "warn",
        "spec.feasibility.kinds.Deployment",
        "UnknownField",
    ),
    ("platform-defaults", (*NS, 0, "name"), "ML", "spec.feasibility.namespaces[0].name", "InvalidValue"),
    ("platform-defaults", (*NS, 1, "name"), "ml-prod", "spec.feasibility.namespaces[1].name", "Duplicate"),
    ("platform-defaults", (*NS, 1, "kinds"), ..., "spec.feasibility.namespaces[1].default", "Required"),
    ("platform-defaults", NS, {"ml-prod": "enforce"}, "spec.feasibility.namespaces", "InvalidType"),
    ("platform-defaults", ("spec", "feasability"), {}, "spec.feasability", "UnknownField"),
    ("platform-defaults", ("metadata", "name"), "Not_A_Name", "metadata.name", "InvalidValue"),
    ("platform-defaults", ("metadata", "name"), ..., "metadata.name", "Required"),
    ("gpu-tenants", (*T0, "mode"), "Enforced", "spec.tenants[0].mode", "InvalidValue"),
    ("gpu-tenants", (*T0, "name"), "Shared GPUs", "spec.tenants[0].name", "InvalidValue"),
    ("gpu-tenants", (*T1, "name"), "shared-gpus", "spec.tenants[1].name", "Duplicate"),
    ("gpu-tenants", (*T0, "namespaceSelector"), ..., "spec.tenants[0].namespaceSelector", "Required"),
    (
        "gpu-tenants",
        (*T1, "namespaceSelector", "matchExpressions", 0, "operator"),
        "Gt",
        "spec.tenants[1].namespaceSelector.matchExpressions[0].operator",
        "InvalidSelector",
    ),
    ("gpu-tenants", (*T0, "exclude"), {}, "spec.tenants[0].exclude", "Required"),
    (
        "gpu-tenants",
        (*T0, "exclude", "namespaces"),
        ["Kube_System"],
        "spec.tenants[0].exclude.namespaces[0]",
        "InvalidValue",
    ),
    (
        "gpu-tenants",
        (*T0, "allowedDeviceClasses"),
        ["gpu.example.com", "gpu.example.com"],
        "spec.tenants[0].allowedDeviceClasses[1]",
        "Duplicate",
    ),
    (
        "gpu-tenants",
        (*T0, "requiredSelector", "expression"),
        'device.attributes["gpu.example.com"].model ==',
        "spec.tenants[0].requiredSelector.expression",
        "InvalidExpression",
    ),
    (
        "gpu-tenants",
        (*T0, "requiredSelector", "expression"),
        "device.driver",
        "spec.tenants[0].requiredSelector.expression",
        "InvalidExpression",
    ),  # not a bool
    (
        "gpu-tenants",
        (*T0, "requiredSelector", "enforcement"),
        "Patch",
        "spec.tenants[0].requiredSelector.enforcement",
        "InvalidValue",
    ),
    ("gpu-tenants", (*T0, "maxDevicesPerClaim"), 0, "spec.tenants[0].maxDevicesPerClaim", "InvalidValue"),
    ("gpu-tenants", (*T0, "maxDevicesPerPod"), "4", "spec.tenants[0].maxDevicesPerPod", "InvalidType"),
    ("gpu-tenants", (*T0, "adminAccess"), "no", "spec.tenants[0].adminAccess", "InvalidType"),
    ("gpu-tenants", (*T0, "extendedResource"), True, "spec.tenants[0].extendedResource", "UnknownField"),
]


def broken(name: str, where: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    obj = example(name)
    _set(obj, where, value)
    return obj


@pytest.mark.parametrize(("name", "where", "value", "path", "reason"), BROKEN)
def test_each_mistake_is_an_error_at_its_path(
    name: str, where: tuple[str | int, ...], value: Any, path: str, reason: str
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
