"""Slice-level ResourceSlice rules: expected rule id, field path and message key words (upstream behaviour)."""

from __future__ import annotations

from slice_fixtures import ctx, device_slice, load, only, run

from webhook.model.catalogue import RULES
from webhook.model.violation import Finding
from webhook.rules.slice import skip_node_operations_findings, skip_node_operations_star_findings

GPU = {"name": "gpu-0", "attributes": {"model": {"string": "A100"}}}


def test_valid_slice_has_no_findings() -> None:
    assert run(load()) == []
    assert run(load(), direct=True) == []


def test_rule_ids_are_registered() -> None:
    for rid in (
        "slice.driver",
        "slice.driver.uppercase",
        "slice.pool",
        "slice.node-selection",
        "slice.devices-and-counters",
        "slice.devices.max",
        "slice.devices.unique",
        "slice.shared-counters",
        "slice.partition-type-attribute",
        "slice.skip-node-operations",
        "slice.skip-node-operations.star-alone",
    ):
        assert RULES[rid].kinds == ("ResourceSlice",)
    assert str(RULES["slice.driver.uppercase"].severity) == "warning"
    assert RULES["slice.skip-node-operations.star-alone"].tag == "lint"


# --- driver ---------------------------------------------------------------------------------------


def test_driver_format() -> None:
    obj = load()
    obj["spec"]["driver"] = "gpu_example.com"
    found = only(run(obj), "slice.driver")
    assert len(found) == 1
    field, msg = found[0]
    assert field == "spec.driver"
    assert msg.startswith('Invalid value: "gpu_example.com"') and "RFC 1123 subdomain" in msg


def test_driver_too_long_and_empty() -> None:
    obj = load()
    obj["spec"]["driver"] = "a" * 60 + ".example.com"
    assert any(m.startswith("Too long") for _, m in only(run(obj), "slice.driver"))
    obj["spec"]["driver"] = ""
    assert only(run(obj, direct=True), "slice.driver") == [("spec.driver", "Required value")]


def test_driver_uppercase_is_only_a_warning() -> None:
    obj = load()
    obj["spec"]["driver"] = "GPU.Example.com"
    found = run(obj)
    assert only(found, "slice.driver") == []
    [(field, msg)] = only(found, "slice.driver.uppercase")
    assert field == "spec.driver" and "gpu.example.com" in msg


# --- pool -----------------------------------------------------------------------------------------


def test_pool_rules() -> None:
    obj = load()
    obj["spec"]["pool"] = {"name": "a//b", "generation": -1, "resourceSliceCount": 0}
    found = only(run(obj), "slice.pool")
    fields = sorted(f for f, _ in found)
    assert fields == ["spec.pool.generation", "spec.pool.name", "spec.pool.resourceSliceCount"]
    msgs = dict(found)
    assert msgs["spec.pool.generation"] == "Invalid value: -1: must be greater than or equal to zero"
    assert msgs["spec.pool.resourceSliceCount"] == "Invalid value: 0: must be greater than zero"


def test_pool_with_slashes_is_valid() -> None:
    obj = load()
    obj["spec"]["pool"]["name"] = "cluster.example.com/rack-1/node-1"
    assert only(run(obj), "slice.pool") == []


# --- node selection -------------------------------------------------------------------------------


def test_node_selection_none_set() -> None:
    obj = device_slice(GPU, nodeName=None)
    [(field, msg)] = only(run(obj), "slice.node-selection")
    assert field == "spec" and msg.startswith("Required value: exactly one of `nodeName`")


def test_node_selection_several_set() -> None:
    obj = device_slice(GPU, allNodes=True)
    [(field, msg)] = only(run(obj), "slice.node-selection")
    assert field == "spec"
    assert msg.startswith('Invalid value: "{`nodeName`, `allNodes`}"') and "multiple fields are set" in msg


def test_node_selection_shapes() -> None:
    obj = device_slice(GPU, nodeName=None, allNodes=False)
    found = only(run(obj), "slice.node-selection")
    assert ("spec.allNodes", "Invalid value: false: must be either unset or set to true") in found
    assert any(f == "spec" and m.startswith("Required value") for f, m in found)
    obj = device_slice(GPU, nodeName="")
    found = only(run(obj), "slice.node-selection")
    assert any(f == "spec.nodeName" and "non-empty string" in m for f, m in found)
    obj = device_slice(GPU, nodeName="Node_1")
    assert [f for f, _ in only(run(obj), "slice.node-selection")] == ["spec.nodeName"]


def test_node_selector_needs_exactly_one_term() -> None:
    term = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}
    obj = device_slice(GPU, nodeName=None, nodeSelector={"nodeSelectorTerms": [term]})
    assert only(run(obj), "slice.node-selection") == []
    obj = device_slice(GPU, nodeName=None, nodeSelector={"nodeSelectorTerms": [term, term]})
    [(field, msg)] = only(run(obj), "slice.node-selection")
    assert field == "spec.nodeSelector.nodeSelectorTerms" and "exactly one node selector term" in msg


