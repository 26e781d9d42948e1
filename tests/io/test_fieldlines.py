"""Per-field lines: `locate` on real manifests (block and flow YAML, Lists, JSON), and findings in
`draguard validate` pointing at the line of their field."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cliproc import draguard
from webhook.io.fieldlines import locate, parse_path

MANIFEST = """\
# GPU inventory of node-1, as the driver publishes it
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu.example.com
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
    capacity:
      memory:
        value: 40Gi
  - name: GPU_1
    capacity:
      memory: {value: 40Gi}
---
apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata:
    name: one-gpu
    namespace: ml
  spec:
    spec:
      devices:
        requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.example.com
            selectors:
            - cel:
                expression: >-
                  device.attributes["gpu.example.com"].model ==
                  "A100"
"""


def test_paths_are_parsed_as_the_api_server_writes_them() -> None:
    assert parse_path("spec.devices[3].capacity[memory].value") == (
        "spec",
        "devices",
        3,
        "capacity",
        "memory",
        "value",
    )
    assert parse_path("spec.devices[0].attributes[gpu.example.com/model]") == (
        "spec",
        "devices",
        0,
        "attributes",
        "gpu.example.com/model",
    )
    assert (
        parse_path("<path of the value>") is None and parse_path("a | b") is None and parse_path("") is None
    )


def test_each_field_gets_the_line_of_its_key_or_item() -> None:
    lines = locate(
        MANIFEST,
        3,
        [
            "spec.devices[0].capacity[memory].value",
            "spec.devices[1].name",
            "spec.devices[1]",
            "spec.pool.generation",  # inside a flow mapping: the line of that mapping
            "spec.devices[0].attributes[model].string",
        ],
    )
    assert lines == {
        "spec.devices[0].capacity[memory].value": 17,
        "spec.devices[1].name": 18,
        "spec.devices[1]": 18,
        "spec.pool.generation": 9,
        "spec.devices[0].attributes[model].string": 14,
    }


def test_a_missing_field_gets_the_line_of_its_deepest_parent() -> None:
    assert locate(
        MANIFEST, 3, ["spec.devices[1].attributes", "metadata.namespace", "spec.perDeviceNodeSelection"]
    ) == {
        "spec.devices[1].attributes": 18,
        "metadata.namespace": 5,
        "spec.perDeviceNodeSelection": 7,
    }


def test_items_of_a_list_are_found_with_their_prefix() -> None:
    got = locate(
        MANIFEST, 22, ["spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"], "items[1]."
    )
    assert got == {"spec.spec.devices.requests[0].exactly.selectors[0].cel.expression": 42}
    assert locate(MANIFEST, 22, ["metadata.name"], "items[0].") == {"metadata.name": 27}


def test_a_json_document_and_unusable_input_are_handled() -> None:
    doc = json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": [1, 2]}}, indent=2
    )
    assert locate(doc, 1, ["spec.x[1]", "metadata.name"]) == {"spec.x[1]": 10, "metadata.name": 5}
    assert locate("a: [\n", 1, ["a"]) == {}  # a syntax error: the caller keeps the object's line
    assert locate(MANIFEST, 4, ["spec"]) == {}  # no document starts on line 4


def test_validate_points_each_finding_at_its_field(tmp_path: Path) -> None:
    (tmp_path / "inventory.yaml").write_text(
        MANIFEST.replace("deviceClassName: gpu.example.com", "deviceClassName: gpu")
    )
    p = draguard("validate", "-o", "json", str(tmp_path))
    assert p.returncode == 1, p.stderr
    found = {
        (v["rule"], v["field"]): v["line"] for o in json.loads(p.stdout)["objects"] for v in o["violations"]
    }
    assert found[("device.name", "spec.devices[1].name")] == 18
    # a cross-object finding, found after every file was read
    assert (
        found[("claim.unknown-device-class", "spec.spec.devices.requests[0].exactly.deviceClassName")] == 39
    )
    text = draguard("validate", str(tmp_path)).stdout
    assert f"{tmp_path / 'inventory.yaml'}:18: error device.name: spec.devices[1].name:" in text


# --- every command and entry point that has the text: JSON streams, stdin, a request body, strip ---------

STREAM = """\
{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
 "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}

{
  "apiVersion": "resource.k8s.io/v1",
  "kind": "ResourceClaim",
  "metadata": {"name": "two", "namespace": "ml"},
  "spec": {
    "devices": {
      "requests": [
        {"name": "gpus",
         "exactly": {"deviceClassName": "gpu", "count": 2,
                     "selectors": [{"cel": {"expression": "device.attributes[\\"gpu.example.com\\"].model == 1 ||\\n device.driver == 1"}}]}}
      ]
    }
  }
}
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
 "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "resourceSliceCount": 1},
          "devices": [{"name": "gpu-0"},
                      {"name": "GPU_1"}]}}
