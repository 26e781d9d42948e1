"""The committed schemas/ are exactly what the generator produces, and carry the v1.37 DRA shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from webhook.schema import generate

SCHEMAS = generate.SCHEMA_DIR
DRA_KINDS = ["ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule"]


def load(kind: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{kind}.json").read_text())


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load(kind))


def test_regenerated_schemas_are_identical_to_committed(tmp_path: Path) -> None:
    assert generate.main(["--out", str(tmp_path)]) == 0
    fresh = sorted(p.name for p in tmp_path.glob("*.json"))
    committed = sorted(p.name for p in SCHEMAS.glob("*.json"))
    assert fresh == committed
    for name in fresh:
        assert (tmp_path / name).read_text() == (SCHEMAS / name).read_text(), (
            f"schemas/{name} is stale: run python -m webhook.schema.generate"
        )
    assert generate.main(["--out", str(tmp_path), "--check"]) == 0


def test_check_mode_reports_a_changed_file(tmp_path: Path) -> None:
    generate.write(tmp_path, generate.generate_all())
    (tmp_path / "DeviceClass.json").write_text("{}\n")
    assert generate.main(["--out", str(tmp_path), "--check"]) == 1


@pytest.mark.parametrize("kind", DRA_KINDS + ["Pod"])
def test_every_kind_and_its_list_is_present_and_valid_json_schema(kind: str) -> None:
    for name in (kind, kind + "List"):
        schema = load(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["title"] == name
        assert schema["$ref"].startswith("#/$defs/")
    items = load(kind + "List")["$defs"][load(kind + "List")["$ref"].rsplit("/", 1)[1]]
    assert items["required"] == ["items"]


def test_every_model_is_closed_and_maps_have_value_schemas() -> None:
    for kind in generate.KINDS:
        for name, d in load(kind)["$defs"].items():
            if name in generate.SPECIAL_DEFS:
                continue
            assert d["type"] == "object" and d["additionalProperties"] is False, (kind, name)
            for prop, ps in d["properties"].items():
                if ps.get("type") == "object":
                    assert isinstance(ps.get("additionalProperties"), dict), (kind, name, prop)


def test_top_level_required_fields() -> None:
    slice_ = load("ResourceSlice")["$defs"]
    assert slice_["V1ResourceSlice"]["required"] == ["spec"]
    assert "apiVersion" not in slice_["V1ResourceSlice"].get("required", [])
    assert slice_["V1ResourceSliceSpec"]["required"] == ["driver", "pool"]
    assert "required" not in slice_["V1ObjectMeta"]
    # ResourceClaim.spec is `+optional` in the Go types; DeviceTaintRule.spec is `+required`.
    assert "required" not in load("ResourceClaim")["$defs"]["ResourceV1ResourceClaim"]
    assert load("DeviceTaintRule")["$defs"]["V1DeviceTaintRule"]["required"] == ["spec"]


def test_new_v137_fields_are_present() -> None:
    d = load("ResourceSlice")["$defs"]
    assert d["V1DeviceCounterConsumption"]["properties"]["compatibilityGroups"]["items"] == {"type": "string"}
    assert d["V1ResourceSliceSpec"]["properties"]["skipNodeOperations"]["type"] == "array"
    assert d["V1ResourceSliceSpec"]["properties"]["partitionTypeAttribute"]["type"] == "string"
    c = load("ResourceClaim")["$defs"]
    assert "skipNodeOperations" in c["V1DeviceRequestAllocationResult"]["properties"]
    assert "derivedAttributes" in c["V1ExactDeviceRequest"]["properties"]


def _resolve(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.parametrize("model,field", sorted(generate.QUANTITY_FIELDS))
def test_every_quantity_field_is_int_or_string(model: str, field: str) -> None:
    for kind in generate.KINDS:
        defs = load(kind)["$defs"]
        if model in defs:
            node = defs[model]["properties"][field]
            node = node.get("items") or node.get("additionalProperties") or node
            assert _resolve(defs, node)["type"] == ["string", "integer", "number"]
            assert _resolve(defs, node)["x-kubernetes-int-or-string"] is True
            return
    pytest.fail(f"{model}.{field} is in no schema")


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
