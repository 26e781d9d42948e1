"""ResourceClaim status rules: results, admin access, config, node selector, reservedFor, devices, network data."""

from __future__ import annotations

import copy
from typing import Any

from tests.builders import first_available, request, subrequest
from webhook.config.context import Context
from webhook.rules import claim_status as cs

UID = "11111111-1111-1111-1111-111111111111"
SHARE = "0b5c5cf6-3b4c-4fd2-9a3b-2f4e8a1d9c10"

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ml"},
    "spec": {
        "devices": {
            "requests": [
                request("gpu", "gpu.example.com"),
                first_available(
                    "nic", subrequest("fast", "nic.example.com"), subrequest("slow", "nic.example.com")
                ),
            ]
        }
    },
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": "node-1",
                        "device": "gpu-0",
                        "tolerations": [
                            {"key": "example.com/maint", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                        "bindingConditions": ["example.com/ready"],
                        "bindingFailureConditions": ["example.com/failed"],
                    },
                    {
                        "request": "nic/fast",
                        "driver": "nic.example.com",
                        "pool": "node-1",
                        "device": "eth-0",
                        "shareID": SHARE,
                        "consumedCapacity": {"bw": "1G"},
                    },
                ],
                "config": [
                    {
                        "source": "FromClass",
                        "requests": ["gpu"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"mode": "shared"}},
                    }
                ],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "p1", "uid": UID}],
        "devices": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-0",
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "Prepared",
                        "message": "",
                        "lastTransitionTime": "2026-09-01T00:00:00Z",
                    }
                ],
                "data": {"health": "ok"},
            },
            {
                "driver": "nic.example.com",
                "pool": "node-1",
                "device": "eth-0",
                "shareID": SHARE,
                "networkData": {
                    "interfaceName": "eth0",
                    "ips": ["192.0.2.5/24", "2001:db8::5/64"],
                    "hardwareAddress": "00:11:22:33:44:55",
                },
            },
        ],
    },
}

RULES = (
    cs.results,
    cs.admin_access,
    cs.config,
    cs.node_selector,
    cs.reserved_for,
    cs.devices,
    cs.network_data,
)


def load() -> dict[str, Any]:
    return copy.deepcopy(CLAIM)


def run(fn, o: dict, ctx: Context | None = None) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(o, ctx or Context())]


def results_of(o: dict) -> list[dict]:
    return o["status"]["allocation"]["devices"]["results"]


def test_rule_ids() -> None:
    ids = [fn.rule.id for fn in RULES]
    assert ids == [
        "claim-status.results",
        "claim-status.admin-access",
        "claim-status.config",
        "claim-status.node-selector",
        "claim-status.reserved-for",
        "claim-status.devices",
        "claim-status.network-data",
    ]


def test_valid_status() -> None:
    o = load()
    for fn in RULES:
        assert run(fn, o, Context(namespace_labels={})) == [], fn.rule.id


def test_results_too_many() -> None:
    o = load()
    o["status"]["allocation"]["devices"]["results"] = [copy.deepcopy(results_of(o)[0]) for _ in range(33)]
    assert run(cs.results, o) == [
        ("status.allocation.devices.results", "Too many: 33: must have at most 32 items")
    ]


def test_results_request_refs() -> None:
    o = load()
    base = results_of(o)[0]
    o["status"]["allocation"]["devices"]["results"] = [
        dict(base, request="tpu"),
        dict(base, request="nic"),  # a result names the subrequest, but "nic" alone exists as a request
        dict(base, request="nic/medium"),
        dict(base, request="a/b/c"),
        dict(base, request="Bad_Req"),
    ]
    found = run(cs.results, o)
    msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
    p = "status.allocation.devices.results"
    assert (f"{p}[0].request", f'Invalid value: "tpu": {msg}') in found
    assert not any(f == f"{p}[1].request" for f, _ in found)
    assert (f"{p}[2].request", f'Invalid value: "nic/medium": {msg}') in found
    assert [m for f, m in found if f == f"{p}[3].request"] == [f'Invalid value: "a/b/c": {msg}']
    assert any(f == f"{p}[4].request" and "RFC 1123 label" in m for f, m in found)


