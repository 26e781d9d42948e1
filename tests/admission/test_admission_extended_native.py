"""`--extended-resources native` on the validating endpoint: a Pod's extended resources checked against
the DeviceClass mapping (implicit class missing, several classes declaring one name, a special claim too
large for any node), reported once per resource at the container path that asks for it, graded by the
policy file; and the admission feasibility of such a Pod pointing at its containers."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from admission_fixtures import admission_review, causes, cluster_objects, pod, served, snapshot

from webhook.admission import AdmissionConfig, review, review_with_info
from webhook.admission.extended import native_violations
from webhook.config.policy import FeasibilityPolicy, Policy
from webhook.config.profile import load_profile
from webhook.model.violation import Severity

SNAP = snapshot()
IMPLICIT = "deviceclass.resource.kubernetes.io/"


def _pod(
    *containers: dict[str, str], init: list[dict[str, str]] | None = None, name: str = "p"
) -> dict[str, Any]:
    p = pod(name)
    base = p["spec"]["containers"][0]
    p["spec"]["containers"] = []
    for i, res in enumerate(containers):
        c = copy.deepcopy(base)
        c["name"] = f"c{i}"
        c["resources"] = {"requests": dict(res), "limits": dict(res)}
        p["spec"]["containers"].append(c)
    for i, res in enumerate(init or []):
        c = copy.deepcopy(base)
        c["name"] = f"init{i}"
        c["resources"] = {"limits": dict(res)}  # limits only: the path says limits
        p["spec"].setdefault("initContainers", []).append(c)
    return p


def _warnings(obj: dict[str, Any], snap: Any = SNAP, config: AdmissionConfig | None = None) -> list[str]:
    response = review(admission_review(served(obj)), snap, config or AdmissionConfig())["response"]
    assert response["allowed"] is True, response
    return [w for w in response.get("warnings", []) if "(pod.extended-resource-" in w]


def _class(name: str, ern: str, created: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"extendedResourceName": ern},
    }


def test_an_implicit_name_of_a_missing_class_is_a_warning_at_the_container() -> None:
    p = _pod({"cpu": "1"}, {IMPLICIT + "tpu.example.com": "1"}, {IMPLICIT + "tpu.example.com": "2"})
    assert _warnings(p) == [
        f'spec.containers[1].resources.requests[{IMPLICIT}tpu.example.com]: DeviceClass "tpu.example.com" does '
        f"not exist, so nothing serves {IMPLICIT}tpu.example.com: the Pod stays Pending until the class is "
        "created (pod.extended-resource-class)"
    ]


def test_names_that_resolve_give_no_finding() -> None:
    p = _pod(
        {"example.com/h100": "1"},
        {IMPLICIT + "gpu.example.com": "1"},
        {"vendor.com/fpga": "1"},  # no class maps it: a device plugin's
        {IMPLICIT + "tpu.example.com": "0"},  # zero: asks for nothing
    )
    assert _warnings(p) == []


def test_several_classes_declaring_a_name_name_the_one_that_serves_it() -> None:
    newer = _class("h100-v2.example.com", "example.com/h100", "2026-11-15T00:00:00Z")
    same_time = _class("h100-aa.example.com", "example.com/h100", "2026-11-15T00:00:00Z")
    snap = snapshot([*cluster_objects(), newer, same_time])
    p = _pod({"cpu": "1"}, init=[{"example.com/h100": "1"}])
    assert _warnings(p, snap) == [
        "spec.initContainers[0].resources.limits[example.com/h100]: example.com/h100 is the extendedResourceName "
        'of DeviceClasses "h100-aa.example.com", "h100-v2.example.com", "h100.example.com"; "h100-aa.example.com" '
        "serves it (newest creationTimestamp, then the smaller name), the others never do: give each class its "
        "own name (pod.extended-resource-clash)"
    ]


def test_a_special_claim_over_32_devices_is_reported_unless_a_device_plugin_could_serve_it() -> None:
    p = _pod({"example.com/h100": "20"}, {"example.com/h100": "20", "example.com/a100": "1"})
    found = native_violations(p, [o for o in cluster_objects() if o["kind"] == "DeviceClass"])
    assert [(v.rule, v.severity, v.field) for v in found] == [
        (
            "pod.extended-resource-count",
            Severity.WARNING,
            "spec.containers[0].resources.requests[example.com/h100]",
        )
    ]
    assert found[0].message == (
        "the scheduler allocates the Pod's extended resources as one ResourceClaim of 41 devices (20 for "
        'example.com/h100 of container "c0"; 1 for example.com/a100 of container "c1"; 20 for example.com/h100 of '
        'container "c1"), but a claim holds at most 32: no node can serve this Pod through DRA, and no node '
        "advertises the resources through a device plugin"
    )
    plugin_node = {
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"example.com/h100": "40"}},
    }
    classes = [o for o in cluster_objects() if o["kind"] == "DeviceClass"]
    assert native_violations(p, classes, [plugin_node]) == []
    assert native_violations(_pod({"example.com/h100": "32"}), classes) == []


def test_the_policy_file_grades_the_rules() -> None:
    p = _pod({IMPLICIT + "tpu.example.com": "1"})
    config = AdmissionConfig(policy=Policy(severity={"pod.extended-resource-class": Severity.ERROR}))
    response = review(admission_review(served(p)), SNAP, config)["response"]
    assert response["allowed"] is False
    assert [(f, r) for f, r, _ in causes(response)] == [
        (f"spec.containers[0].resources.requests[{IMPLICIT}tpu.example.com]", "FieldValueInvalid")
    ]
    off = AdmissionConfig(policy=Policy(disabled=frozenset({"pod.extended-resource-class"})))
    assert _warnings(p, config=off) == []


@pytest.mark.parametrize("mode", ["off", "translate"])
def test_other_modes_do_not_check_the_mapping(mode: str) -> None:
    p = _pod({IMPLICIT + "tpu.example.com": "1"})
    assert _warnings(p, config=AdmissionConfig(extended_resources=mode)) == []


def test_the_default_mode_follows_the_profile() -> None:
    assert AdmissionConfig().extended_resources == "native"
    assert AdmissionConfig(profile=load_profile("1.35")).extended_resources == "off"
    with pytest.raises(ValueError, match="template writer"):
        AdmissionConfig(endpoint="mutate", extended_resources="translate")
    with pytest.raises(ValueError, match="native, translate, off"):
        AdmissionConfig(extended_resources="sometimes")


ENFORCE = AdmissionConfig(policy=Policy(feasibility=FeasibilityPolicy(kinds={"Pod": "enforce"})))


@pytest.mark.parametrize(
    ("amount", "field", "reason"),
    [
        (
            "5",
            "spec.containers[0].resources.requests[example.com/h100]",
            "request container-0-request-0: the largest node, gpu-node-2, has 4 devices of class h100.example.com; "
            "5 requested",
        ),
        (
            "33",
            "spec.containers[0].resources.requests[example.com/h100]",
            "number of requested devices 33 exceeds the claim limit of 32",
        ),
    ],
)
def test_feasibility_of_extended_resources_points_at_the_container(
    amount: str, field: str, reason: str
) -> None:
    out, info = review_with_info(admission_review(served(_pod({"example.com/h100": amount}))), SNAP, ENFORCE)
    response = out["response"]
    assert info.verdict == "unsatisfiable" and response["allowed"] is False
    [(where, _, message)] = causes(response)
    assert where == field and reason in message
