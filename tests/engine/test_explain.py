"""Explanations of infeasible answers: the stage that emptied a request, and counter contention."""

from __future__ import annotations

from pathlib import Path

from engine_fixtures import run

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = (ROOT / "examples" / "partitionable-devices.yaml").read_text()
CLASS = """
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: "device.driver == 'dra.example.com'"}}]
"""


def claim(count: int, selector: str = "") -> str:
    quoted = '"' + selector + '"'
    sel = f", selectors: [{{cel: {{expression: {quoted}}}}}]" if selector else ""
    return (
        "\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        f"spec:\n  devices:\n    requests:\n    - {{name: a, exactly: {{deviceClassName: gpu, count: {count}{sel}}}}}\n"
    )


def test_two_partitions_of_one_gpu_are_shown_to_overdraw_the_counter_set() -> None:
    out = run(PARTITIONS + CLASS + claim(2))
    assert out.feasible is False
    assert (
        "request a: all 2 candidate devices draw on counter set gpu-1-counters of pool dra.example.com/pool, "
        "whose counter memory has 8Gi free, but any 2 of them need at least 12Gi"
    ) in out.reason


def test_the_stage_that_emptied_a_request_is_named_with_counts() -> None:
    out = run(PARTITIONS + CLASS + claim(1, "device.attributes['dra.example.com'].?model.orValue('') == 'X'"))
    assert out.feasible is False
    assert out.reason.startswith("request a: 2 devices in class gpu; 0 match the selector; 0 left")
    (entry,) = out.explanation
    assert entry["request"] == "a" and entry["stages"][0] == ["devices in class gpu", 2]


def test_one_partition_fits() -> None:
    out = run(PARTITIONS + CLASS + claim(1))
    assert out.feasible is True and out.reason == ""
