"""The committed schemas/ are exactly what the generator produces, per Kubernetes version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from webhook.schema import generate, required

SCHEMAS = generate.SCHEMA_DIR
DRA_KINDS = ["ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule"]


def load(kind: str, version: str = "1.37") -> dict[str, Any]:
    return json.loads((SCHEMAS / f"v{version}" / f"{kind}.json").read_text())


def validator(kind: str, version: str = "1.37") -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load(kind, version))


def test_regenerated_schemas_are_identical_to_committed(tmp_path: Path) -> None:
    assert generate.main(["--out", str(tmp_path)]) == 0
    fresh = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("v*/*.json"))
    committed = sorted(str(p.relative_to(SCHEMAS)) for p in SCHEMAS.glob("v*/*.json"))
    assert fresh == committed
    for name in fresh:
        assert (tmp_path / name).read_text() == (SCHEMAS / name).read_text(), (
            f"schemas/{name} is stale: run python -m webhook.schema.generate"
        )
    assert generate.main(["--out", str(tmp_path), "--check"]) == 0


def test_check_mode_reports_a_changed_or_stale_file(tmp_path: Path) -> None:
    generate.write(tmp_path, generate.generate_all())
    (tmp_path / "v1.37" / "DeviceClass.json").write_text("{}\n")
    assert generate.main(["--out", str(tmp_path), "--check"]) == 1
    generate.write(tmp_path, generate.generate_all())
    (tmp_path / "v1.36" / "Stale.json").write_text("{}\n")  # a file no kind of 1.36 makes
    assert generate.main(["--out", str(tmp_path), "--check"]) == 1


def test_an_unaudited_required_field_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(required.AUDIT, ("V1ResourcePool", "generation"))
    with pytest.raises(generate.UnauditedRequired, match=r"V1ResourcePool\.generation"):
        generate.build("ResourceSlice", "1.37")


@pytest.mark.parametrize("version", generate.VERSIONS)
@pytest.mark.parametrize("kind", DRA_KINDS + ["Pod"])
def test_every_kind_and_its_list_is_present_and_valid_json_schema(kind: str, version: str) -> None:
    for name in (kind, kind + "List"):
        schema = load(name, version)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["title"] == name
        assert f"v{version}" in schema["description"]
        assert schema["$ref"].startswith("#/$defs/")
    items = load(kind + "List", version)["$defs"][load(kind + "List", version)["$ref"].rsplit("/", 1)[1]]
    assert "required" not in items  # an absent `items` decodes as an empty list


def test_every_model_is_closed_and_maps_have_value_schemas() -> None:
    for version in generate.VERSIONS:
        for kind in generate.kinds(version):
            for name, d in load(kind, version)["$defs"].items():
                if name in generate.SPECIAL_DEFS:
                    continue
                assert d["type"] == "object" and d["additionalProperties"] is False, (kind, name)
                for prop, ps in d["properties"].items():
                    if ps.get("type") == "object":
                        assert isinstance(ps.get("additionalProperties"), dict), (kind, name, prop)


def test_top_level_required_fields() -> None:
    slice_ = load("ResourceSlice")["$defs"]
    # spec and pool are structs: absent, their own fields are reported (spec.driver, spec.pool.name)
    assert "required" not in slice_["V1ResourceSlice"]
    assert slice_["V1ResourceSliceSpec"]["required"] == ["driver"]
    assert slice_["V1ResourcePool"]["required"] == ["name"]  # generation defaults to 0
    assert "required" not in slice_["V1ObjectMeta"]
    assert "required" not in load("ResourceClaim")["$defs"]["ResourceV1ResourceClaim"]
    for version in ("1.35", "1.36"):  # the 1.35/1.36 OpenAPI lists spec; an empty spec is valid
        assert "required" not in load("ResourceClaim", version)["$defs"]["ResourceV1ResourceClaim"]
        assert "required" not in load("DeviceClass", version)["$defs"]["V1DeviceClass"]


def test_new_v137_fields_are_present() -> None:
    d = load("ResourceSlice")["$defs"]
    assert d["V1DeviceCounterConsumption"]["properties"]["compatibilityGroups"]["items"] == {"type": "string"}
    assert d["V1ResourceSliceSpec"]["properties"]["skipNodeOperations"]["type"] == "array"
    assert d["V1ResourceSliceSpec"]["properties"]["partitionTypeAttribute"]["type"] == "string"
    c = load("ResourceClaim")["$defs"]
    assert "skipNodeOperations" in c["V1DeviceRequestAllocationResult"]["properties"]
    assert "derivedAttributes" in c["V1ExactDeviceRequest"]["properties"]


def test_each_version_has_its_own_fields() -> None:
    device = {v: load("ResourceSlice", v)["$defs"]["V1Device"]["properties"] for v in generate.VERSIONS}
    assert (
        "nodeAllocatableResources" in device["1.37"]
        and "nodeAllocatableResourceMappings" not in device["1.37"]
    )
    assert (
        "nodeAllocatableResourceMappings" in device["1.36"]
        and "nodeAllocatableResources" not in device["1.36"]
    )
    assert not {"nodeAllocatableResources", "nodeAllocatableResourceMappings"} & set(device["1.35"])
    spec = {
        v: load("ResourceSlice", v)["$defs"]["V1ResourceSliceSpec"]["properties"] for v in generate.VERSIONS
    }
    assert "skipNodeOperations" in spec["1.37"] and "skipNodeOperations" not in spec["1.36"]
    assert generate.kinds("1.36") == sorted(generate.KINDS)


@pytest.mark.parametrize(("version", "served"), [("1.35", "v1alpha3"), ("1.36", "v1beta2")])
def test_a_device_taint_rule_before_v1_has_the_shape_of_the_version_served(version: str, served: str) -> None:
    # 1.35 serves DeviceTaintRule as v1alpha3, 1.36 as v1beta2 (and v1alpha3): a converted object is checked
    # against that version's definitions, which have v1's shape: 1.37's schema, descriptions aside
    assert (
        generate.kind_definition("DeviceTaintRule", version)
        == f"io.k8s.api.resource.{served}.DeviceTaintRule"
    )
    for name in ("DeviceTaintRule", "DeviceTaintRuleList"):
        mine, v1 = load(name, version), load(name, "1.37")
        assert f"served as resource.k8s.io/{served}" in mine["description"]
        # descriptions aside (their wording changed between releases), and metav1's ListMeta (1.37 added
        # shardInfo)
        assert {k: _shape(d) for k, d in mine["$defs"].items() if "DeviceTaint" in k} == {
            k: _shape(d) for k, d in v1["$defs"].items() if "DeviceTaint" in k
        }
    assert _shape(load("DeviceTaintRule", version)) == _shape(load("DeviceTaintRule", "1.37"))


def _shape(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


def _resolve(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    return node


# Quantity fields (Go resource.Quantity) as the OpenAPI types them: int-or-string.
QUANTITIES = [
    ("ResourceSlice", "V1Counter", "value"),
    ("ResourceSlice", "V1DeviceCapacity", "value"),
    ("ResourceSlice", "V1CapacityRequestPolicy", "validValues"),
    ("ResourceSlice", "V1NodeAllocatableMapping", "capacityMultiplier"),
    ("ResourceClaim", "V1CapacityRequirements", "requests"),
    ("ResourceClaim", "V1DeviceRequestAllocationResult", "consumedCapacity"),
    ("Pod", "V1ResourceRequirements", "limits"),
    ("Pod", "V1PodSpec", "overhead"),
]


@pytest.mark.parametrize("kind,model,field", QUANTITIES)
def test_quantity_fields_are_int_or_string(kind: str, model: str, field: str) -> None:
    defs = load(kind)["$defs"]
    node = defs[model]["properties"][field]
    node = node.get("items") or node.get("additionalProperties") or node
    assert _resolve(defs, node)["type"] == ["string", "integer", "number"]
    assert _resolve(defs, node)["x-kubernetes-int-or-string"] is True


def test_int32_formats_come_from_the_openapi() -> None:
    pod = load("Pod")["$defs"]
    assert pod["V1ContainerPort"]["properties"]["containerPort"]["format"] == "int32"
    assert pod["V1PodSpec"]["properties"]["activeDeadlineSeconds"]["format"] == "int64"
    assert load("ResourceSlice")["$defs"]["V1ResourcePool"]["properties"]["generation"]["format"] == "int64"


SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: d0
    capacity:
      memory: {value: CAP, requestPolicy: {default: CAP, validValues: [CAP]}}
    consumesCounters:
    - counterSet: cs
      counters: {mem: {value: CAP}}
"""


