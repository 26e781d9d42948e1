"""Explanations of infeasible answers: the stage that emptied a request, and counter contention."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from engine_fixtures import run

from tests import builders
from tests.builders import allocated, device_class, request, resource_slice, result

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = [
    d for d in yaml.safe_load_all((ROOT / "examples" / "partitionable-devices.yaml").read_text()) if d
]
CLASS = device_class("gpu", "device.driver == 'dra.example.com'")


def claim(count: int, selector: str = "") -> dict[str, Any]:
    return builders.claim("c", [request("a", "gpu", [selector] if selector else [], count=count)])


def test_two_partitions_of_one_gpu_are_shown_to_overdraw_the_counter_set() -> None:
    out = run([*PARTITIONS, CLASS, claim(2)])
    assert out.feasible is False
    assert (
        "request a: all 2 candidate devices draw on counter set gpu-1-counters of pool dra.example.com/pool, "
        "whose counter memory has 8Gi free, but any 2 of them need at least 12Gi"
    ) in out.reason


def test_the_stage_that_emptied_a_request_is_named_with_counts() -> None:
    out = run(
        [*PARTITIONS, CLASS, claim(1, "device.attributes['dra.example.com'].?model.orValue('') == 'X'")]
    )
    assert out.feasible is False
    assert out.reason.startswith(
        "request a: none of the 2 devices of class gpu on worker-1 matches the request's selector"
    ), out.reason
    (entry,) = out.explanation
    assert entry["request"] == "a" and entry["stages"][0] == ["devices in class gpu", 2]


def test_one_partition_fits() -> None:
    out = run([*PARTITIONS, CLASS, claim(1)])
    assert out.feasible is True and out.reason == ""


# --- root causes per request and per node (issue 8 §5) -------------------------------------------

AMD = "gpu.amd.com"


def amd_node(node: str, gpus: int, numa: list[int] | None = None) -> dict[str, Any]:
    """A node of MI300X GPUs as AMD's driver publishes them (no `deviceID` attribute; `numaNode` per GPU
    when `numa` is given)."""
    devices = []
    for i in range(gpus):
        attributes: dict[str, Any] = {
            "productName": {"string": "AMD Instinct MI300X"},
            "pciAddr": {"string": f"0000:{i:02x}:00.0"},
        }
        if numa:
            attributes["numaNode"] = {"int": numa[i]}
        devices.append(
            {"name": f"gpu-{i}", "attributes": attributes, "capacity": {"memory": {"value": "192Gi"}}}
        )
    return resource_slice(f"{node}-{AMD}", devices, pool=node, node=node, driver=AMD)


AMD_CLASS = device_class(AMD, f"device.driver == '{AMD}'")


def amd_claim(
    name: str, constraints: list[dict[str, Any]] | None = None, ns: str = "ml", **exactly: Any
) -> dict[str, Any]:
    """Claim `ns/name` of one request, gpus, for `exactly` (count, allocationMode, selectors) of AMD's GPUs."""
    return builders.claim(name, [request("gpus", AMD, **exactly)], constraints or [], ns=ns)


def amd_allocated(name: str, ns: str, node: str, gpus: list[int]) -> dict[str, Any]:
    """Claim `ns/name`, allocated: its request gpus has `gpus` of `node`."""
    results = [result("gpus", node, f"gpu-{i}", AMD) for i in gpus]
    return builders.claim(name, [request("gpus", AMD, count=len(gpus))], ns=ns, status=allocated(*results))


TWO_NODES = [AMD_CLASS, amd_node("node-a", 8), amd_node("node-b", 8)]


def test_a_count_no_node_has_names_the_largest_node_never_a_sum() -> None:
    out = run([*TWO_NODES, amd_claim("nine", count=9)])
    assert out.feasible is False
    # 16 GPUs in the cluster, but no node has 9: the old summed funnel called this "combinatorial"
    assert out.reason.startswith(
        f"request gpus: the largest node, node-a, has 8 devices of class {AMD}; 9 requested "
        "(2 node(s) considered, 2 pruned by device counts, best node node-a)"
    ), out.reason
    (entry,) = out.explanation
    assert entry["cause"] and [n["matching"] for n in entry["perNode"]] == [8, 8]


def test_a_constraint_on_an_attribute_no_candidate_has_is_named() -> None:
    cons = [{"matchAttribute": "gpu.amd.com/deviceID"}]
    out = run([*TWO_NODES, amd_claim("pair", cons, count=2)])
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on node-a on its own, but not together: constraint matchAttribute "
        "`gpu.amd.com/deviceID`: no candidate device has this attribute (8 checked on node-a)"
    ), out.reason


def test_a_constraint_whose_values_are_split_shows_the_values() -> None:
    cons = [{"matchAttribute": "gpu.amd.com/numaNode"}]
    out = run([AMD_CLASS, amd_node("node-a", 4, numa=[0, 0, 1, 0]), amd_claim("four", cons, count=4)])
    assert out.feasible is False
    assert (
        "constraint matchAttribute `gpu.amd.com/numaNode`: at most 3 candidate devices share one value on "
        "node-a (0 ×3, 1 ×1); the constrained requests need 4"
    ) in out.reason, out.reason


