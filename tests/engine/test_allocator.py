"""Allocator table tests: each case has the outcome the v1.37 structured allocator gives (first-fit order
decides which devices are chosen)."""

from __future__ import annotations

from engine_fixtures import DRIVER, claim, devices, gpu_class, node_slice, picked, run

from webhook.engine import Budget

GPUS = """
  - name: g0
    attributes: {model: {string: a100}, numa: {int: 0}, color: {string: red}}
  - name: g1
    attributes: {model: {string: h100}, numa: {int: 0}, color: {string: blue}}
  - name: g2
    attributes: {model: {string: h100}, numa: {int: 1}, color: {string: red}}
  - name: g3
    attributes: {model: {string: h100}, numa: {int: 1}, color: {string: green}}
"""
H100 = '{cel: {expression: \'device.attributes["gpu.example.com"].model == "h100"\'}}'


def req(name: str = "gpu", body: str = "deviceClassName: gpu") -> str:
    return f"    - name: {name}\n      exactly: {{{body}}}\n"


def test_first_fit_by_request_selector() -> None:
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body=f"deviceClassName: gpu, selectors: [{H100}]"))
    )
    assert out.feasible is True and out.node == "n1"
    assert picked(out) == [[("gpu", "g1")]]
    sel = out.claims[0].allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
    assert sel == {"key": "metadata.name", "operator": "In", "values": ["n1"]}


def test_class_and_request_selectors_are_anded() -> None:
    cls = gpu_class(expr='device.attributes["gpu.example.com"].numa == 1')
    out = run(
        cls + node_slice("n1", GPUS) + claim(req(body=f"deviceClassName: gpu, selectors: [{H100}], count: 2"))
    )
    assert devices(out) == ["g2", "g3"]


def test_count_too_large_is_infeasible_with_explanation() -> None:
    out = run(
        gpu_class()
        + node_slice("n1", GPUS)
        + claim(req(body=f"deviceClassName: gpu, selectors: [{H100}], count: 4"))
    )
    assert out.feasible is False and out.error is None
    assert (
        "request gpu: n1 has 3 devices of class gpu matching the request's selector (4 in the class); "
        "4 requested" in out.reason
    )
    stages = out.explanation[0]["stages"]
    assert stages[0] == ["devices in class gpu", 4] and stages[-1] == ["left", 3]


def test_unknown_class_is_an_error() -> None:
    out = run(node_slice("n1", GPUS) + claim(req(body="deviceClassName: nope")))
    assert out.feasible is False
    assert (
        out.error
        and 'could not retrieve device class nope: deviceclass.resource.k8s.io "nope" not found' in out.error
    )
    assert out.error_kind == "waits"  # the class may still be created: the claim waits for it


def test_cel_runtime_error_aborts() -> None:
    bad = "{cel: {expression: 'device.attributes[\"gpu.example.com\"].missing == 1'}}"
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body=f"deviceClassName: gpu, selectors: [{bad}]"))
    )
    assert out.feasible is False and out.error
    assert out.error.startswith(
        "claim ns/c: CEL runtime error on device gpu.example.com/n1/g0: no such key `gpu.example.com/missing` "
        '(selector #0: `device.attributes["gpu.example.com"].missing == 1`)'
    )
    assert out.error_kind == "invalid"  # the claim itself: no change of the cluster mends it


def test_match_attribute_backtracks() -> None:
    cons = "\n    constraints:\n    - {matchAttribute: gpu.example.com/numa}"
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body="deviceClassName: gpu, count: 2"), extra=cons)
    )
    assert devices(out) == ["g0", "g1"]
    cons3 = "\n    constraints:\n    - {matchAttribute: gpu.example.com/numa, requests: [a, b]}"
    two = req("a", f"deviceClassName: gpu, selectors: [{H100}]") + req("b", "deviceClassName: gpu")
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(two, extra=cons3))
    # a takes g1 (numa 0), b must then be numa 0 too: g0.
    assert picked(out) == [[("a", "g1"), ("b", "g0")]]