def test_node_selector_requirements() -> None:
    sel = {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "zone", "operator": "Near", "values": ["a"]},
                    {"key": "zone", "operator": "Exists", "values": ["a"]},
                    {"key": "zone", "operator": "In", "values": ["not valid!"]},
                ],
                "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}],
            }
        ]
    }
    obj = device_slice(GPU, nodeName=None, nodeSelector=sel)
    found = dict(only(run(obj), "slice.node-selection"))
    base = "spec.nodeSelector.nodeSelectorTerms[0]"
    assert "not a valid selector operator" in found[base + ".matchExpressions[0].operator"]
    assert found[base + ".matchExpressions[1].values"].startswith("Forbidden")
    assert found[base + ".matchExpressions[2].values[0]"].startswith('Invalid value: "not valid!"')
    assert "not a valid field selector key" in found[base + ".matchFields[0].key"]


# --- devices --------------------------------------------------------------------------------------


def test_devices_and_counters_exclusive() -> None:
    obj = device_slice(GPU, sharedCounters=[{"name": "c", "counters": {"mem": {"value": "1Gi"}}}])
    [(field, msg)] = only(run(obj), "slice.devices-and-counters")
    assert field == "spec" and "only one of `sharedCounters` or `devices`" in msg
    obj = device_slice(GPU)
    assert only(run(obj), "slice.devices-and-counters") == []


def _devices(n: int, **extra: object) -> list[dict]:
    return [{"name": f"d{i}", **extra} for i in range(n)]


def test_devices_max_128() -> None:
    obj = device_slice(*_devices(128))
    assert only(run(obj), "slice.devices.max") == []
    obj = device_slice(*_devices(129))
    assert only(run(obj), "slice.devices.max") == [
        ("spec.devices", "Too many: 129: must have at most 128 items")
    ]


def test_devices_max_64_with_advanced_features() -> None:
    devices = _devices(65)
    obj = device_slice(*devices)
    assert only(run(obj), "slice.devices.max") == []
    devices[64]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    obj = device_slice(*devices)
    assert only(run(obj), "slice.devices.max") == [
        ("spec.devices", "Too many: 65: must have at most 64 items")
    ]
    over = _devices(130)
    over[0]["consumesCounters"] = [{"counterSet": "c", "counters": {"m": {"value": "1"}}}]
    assert only(run(device_slice(*over)), "slice.devices.max") == [
        ("spec.devices", "Too many: 130: must have at most 64 items")
    ]
    devices[64] = {"name": "d64", "attributes": {"ids": {"ints": [1, 2]}}}
    obj = device_slice(*devices)
    assert only(run(obj), "slice.devices.max") == [
        ("spec.devices", "Too many: 65: must have at most 64 items")
    ]


def test_too_many_devices_stops_device_checks() -> None:
    devices = _devices(129)
    devices[0]["name"] = "BAD"
    devices[2]["name"] = "d1"
    found = run(device_slice(*devices))
    assert [r for r, _, _ in found] == ["slice.devices.max"]


def test_devices_unique() -> None:
    obj = device_slice({"name": "gpu-0"}, {"name": "gpu-1"}, {"name": "gpu-0"})
    assert only(run(obj), "slice.devices.unique") == [("spec.devices[2]", 'Duplicate value: "gpu-0"')]
    obj = device_slice({"name": "gpu-0"}, {"name": "gpu-1"})
    assert only(run(obj), "slice.devices.unique") == []


# --- shared counters ------------------------------------------------------------------------------


def counters_slice(sets: list[dict]) -> dict:
    obj = load()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = sets
    return obj


def test_shared_counters_valid() -> None:
    obj = counters_slice([{"name": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}])
    assert run(obj) == []


def test_shared_counters_shapes() -> None:
    sets = [
        {"name": "c", "counters": {}},
        {"name": "c", "counters": {"Bad_Name": {"value": "1"}}},
        {"name": "C1", "counters": {f"c{i}": {"value": "1"} for i in range(33)}},
    ]
    found = only(run(counters_slice(sets)), "slice.shared-counters")
    assert ("spec.sharedCounters[0].counters", "Required value") in found
    assert ("spec.sharedCounters[1]", 'Duplicate value: "c"') in found
    assert any(
        f == "spec.sharedCounters[1].counters" and m.startswith('Invalid value: "Bad_Name"') for f, m in found
    )
    assert any(f == "spec.sharedCounters[2].name" and m.startswith('Invalid value: "C1"') for f, m in found)
    assert ("spec.sharedCounters[2].counters", "Too many: 33: must have at most 32 items") in found