def test_all_mode_names_the_claim_holding_devices() -> None:
    cluster = [AMD_CLASS, amd_node("node-a", 8), amd_allocated("x", "ns", "node-a", [0, 1, 2])]
    out = run([*cluster, amd_claim("everything", allocationMode="All")])
    assert out.feasible is False
    assert out.reason.startswith(
        "request gpus (allocationMode All): node-a has 8 matching devices, 3 are allocated to claim ns/x; "
        "All needs every one of them"
    ), out.reason


def test_devices_in_use_name_their_claims_and_other_nodes_are_summed_up() -> None:
    cluster = [
        *TWO_NODES,
        amd_allocated("train-1", "ml", "node-a", [0, 1, 2, 3, 4]),
        amd_allocated("train-2", "ml", "node-a", [5]),
        amd_allocated("train-3", "ml", "node-b", [0, 1, 2, 3, 4, 5]),
    ]
    out = run([*cluster, amd_claim("three", count=3)])
    assert out.feasible is False
    assert out.reason.startswith(
        "request gpus: node-a has 8 matching devices, 6 allocated to claims ml/train-1 (5), ml/train-2 (1); "
        "2 left, 3 requested; other nodes: node-b: 6 allocated to other claims"
    ), out.reason


def test_the_best_node_is_the_one_that_got_furthest_not_the_first_by_name() -> None:
    # a-node has no GPU at all, z-node has 2 of the 3 requested: z-node came closest
    cluster = [AMD_CLASS, amd_node("a-node", 0), amd_node("z-node", 2)]
    out = run([*cluster, amd_claim("three", count=3)])
    assert out.feasible is False
    assert "best node z-node" in out.reason and "z-node, has 2 devices" in out.reason, out.reason


def test_requests_that_fit_on_different_nodes_are_explained_on_the_node_that_got_furthest() -> None:
    rdma = {"dra.net/rdma": {"bool": True}}
    nic = [
        resource_slice(
            "node-b-nics",
            [{"name": "eth1", "attributes": rdma}],
            pool="node-b",
            node="node-b",
            driver="dra.net",
        ),
        device_class("dra.net", "device.driver == 'dra.net'"),
    ]
    both = builders.claim("both", [request("nic", "dra.net"), request("gpus", AMD, count=2)], ns="ml")
    out = run([AMD_CLASS, amd_node("node-a", 4), *nic, both])
    assert out.feasible is False
    assert out.reason.startswith(
        "no node can serve every request on its own; on node-a, the node that got furthest (1 of 2 requests "
        "fit): request nic: node-a has no device of class dra.net (it fits on node-b)"
    ), out.reason


def test_a_cel_runtime_error_names_the_qualified_key_on_one_line() -> None:
    selector = "device.attributes['gpu.amd.com'].productName.startsWith('AMD') &&\n  device.attributes['dra.net'].rdma"
    out = run([*TWO_NODES, amd_claim("rdma", selectors=[selector])])
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
    out = run([*TWO_NODES, amd_claim("nine", count=9, selectors=[RDMA])])
    assert out.feasible is False
    assert out.error and out.reason == out.error
    assert out.error.startswith(
        f"claim ml/nine: CEL runtime error on device {AMD}/node-a/gpu-0: no such key `dra.net/rdma`"
    ), out.error
    assert out.error_claim == "ml/nine"


def test_devices_in_use_are_not_evaluated_so_their_selector_errors_do_not_surface() -> None:
    # upstream checks "in use" before the selectors: a node whose only devices are allocated fails
    # quietly, as does the search on the other node (its device has the attribute)
    rdma = {"dra.net/rdma": {"bool": True}}
    nic = resource_slice(
        "node-b-nics", [{"name": "gpu-0", "attributes": rdma}], pool="node-b", node="node-b", driver=AMD
    )
    cluster = [AMD_CLASS, amd_node("node-a", 2), amd_allocated("x", "ml", "node-a", [0, 1]), nic]
    out = run([*cluster, amd_claim("two", count=2, selectors=[RDMA])])
    assert out.feasible is False and not out.error, out.error
    assert "node-b" in out.reason


def test_a_claim_that_fits_before_the_search_meets_the_failing_device_is_allocated() -> None:
    # node-a's first GPU has the attribute: one device suffices and the search never evaluates gpu-1
    node = amd_node("node-a", 2)
    node["spec"]["devices"][0]["attributes"]["dra.net/rdma"] = {"bool": True}
    out = run([AMD_CLASS, node, amd_claim("one", count=1, selectors=[RDMA])])
    assert out.feasible is True, out.reason


def test_requests_that_draw_on_the_same_devices_are_summed_on_the_best_node() -> None:
    # two claims of one GPU each; node-a has one GPU left: each fits alone, not both
    cluster = [AMD_CLASS, amd_node("node-a", 4), amd_allocated("x", "ml", "node-a", [0, 1, 2])]
    out = run([*cluster, amd_claim("a", count=1), amd_claim("b", count=1)])
    assert out.feasible is False
    assert out.reason.startswith(
        "every request fits on node-a on its own, but not together: requests gpus (claim ml/a), gpus "
        f"(claim ml/b) draw on the same devices and need 2 of class {AMD} together; node-a has 1 free"
    ), out.reason