def test_match_attribute_infeasible() -> None:
    cons = "\n    constraints:\n    - {matchAttribute: gpu.example.com/numa}"
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body="deviceClassName: gpu, count: 3"), extra=cons)
    )
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on n1 on its own, but not together: constraint matchAttribute "
        "`gpu.example.com/numa`: at most 2 candidate devices share one value on n1 (0 ×2, 1 ×2); "
        "the constrained requests need 3; the search placed at most 2 devices together"
    ), out.reason


def test_distinct_attribute_compares_every_device_140438() -> None:
    cons = "\n    constraints:\n    - {distinctAttribute: gpu.example.com/color}"
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body="deviceClassName: gpu, count: 3"), extra=cons)
    )
    # red, blue, then g2 (red again) must be rejected although it is compared with the first device only.
    assert devices(out) == ["g0", "g1", "g3"]
    out = run(
        gpu_class() + node_slice("n1", GPUS) + claim(req(body="deviceClassName: gpu, count: 4"), extra=cons)
    )
    assert out.feasible is False


def test_first_available_in_order_with_backtracking() -> None:
    body = f"""    - name: gpu
      firstAvailable:
      - {{name: big, deviceClassName: gpu, selectors: [{H100}], count: 4}}
      - {{name: two, deviceClassName: gpu, selectors: [{H100}], count: 2}}
"""
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(body))
    assert picked(out) == [[("gpu/two", "g1"), ("gpu/two", "g2")]]
    config = "\n    config:\n    - requests: [gpu/two]\n      opaque: {driver: gpu.example.com, parameters: {a: 1}}"
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(body, extra=config))
    cfg = out.claims[0].allocation["devices"]["config"]
    assert cfg == [{"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]


def test_several_claims_share_nothing() -> None:
    text = gpu_class() + node_slice("n1", GPUS)
    text += claim(req(body=f"deviceClassName: gpu, selectors: [{H100}], count: 2"), name="a")
    text += claim(req(body=f"deviceClassName: gpu, selectors: [{H100}]"), name="b")
    out = run(text)
    assert picked(out) == [[("gpu", "g1"), ("gpu", "g2")], [("gpu", "g3")]]


def test_allocation_mode_all() -> None:
    body = f"deviceClassName: gpu, selectors: [{H100}], allocationMode: All"
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(req(body=body)))
    assert devices(out) == ["g1", "g2", "g3"]
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.example.com, pool: n1, device: g2}]
"""
    out = run(gpu_class() + node_slice("n1", GPUS) + used + claim(req(body=body)))
    assert out.feasible is False and out.error is None


def test_all_on_incomplete_pool_is_an_error() -> None:
    text = gpu_class() + node_slice("n1", GPUS).replace("resourceSliceCount: 1", "resourceSliceCount: 2")
    out = run(text + claim(req(body="deviceClassName: gpu, allocationMode: All")))
    assert (
        out.error
        and "asks for all devices, but resource pool gpu.example.com/n1 is currently being updated"
        in out.error
    )
    assert out.error_kind == "waits"
    out = run(text + claim(req()))
    assert out.feasible is False and out.error is None
    assert "incomplete resource pools skipped: gpu.example.com/n1" in out.reason


def test_all_on_an_incomplete_pool_of_a_later_node_is_an_error_too() -> None:
    # Nodes are searched first fit, but the scheduler filters every node: the error of n2 aborts
    # scheduling even though n1 (first) could serve the claim.
    later = node_slice("n2", GPUS).replace("resourceSliceCount: 1", "resourceSliceCount: 2")
    out = run(
        gpu_class()
        + node_slice("n1", GPUS)
        + later
        + claim(req(body="deviceClassName: gpu, allocationMode: All"))
    )
    assert out.error and "resource pool gpu.example.com/n2 is currently being updated" in out.error, out
    assert out.error_kind == "waits"
    out = run(gpu_class() + node_slice("n1", GPUS) + later + claim(req()))
    assert out.feasible is True and out.node == "n1"


def test_more_than_32_results_is_an_error() -> None:
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(req(body="deviceClassName: gpu, count: 33")))
    assert out.error and "number of requested devices 33 exceeds the claim limit of 32" in out.error


def test_allocated_devices_are_in_use_but_admin_access_ignores_them() -> None:
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.example.com, pool: n1, device: g0}]
"""
    out = run(gpu_class() + node_slice("n1", GPUS) + used + claim(req()))
    assert devices(out) == ["g1"]
    out = run(
        gpu_class()
        + node_slice("n1", GPUS)
        + used
        + claim(req(body="deviceClassName: gpu, adminAccess: true"))
    )
    assert devices(out) == ["g0"] and out.claims[0].results[0].admin_access is True
    admin_used = used.replace("device: g0}", "device: g0, adminAccess: true}")
    out = run(gpu_class() + node_slice("n1", GPUS) + admin_used + claim(req()))
    assert devices(out) == ["g0"]