def test_results_formats() -> None:
    o = load()
    r = results_of(o)[0]
    r.update(driver="Bad_Driver", pool="", device="GPU_0", shareID="NOT-A-UUID")
    r["tolerations"] = [
        {"key": "k", "operator": "Exists", "value": "v"},
        {"operator": "Sometimes", "effect": "Never"},
    ]
    r["bindingConditions"] = ["a", "a", "b", "c", "d"]
    found = run(cs.results, o)
    p = "status.allocation.devices.results[0]"
    fields = {f for f, _ in found}
    assert {f"{p}.driver", f"{p}.pool", f"{p}.device", f"{p}.shareID"} <= fields
    assert (f"{p}.pool", "Required value") in found
    assert any(f == f"{p}.shareID" and "error validating uid" in m for f, m in found)
    assert (f"{p}.tolerations[0].value", 'Invalid value: "v": must be empty for operator `Exists`') in found
    assert any(
        f == f"{p}.tolerations[1].operator" and m.startswith('Unsupported value: "Sometimes"')
        for f, m in found
    )
    assert any(
        f == f"{p}.tolerations[1].effect" and m.startswith('Unsupported value: "Never"') for f, m in found
    )
    assert (f"{p}.bindingConditions", "Too many: 5: must have at most 4 items") in found
    assert (f"{p}.bindingConditions[1]", 'Duplicate value: "a"') in found


def test_results_binding_lists_need_each_other() -> None:
    o = load()
    r = results_of(o)[0]
    r["bindingFailureConditions"] = ["example.com/ready"]
    found = run(cs.results, o)
    p = "status.allocation.devices.results[0]"
    assert any(f == f"{p}.bindingFailureConditions[0]" and "must not overlap" in m for f, m in found)
    del r["bindingConditions"]
    found = run(cs.results, o)
    assert any(
        f == f"{p}.bindingConditions" and "required to use bindingFailureConditions" in m for f, m in found
    )


def test_results_skip_node_operations() -> None:
    o = load()
    results_of(o)[0]["skipNodeOperations"] = ["NodePrepareResources"]
    found = run(cs.results, o)
    assert any(f == "status.allocation.devices.results[0].skipNodeOperations" for f, _ in found)
    results_of(o)[0]["skipNodeOperations"] = ["NodePrepareResources", "NodeUnprepareResources"]
    assert run(cs.results, o) == []


def test_stored_allocation_is_not_revalidated() -> None:
    o = load()
    results_of(o)[0]["device"] = "GPU_0"
    assert run(cs.results, o) != []
    assert run(cs.results, o, Context(old=copy.deepcopy(o), operation="UPDATE")) == []


def test_admin_access_needs_namespace_label() -> None:
    o = load()
    results_of(o)[0]["adminAccess"] = True
    p = "status.allocation.devices.results[0].adminAccess"
    found = run(cs.admin_access, o, Context(namespace_labels={"team": "ml"}))
    assert (
        len(found) == 1
        and found[0][0] == p
        and found[0][1].startswith("Forbidden: admin access to devices requires")
    )
    assert run(cs.admin_access, o, Context(namespace_labels={cs.ADMIN_ACCESS_LABEL: "true"})) == []
    assert run(cs.admin_access, o, Context(namespace_labels=None)) == []  # offline: labels unknown


def test_config() -> None:
    o = load()
    entry = o["status"]["allocation"]["devices"]["config"][0]
    o["status"]["allocation"]["devices"]["config"] += [
        dict(entry, source="FromNowhere"),
        dict(entry, source="", requests=["gpu", "gpu", "ghost"]),
        {"source": "FromClaim"},
        dict(entry, opaque={"driver": "gpu.example.com", "parameters": [1, 2]}),
        dict(entry, opaque={"driver": "gpu.example.com", "parameters": {"blob": "x" * 10240}}),
    ]
    found = run(cs.config, o)
    p = "status.allocation.devices.config"
    assert any(
        f == f"{p}[1].source"
        and m.startswith('Unsupported value: "FromNowhere": supported values: "FromClaim", "FromClass"')
        for f, m in found
    )
    assert (f"{p}[2].source", "Required value") in found
    assert (f"{p}[2].requests[1]", 'Duplicate value: "gpu"') in found
    assert any(f == f"{p}[2].requests[2]" for f, _ in found)
    assert (f"{p}[3].opaque", "Required value") in found
    assert (
        f"{p}[4].opaque.parameters",
        'Invalid value: "<value omitted>": must be a valid JSON object',
    ) in found
    assert (f"{p}[5].opaque.parameters", "Too long: may not be more than 10240 bytes") in found


