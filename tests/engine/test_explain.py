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
    assert out.reason.startswith(
        "request a: none of the 2 devices of class gpu on worker-1 matches the request's selector"
    ), out.reason
    (entry,) = out.explanation
    assert entry["request"] == "a" and entry["stages"][0] == ["devices in class gpu", 2]


def test_one_partition_fits() -> None:
    out = run(PARTITIONS + CLASS + claim(1))
    assert out.feasible is True and out.reason == ""


# --- root causes per request and per node (issue 8 §5) -------------------------------------------

AMD = "gpu.amd.com"


def amd_node(node: str, gpus: int, numa: list[int] | None = None) -> str:
    """A node of MI300X GPUs as AMD's driver publishes them (no `deviceID` attribute; `numaNode` per GPU
    when `numa` is given)."""
    devices = "".join(
        f"""
  - name: gpu-{i}
    attributes:
      productName: {{string: AMD Instinct MI300X}}
      pciAddr: {{string: "0000:{i:02x}:00.0"}}"""
        + (f"\n      numaNode: {{int: {numa[i]}}}" if numa else "")
        + """
    capacity:
      memory: {value: 192Gi}"""
        for i in range(gpus)
    )
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}-{AMD}}}
spec:
  driver: {AMD}
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  devices:{devices or " []"}
"""


AMD_CLASS = f"""
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {AMD}}}
spec:
  selectors:
  - cel: {{expression: "device.driver == '{AMD}'"}}
"""


def amd_claim(name: str, body: str, extra: str = "", ns: str = "ml") -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: {ns}}}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {{deviceClassName: {AMD}, {body}}}{extra}
"""


def allocated(name: str, ns: str, node: str, gpus: list[int]) -> str:
    results = "".join(
        f"\n      - {{request: gpus, driver: {AMD}, pool: {node}, device: gpu-{i}}}" for i in gpus
    )
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: {ns}}}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {{deviceClassName: {AMD}, count: {len(gpus)}}}
status:
  allocation:
    devices:
      results:{results}
"""


TWO_NODES = AMD_CLASS + amd_node("node-a", 8) + amd_node("node-b", 8)


def test_a_count_no_node_has_names_the_largest_node_never_a_sum() -> None:
    out = run(TWO_NODES + amd_claim("nine", "count: 9"))
    assert out.feasible is False
    # 16 GPUs in the cluster, but no node has 9: the old summed funnel called this "combinatorial"
    assert out.reason.startswith(
        f"request gpus: the largest node, node-a, has 8 devices of class {AMD}; 9 requested "
        "(2 node(s) considered, 2 pruned by device counts, best node node-a)"
    ), out.reason
    (entry,) = out.explanation
    assert entry["cause"] and [n["matching"] for n in entry["perNode"]] == [8, 8]


def test_a_constraint_on_an_attribute_no_candidate_has_is_named() -> None:
    cons = "\n    constraints:\n    - {matchAttribute: gpu.amd.com/deviceID}"
    out = run(TWO_NODES + amd_claim("pair", "count: 2", cons))
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on node-a on its own, but not together: constraint matchAttribute "
        "`gpu.amd.com/deviceID`: no candidate device has this attribute (8 checked on node-a)"
    ), out.reason


def test_a_constraint_whose_values_are_split_shows_the_values() -> None:
    cons = "\n    constraints:\n    - {matchAttribute: gpu.amd.com/numaNode}"
    out = run(AMD_CLASS + amd_node("node-a", 4, numa=[0, 0, 1, 0]) + amd_claim("four", "count: 4", cons))
    assert out.feasible is False
    assert (
        "constraint matchAttribute `gpu.amd.com/numaNode`: at most 3 candidate devices share one value on "
        "node-a (0 ×3, 1 ×1); the constrained requests need 4"
    ) in out.reason, out.reason


def test_all_mode_names_the_claim_holding_devices() -> None:
    cluster = AMD_CLASS + amd_node("node-a", 8) + allocated("x", "ns", "node-a", [0, 1, 2])
    out = run(cluster + amd_claim("everything", "allocationMode: All"))
    assert out.feasible is False
    assert out.reason.startswith(
        "request gpus (allocationMode All): node-a has 8 matching devices, 3 are allocated to claim ns/x; "
        "All needs every one of them"
    ), out.reason


def test_devices_in_use_name_their_claims_and_other_nodes_are_summed_up() -> None:
    cluster = (
        TWO_NODES
        + allocated("train-1", "ml", "node-a", [0, 1, 2, 3, 4])
        + allocated("train-2", "ml", "node-a", [5])
        + allocated("train-3", "ml", "node-b", [0, 1, 2, 3, 4, 5])
    )
    out = run(cluster + amd_claim("three", "count: 3"))
    assert out.feasible is False
    assert out.reason.startswith(
        "request gpus: node-a has 8 matching devices, 6 allocated to claims ml/train-1 (5), ml/train-2 (1); "
        "2 left, 3 requested; other nodes: node-b: 6 allocated to other claims"
    ), out.reason


def test_the_best_node_is_the_one_that_got_furthest_not_the_first_by_name() -> None:
    # a-node has no GPU at all, z-node has 2 of the 3 requested: z-node came closest
    cluster = AMD_CLASS + amd_node("a-node", 0) + amd_node("z-node", 2)
    out = run(cluster + amd_claim("three", "count: 3"))
    assert out.feasible is False
    assert "best node z-node" in out.reason and "z-node, has 2 devices" in out.reason, out.reason


def test_requests_that_fit_on_different_nodes_are_explained_on_the_node_that_got_furthest() -> None:
    nic = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b-nics}
spec:
  driver: dra.net
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices:
  - name: eth1
    attributes:
      dra.net/rdma: {bool: true}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: dra.net}
spec:
  selectors:
  - cel: {expression: "device.driver == 'dra.net'"}
"""
    both = amd_claim("both", "count: 2").replace(
        "    - name: gpus", "    - name: nic\n      exactly: {deviceClassName: dra.net}\n    - name: gpus"
    )
    out = run(AMD_CLASS + amd_node("node-a", 4) + nic + both)
    assert out.feasible is False
    assert out.reason.startswith(
        "no node can serve every request on its own; on node-a, the node that got furthest (1 of 2 requests "
        "fit): request nic: node-a has no device of class dra.net (it fits on node-b)"
    ), out.reason