def test_taints_and_tolerations() -> None:
    tainted = GPUS.replace(
        "  - name: g1\n", "  - name: g1\n    taints: [{key: broken, effect: NoSchedule}]\n"
    ).replace("  - name: g0\n", "  - name: g0\n    taints: [{key: info, effect: None}]\n")
    body = f"deviceClassName: gpu, selectors: [{H100}]"
    out = run(gpu_class() + node_slice("n1", tainted) + claim(req(body=body)))
    assert devices(out) == ["g2"]
    tol = body + ", tolerations: [{key: broken, operator: Exists}]"
    out = run(gpu_class() + node_slice("n1", tainted) + claim(req(body=tol)))
    assert devices(out) == ["g1"]
    assert out.claims[0].results[0].tolerations == [{"key": "broken", "operator": "Exists"}]
    out = run(gpu_class() + node_slice("n1", tainted) + claim(req(body=body + ", count: 3")))
    assert out.feasible is False
    assert (
        "request gpu: n1 has 3 matching devices, 1 tainted NoSchedule (not tolerated); 2 left, 3 requested"
        in out.reason
    )


def test_device_taint_rules() -> None:
    rule = """
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector: {driver: gpu.example.com, device: g1}
  taint: {key: maintenance, effect: NoExecute}
"""
    body = f"deviceClassName: gpu, selectors: [{H100}]"
    out = run(gpu_class() + node_slice("n1", GPUS) + rule + claim(req(body=body)))
    assert devices(out) == ["g2"]
    no_selector = rule.replace("  deviceSelector: {driver: gpu.example.com, device: g1}\n", "")
    out = run(gpu_class() + node_slice("n1", GPUS) + no_selector + claim(req(body=body)))
    assert devices(out) == ["g1"]
    out = run(
        gpu_class() + node_slice("n1", GPUS) + rule + claim(req(body=body)),
        gates={"DRADeviceTaintRules": False},
    )
    assert devices(out) == ["g1"]


