"""Round-trip property: for beta objects derived from the realistic manifests by random edits (valid and
invalid), `draguard convert` followed by v1 validation gives the same verdict and the same findings
(rule, severity, field mapped to the manifest's version) as validating the beta manifest with
--runtime-config. The one documented difference: v1beta1 leaves allocationMode/count undefaulted when a
request has fields but no deviceClassName, so the beta form has an extra `claim.allocation-mode` there."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.context import Context
from webhook.convert import source_path
from webhook.convert.rewrite import convert_text
from webhook.convert.served import parse_runtime_config
from webhook.convert.v1beta1 import undefaulted_requests
from webhook.validate import check_file_text

HERE = Path(__file__).resolve().parent / "manifests"
BASES = [
    d
    for f in (
        "v1beta1/gpu-cluster.yaml",
        "v1beta1/partitionable-gpu.yaml",
        "v1beta2/nic.yaml",
        "v1beta1/commented.yaml",
    )
    for d in yaml.safe_load_all((HERE / f).read_text())
    if d and str(d.get("apiVersion", "")).startswith("resource.k8s.io/v1beta")
]
BETA = Context(runtime_config=parse_runtime_config("api/beta=true"))
V1 = Context()

REQUEST_EDITS: list[tuple[str, Any]] = [
    ("deviceClassName", "example-gpu"),
    ("deviceClassName", "Not_A_Class"),
    ("deviceClassName", ""),
    ("deviceClassName", None),
    ("count", -1),
    ("count", 0),
    ("count", 3),
    ("count", "two"),
    ("allocationMode", "All"),
    ("allocationMode", ""),
    ("allocationMode", "Most"),
    ("selectors", []),
    ("selectors", [{"cel": {"expression": "device.driver == 'x'"}}]),
    ("selectors", [{"cel": {"expression": "device.driver =="}}]),
    ("adminAccess", False),
    ("adminAccess", True),
    ("tolerations", []),
    ("tolerations", [{"key": "k", "operator": "Exists", "value": "v"}]),
    ("capacity", {}),
    ("capacity", {"requests": {"memory": "10Gi"}}),
    ("firstAvailable", [{"name": "a", "deviceClassName": "example-gpu"}]),
    ("firstAvailable", [{"name": "A", "deviceClassName": "example-gpu", "count": 0}]),
    ("name", "Bad Name"),
    ("deviceClas", "typo"),
]
DEVICE_EDITS: list[tuple[str, Any]] = [
    ("attributes", {"model": {"string": "X"}}),
    ("attributes", {"bad-name": {"int": 1}}),
    ("attributes", {"model": {"int": 1, "bool": True}}),
    ("attributes", {}),
    ("capacity", {"memory": {"value": "1Gi"}}),
    ("capacity", {"memory": {"value": "lots"}}),
    ("taints", [{"key": "k", "effect": "NoSchedule"}]),
    ("taints", [{"key": "k", "effect": "Sometimes"}]),
    ("taints", []),
    ("allNodes", True),
    ("nodeName", "n"),
    ("bindsToNode", True),
    ("consumesCounters", [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "1Gi"}}}]),
]


def _requests(obj: dict[str, Any]) -> list[dict[str, Any]] | None:
    spec = obj.get("spec", {})
    if obj["kind"] == "ResourceClaimTemplate":
        spec = spec.get("spec", {})
    if obj["kind"] not in ("ResourceClaim", "ResourceClaimTemplate"):
        return None
    return spec.setdefault("devices", {}).setdefault("requests", [])


@st.composite
def beta_objects(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(BASES)))
    version = obj["apiVersion"]
    requests = _requests(obj)
    if requests is not None:
        if not requests:
            requests.append({"name": "r"})
        for _ in range(draw(st.integers(0, 4))):
            r = requests[draw(st.integers(0, len(requests) - 1))]
            key, value = draw(st.sampled_from(REQUEST_EDITS))
            target = (
                r.setdefault("exactly", {})
                if version.endswith("v1beta2") and key not in ("name", "firstAvailable")
                else r
            )
            if value is None:
                target.pop(key, None)
            else:
                target[key] = copy.deepcopy(value)
            if version.endswith("v1beta1") and draw(st.integers(0, 20)) == 0:
                r["exactly"] = {"deviceClassName": "example-gpu"}  # v1's shape under v1beta1
    elif obj["kind"] == "ResourceSlice" and obj["spec"].get("devices"):
        spec = obj["spec"]
        for _ in range(draw(st.integers(0, 4))):
            d = spec["devices"][draw(st.integers(0, len(spec["devices"]) - 1))]
            key, value = draw(st.sampled_from(DEVICE_EDITS))
            if version.endswith("v1beta1"):
                outside = draw(st.integers(0, 15)) == 0  # v1's shape under v1beta1
                (d if outside else d.setdefault("basic", {}))[key] = copy.deepcopy(value)
            else:
                d[key] = copy.deepcopy(value)
        if version.endswith("v1beta1") and draw(st.booleans()):
            spec["nodeName"] = draw(st.sampled_from(["", "node-z"]))
            spec["allNodes"] = draw(st.sampled_from([False, True]))
            if spec["nodeName"] == "node-z" or spec["allNodes"]:
                spec["nodeName"] = "" if spec["allNodes"] else spec["nodeName"]
    return obj


def _found(text: str, ctx: Context) -> set[tuple[str, str, str]]:
    res = check_file_text(text, "t.yaml", ctx)
    [obj] = res.objects
    return {(v.rule, v.severity.value, v.field) for v in obj.violations if v.rule != "input.deprecated-api"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(beta_objects())
def test_convert_then_validate_as_v1_equals_validating_the_beta_object(obj: dict[str, Any]) -> None:
    text = yaml.safe_dump(obj, sort_keys=False)
    beta = _found(text, BETA)
    converted = convert_text(text, "t.yaml")
    if converted.problems:  # only what strict decoding of the beta version rejects is unconvertible
        assert {r for r, _, _ in beta} & {"schema.unknown-field", "schema.type"}, (beta, converted.problems)
        return
    assert converted.text is not None
    v1 = {
        (rule, sev, source_path(obj["apiVersion"], obj["kind"], field))
        for rule, sev, field in _found(converted.text, V1)
    }
    assert v1 <= beta
    undefaulted: tuple[str, ...] = ()
    if obj["apiVersion"].endswith("v1beta1"):
        prefix = "spec.spec" if obj["kind"] == "ResourceClaimTemplate" else "spec"
        undefaulted = tuple(f"{prefix}.devices.requests[{i}]." for i in undefaulted_requests(obj))
    extra = beta - v1  # only what v1beta1's narrower defaulting leaves for validation
    assert all(
        rule == "claim.allocation-mode" and field.startswith(undefaulted) for rule, _, field in extra
    ), extra