@pytest.mark.parametrize("value", [8, "8Gi", 1.5, "500m"])
def test_quantity_accepts_int_and_string(value: Any) -> None:
    obj = yaml.safe_load(SLICE.replace("CAP", json.dumps(value)))
    assert list(validator("ResourceSlice").iter_errors(obj)) == []


@pytest.mark.parametrize("value", [True, [1], {"a": 1}])
def test_quantity_rejects_other_types(value: Any) -> None:
    obj = yaml.safe_load(SLICE.replace("CAP", json.dumps(value)))
    assert any(e.validator == "type" for e in validator("ResourceSlice").iter_errors(obj))


def test_claim_quantities_rawextension_and_time() -> None:
    claim = yaml.safe_load(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu, capacity: {requests: {memory: 4, cores: "2"}}}
    config:
    - opaque: {driver: gpu.example.com, parameters: {kind: GpuConfig, nested: {any: [1, "x"]}}}
status:
  allocation:
    allocationTimestamp: "2026-09-03T10:00:00Z"
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: p, device: d0, consumedCapacity: {memory: 4Gi}}
  devices:
  - {driver: gpu.example.com, pool: p, device: d0, data: {anything: true}}
"""
    )
    assert list(validator("ResourceClaim").iter_errors(claim)) == []
    # RawExtension decodes any JSON value; "must be a valid JSON object" is a validation error
    # (claim.config), reported together with the object's other errors
    claim["spec"]["devices"]["config"][0]["opaque"]["parameters"] = "not-an-object"
    assert list(validator("ResourceClaim").iter_errors(claim)) == []


def test_pod_int_or_string_and_resources() -> None:
    pod = yaml.safe_load(
        """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]
  overhead: {cpu: 250m}
  containers:
  - name: c
    image: busybox
    resources: {limits: {cpu: 1, memory: 1Gi}, claims: [{name: gpu}]}
    livenessProbe: {httpGet: {port: 8080}, tcpSocket: {port: http}}
"""
    )
    assert list(validator("Pod").iter_errors(pod)) == []
    pod["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"] = 1.5
    assert [e.validator for e in validator("Pod").iter_errors(pod)] == ["type"]