PARTITIONS = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0-memory
    counters: {memory: {value: 8Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: parts}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  devices:
  - name: p-a
    taints: [{key: bad, effect: NoSchedule}]
    consumesCounters: [{counterSet: gpu-0-memory, counters: {memory: {value: 6Gi}}}]
  - name: p-b
    consumesCounters: [{counterSet: gpu-0-memory, counters: {memory: {value: 6Gi}}}]
  - name: p-c
    consumesCounters: [{counterSet: gpu-0-memory, counters: {memory: {value: 2Gi}}}]
"""


def test_rejected_candidate_releases_counters_140436() -> None:
    out = run(gpu_class() + PARTITIONS + claim(req()))
    assert devices(out) == ["p-b"]
    out = run(gpu_class() + PARTITIONS + claim(req(body="deviceClassName: gpu, count: 2")))
    assert devices(out) == ["p-b", "p-c"]
    out = run(gpu_class() + PARTITIONS + claim(req(body="deviceClassName: gpu, count: 3")))
    assert out.feasible is False


def test_counters_consumed_by_allocated_devices() -> None:
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.example.com, pool: n1, device: p-c}]
"""
    out = run(gpu_class() + PARTITIONS + used + claim(req()))
    assert devices(out) == ["p-b"]
    big = used.replace("device: p-c", "device: p-b")
    out = run(gpu_class() + PARTITIONS + big + claim(req()))
    assert devices(out) == ["p-c"]
    tolerant = "deviceClassName: gpu, count: 2, tolerations: [{operator: Exists}]"
    out = run(gpu_class() + PARTITIONS + big + claim(req(body=tolerant)))
    assert out.feasible is False
    assert (
        "request gpu: n1 has 3 matching devices, 1 allocated to claim ns/old, 1 lack free counters in "
        "gpu-0-memory; 1 left, 2 requested" in out.reason
    )


def test_admin_access_does_not_reserve_counters_140729() -> None:
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.example.com, pool: n1, device: p-b}]
"""
    two = req(
        "admin",
        "deviceClassName: gpu, adminAccess: true, selectors: [{cel: {expression: 'device.attributes.size() >= 0'}}]",
    )
    # The admin request monitors p-b (no counters needed); a normal request still gets p-c.
    text = gpu_class() + PARTITIONS.replace("taints: [{key: bad, effect: NoSchedule}]", "taints: []") + used
    body = req("admin", "deviceClassName: gpu, adminAccess: true") + req("normal", "deviceClassName: gpu")
    out = run(text + claim(body))
    assert picked(out) == [[("admin", "p-a"), ("normal", "p-c")]]
    assert two  # selector syntax kept for readers


def test_two_drivers_same_pool_and_counter_set_names_140434() -> None:
    other = PARTITIONS.replace("gpu.example.com", "npu.example.com").replace(
        "name: counters", "name: n-counters"
    )
    other = other.replace("name: parts", "name: n-parts")
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: npu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: npu.example.com, pool: n1, device: p-b}]
"""
    cls = gpu_class("gpu", 'device.driver == "gpu.example.com"')
    out = run(cls + PARTITIONS + other + used + claim(req()))
    # npu's p-b uses npu's counters only; gpu's p-b is still free.
    assert [(r.driver, r.device) for r in out.claims[0].results] == [("gpu.example.com", "p-b")]


def test_partitionable_gate_off_skips_counter_pools() -> None:
    out = run(gpu_class() + PARTITIONS + claim(req()), gates={"DRAPartitionableDevices": False})
    assert out.feasible is False


GROUPED = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: grouped}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: grouped-devices}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: mig-1
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 10Gi}}, compatibilityGroups: [mig]}]
  - name: vgpu-1
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 10Gi}}, compatibilityGroups: [vgpu]}]
  - name: mig-2
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 10Gi}}, compatibilityGroups: [mig, foo]}]
"""


def test_compatibility_groups() -> None:
    # Two slices in one pool with count 1 each would be incomplete; use a count of 2.
    text = gpu_class() + GROUPED.replace("resourceSliceCount: 1", "resourceSliceCount: 2")
    gates = {"DRADeviceCompatibilityGroups": True}
    out = run(text + claim(req(body="deviceClassName: gpu, count: 2")), gates=gates)
    assert devices(out) == ["mig-1", "mig-2"]  # vgpu-1 is rejected next to mig-1
    out = run(text + claim(req(body="deviceClassName: gpu, count: 3")), gates=gates)
    assert out.feasible is False
    # Across claims and against already-allocated devices.
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.example.com, pool: n1, device: vgpu-1}]
"""
    out = run(text + used + claim(req()), gates=gates)
    assert out.feasible is False
    assert "compatible with the groups in use" in str(out.explanation)
    # Gate off: the pool with grouped devices is treated as incomplete.
    out = run(text + claim(req()))
    assert out.feasible is False and "incomplete resource pools skipped" in out.reason


CAPACITY = """
  - name: nic
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 10Gi
        requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}
"""