"""
SELECTOR = "spec.devices.requests[0].exactly.selectors[0].cel.expression"


def test_each_value_of_a_json_stream_is_walked_as_json() -> None:
    assert locate(STREAM, 4, [SELECTOR, "metadata.name"]) == {SELECTOR: 13, "metadata.name": 7}
    assert locate(STREAM, 18, ["spec.devices[1].name", "spec.pool.generation"]) == {
        "spec.devices[1].name": 21,
        "spec.pool.generation": 19,  # missing: its parent's line
    }
    assert locate(STREAM, 1, ["spec.selectors[0]"]) == {"spec.selectors[0]": 2}
    assert locate(STREAM, 3, ["spec"]) == {}  # a blank line: no value starts there


def _lines(out: str) -> dict[str, int]:
    return {v["field"]: v["line"] for o in json.loads(out)["objects"] for v in o["violations"]}


def test_validate_and_simulate_on_stdin_point_at_the_field_lines(tmp_path: Path) -> None:
    p = draguard("validate", "-o", "json", "-", stdin=STREAM)
    found = _lines(p.stdout)
    assert found[SELECTOR] == 13 and found["spec.devices[1].name"] == 21, p.stdout
    text = draguard("simulate", "-", stdin=STREAM).stdout
    assert "<stdin>:13: error claim.selectors:" in text and "<stdin>:21: error device.name:" in text, text
    # the feasibility findings of `validate --feasibility` too (added after the simulation)
    stream = STREAM.replace("device.driver == 1", "device.driver == 'x'")
    p = draguard("validate", "--feasibility", "-", stdin=stream)
    assert "<stdin>:11: error feasibility.infeasible: spec.devices.requests[0]:" in p.stdout, p.stdout


def test_strip_reports_dropped_fields_at_their_lines(tmp_path: Path) -> None:
    slice_ = MANIFEST.replace(
        "  - name: GPU_1\n",
        "  - name: gpu-1\n    consumesCounters:\n    - {counterSet: c, counters: {m: {value: 1}}}\n",
    ).replace(
        "  - name: gpu-0\n",
        "  - name: gpu-0\n    bindingConditions: [ready]\n    bindingFailureConditions: [failed]\n",
    )
    f = tmp_path / "inventory.yaml"
    f.write_text(slice_)
    p = draguard(
        "strip", "--feature-gates", "DRAPartitionableDevices=false,DRADeviceBindingConditions=false", str(f)
    )
    assert f"{f}:13: warning skew.dropped-field: spec.devices[0].bindingConditions:" in p.stderr, p.stderr
    assert f"{f}:21: warning skew.dropped-field: spec.devices[1].consumesCounters:" in p.stderr, p.stderr


def test_check_body_points_at_field_lines() -> None:
    from webhook.validate import RunOptions, check_body

    report = check_body(STREAM.encode(), RunOptions())
    found = {v.field: v.line for o in report.objects for v in o.violations}
    assert found["spec.devices[1].name"] == 21 and found[SELECTOR] == 13
