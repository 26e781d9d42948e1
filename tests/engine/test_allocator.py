"""Allocator table tests: each case has the outcome the v1.37 structured allocator gives (first-fit order
decides which devices are chosen)."""

from __future__ import annotations

import copy
from typing import Any

from engine_fixtures import DRIVER, claim, devices, gpu_class, node_slice, picked, req, run

from tests.builders import allocated, first_available, node, obj, resource_slice, result, subrequest
from webhook.engine import Budget


def gpu(name: str, model: str, numa: int, color: str) -> dict[str, Any]:
    attributes = {"model": {"string": model}, "numa": {"int": numa}, "color": {"string": color}}
    return {"name": name, "attributes": attributes}


GPUS = [
    gpu("g0", "a100", 0, "red"),
    gpu("g1", "h100", 0, "blue"),
    gpu("g2", "h100", 1, "red"),
    gpu("g3", "h100", 1, "green"),
]
H100 = 'device.attributes["gpu.example.com"].model == "h100"'
NUMA = [{"matchAttribute": "gpu.example.com/numa"}]


def used(device: str, cls: str = "gpu", driver: str = DRIVER, **more: Any) -> dict[str, Any]:
    """ResourceClaim ns/old, allocated: its request r has `device` of pool n1."""
    return claim(req("r", cls), name="old", status=allocated(result("r", "n1", device, driver, **more)))


def test_first_fit_by_request_selector() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(selectors=[H100]))])
    assert out.feasible is True and out.node == "n1"
    assert picked(out) == [[("gpu", "g1")]]
    sel = out.claims[0].allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
    assert sel == {"key": "metadata.name", "operator": "In", "values": ["n1"]}


def test_class_and_request_selectors_are_anded() -> None:
    cls = gpu_class(expr='device.attributes["gpu.example.com"].numa == 1')
    out = run([cls, node_slice("n1", GPUS), claim(req(selectors=[H100], count=2))])
    assert devices(out) == ["g2", "g3"]


def test_count_too_large_is_infeasible_with_explanation() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(selectors=[H100], count=4))])
    assert out.feasible is False and out.error is None
    assert (
        "request gpu: n1 has 3 devices of class gpu matching the request's selector (4 in the class); "
        "4 requested" in out.reason
    )
    stages = out.explanation[0]["stages"]
    assert stages[0] == ["devices in class gpu", 4] and stages[-1] == ["left", 3]


def test_unknown_class_is_an_error() -> None:
    out = run([node_slice("n1", GPUS), claim(req(cls="nope"))])
    assert out.feasible is False
    assert (
        out.error
        and 'could not retrieve device class nope: deviceclass.resource.k8s.io "nope" not found' in out.error
    )
    assert out.error_kind == "waits"  # the class may still be created: the claim waits for it


def test_cel_runtime_error_aborts() -> None:
    bad = 'device.attributes["gpu.example.com"].missing == 1'
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(selectors=[bad]))])
    assert out.feasible is False and out.error
    assert out.error.startswith(
        "claim ns/c: CEL runtime error on device gpu.example.com/n1/g0: no such key `gpu.example.com/missing` "
        '(selector #0: `device.attributes["gpu.example.com"].missing == 1`)'
    )
    assert out.error_kind == "invalid"  # the claim itself: no change of the cluster mends it


def test_match_attribute_backtracks() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(count=2), constraints=NUMA)])
    assert devices(out) == ["g0", "g1"]
    cons3 = [{"matchAttribute": "gpu.example.com/numa", "requests": ["a", "b"]}]
    two = [req("a", selectors=[H100]), req("b")]
    out = run([gpu_class(), node_slice("n1", GPUS), claim(*two, constraints=cons3)])
    # a takes g1 (numa 0), b must then be numa 0 too: g0.
    assert picked(out) == [[("a", "g1"), ("b", "g0")]]


def test_match_attribute_infeasible() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(count=3), constraints=NUMA)])
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on n1 on its own, but not together: constraint matchAttribute "
        "`gpu.example.com/numa`: at most 2 candidate devices share one value on n1 (0 ×2, 1 ×2); "
        "the constrained requests need 3; the search placed at most 2 devices together"
    ), out.reason


def test_distinct_attribute_compares_every_device_140438() -> None:
    cons = [{"distinctAttribute": "gpu.example.com/color"}]
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(count=3), constraints=cons)])
    # red, blue, then g2 (red again) must be rejected although it is compared with the first device only.
    assert devices(out) == ["g0", "g1", "g3"]
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(count=4), constraints=cons)])
    assert out.feasible is False