def test_consumable_capacity_rounding_and_shares() -> None:
    text = gpu_class() + node_slice("n1", CAPACITY)
    body = "deviceClassName: gpu, capacity: {requests: {bandwidth: 1500Mi}}"
    out = run(text + claim(req("a", body) + req("b", body) + req("c", "deviceClassName: gpu")))
    res = out.claims[0].results
    assert [r.device for r in res] == ["nic", "nic", "nic"]
    assert [r.consumed_capacity for r in res] == [
        {"bandwidth": "2Gi"},
        {"bandwidth": "2Gi"},
        {"bandwidth": "1Gi"},
    ]
    assert all(r.share_id and len(r.share_id) == 36 for r in res) and len({r.share_id for r in res}) == 3
    too_much = "deviceClassName: gpu, capacity: {requests: {bandwidth: 6Gi}}"
    out = run(text + claim(req("a", too_much) + req("b", too_much)))
    assert out.feasible is False
    missing = "deviceClassName: gpu, capacity: {requests: {memory: 1Gi}}"
    assert run(text + claim(req(body=missing))).feasible is False


def test_consumable_capacity_existing_shares() -> None:
    used = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: n1, device: nic, shareID: 11111111-2222-4333-8444-555555555555,
         consumedCapacity: {bandwidth: 9Gi}}
"""
    text = gpu_class() + node_slice("n1", CAPACITY) + used
    assert devices(run(text + claim(req()))) == ["nic"]
    body = "deviceClassName: gpu, capacity: {requests: {bandwidth: 2Gi}}"
    assert run(text + claim(req(body=body))).feasible is False


def test_binding_conditions_and_pool_order() -> None:
    bound = node_slice(
        "n1",
        """
  - name: b0
    bindsToNode: true
    bindingConditions: [example.com/ready]
    bindingFailureConditions: [example.com/failed]
""",
        name="a-bound",
        pool="a-pool",
    )
    plain = node_slice("n1", "  - name: p0\n", name="z-plain", pool="z-pool")
    out = run(gpu_class() + bound + plain + claim(req()))
    assert devices(out) == ["p0"]  # pools with binding conditions come last
    out = run(gpu_class() + bound + plain + claim(req(body="deviceClassName: gpu, count: 2")))
    r = out.claims[0].results[1]
    assert r.device == "b0" and r.binding_conditions == ["example.com/ready"]
    assert r.binding_failure_conditions == ["example.com/failed"]
    out = run(gpu_class() + bound + claim(req()), gates={"DRADeviceBindingConditions": False})
    assert out.feasible is False


def test_skip_node_operations_copied_and_node_feature_required() -> None:
    s = node_slice(
        "n1", "  - name: d0\n", extra="\n  skipNodeOperations: [NodePrepareResources, NodeUnprepareResources]"
    )
    gates = {"DRAOptionalNodeOperations": True}
    out = run(gpu_class() + s + claim(req()), gates=gates)
    assert out.claims[0].results[0].skip_node_operations == ["NodePrepareResources", "NodeUnprepareResources"]
    node = "\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    out = run(gpu_class() + s + node + claim(req()), gates=gates)
    assert out.feasible is False
    out = run(
        gpu_class() + s + node + "status: {declaredFeatures: [DRAOptionalNodeOperations]}\n" + claim(req()),
        gates=gates,
    )
    assert out.feasible is True


NETWORK = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: net}
spec:
  driver: gpu.example.com
  pool: {name: net, generation: 1, resourceSliceCount: 1}
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: rack, operator: In, values: [r1]}]
  devices:
  - name: fabric
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {rack: r2}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {rack: r1}}
"""


def test_node_selector_slices_and_allocation_node_selector() -> None:
    out = run(gpu_class() + NETWORK + claim(req()))
    assert out.node == "n2" and devices(out) == ["fabric"]
    assert out.claims[0].allocation["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]
    }
    out = run(gpu_class() + NETWORK + claim(req()), node="n1")
    assert out.feasible is False
    pod = {"spec": {"nodeSelector": {"rack": "r2"}}}
    assert run(gpu_class() + NETWORK + claim(req()), pod=pod).feasible is False


