"""Shapes built to find quadratic paths (issue §5), each within the API server's 3 MiB: many documents in
one file, a Pod with thousands of claim references, objects with thousands of selectors, requests,
constraints, tolerations, taints, attributes; pools with thousands of slices or devices; many nodes.
Every one must be checked well inside the 10 s admission timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.hostile.corpus import CEL_FRONT, ENGINE, INPUT_IO, case, feasibility, simulate, strip, validate
from tests.hostile.k8s import (
    DRIVER,
    V1,
    claim,
    device,
    device_class,
    node,
    pod,
    request,
    resource_slice,
    uid,
    write,
)

VALID_OR_INVALID = (0, 1)


def _flow_documents(d: Path, n: int) -> list[str]:
    docs = "".join(
        "--- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: c"
        + str(i)
        + ", namespace: default}, "
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g}}]}}}\n"
        for i in range(n)
    )
    return [write(d, "docs.yaml", docs)]


def _block_documents(d: Path, n: int) -> list[str]:
    u = uid(d)
    docs = "".join(
        f"---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {u}-c{i}\nspec:\n  selectors:\n"
        f"  - cel:\n      expression: device.driver == 'd{i}.example.com'\n"
        for i in range(n)
    )
    return [write(d, "docs.yaml", docs)]


# the full sizes cost 7-12 CPU-s each: bench only; CI runs a quarter of each
@case("quadratic", validate(exit=VALID_OR_INVALID), strip(exit=VALID_OR_INVALID), area=INPUT_IO, large=True)
def flow_documents_16000(d: Path) -> list[str]:
    """16,000 flow-style claim documents in one file (51 s once)"""
    return _flow_documents(d, 16_000)


@case("quadratic", validate(exit=VALID_OR_INVALID), strip(exit=VALID_OR_INVALID), area=INPUT_IO)
def flow_documents_4000(d: Path) -> list[str]:
    """4,000 flow-style claim documents in one file"""
    return _flow_documents(d, 4_000)


@case("quadratic", validate(exit=VALID_OR_INVALID), simulate(exit=(0, 1, 3)), area=INPUT_IO, large=True)
def block_documents_16000(d: Path) -> list[str]:
    """16,000 small block-style documents (2.9 MB)"""
    return _block_documents(d, 16_000)


@case("quadratic", validate(exit=VALID_OR_INVALID), simulate(exit=(0, 1, 3)), area=INPUT_IO)
def block_documents_4000(d: Path) -> list[str]:
    """4,000 small block-style documents (730 KB)"""
    return _block_documents(d, 4_000)


@case("quadratic", validate(exit=VALID_OR_INVALID), area=INPUT_IO)
def json_list_22000_items(d: Path) -> list[str]:
    """a v1 List of 22,000 DeviceClasses in one JSON document"""
    import json

    u = uid(d)
    items = [
        {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": f"{u}-c{i}"}, "spec": {}}
        for i in range(22_000)
    ]
    return [write(d, "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))]


@case("quadratic", validate(exit=VALID_OR_INVALID), feasibility(exit=VALID_OR_INVALID), area=INPUT_IO)
def pod_claim_refs_5000(d: Path) -> list[str]:
    """a Pod with 5,000 claim references, all used by one container (12.6 s for a 718 KB Pod today)"""
    return [write(d, "pod.yaml", [pod(f"{uid(d)}-p", [f"claim-{i}" for i in range(5000)])], flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=INPUT_IO)
def pod_containers_1500_claims_100(d: Path) -> list[str]:
    """1,500 containers each naming the same 100 claims (150,000 references)"""
    p = pod(f"{uid(d)}-p", [f"claim-{i}" for i in range(100)])
    c0 = p["spec"]["containers"][0]
    p["spec"]["containers"] = [dict(c0, name=f"c{i}") for i in range(1500)]
    return [write(d, "pod.yaml", [p], flow=True)]


@case("quadratic", validate(exit=0), area=INPUT_IO)
def pod_status_claims_20000(d: Path) -> list[str]:
    """a Pod whose status lists 20,000 resourceClaimStatuses (reset on CREATE: read, noted, not validated)"""
    p = pod(f"{uid(d)}-p", ["a"])
    p["status"] = {
        "resourceClaimStatuses": [{"name": f"c{i}", "resourceClaimName": f"x{i}"} for i in range(20_000)]
    }
    return [write(d, "pod.yaml", [p], flow=True)]


def _selectors(n: int) -> list[str]:
    return [f"device.attributes['{DRIVER}'].model == 'm{i}'" for i in range(n)]


def _class_selectors(d: Path, n: int) -> list[str]:
    dc = device_class(f"{uid(d)}-g")
    dc["spec"]["selectors"] = [{"cel": {"expression": e}} for e in _selectors(n)]
    return [write(d, "class.yaml", [dc], flow=True)]


@case("quadratic", validate(exit=1, rules=("class.selectors",)), area=CEL_FRONT, large=True)
def class_selectors_38000(d: Path) -> list[str]:
    """a DeviceClass with 38,000 selectors (2.9 MB; upstream allows 32; 6.9 CPU-s: bench only)"""
    return _class_selectors(d, 38_000)


@case("quadratic", validate(exit=1, rules=("class.selectors",)), area=CEL_FRONT)
def class_selectors_9500(d: Path) -> list[str]:
    """a DeviceClass with 9,500 selectors (730 KB; upstream allows 32)"""
    return _class_selectors(d, 9_500)


@case("quadratic", validate(exit=1, rules=("claim.requests",)), simulate(exit=1), area=CEL_FRONT)
def claim_requests_2000_selectors_10(d: Path) -> list[str]:
    """a claim with 2,000 requests of 10 selectors each (2.95 MB, 21 s today)"""
    u = uid(d)
    reqs = [request(f"r{i}", f"{u}-g", _selectors(10)) for i in range(2000)]
    return [write(d, "claim.yaml", [device_class(f"{u}-g"), claim(f"{u}-c", reqs)], flow=True)]


@case("quadratic", validate(exit=1), area=ENGINE)
def claim_constraints_600x600(d: Path) -> list[str]:
    """600 requests and 600 constraints naming all of them (360,000 references)"""
    u = uid(d)
    names = [f"r{i}" for i in range(600)]
    reqs = [request(n, f"{u}-g") for n in names]
    cons = [{"requests": names, "matchAttribute": f"{DRIVER}/model"} for _ in range(600)]
    return [write(d, "claim.yaml", [claim(f"{u}-c", reqs, cons)], flow=True)]


@case("quadratic", validate(exit=1), area=ENGINE)
def claim_first_available_20000(d: Path) -> list[str]:
    """one request with 20,000 firstAvailable subrequests"""
    u = uid(d)
    subs = [{"name": f"s{i}", "deviceClassName": f"{u}-g"} for i in range(20_000)]
    c = claim(f"{u}-c", [])
    c["spec"]["devices"]["requests"] = [{"name": "r", "firstAvailable": subs}]
    return [write(d, "claim.yaml", [c], flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=ENGINE)
def claim_tolerations_30000(d: Path) -> list[str]:
    """a request with 30,000 tolerations"""
    u = uid(d)
    tol = [{"key": f"k{i}", "operator": "Exists", "effect": "NoSchedule"} for i in range(30_000)]
    return [write(d, "claim.yaml", [claim(f"{u}-c", [request("r", f"{u}-g", tolerations=tol)])], flow=True)]


@case("quadratic", validate(exit=0), area=ENGINE)
def claim_status_results_20000(d: Path) -> list[str]:
    """an allocated claim with 20,000 results and 20,000 reservedFor entries (status reset on CREATE)"""
    u = uid(d)
    c = claim(f"{u}-c", [request("r", f"{u}-g")])
    res = [{"request": "r", "driver": DRIVER, "pool": "p", "device": f"d{i}"} for i in range(20_000)]
    c["status"] = {
        "allocation": {"devices": {"results": res}},
        "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(20_000)],
    }
    return [write(d, "claim.yaml", [c], flow=True)]


@case("quadratic", validate(exit=1), area=ENGINE)
def slice_devices_20000(d: Path) -> list[str]:
    """one ResourceSlice with 20,000 devices (upstream allows 128)"""
    u = uid(d)
    devs = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(20_000)]
    return [write(d, "slice.yaml", [resource_slice(f"{u}-s", devs, pool=f"{u}-p", node=f"{u}-n")], flow=True)]


@case("quadratic", validate(exit=1, rules=("pool.duplicate-device",)), area=ENGINE)
def pool_duplicate_devices_10000(d: Path) -> list[str]:
    """one pool of 100 slices holding the same 100 device names each (pool.duplicate-device)"""
    u = uid(d)
    devs = [{"name": f"gpu-{i}"} for i in range(100)]
    objs = [resource_slice(f"{u}-s{s}", devs, pool=f"{u}-p", node=f"{u}-n", count=100) for s in range(100)]
    return [write(d, "slices.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=ENGINE)
def pool_slices_9000(d: Path) -> list[str]:
    """one pool of 9,000 slices of one device each"""
    u = uid(d)
    objs = [
        resource_slice(f"{u}-s{s}", [{"name": f"gpu-{s}"}], pool=f"{u}-p", node=f"{u}-n", count=9_000)
        for s in range(9_000)
    ]
    return [write(d, "slices.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=ENGINE)
def pool_generations_5000(d: Path) -> list[str]:
    """one pool whose 5,000 slices all have different generations and slice counts"""
    u = uid(d)
    objs = [
        resource_slice(f"{u}-s{s}", [{"name": f"gpu-{s}"}], pool=f"{u}-p", node=f"{u}-n", count=s + 1)
        for s in range(5000)
    ]
    for s, o in enumerate(objs):
        o["spec"]["pool"]["generation"] = s
    return [write(d, "slices.yaml", objs, flow=True)]


@case("quadratic", validate(exit=1), area=ENGINE)
def device_attributes_30000(d: Path) -> list[str]:
    """one device with 30,000 attributes and 10,000 capacities"""
    u = uid(d)
    dev: dict[str, Any] = {"name": "gpu-0", "attributes": {f"a{i}": {"int": i} for i in range(30_000)}}
    dev["capacity"] = {f"c{i}": {"value": "1"} for i in range(10_000)}
    return [
        write(d, "slice.yaml", [resource_slice(f"{u}-s", [dev], pool=f"{u}-p", node=f"{u}-n")], flow=True)
    ]


@case("quadratic", validate(exit=1), area=ENGINE)
def device_taints_20000(d: Path) -> list[str]:
    """one device with 20,000 taints"""
    u = uid(d)
    dev = {
        "name": "gpu-0",
        "taints": [{"key": f"k{i}", "value": "v", "effect": "NoSchedule"} for i in range(20_000)],
    }
    return [
        write(d, "slice.yaml", [resource_slice(f"{u}-s", [dev], pool=f"{u}-p", node=f"{u}-n")], flow=True)
    ]


@case("quadratic", validate(exit=1), area=ENGINE)
def counters_sets_1000x100(d: Path) -> list[str]:
    """1,000 counter sets of 100 counters, 500 devices consuming one set each"""
    u = uid(d)
    sets = [
        {"name": f"set{i}", "counters": {f"c{j}": {"value": "1"} for j in range(100)}} for i in range(1000)
    ]
    spec = {
        "driver": DRIVER,
        "nodeName": f"{u}-n",
        "pool": {"name": f"{u}-p", "generation": 1, "resourceSliceCount": 2},
    }
    devs = [
        {
            "name": f"gpu-{i}",
            "consumesCounters": [
                {"counterSet": f"set{i}", "counters": {f"c{j}": {"value": "1"} for j in range(100)}}
            ],
        }
        for i in range(500)
    ]
    objs = [
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-c"},
            "spec": {**spec, "sharedCounters": sets},
        },
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-d"},
            "spec": {**spec, "devices": devs},
        },
    ]
    return [write(d, "slices.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), simulate(exit=(0, 1, 3)), area=ENGINE)
def nodes_3000_slices_3000(d: Path) -> list[str]:
    """3,000 Nodes each with a one-device slice, and a claim none of them satisfies"""
    u = uid(d)
    objs: list[Any] = [device_class(f"{u}-g")]
    for i in range(3000):
        objs.append(node(f"{u}-n{i}"))
        objs.append(resource_slice(f"{u}-s{i}", [device("gpu-0", 0)], pool=f"{u}-p{i}", node=f"{u}-n{i}"))
    objs.append(
        claim(f"{u}-c", [request("r", f"{u}-g", ["device.attributes['gpu.example.com'].model == 'none'"])])
    )
    return [write(d, "cluster.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=ENGINE)
def taint_rules_5000(d: Path) -> list[str]:
    """5,000 DeviceTaintRules with selectors and a slice of 128 devices"""
    u = uid(d)
    objs: list[Any] = [
        resource_slice(f"{u}-s", [device(f"gpu-{i}", i) for i in range(128)], pool=f"{u}-p", node=f"{u}-n")
    ]
    for i in range(5000):
        objs.append(
            {
                "apiVersion": V1,
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"{u}-t{i}"},
                "spec": {
                    "deviceSelector": {"driver": DRIVER, "pool": f"{u}-p", "device": f"gpu-{i % 128}"},
                    "taint": {"key": f"k{i}", "effect": "NoSchedule"},
                },
            }
        )
    return [write(d, "rules.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), simulate(exit=(0, 1, 3), deadline=2.0), area=ENGINE)
def pods_2000_one_template(d: Path) -> list[str]:
    """2,000 Pods sharing one claim template on a 4-device cluster (simulate: each Pod in turn)"""
    u = uid(d)
    objs: list[Any] = [
        node(f"{u}-n"),
        device_class(f"{u}-g"),
        resource_slice(f"{u}-s", [device(f"gpu-{i}", i) for i in range(4)], pool=f"{u}-p", node=f"{u}-n"),
    ]
    objs.append(claim(f"{u}-t", [request("r", f"{u}-g")], kind="ResourceClaimTemplate"))
    objs += [pod(f"{u}-p{i}", [f"{u}-t"], template=True) for i in range(2000)]
    return [write(d, "cluster.yaml", objs, flow=True)]


@case("quadratic", validate(exit=VALID_OR_INVALID), area=INPUT_IO)
def long_lines_names_253(d: Path) -> list[str]:
    """7,000 DeviceClasses with 253-character names, one line each"""
    objs = [device_class(f"{i:05d}" + "a" * 248) for i in range(7_000)]
    return [write(d, "classes.yaml", objs, flow=True)]


@case("quadratic", validate(exit=1), area=INPUT_IO)
def annotations_value_2mb_each_key(d: Path) -> list[str]:
    """annotations: 2,000 keys of 1 KB values (over the 256 KiB total)"""
    c = claim(f"{uid(d)}-c", [])
    c["metadata"]["annotations"] = {f"k{i}": "v" * 1000 for i in range(2000)}
    return [write(d, "claim.yaml", [c], flow=True)]
