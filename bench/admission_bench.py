"""Benchmark of the admission core (`webhook.admission.review`) in-process, per kind and operation.

    python bench/admission_bench.py                 # 1,000 nodes x 8 GPUs (8,000 devices), 200 requests per case
    python bench/admission_bench.py --nodes 100 --requests 50

The snapshot is cluster A of `bench/engine_bench.py` (N nodes x 8 GPUs with 6 attributes and 2 capacities,
A100s on the first half, H100s on the rest) plus a claim template and, on every tenth node, an allocated
claim holding all its GPUs. Every request carries a different object: slices for new nodes with their own
attribute values, updates of existing slices, classes with different selectors, claims asking for 1 GPU of a
model, 4 GPUs on one NUMA node, 9 GPUs (unsatisfiable: two allocator runs), templates, taint rules, Pods
with a template claim, and the mutating endpoint stripping a disabled field. Figures: the first call of a
case (cold: selector caches empty), then p50/p99/max over the rest, in milliseconds. No HTTP (that is
`bench/webhook_bench.py`).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import DRIVER, cluster_a, node_name  # noqa: E402

from webhook.admission import AdmissionConfig, review_with_info  # noqa: E402
from webhook.config.context import Context  # noqa: E402
from webhook.config.profile import load_profile  # noqa: E402
from webhook.simulate.load import stored_objects  # noqa: E402
from webhook.state.store import StateStore  # noqa: E402

V1 = "resource.k8s.io/v1"
RESOURCES = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
}


def review_for(
    obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None
) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    meta = obj["metadata"]
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": obj["kind"]},
        "resource": {"group": group, "version": version, "resource": RESOURCES[obj["kind"]]},
        "requestKind": {"group": group, "version": version, "kind": obj["kind"]},
        "requestResource": {"group": group, "version": version, "resource": RESOURCES[obj["kind"]]},
        "name": meta["name"],
        "operation": operation,
        "userInfo": {"username": "bench", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"kind": f"{operation.title()}Options", "apiVersion": "meta.k8s.io/v1"},
    }
    if meta.get("namespace"):
        request["namespace"] = meta["namespace"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def allocated_claim(i: int) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": {"name": f"busy-{i:04d}", "namespace": "bench", "uid": str(uuid.uuid4())},
        "spec": {
            "devices": {"requests": [{"name": "all", "exactly": {"deviceClassName": "gpu", "count": 8}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "all", "driver": DRIVER, "pool": node_name(i), "device": f"gpu-{g}"}
                        for g in range(8)
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node_name(i)]}
                            ]
                        }
                    ]
                },
            }
        },
    }


TEMPLATE = {
    "apiVersion": V1,
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-h100", "namespace": "bench"},
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "selectors": [
                                {
                                    "cel": {
                                        "expression": 'device.attributes["gpu.example.com"].model == "H100"'
                                    }
                                }
                            ],
                        },
                    }
                ]
            }
        }
    },
}


def new_slice(n: int, k: int) -> dict[str, Any]:
    node = f"new-node-{k:05d}"
    return {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{g}",
                    "attributes": {
                        "model": {"string": "H100" if k % 2 else "A100"},
                        "numa": {"int": g // 4},
                        "index": {"int": g},
                        "uuid": {"string": f"GPU-{k:05d}-{g}"},
                        "driverVersion": {"version": f"550.{k % 90}.{g}"},
                        "pcieRoot": {"string": f"pci0000:{g // 4:02x}"},
                    },
                    "capacity": {
                        "memory": {"value": f"{80 + k % 3 * 16}Gi"},
                        "multiprocessors": {"value": "132"},
                    },
                }
                for g in range(8)
            ],
        },
    }


def claim(name: str, count: int, selector: str | None, constraint: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    devices: dict[str, Any] = {"requests": [{"name": "gpus", "exactly": exactly}]}
    if constraint:
        devices["constraints"] = [{"requests": ["gpus"], "matchAttribute": f"{DRIVER}/numa"}]
    return {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {"devices": devices},
    }


def cases(objs: list[dict[str, Any]]) -> dict[str, Callable[[int], dict[str, Any]]]:
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]

    def slice_update(k: int) -> dict[str, Any]:
        old = slices[k % len(slices)]
        new = copy.deepcopy(old)
        new["spec"]["devices"][k % 8]["attributes"]["driverVersion"] = {"version": f"560.{k % 97}.1"}
        return review_for(new, "UPDATE", old)

    def model(k: int) -> str:
        return f'device.attributes["{DRIVER}"].model == "{"H100" if k % 2 else "A100"}"'

    def pod(k: int) -> dict[str, Any]:
        return review_for(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"trainer-{k}", "namespace": "bench", "uid": str(uuid.uuid4())},
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-h100"}],
                    "containers": [
                        {"name": "c", "image": "trainer:1", "resources": {"claims": [{"name": "gpu"}]}}
                    ],
                },
            }
        )

    return {
        "ResourceSlice CREATE": lambda k: review_for(new_slice(8, k)),
        "ResourceSlice UPDATE": slice_update,
        "DeviceClass CREATE": lambda k: review_for(
            {
                "apiVersion": V1,
                "kind": "DeviceClass",
                "metadata": {"name": f"class-{k}"},
                "spec": {
                    "selectors": [
                        {
                            "cel": {
                                "expression": f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].index == {k % 8}'
                            }
                        }
                    ]
                },
            }
        ),
        "ResourceClaim CREATE 1 GPU by model": lambda k: review_for(claim(f"one-{k}", 1, model(k))),
        "ResourceClaim CREATE 4 GPUs one NUMA": lambda k: review_for(
            claim(f"four-{k}", 4, model(k), constraint=True)
        ),
        "ResourceClaim CREATE 9 GPUs (unsatisfiable)": lambda k: review_for(claim(f"nine-{k}", 9, None)),
        "ResourceClaimTemplate CREATE": lambda k: review_for(
            {**copy.deepcopy(TEMPLATE), "metadata": {"name": f"t-{k}", "namespace": "bench"}}
        ),
        "DeviceTaintRule CREATE": lambda k: review_for(
            {
                "apiVersion": V1,
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"drain-{k}"},
                "spec": {
                    "deviceSelector": {"driver": DRIVER, "pool": node_name(k % 1000)},
                    "taint": {"key": "drain", "effect": "NoSchedule"},
                },
            }
        ),
        "Pod CREATE (template claim)": pod,
    }


def mutate_case(k: int) -> dict[str, Any]:
    s = new_slice(8, k)
    s["spec"]["devices"][0]["attributes"]["cores"] = {"ints": [0, 1, 2, k % 7]}
    return review_for(s)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    objs = cluster_a(args.nodes) + [TEMPLATE] + [allocated_claim(i) for i in range(0, args.nodes, 10)]
    t0 = time.perf_counter()
    profile = load_profile("1.37")
    store = StateStore(profile)  # the real store, loaded as `draguard serve` loads its state directory
    store.replace_all(stored_objects(objs, Context(profile, lint=False)))
    snap = store.publish()
    print(
        f"snapshot: {sum(snap.counts().values())} objects, {args.nodes * 8} devices, built in {time.perf_counter() - t0:.2f} s"
    )
    validate = AdmissionConfig()
    mutate = AdmissionConfig(endpoint="mutate")
    table = [(name, make, validate) for name, make in cases(objs).items()]
    table.append(("mutate: ResourceSlice CREATE (strip)", mutate_case, mutate))
    print(
        f"{'case':45} {'verdict/decision':22} {'cold':>8} {'p50':>8} {'p99':>8} {'max':>8}  (ms, {args.requests} requests)"
    )
    for name, make, config in table:
        times: list[float] = []
        seen: dict[str, int] = {}
        for k in range(args.requests + 1):
            ar = make(k)
            t = time.perf_counter()
            _, info = review_with_info(ar, snap, config)
            times.append((time.perf_counter() - t) * 1000)
            label = info.verdict or info.decision
            seen[label] = seen.get(label, 0) + 1
        cold, rest = times[0], sorted(times[1:])
        p50 = statistics.median(rest)
        p99 = rest[min(len(rest) - 1, int(len(rest) * 0.99))]
        verdicts = ",".join(f"{v}:{n}" for v, n in sorted(seen.items()))
        print(f"{name:45} {verdicts:22} {cold:8.2f} {p50:8.2f} {p99:8.2f} {max(rest):8.2f}")


if __name__ == "__main__":
    main()