def test_all_nodes_slice_has_no_node_selector() -> None:
    s = NETWORK.split("---\napiVersion: v1")[0].replace(
        "  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: rack, operator: In, values: [r1]}]\n",
        "  allNodes: true\n",
    )
    out = run(gpu_class() + s + claim(req()))
    assert out.feasible is True and out.node is None and "nodeSelector" not in out.claims[0].allocation


def test_per_device_node_selection() -> None:
    s = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: per-device}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  devices:
  - {name: d1, nodeName: n1}
  - {name: d2, nodeName: n2}
"""
    out = run(gpu_class() + s + claim(req()), node="n2")
    assert devices(out) == ["d2"]
    assert out.claims[0].allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "n2"
    ]


def test_class_config_from_class_then_claim() -> None:
    cls = gpu_class(extra="\n  config:\n  - opaque: {driver: gpu.example.com, parameters: {x: 1}}")
    out = run(cls + node_slice("n1", GPUS) + claim(req("a") + req("b")))
    assert out.claims[0].allocation["devices"]["config"] == [
        {"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {"x": 1}}}
    ]
    cfg = "\n    config:\n    - requests: [a]\n      opaque: {driver: gpu.example.com, parameters: {y: 2}}"
    out = run(cls + node_slice("n1", GPUS) + claim(req("a") + req("b"), extra=cfg))
    assert out.claims[0].allocation["devices"]["config"][1] == {
        "source": "FromClaim",
        "requests": ["a"],
        "opaque": {"driver": DRIVER, "parameters": {"y": 2}},
    }


def test_pool_generation_and_completeness() -> None:
    old = node_slice("n1", "  - name: old0\n", name="s-old")
    new = node_slice("n1", "  - name: new0\n", name="s-new").replace("generation: 1", "generation: 2")
    assert devices(run(gpu_class() + old + new + claim(req()))) == ["new0"]
    dup = node_slice("n1", "  - name: x\n", name="s1").replace(
        "resourceSliceCount: 1", "resourceSliceCount: 2"
    )
    dup += node_slice("n1", "  - name: x\n", name="s2").replace(
        "resourceSliceCount: 1", "resourceSliceCount: 2"
    )
    out = run(gpu_class() + dup + claim(req()))
    assert out.feasible is False and "invalid resource pools were encountered" in out.reason


def test_multi_node_prunes_and_picks_first_feasible() -> None:
    text = gpu_class()
    for i in range(5):
        text += node_slice(f"n{i}", GPUS if i == 3 else "  - name: g0\n")
    out = run(text + claim(req(body="deviceClassName: gpu, count: 4")))
    assert out.node == "n3" and out.nodes_tried == 1
    out = run(text + claim(req(body="deviceClassName: gpu, count: 5")))
    assert out.feasible is False and out.nodes_tried == 0
    assert "5 node(s) considered, 5 pruned by device counts" in out.reason


def test_budget_exhaustion_is_undecided_not_infeasible() -> None:
    many = "".join(f"  - name: d{i}\n    attributes: {{numa: {{int: {i % 2}}}}}\n" for i in range(24))
    cons = "\n    constraints:\n    - {distinctAttribute: gpu.example.com/numa}"
    text = (
        gpu_class() + node_slice("n1", many) + claim(req(body="deviceClassName: gpu, count: 3"), extra=cons)
    )
    out = run(text, budget=Budget(steps=50, seconds=10))
    assert out.feasible is None and out.reason.startswith("undecided")
    assert run(text, budget=Budget(steps=100_000, seconds=10)).feasible is False


def test_prioritized_list_gate_off_is_an_error() -> None:
    body = "    - name: gpu\n      firstAvailable: [{name: a, deviceClassName: gpu}]\n"
    out = run(gpu_class() + node_slice("n1", GPUS) + claim(body), gates={"DRAPartitionableDevices": True})
    assert out.feasible is True and picked(out) == [[("gpu/a", "g0")]]
