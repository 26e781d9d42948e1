"""Benchmark of extended resources at admission (`--extended-resources native|translate`), in-process.

    python bench/extended_bench.py                  # 1,000 nodes x 8 GPUs, 50 extra DeviceClasses, 200 Pods per case
    python bench/extended_bench.py --nodes 100 --requests 50

The snapshot is cluster A of `bench/engine_bench.py` (its class `gpu` gets extendedResourceName
example.com/gpu) plus `--classes` other DeviceClasses with their own names. Cases: a Pod asking for
`example.com/gpu` in one container, and one with a sidecar, an init container and two app containers
(upstream's request sharing), on the validating endpoint in native mode (the mapping checks and the
feasibility run with the special claim), and on the mutating endpoint in translate mode with a writer that
does nothing (the template in the state: no write; not in the state: one apply call). Figures: the first
call of a case (cold), then p50/p99/max over the rest, in milliseconds. The server-side apply itself is a
request to the API server (one round trip per new (namespace, class, count); none once the state has it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from admission_bench import review_for  # noqa: E402
from engine_bench import cluster_a  # noqa: E402

from webhook.admission import AdmissionConfig, review_with_info  # noqa: E402
from webhook.admission.extended import template_object  # noqa: E402
from webhook.config.context import Context  # noqa: E402
from webhook.config.profile import load_profile  # noqa: E402
from webhook.simulate.load import stored_objects  # noqa: E402
from webhook.state.store import Snapshot, StateStore  # noqa: E402

GPU = "example.com/gpu"


class NoWrites:
    def __init__(self) -> None:
        self.calls = 0

    def apply(self, template: dict[str, Any], timeout: float) -> None:
        self.calls += 1


def container(name: str, n: int, sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": name,
        "image": "trainer:1",
        "resources": {"limits": {GPU: str(n)}, "requests": {GPU: str(n)}},
    }
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod(k: int, shape: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container("main", 1 + k % 2)]}
    if shape == "mixed":
        spec["initContainers"] = [container("init", 3), container("proxy", 1, sidecar=True)]
        spec["containers"].append(container("second", 1))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"trainer-{k}", "namespace": "bench", "uid": str(uuid.uuid4())},
        "spec": spec,
    }


def snapshot(objs: list[dict[str, Any]]) -> Snapshot:
    profile = load_profile("1.37")
    store = StateStore(profile)
    store.replace_all(stored_objects(objs, Context(profile, lint=False)))
    return store.publish()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    objs = cluster_a(args.nodes)
    objs[0]["spec"]["extendedResourceName"] = GPU
    objs += [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": f"other-{i}", "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"extendedResourceName": f"vendor{i}.example.com/dev"},
        }
        for i in range(args.classes)
    ]
    t0 = time.perf_counter()
    plain = snapshot(objs)
    templates = [template_object("bench", "gpu", n) for n in (1, 2, 3)]
    held = snapshot(objs + templates)
    print(
        f"snapshots: {args.nodes * 8} devices, {args.classes + 1} classes, built in {time.perf_counter() - t0:.2f} s"
    )
    writer = NoWrites()
    native = AdmissionConfig(extended_resources="native")
    translate = AdmissionConfig(
        endpoint="mutate", profile=load_profile("1.35"), extended_resources="translate", templates=writer
    )
    table = [
        ("validate native: 1 container", "one", native, plain),
        ("validate native: init+sidecar+2 containers", "mixed", native, plain),
        ("mutate translate: template in the state", "one", translate, held),
        ("mutate translate: template applied", "one", translate, plain),
        ("mutate translate: init+sidecar+2, in the state", "mixed", translate, held),
    ]
    print(
        f"{'case':48} {'verdict/result':26} {'cold':>8} {'p50':>8} {'p99':>8} {'max':>8}  (ms, {args.requests} Pods)"
    )
    for name, shape, config, snap in table:
        times: list[float] = []
        seen: dict[str, int] = {}
        calls = writer.calls
        for k in range(args.requests + 1):
            ar = review_for(pod(k, shape))
            t = time.perf_counter()
            _, info = review_with_info(ar, snap, config)
            times.append((time.perf_counter() - t) * 1000)
            label = info.verdict or info.extended or info.decision
            seen[label] = seen.get(label, 0) + 1
        cold, rest = times[0], sorted(times[1:])
        p99 = rest[min(len(rest) - 1, int(len(rest) * 0.99))]
        labels = ",".join(f"{v}:{n}" for v, n in sorted(seen.items()))
        if writer.calls != calls:
            labels += f" ({writer.calls - calls} applies)"
        print(f"{name:48} {labels:26} {cold:8.2f} {statistics.median(rest):8.2f} {p99:8.2f} {max(rest):8.2f}")


if __name__ == "__main__":
    main()