def test_config_too_many() -> None:
    o = load()
    entry = o["status"]["allocation"]["devices"]["config"][0]
    o["status"]["allocation"]["devices"]["config"] = [entry] * 65
    assert run(cs.config, o) == [
        ("status.allocation.devices.config", "Too many: 65: must have at most 64 items")
    ]


def test_node_selector() -> None:
    o = load()
    o["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": []}
    assert run(cs.node_selector, o) == [
        (
            "status.allocation.nodeSelector.nodeSelectorTerms",
            "Required value: must have at least one node selector term",
        )
    ]
    o["status"]["allocation"]["nodeSelector"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n"]}]}]
    }
    found = run(cs.node_selector, o)
    assert any(
        f == "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].key" for f, _ in found
    )


def test_reserved_for() -> None:
    o = load()
    o["status"]["reservedFor"] += [
        {"resource": "pods", "name": "p2", "uid": UID},
        {"resource": "", "name": "p3", "uid": "u3"},
    ]
    found = run(cs.reserved_for, o)
    assert ("status.reservedFor[1]", f'Duplicate value: "{UID}"') in found
    assert ("status.reservedFor[2].resource", "Required value") in found
    o["status"]["reservedFor"] = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]
    assert run(cs.reserved_for, o) == [("status.reservedFor", "Too many: 257: must have at most 256 items")]


def test_reserved_for_needs_allocation() -> None:
    o = load()
    del o["status"]["allocation"]
    found = run(cs.reserved_for, o)
    assert ("status.reservedFor", "Forbidden: may not be specified when `allocated` is not set") in found


def test_devices_must_be_allocated_and_unique() -> None:
    o = load()
    o["status"]["devices"] += [
        {"driver": "gpu.example.com", "pool": "node-1", "device": "not-allocated"},
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
        {"driver": "nic.example.com", "pool": "node-1", "device": "eth-0"},  # allocated only as a share
    ]
    found = run(cs.devices, o)
    assert (
        "status.devices[2]",
        'Invalid value: "gpu.example.com/node-1/not-allocated": must be an allocated device in the claim',
    ) in found
    assert ("status.devices[3]", 'Duplicate value: "gpu.example.com/node-1/gpu-0"') in found
    assert any(f == "status.devices[4]" and "must be an allocated device" in m for f, m in found)


def test_devices_of_deallocated_results_are_dropped_on_update() -> None:
    old = load()
    new = copy.deepcopy(old)
    del new["status"]["allocation"]
    assert run(cs.devices, new, Context(old=old, operation="UPDATE")) == []
    assert [f for f, _ in run(cs.devices, new)] == ["status.devices[0]", "status.devices[1]"]


def test_devices_conditions_and_data() -> None:
    o = load()
    dev = o["status"]["devices"][0]
    dev["conditions"] = [dict(dev["conditions"][0], type=f"c{i}") for i in range(9)]
    dev["data"] = "not an object"
    found = run(cs.devices, o)
    assert ("status.devices[0].conditions", "Too many: 9: must have at most 8 items") in found
    assert (
        "status.devices[0].data",
        'Invalid value: "<value omitted>": must be a valid JSON object',
    ) in found
    dev["conditions"] = [dict(dev["conditions"][0], status="Perhaps")]
    dev["data"] = {"blob": "x" * 10240}
    found = run(cs.devices, o)
    assert any(f == "status.devices[0].conditions[0].status" for f, _ in found)
    assert ("status.devices[0].data", "Too long: may not be more than 10240 bytes") in found


def test_network_data() -> None:
    o = load()
    nd = o["status"]["devices"][1]["networkData"]
    nd["interfaceName"] = "i" * 257
    nd["hardwareAddress"] = "h" * 129
    nd["ips"] = ["192.0.2.5/24", "192.0.2.5/24", "192.0.2.5", "2001:DB8::5/64"]
    found = run(cs.network_data, o)
    p = "status.devices[1].networkData"
    assert (f"{p}.interfaceName", "Too long: may not be more than 256 bytes") in found
    assert (f"{p}.hardwareAddress", "Too long: may not be more than 128 bytes") in found
    assert (f"{p}.ips[1]", 'Duplicate value: "192.0.2.5/24"') in found
    assert any(f == f"{p}.ips[2]" and m.startswith('Invalid value: "192.0.2.5"') for f, m in found)
    assert any(f == f"{p}.ips[3]" for f, _ in found)  # not canonical
    nd["ips"] = [f"192.0.2.{i}/24" for i in range(17)]
    assert (f"{p}.ips", "Too many: 17: must have at most 16 items") in run(cs.network_data, o)