def test_first_available_in_order_with_backtracking() -> None:
    request = first_available(
        "gpu",
        subrequest("big", "gpu", [H100], count=4),
        subrequest("two", "gpu", [H100], count=2),
    )
    out = run([gpu_class(), node_slice("n1", GPUS), claim(request)])
    assert picked(out) == [[("gpu/two", "g1"), ("gpu/two", "g2")]]
    config = [{"requests": ["gpu/two"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]
    out = run([gpu_class(), node_slice("n1", GPUS), claim(request, config=config)])
    cfg = out.claims[0].allocation["devices"]["config"]
    assert cfg == [{"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]


def test_several_claims_share_nothing() -> None:
    objs = [gpu_class(), node_slice("n1", GPUS)]
    objs.append(claim(req(selectors=[H100], count=2), name="a"))
    objs.append(claim(req(selectors=[H100]), name="b"))
    out = run(objs)
    assert picked(out) == [[("gpu", "g1"), ("gpu", "g2")], [("gpu", "g3")]]


def test_allocation_mode_all() -> None:
    all_h100 = req(selectors=[H100], allocationMode="All")
    out = run([gpu_class(), node_slice("n1", GPUS), claim(all_h100)])
    assert devices(out) == ["g1", "g2", "g3"]
    out = run([gpu_class(), node_slice("n1", GPUS), used("g2"), claim(all_h100)])
    assert out.feasible is False and out.error is None


def test_all_on_incomplete_pool_is_an_error() -> None:
    cluster = [gpu_class(), node_slice("n1", GPUS, count=2)]
    out = run([*cluster, claim(req(allocationMode="All"))])
    assert (
        out.error
        and "asks for all devices, but resource pool gpu.example.com/n1 is currently being updated"
        in out.error
    )
    assert out.error_kind == "waits"
    out = run([*cluster, claim(req())])
    assert out.feasible is False and out.error is None
    assert "incomplete resource pools skipped: gpu.example.com/n1" in out.reason


def test_all_on_an_incomplete_pool_of_a_later_node_is_an_error_too() -> None:
    # Nodes are searched first fit, but the scheduler filters every node: the error of n2 aborts
    # scheduling even though n1 (first) could serve the claim.
    later = node_slice("n2", GPUS, count=2)
    out = run([gpu_class(), node_slice("n1", GPUS), later, claim(req(allocationMode="All"))])
    assert out.error and "resource pool gpu.example.com/n2 is currently being updated" in out.error, out
    assert out.error_kind == "waits"
    out = run([gpu_class(), node_slice("n1", GPUS), later, claim(req())])
    assert out.feasible is True and out.node == "n1"


def test_more_than_32_results_is_an_error() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), claim(req(count=33))])
    assert out.error and "number of requested devices 33 exceeds the claim limit of 32" in out.error


def test_allocated_devices_are_in_use_but_admin_access_ignores_them() -> None:
    out = run([gpu_class(), node_slice("n1", GPUS), used("g0"), claim(req())])
    assert devices(out) == ["g1"]
    out = run([gpu_class(), node_slice("n1", GPUS), used("g0"), claim(req(adminAccess=True))])
    assert devices(out) == ["g0"] and out.claims[0].results[0].admin_access is True
    admin_used = used("g0", adminAccess=True)
    out = run([gpu_class(), node_slice("n1", GPUS), admin_used, claim(req())])
    assert devices(out) == ["g0"]


def test_taints_and_tolerations() -> None:
    tainted = copy.deepcopy(GPUS)
    tainted[0]["taints"] = [{"key": "info", "effect": "None"}]
    tainted[1]["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    out = run([gpu_class(), node_slice("n1", tainted), claim(req(selectors=[H100]))])
    assert devices(out) == ["g2"]
    tol = [{"key": "broken", "operator": "Exists"}]
    out = run([gpu_class(), node_slice("n1", tainted), claim(req(selectors=[H100], tolerations=tol))])
    assert devices(out) == ["g1"]
    assert out.claims[0].results[0].tolerations == [{"key": "broken", "operator": "Exists"}]
    out = run([gpu_class(), node_slice("n1", tainted), claim(req(selectors=[H100], count=3))])
    assert out.feasible is False
    assert (
        "request gpu: n1 has 3 matching devices, 1 tainted NoSchedule (not tolerated); 2 left, 3 requested"
        in out.reason
    )


def taint_rule(**device_selector: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"deviceSelector": device_selector} if device_selector else {}
    spec["taint"] = {"key": "maintenance", "effect": "NoExecute"}
    return obj("DeviceTaintRule", "r", spec=spec)


def test_device_taint_rules() -> None:
    rule = taint_rule(driver="gpu.example.com", device="g1")
    h100 = claim(req(selectors=[H100]))
    out = run([gpu_class(), node_slice("n1", GPUS), rule, h100])
    assert devices(out) == ["g2"]
    out = run([gpu_class(), node_slice("n1", GPUS), taint_rule(), h100])
    assert devices(out) == ["g1"]
    out = run([gpu_class(), node_slice("n1", GPUS), rule, h100], gates={"DRADeviceTaintRules": False})
    assert devices(out) == ["g1"]


def partitions(
    driver: str = DRIVER, prefix: str = "", taints: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Pool n1 in two slices: counter set gpu-0-memory (8Gi), and partitions p-a (6Gi, tainted bad
    NoSchedule unless `taints` says otherwise), p-b (6Gi), p-c (2Gi) drawing on it."""

    def part(name: str, memory: str) -> dict[str, Any]:
        counters = {"counterSet": "gpu-0-memory", "counters": {"memory": {"value": memory}}}
        return {"name": name, "consumesCounters": [counters]}

    parts = [part("p-a", "6Gi"), part("p-b", "6Gi"), part("p-c", "2Gi")]
    parts[0]["taints"] = [{"key": "bad", "effect": "NoSchedule"}] if taints is None else taints
    counter_set = {"name": "gpu-0-memory", "counters": {"memory": {"value": "8Gi"}}}
    pool = {"pool": "n1", "node": "n1", "count": 2, "driver": driver}
    return [
        resource_slice(prefix + "counters", None, **pool, sharedCounters=[counter_set]),
        resource_slice(prefix + "parts", parts, **pool),
    ]


PARTITIONS = partitions()


def test_rejected_candidate_releases_counters_140436() -> None:
    out = run([gpu_class(), *PARTITIONS, claim(req())])
    assert devices(out) == ["p-b"]
    out = run([gpu_class(), *PARTITIONS, claim(req(count=2))])
    assert devices(out) == ["p-b", "p-c"]
    out = run([gpu_class(), *PARTITIONS, claim(req(count=3))])
    assert out.feasible is False


def test_counters_consumed_by_allocated_devices() -> None:
    out = run([gpu_class(), *PARTITIONS, used("p-c"), claim(req())])
    assert devices(out) == ["p-b"]
    big = used("p-b")
    out = run([gpu_class(), *PARTITIONS, big, claim(req())])
    assert devices(out) == ["p-c"]
    tolerant = req(count=2, tolerations=[{"operator": "Exists"}])
    out = run([gpu_class(), *PARTITIONS, big, claim(tolerant)])
    assert out.feasible is False
    assert (
        "request gpu: n1 has 3 matching devices, 1 allocated to claim ns/old, 1 lack free counters in "
        "gpu-0-memory; 1 left, 2 requested" in out.reason
    )


def test_admin_access_does_not_reserve_counters_140729() -> None:
    two = req("admin", adminAccess=True, selectors=["device.attributes.size() >= 0"])
    # The admin request monitors p-b (no counters needed); a normal request still gets p-c.
    cluster = [gpu_class(), *partitions(taints=[]), used("p-b")]
    out = run([*cluster, claim(req("admin", adminAccess=True), req("normal"))])
    assert picked(out) == [[("admin", "p-a"), ("normal", "p-c")]]
    assert two  # selector syntax kept for readers


def test_two_drivers_same_pool_and_counter_set_names_140434() -> None:
    other = partitions(driver="npu.example.com", prefix="n-")
    npu_used = used("p-b", cls="npu", driver="npu.example.com")
    cls = gpu_class("gpu", 'device.driver == "gpu.example.com"')
    out = run([cls, *PARTITIONS, *other, npu_used, claim(req())])
    # npu's p-b uses npu's counters only; gpu's p-b is still free.
    assert [(r.driver, r.device) for r in out.claims[0].results] == [("gpu.example.com", "p-b")]


def test_partitionable_gate_off_skips_counter_pools() -> None:
    out = run([gpu_class(), *PARTITIONS, claim(req())], gates={"DRAPartitionableDevices": False})
    assert out.feasible is False


def grouped(count: int) -> list[dict[str, Any]]:
    """Pool n1 (`count` slices): counter set gpu-0 (40Gi), and mig-1 (group mig), vgpu-1 (vgpu), mig-2
    (mig, foo) drawing 10Gi each on it."""

    def member(name: str, *groups: str) -> dict[str, Any]:
        counters = {"counterSet": "gpu-0", "counters": {"memory": {"value": "10Gi"}}}
        return {"name": name, "consumesCounters": [{**counters, "compatibilityGroups": list(groups)}]}

    pool = {"pool": "n1", "node": "n1", "count": count}
    counter_set = {"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}
    members = [member("mig-1", "mig"), member("vgpu-1", "vgpu"), member("mig-2", "mig", "foo")]
    return [
        resource_slice("grouped", None, **pool, sharedCounters=[counter_set]),
        resource_slice("grouped-devices", members, **pool),
    ]


def test_compatibility_groups() -> None:
    # Two slices in one pool with count 1 each would be incomplete; use a count of 2.
    cluster = [gpu_class(), *grouped(count=2)]
    gates = {"DRADeviceCompatibilityGroups": True}
    out = run([*cluster, claim(req(count=2))], gates=gates)
    assert devices(out) == ["mig-1", "mig-2"]  # vgpu-1 is rejected next to mig-1
    out = run([*cluster, claim(req(count=3))], gates=gates)
    assert out.feasible is False
    # Across claims and against already-allocated devices.
    out = run([*cluster, used("vgpu-1"), claim(req())], gates=gates)
    assert out.feasible is False
    assert "compatible with the groups in use" in str(out.explanation)
    # Gate off: the pool with grouped devices is treated as incomplete.
    out = run([*cluster, claim(req())])
    assert out.feasible is False and "incomplete resource pools skipped" in out.reason


CAPACITY = [
    {
        "name": "nic",
        "allowMultipleAllocations": True,
        "capacity": {
            "bandwidth": {
                "value": "10Gi",
                "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
            }
        },
    }
]


def bandwidth(name: str, **requests: str) -> dict[str, Any]:
    """A request for a share of the nic: `requests` of its capacity."""
    return req(name, capacity={"requests": requests})


def test_consumable_capacity_rounding_and_shares() -> None:
    cluster = [gpu_class(), node_slice("n1", CAPACITY)]
    out = run(
        [*cluster, claim(bandwidth("a", bandwidth="1500Mi"), bandwidth("b", bandwidth="1500Mi"), req("c"))]
    )
    res = out.claims[0].results
    assert [r.device for r in res] == ["nic", "nic", "nic"]
    assert [r.consumed_capacity for r in res] == [
        {"bandwidth": "2Gi"},
        {"bandwidth": "2Gi"},
        {"bandwidth": "1Gi"},
    ]
    assert all(r.share_id and len(r.share_id) == 36 for r in res) and len({r.share_id for r in res}) == 3
    out = run([*cluster, claim(bandwidth("a", bandwidth="6Gi"), bandwidth("b", bandwidth="6Gi"))])
    assert out.feasible is False
    assert run([*cluster, claim(bandwidth("gpu", memory="1Gi"))]).feasible is False


def test_consumable_capacity_existing_shares() -> None:
    share = {"shareID": "11111111-2222-4333-8444-555555555555", "consumedCapacity": {"bandwidth": "9Gi"}}
    cluster = [gpu_class(), node_slice("n1", CAPACITY), used("nic", **share)]
    assert devices(run([*cluster, claim(req())])) == ["nic"]
    assert run([*cluster, claim(bandwidth("gpu", bandwidth="2Gi"))]).feasible is False


def test_binding_conditions_and_pool_order() -> None:
    b0 = {
        "name": "b0",
        "bindsToNode": True,
        "bindingConditions": ["example.com/ready"],
        "bindingFailureConditions": ["example.com/failed"],
    }
    bound = node_slice("n1", [b0], name="a-bound", pool="a-pool")
    plain = node_slice("n1", [{"name": "p0"}], name="z-plain", pool="z-pool")
    out = run([gpu_class(), bound, plain, claim(req())])
    assert devices(out) == ["p0"]  # pools with binding conditions come last
    out = run([gpu_class(), bound, plain, claim(req(count=2))])
    r = out.claims[0].results[1]
    assert r.device == "b0" and r.binding_conditions == ["example.com/ready"]
    assert r.binding_failure_conditions == ["example.com/failed"]
    out = run([gpu_class(), bound, claim(req())], gates={"DRADeviceBindingConditions": False})
    assert out.feasible is False


def test_skip_node_operations_copied_and_node_feature_required() -> None:
    s = node_slice(
        "n1", [{"name": "d0"}], skipNodeOperations=["NodePrepareResources", "NodeUnprepareResources"]
    )
    gates = {"DRAOptionalNodeOperations": True}
    out = run([gpu_class(), s, claim(req())], gates=gates)
    assert out.claims[0].results[0].skip_node_operations == ["NodePrepareResources", "NodeUnprepareResources"]
    out = run([gpu_class(), s, node("n1"), claim(req())], gates=gates)
    assert out.feasible is False
    declared = {**node("n1"), "status": {"declaredFeatures": ["DRAOptionalNodeOperations"]}}
    out = run([gpu_class(), s, declared, claim(req())], gates=gates)
    assert out.feasible is True


def net_slice(**placement: Any) -> dict[str, Any]:
    """Slice net of pool net, device fabric, placed on nodes by `placement` (no nodeName)."""
    return resource_slice("net", [{"name": "fabric"}], pool="net", node=None, **placement)


IN_R1 = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
NETWORK = [net_slice(nodeSelector=IN_R1), node("n1", rack="r2"), node("n2", rack="r1")]


def test_node_selector_slices_and_allocation_node_selector() -> None:
    out = run([gpu_class(), *NETWORK, claim(req())])
    assert out.node == "n2" and devices(out) == ["fabric"]
    assert out.claims[0].allocation["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]
    }
    out = run([gpu_class(), *NETWORK, claim(req())], node="n1")
    assert out.feasible is False
    pod = {"spec": {"nodeSelector": {"rack": "r2"}}}
    assert run([gpu_class(), *NETWORK, claim(req())], pod=pod).feasible is False


def test_all_nodes_slice_has_no_node_selector() -> None:
    out = run([gpu_class(), net_slice(allNodes=True), claim(req())])
    assert out.feasible is True and out.node is None and "nodeSelector" not in out.claims[0].allocation


def test_per_device_node_selection() -> None:
    s = resource_slice(
        "per-device",
        [{"name": "d1", "nodeName": "n1"}, {"name": "d2", "nodeName": "n2"}],
        pool="p",
        node=None,
        perDeviceNodeSelection=True,
    )
    out = run([gpu_class(), s, claim(req())], node="n2")
    assert devices(out) == ["d2"]
    assert out.claims[0].allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "n2"
    ]


def test_class_config_from_class_then_claim() -> None:
    cls = gpu_class(config=[{"opaque": {"driver": "gpu.example.com", "parameters": {"x": 1}}}])
    out = run([cls, node_slice("n1", GPUS), claim(req("a"), req("b"))])
    assert out.claims[0].allocation["devices"]["config"] == [
        {"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {"x": 1}}}
    ]
    cfg = [{"requests": ["a"], "opaque": {"driver": "gpu.example.com", "parameters": {"y": 2}}}]
    out = run([cls, node_slice("n1", GPUS), claim(req("a"), req("b"), config=cfg)])
    assert out.claims[0].allocation["devices"]["config"][1] == {
        "source": "FromClaim",
        "requests": ["a"],
        "opaque": {"driver": DRIVER, "parameters": {"y": 2}},
    }


def test_pool_generation_and_completeness() -> None:
    old = node_slice("n1", [{"name": "old0"}], name="s-old")
    new = node_slice("n1", [{"name": "new0"}], name="s-new", generation=2)
    assert devices(run([gpu_class(), old, new, claim(req())])) == ["new0"]
    dup = [node_slice("n1", [{"name": "x"}], name=name, count=2) for name in ("s1", "s2")]
    out = run([gpu_class(), *dup, claim(req())])
    assert out.feasible is False and "invalid resource pools were encountered" in out.reason


def test_multi_node_prunes_and_picks_first_feasible() -> None:
    cluster = [gpu_class()]
    for i in range(5):
        cluster.append(node_slice(f"n{i}", GPUS if i == 3 else [{"name": "g0"}]))
    out = run([*cluster, claim(req(count=4))])
    assert out.node == "n3" and out.nodes_tried == 1
    out = run([*cluster, claim(req(count=5))])
    assert out.feasible is False and out.nodes_tried == 0
    assert "5 node(s) considered, 5 pruned by device counts" in out.reason


def test_budget_exhaustion_is_undecided_not_infeasible() -> None:
    many = [{"name": f"d{i}", "attributes": {"numa": {"int": i % 2}}} for i in range(24)]
    cons = [{"distinctAttribute": "gpu.example.com/numa"}]
    objs = [gpu_class(), node_slice("n1", many), claim(req(count=3), constraints=cons)]
    out = run(objs, budget=Budget(steps=50, seconds=10))
    assert out.feasible is None and out.reason.startswith("undecided")
    assert run(objs, budget=Budget(steps=100_000, seconds=10)).feasible is False


def test_prioritized_list_gate_off_is_an_error() -> None:
    request = first_available("gpu", subrequest("a", "gpu"))
    out = run([gpu_class(), node_slice("n1", GPUS), claim(request)], gates={"DRAPartitionableDevices": True})
    assert out.feasible is True and picked(out) == [[("gpu/a", "g0")]]