def test_a_cel_runtime_error_names_the_qualified_key_on_one_line() -> None:
    selector = "device.attributes['gpu.amd.com'].productName.startsWith('AMD') &&\\n  device.attributes['dra.net'].rdma"
    out = run(TWO_NODES + amd_claim("rdma", f'selectors: [{{cel: {{expression: "{selector}"}}}}]'))
    assert out.feasible is False and out.error
    assert "\n" not in out.error
    assert out.error.startswith(
        f"claim ml/rdma: CEL runtime error on device {AMD}/node-a/gpu-0: no such key `dra.net/rdma` "
        "(selector #0: `device.attributes['gpu.amd.com'].productName.startsWith('AMD') && "
        "device.attributes['dra.net'].rdma`)"
    ), out.error
    assert out.error_claim == "ml/rdma"  # said as data, for the finding's place (not read from the text)


RDMA = "device.attributes['dra.net'].rdma"


def test_a_cel_runtime_error_on_a_node_pruned_by_device_counts_aborts_as_upstream() -> None:
    # 8 GPUs per node, 9 requested: both nodes are pruned by device counts, but upstream's search still
    # evaluates the selector on every device that is not in use, and aborts on the first failure
    out = run(TWO_NODES + amd_claim("nine", f'count: 9, selectors: [{{cel: {{expression: "{RDMA}"}}}}]'))
    assert out.feasible is False
    assert out.error and out.reason == out.error
    assert out.error.startswith(
        f"claim ml/nine: CEL runtime error on device {AMD}/node-a/gpu-0: no such key `dra.net/rdma`"
    ), out.error
    assert out.error_claim == "ml/nine"


def test_devices_in_use_are_not_evaluated_so_their_selector_errors_do_not_surface() -> None:
    # upstream checks "in use" before the selectors: a node whose only devices are allocated fails
    # quietly, as does the search on the other node (its device has the attribute)
    nic = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b-nics}
spec:
  driver: gpu.amd.com
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      dra.net/rdma: {bool: true}
"""
    cluster = AMD_CLASS + amd_node("node-a", 2) + allocated("x", "ml", "node-a", [0, 1]) + nic
    out = run(cluster + amd_claim("two", f'count: 2, selectors: [{{cel: {{expression: "{RDMA}"}}}}]'))
    assert out.feasible is False and not out.error, out.error
    assert "node-b" in out.reason


def test_a_claim_that_fits_before_the_search_meets_the_failing_device_is_allocated() -> None:
    # node-a's first GPU has the attribute: one device suffices and the search never evaluates gpu-1
    node = amd_node("node-a", 2).replace(
        'pciAddr: {string: "0000:00:00.0"}',
        'pciAddr: {string: "0000:00:00.0"}\n      dra.net/rdma: {bool: true}',
    )
    out = run(
        AMD_CLASS + node + amd_claim("one", f'count: 1, selectors: [{{cel: {{expression: "{RDMA}"}}}}]')
    )
    assert out.feasible is True, out.reason


def test_requests_that_draw_on_the_same_devices_are_summed_on_the_best_node() -> None:
    # two claims of one GPU each; node-a has one GPU left: each fits alone, not both
    cluster = AMD_CLASS + amd_node("node-a", 4) + allocated("x", "ml", "node-a", [0, 1, 2])
    out = run(cluster + amd_claim("a", "count: 1") + amd_claim("b", "count: 1"))
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on node-a on its own, but not together: requests gpus (claim ml/a), gpus "
        f"(claim ml/b) draw on the same devices and need 2 of class {AMD} together; node-a has 1 free"
    ), out.reason