def test_shared_counters_max_8() -> None:
    sets = [{"name": f"c{i}", "counters": {"m": {"value": "1"}}} for i in range(9)]
    found = only(run(counters_slice(sets)), "slice.shared-counters")
    assert found == [("spec.sharedCounters", "Too many: 9: must have at most 8 items")]


# --- partitionTypeAttribute -----------------------------------------------------------------------


def _partition(attrs: dict, pta: str = "gpu.example.com/profile") -> dict:
    dev = {
        "name": "gpu-0-mig-1g",
        "attributes": attrs,
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "10Gi"}}}],
    }
    return device_slice(dev, {"name": "plain"}, partitionTypeAttribute=pta)


def test_partition_type_attribute_valid_full_and_bare() -> None:
    assert run(_partition({"gpu.example.com/profile": {"string": "1g.10gb"}})) == []
    assert run(_partition({"profile": {"string": "1g.10gb"}})) == []


def test_partition_type_attribute_missing_or_not_string() -> None:
    found = only(run(_partition({})), "slice.partition-type-attribute")
    assert found == [
        (
            "spec.devices[0].attributes[gpu.example.com/profile]",
            "Required value: device consumes counters and `partitionTypeAttribute` names this attribute, "
            "so it must be set",
        )
    ]
    found = only(run(_partition({"profile": {"int": 1}})), "slice.partition-type-attribute")
    [(field, msg)] = found
    assert field == "spec.devices[0].attributes[gpu.example.com/profile]" and "must be a string value" in msg


def test_partition_type_attribute_needs_counter_consumers() -> None:
    obj = device_slice(GPU, partitionTypeAttribute="gpu.example.com/profile")
    [(field, msg)] = only(run(obj), "slice.partition-type-attribute")
    assert field == "spec.partitionTypeAttribute" and "devices that consume counters" in msg


def test_partition_type_attribute_must_be_fully_qualified() -> None:
    found = only(
        run(_partition({"profile": {"string": "x"}}, pta="profile")), "slice.partition-type-attribute"
    )
    assert found == [
        (
            "spec.partitionTypeAttribute",
            'Invalid value: "profile": a fully qualified name must be a domain and a name separated by a slash',
        )
    ]


# --- skipNodeOperations ---------------------------------------------------------------------------


def _skip(values: list) -> dict:
    return device_slice(GPU, skipNodeOperations=values)


def test_skip_node_operations_valid() -> None:
    for values in (["NodeUnprepareResources"], ["NodePrepareResources", "NodeUnprepareResources"], ["*"]):
        assert run(_skip(values)) == []


def test_skip_node_operations_prepare_needs_unprepare() -> None:
    [(field, msg)] = only(run(_skip(["NodePrepareResources"])), "slice.skip-node-operations")
    assert field == "spec.skipNodeOperations"
    assert "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped" in msg
    assert only(run(_skip(["NodePrepareResources", "*"])), "slice.skip-node-operations") == []


def test_skip_node_operations_enum_and_duplicates() -> None:
    found = only(
        run(_skip(["NodeUnprepareResources", "Unknown", "NodeUnprepareResources"])),
        "slice.skip-node-operations",
    )
    assert found == [
        (
            "spec.skipNodeOperations[1]",
            'Unsupported value: "Unknown": supported values: "*", "NodePrepareResources", "NodeUnprepareResources"',
        ),
        ("spec.skipNodeOperations[2]", 'Duplicate value: "NodeUnprepareResources"'),
    ]


def test_skip_node_operations_star_alone_is_a_warning() -> None:
    found = run(_skip(["*", "NodeUnprepareResources"]))
    assert only(found, "slice.skip-node-operations") == []
    [(field, msg)] = only(found, "slice.skip-node-operations.star-alone")
    assert field == "spec.skipNodeOperations" and "alone" in msg


def test_skip_node_operations_stripped_without_gate() -> None:
    # Without DRAOptionalNodeOperations the field is dropped before validation (CREATE).
    found = run(_skip(["NodePrepareResources"]), ctx(DRAOptionalNodeOperations=False))
    assert only(found, "slice.skip-node-operations") == []
    assert only(run(_skip(["NodePrepareResources"])), "slice.skip-node-operations") != []


def test_skip_node_operations_helper_for_allocation_results() -> None:
    path = "status.allocation.devices.results[0].skipNodeOperations"
    assert skip_node_operations_findings(["NodePrepareResources", "*"], path) == []
    assert skip_node_operations_findings(None, path) == []
    [finding] = skip_node_operations_findings(["NodePrepareResources"], path)
    assert isinstance(finding, Finding) and finding.field == path
    assert skip_node_operations_star_findings(["*", "*"], path) == []
    assert len(skip_node_operations_star_findings(["*", "NodePrepareResources"], path)) == 1
