"""device.node-allocatable-resources (DRANodeAllocatableResources, alpha)."""

from __future__ import annotations

from typing import Any

from slice_fixtures import device_slice, only, run

BASE = "spec.devices[0].nodeAllocatableResources"


def nar_slice(resources: dict[str, Any]) -> dict:
    dev = {"name": "ccx-0", "capacity": {"cores": {"value": "8"}}, "nodeAllocatableResources": resources}
    return device_slice(dev)


def found(resources: dict[str, Any]) -> list[tuple[str, str]]:
    return only(run(nar_slice(resources)), "device.node-allocatable-resources")


def test_valid_mappings_and_overheads() -> None:
    assert (
        found(
            {
                "cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}},
                "memory": {"mapping": {"deviceMultiplier": "1Gi"}, "overhead": {"perPod": "100Mi"}},
                "hugepages-2Mi": {"overhead": {"perContainer": "0"}},
            }
        )
        == []
    )


def test_resource_name_must_be_node_allocatable() -> None:
    result = found({"example.com/gpu": {"overhead": {"perPod": "1"}}})
    assert result == [
        (
            f"{BASE}[example.com/gpu]",
            'Invalid value: "example.com/gpu": must be a node allocatable resource name',
        )
    ]


def test_mapping_or_overhead_required() -> None:
    assert found({"cpu": {}}) == [
        (f"{BASE}[cpu]", "Required value: at least one of mapping or overhead must be set")
    ]


def test_mapping_rules() -> None:
    result = dict(found({"cpu": {"mapping": {"capacityKey": "threads"}}}))
    assert result[f"{BASE}[cpu].mapping.capacityKey"] == 'Not found: "threads"'
    assert result[f"{BASE}[cpu].mapping.capacityMultiplier"].startswith("Required value")
    result = dict(found({"cpu": {"mapping": {"capacityMultiplier": "2", "deviceMultiplier": "0"}}}))
    assert result[f"{BASE}[cpu].mapping.capacityKey"].startswith("Required value")
    assert result[f"{BASE}[cpu].mapping.deviceMultiplier"] == 'Invalid value: "0": must be positive'
    result = dict(found({"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "-1"}}}))
    assert result == {f"{BASE}[cpu].mapping.capacityMultiplier": 'Invalid value: "-1": must be positive'}


def test_mapping_union() -> None:
    result = found(
        {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "1", "deviceMultiplier": "1"}}}
    )
    assert result == [(f"{BASE}[cpu].mapping", result[0][1])] and "exactly one of" in result[0][1]


def test_overhead_rules() -> None:
    assert found({"memory": {"overhead": {}}}) == [
        (f"{BASE}[memory].overhead", 'Invalid value: "": at least one of perPod or perContainer must be set')
    ]
    assert found({"memory": {"overhead": {"perPod": "-1Mi"}}}) == [
        (f"{BASE}[memory].overhead.perPod", 'Invalid value: "-1Mi": must be non-negative')
    ]
