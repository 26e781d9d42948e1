"""The fast structural checker: paths, messages, null handling, and agreement with jsonschema."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.model.catalogue import RULES
from webhook.schema import structural
from webhook.schema.structural import check, strip_nulls

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu, labels: {app: gpu}}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 3, resourceSliceCount: 2}
  nodeName: node-1
  partitionTypeAttribute: gpu.example.com/partition
  skipNodeOperations: [NodeUnprepareResources]
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      index: {int: 0}
      driverVersion: {version: 1.2.3}
      mig: {bool: true}
      gpu.example.com/partition: {string: full}
    capacity:
      memory:
        value: 40Gi
        requestPolicy: {default: 1Gi, validRange: {min: 1Gi, max: 40Gi, step: 1Gi}}
      cores: {value: 108}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 40Gi}}
      compatibilityGroups: [small, big]
    taints: [{key: example.com/unhealthy, value: "true", effect: NoSchedule, timeAdded: "2026-09-03T10:00:00Z"}]
    allowMultipleAllocations: true
    bindsToNode: true
    bindingConditions: [attached]
    bindingFailureConditions: [failed]
"""

SHARED = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: shared}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 3, resourceSliceCount: 2}
  perDeviceNodeSelection: true
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 40Gi}, sms: {value: 108}}
"""

DEVICE_CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
  config: [{opaque: {driver: gpu.example.com, parameters: {kind: Cfg, sharing: {strategy: TimeSlicing}}}}]
  extendedResourceName: example.com/gpu
"""

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: "device.capacity['gpu.example.com'].memory >= quantity('8Gi')"}}]
        allocationMode: ExactCount
        count: 2
        adminAccess: false
        tolerations: [{key: example.com/unhealthy, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]
        capacity: {requests: {memory: 8Gi}}
    - name: nic
      firstAvailable:
      - {name: fast, deviceClassName: nic.example.com, count: 1}
      - {name: slow, deviceClassName: nic.example.com, allocationMode: All}
    constraints: [{requests: [gpu, nic/fast], matchAttribute: gpu.example.com/numa}]
    config: [{requests: [gpu], opaque: {driver: gpu.example.com, parameters: {kind: Cfg}}}]
status:
  allocation:
    allocationTimestamp: "2026-09-03T10:00:00Z"
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
    devices:
      results:
      - request: gpu
        driver: gpu.example.com
        pool: node-1
        device: gpu-0
        shareID: 0b0e8b0c-4f0e-4e43-9a3a-2f0a6d3b2c11
        consumedCapacity: {memory: 8Gi}
        skipNodeOperations: ["*"]
      config: [{source: FromClaim, requests: [gpu], opaque: {driver: gpu.example.com, parameters: {a: 1}}}]
  reservedFor: [{resource: pods, name: p, uid: 1234-abcd}]
  devices:
  - driver: gpu.example.com
    pool: node-1
    device: gpu-0
    conditions:
    - {type: Ready, status: "True", lastTransitionTime: "2026-09-03T10:00:00Z", reason: Ok, message: ""}
    data: {anything: [1, 2]}
    networkData: {interfaceName: eth1, ips: [192.0.2.5/24], hardwareAddress: "00:11:22:33:44:55"}
"""

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ns}
spec:
  metadata: {labels: {team: a}}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
"""

TAINT_RULE = """
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-0}
  taint: {key: example.com/maintenance, effect: NoExecute}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: t}
  containers:
  - name: app
    image: busybox
    resources:
      limits: {cpu: 2, memory: 1Gi}
      claims: [{name: gpu, request: gpu}]
    ports: [{containerPort: 80}]
    readinessProbe: {httpGet: {path: /, port: 80}}
status:
  resourceClaimStatuses: [{name: gpu, resourceClaimName: p-gpu-abcde}]
"""

MANIFESTS = {
    "slice": ("ResourceSlice", SLICE),
    "shared": ("ResourceSlice", SHARED),
    "class": ("DeviceClass", DEVICE_CLASS),
    "claim": ("ResourceClaim", CLAIM),
    "template": ("ResourceClaimTemplate", TEMPLATE),
    "taintrule": ("DeviceTaintRule", TAINT_RULE),
    "pod": ("Pod", POD),
}


def manifest(name: str) -> tuple[str, dict[str, Any]]:
    kind, text = MANIFESTS[name]
    return kind, yaml.safe_load(text)


def found(obj: Any, kind: str) -> set[tuple[str, str]]:
    return {(v.rule, v.field) for v in check(obj, kind)[0]}


# -- plain behaviour ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_valid_manifests_have_no_violations(name: str) -> None:
    kind, obj = manifest(name)
    assert check(obj, kind) == ([], False)


def test_list_kinds() -> None:
    items = [manifest("slice")[1], manifest("shared")[1]]
    assert check(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": items}, "ResourceSliceList"
    ) == ([], False)
    del items[1]["spec"]["driver"]
    items[0]["spec"]["devices"][0]["name"] = 5
    v, fatal = check({"items": items, "metadata": {"resourceVersion": "1"}}, "ResourceSliceList")
    assert {(x.rule, x.field) for x in v} == {
        ("schema.type", "items[0].spec.devices[0].name"),
        ("schema.required", "items[1].spec.driver"),
    }
    assert fatal
    assert found({}, "PodList") == set()  # an absent `items` decodes as an empty list


def test_unknown_field_path_and_did_you_mean() -> None:
    kind, obj = manifest("slice")
    obj["spec"]["driverName"] = obj["spec"].pop("driver")
    obj["spec"]["devices"][0]["attributes"]["model"]["stirng"] = "x"
    obj["spec"]["devices"][0]["consumesCounters"][0]["compatibilityGroup"] = ["a"]
    obj["spec"]["devices"][0]["zzz"] = 1
    v, fatal = check(obj, kind)
    msgs = {x.field: x.message for x in v if x.rule == "schema.unknown-field"}
    assert msgs == {
        "spec.driverName": 'unknown field "spec.driverName": did you mean "driver"?',
        "spec.devices[0].attributes[model].stirng": 'unknown field "spec.devices[0].attributes[model].stirng": '
        'did you mean "string"?',
        "spec.devices[0].consumesCounters[0].compatibilityGroup": "unknown field "
        '"spec.devices[0].consumesCounters[0].compatibilityGroup": did you mean "compatibilityGroups"?',
        "spec.devices[0].zzz": 'unknown field "spec.devices[0].zzz"',
    }
    assert ("schema.required", "spec.driver") in {(x.rule, x.field) for x in v}
    assert fatal


def test_case_mismatch_hint() -> None:
    kind, obj = manifest("claim")
    req = obj["spec"]["devices"]["requests"][0]["exactly"]
    req["DeviceClassName"] = req.pop("deviceClassName")
    v, _ = check(obj, kind)
    assert [x.message for x in v if x.rule == "schema.unknown-field"] == [
        'unknown field "spec.devices.requests[0].exactly.DeviceClassName": did you mean "deviceClassName"?'
    ]


def test_wrong_type_path_and_message() -> None:
    kind, obj = manifest("slice")
    obj["spec"]["pool"]["generation"] = "string"
    v, fatal = check(obj, kind)
    assert [(x.rule, x.field, x.message) for x in v] == [
        (
            "schema.type",
            "spec.pool.generation",
            'Invalid value: "string": spec.pool.generation in body must be of type integer: "string"',
        )
    ]
    assert fatal


@pytest.mark.parametrize(
    "value,words",
    [
        (True, ["YAML 1.1", "y, n, yes, no, on, off, true, false", "quote the value", "y, yes, on, true"]),
        (False, ["YAML 1.1", "n, no, off, false"]),
        (1.1, ["quote the value"]),
        ({"a": 1}, ['"object"', "must be of type string"]),
    ],
)
def test_yaml_hints_for_strings(value: Any, words: list[str]) -> None:
    kind, obj = manifest("slice")
    obj["spec"]["devices"][0]["attributes"]["model"]["string"] = value
    (x,), _ = check(obj, kind)
    assert x.field == "spec.devices[0].attributes[model].string"
    for w in words:
        assert w in x.message


def test_yaml_boolean_read_by_the_loader_gets_the_hint() -> None:
    obj = yaml.safe_load(TAINT_RULE.replace("effect: NoExecute", "effect: NoExecute, value: on"))
    (x,), fatal = check(obj, "DeviceTaintRule")
    assert (x.rule, x.field) == ("schema.type", "spec.taint.value") and "YAML 1.1" in x.message and fatal


@pytest.mark.parametrize("value", [8, "8Gi", 1.5, "100m"])
def test_quantity_accepts_numbers_and_strings(value: Any) -> None:
    kind, obj = manifest("slice")
    obj["spec"]["devices"][0]["capacity"]["memory"]["value"] = value
    obj["spec"]["devices"][0]["capacity"]["memory"]["requestPolicy"]["validRange"]["step"] = value
    assert check(obj, kind) == ([], False)


def test_quantity_rejects_booleans_and_lists() -> None:
    kind, obj = manifest("claim")
    obj["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = [1]
    obj["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]["memory"] = True
    v, fatal = check(obj, kind)
    assert {(x.field, x.message.split(" in body")[0]) for x in v} == {
        (
            "spec.devices.requests[0].exactly.capacity.requests[memory]",
            'Invalid value: "array": spec.devices.requests[0].exactly.capacity.requests[memory]',
        ),
        (
            "status.allocation.devices.results[0].consumedCapacity[memory]",
            'Invalid value: "boolean": status.allocation.devices.results[0].consumedCapacity[memory]',
        ),
    }
    assert all("must be of type string or number" in x.message for x in v) and fatal


def test_integer_rejects_floats_and_booleans() -> None:
    kind, obj = manifest("claim")
    obj["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2.0
    obj["spec"]["devices"]["requests"][0]["exactly"]["tolerations"][0]["tolerationSeconds"] = True
    v, _ = check(obj, kind)
    assert {x.field for x in v} == {
        "spec.devices.requests[0].exactly.count",
        "spec.devices.requests[0].exactly.tolerations[0].tolerationSeconds",
    }
    assert any("whole number" in x.message for x in v)


def test_missing_required_is_reported_but_not_fatal() -> None:
    kind, obj = manifest("claim")
    del obj["spec"]["devices"]["requests"][1]["firstAvailable"][0]["deviceClassName"]
    del obj["status"]["reservedFor"][0]["uid"]
    v, fatal = check(obj, kind)
    assert [(x.rule, x.field, x.message) for x in v] == [
        ("schema.required", "spec.devices.requests[1].firstAvailable[0].deviceClassName", "Required value"),
        ("schema.required", "status.reservedFor[0].uid", "Required value"),
    ]
    assert not fatal


def test_null_optional_fields_are_absent() -> None:
    kind, obj = manifest("slice")
    obj["metadata"]["annotations"] = None
    obj["spec"]["sharedCounters"] = None
    obj["spec"]["devices"][0]["taints"] = None
    obj["spec"]["devices"][0]["consumesCounters"][0]["compatibilityGroups"] = None
    assert check(obj, kind) == ([], False)
    stripped = strip_nulls(obj)
    assert "taints" not in stripped["spec"]["devices"][0] and "annotations" not in stripped["metadata"]
    assert obj["spec"]["devices"][0]["taints"] is None  # strip_nulls copies


def test_null_required_field_is_required() -> None:
    kind, obj = manifest("taintrule")
    obj["spec"]["taint"]["effect"] = None
    assert check(obj, kind) == (
        [
            structural.Violation(
                "schema.required", structural.Severity.ERROR, "spec.taint.effect", "Required value"
            )
        ],
        False,
    )


def test_null_list_items_and_map_values_are_fatal() -> None:
    kind, obj = manifest("slice")
    obj["spec"]["devices"].append(None)
    obj["spec"]["devices"][0]["capacity"]["cores"] = None
    v, fatal = check(obj, kind)
    assert {(x.rule, x.field) for x in v} == {
        ("schema.null", "spec.devices[1]"),
        ("schema.null", "spec.devices[0].capacity[cores]"),
    }
    assert all("must be an object, not null" in x.message for x in v) and fatal


def test_root_not_an_object_and_unknown_kind() -> None:
    v, fatal = check(["x"], "DeviceClass")
    assert v[0].rule == "schema.type" and fatal
    with pytest.raises(ValueError, match="no schema for kind"):
        check({}, "Secret")


def test_rule_ids_are_declared() -> None:
    for rid in ("schema.unknown-field", "schema.type", "schema.required", "schema.null"):
        assert RULES[rid].tag == "schema" and "ResourceSlice" in RULES[rid].kinds


# -- cross-check against jsonschema ------------------------------------------------------------

_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}
_TOKEN = re.compile(r"\[([^\]]*)\]|\.?([^.\[]+)")


def reference(obj: Any, kind: str) -> set[tuple[str, tuple[Any, ...]]]:
    """Violations according to jsonschema, in (rule, path elements) form."""
    if kind not in _VALIDATORS:
        schema = json.loads(structural.schema_path(kind).read_text())
        _VALIDATORS[kind] = jsonschema.Draft202012Validator(schema)
    out: set[tuple[str, tuple[Any, ...]]] = set()
    for e in _VALIDATORS[kind].iter_errors(obj):
        path = tuple(e.absolute_path)
        if e.validator == "type":
            out.add(("schema.type", path))
        elif e.validator == "required":
            out |= {("schema.required", path + (r,)) for r in e.validator_value if r not in e.instance}
        elif e.validator == "additionalProperties":
            out |= {
                ("schema.unknown-field", path + (k,)) for k in e.instance if k not in e.schema["properties"]
            }
        else:
            raise AssertionError(f"unexpected jsonschema error {e.validator}: {e.message}")
    return out


def ours(obj: Any, kind: str) -> set[tuple[str, tuple[Any, ...]]]:
    out = set()
    for v in check(obj, kind)[0]:
        if v.rule in ("schema.quantity", "schema.integer-range"):
            continue  # decoding checks beyond JSON Schema (ParseQuantity, Go int widths): tested below
        parts: list[Any] = []
        for m in _TOKEN.finditer(v.field):
            if m.group(1) is not None:
                parts.append(int(m.group(1)) if m.group(1).isdigit() else m.group(1))
            else:
                parts.append(m.group(2))
        out.add(("schema.type" if v.rule == "schema.null" else v.rule, tuple(parts)))
    return out


def sites(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path in a document (the root included)."""
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from sites(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from sites(v, path + (i,))


def mutate(obj: Any, path: tuple[Any, ...], how: str) -> Any:
    obj = copy.deepcopy(obj)
    if not path:
        return ["root"] if how.startswith("type") else obj
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if how == "delete" and isinstance(parent, dict):
        del parent[last]
    elif how == "unknown" and isinstance(parent[last], dict):
        parent[last]["zzUnknown"] = 1
    elif how.startswith("type:"):
        parent[last] = {"str": "x", "int": 7, "float": 1.5, "bool": True, "list": [1], "dict": {"k": "v"}}[
            how[5:]
        ]
    return obj


HOWS = ["delete", "unknown", "type:str", "type:int", "type:float", "type:bool", "type:list", "type:dict"]


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_agrees_with_jsonschema_on_every_single_mutation(name: str) -> None:
    kind, obj = manifest(name)
    assert ours(obj, kind) == reference(obj, kind) == set()
    for path in list(sites(obj)):
        for how in HOWS:
            bad = mutate(obj, path, how)
            assert ours(bad, kind) == reference(bad, kind), (name, path, how)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_agrees_with_jsonschema_on_combined_mutations(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(MANIFESTS)))
    kind, obj = manifest(name)
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(list(sites(obj))))
        obj = mutate(obj, path, data.draw(st.sampled_from(HOWS)))
    assert ours(obj, kind) == reference(obj, kind)
