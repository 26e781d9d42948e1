"""Memory of a long-running StateStore: RSS over many reloads and single-object changes.

    python bench/state_reload_bench.py                  # 1,000 nodes x 8 GPUs
    python bench/state_reload_bench.py --reloads 100 --changed-reloads 1000 --changes 100

The cluster is engine_bench's cluster A (1,000 Nodes, one slice of 8 GPUs each, one DeviceClass) plus an
allocated claim per node. Phases (each prints RSS after 1, 10, 100, 1000 ... steps):
  reload-same     replace_all() with freshly decoded objects equal to the stored ones, publish()
  reload-changed  replace_all() alternating two versions that differ in every slice and claim (every
                  record is parsed anew, every node's pools gathered anew), publish()
  changes         N x 1000 single-object changes, each published: a slice republished with another
                  attribute value, or a claim allocated / released on a rotating node
An allocate() runs after every reload and every 1000 changes, so the engine's caches fill as they would
in a server. RSS is read from /proc/self/status (VmRSS); nothing calls gc.collect() or gc.freeze().
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_bench as eb  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def holder(i: int, gpu: int) -> dict[str, Any]:
    claim = eb.claim_for(f"held-{i:04d}", "gpu", None, 1)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": eb.DRIVER, "pool": eb.node_name(i), "device": f"gpu-{gpu}"}
                ]
            }
        }
    }
    return claim


def cluster(nodes: int, flavour: str) -> list[dict[str, Any]]:
    objs = eb.cluster_a(nodes)
    for o in objs:
        if o["kind"] == "ResourceSlice":
            for d in o["spec"]["devices"]:
                d["attributes"]["driverVersion"] = {"version": "550.54.15" if flavour == "a" else "550.54.16"}
    return objs + [holder(i, 0 if flavour == "a" else 1) for i in range(nodes)]


def checkpoints(limit: int) -> list[int]:
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 10
    if out[-1] != limit:
        out.append(limit)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--reloads", type=int, default=1000, help="reloads of equal content (default 1000)")
    ap.add_argument(
        "--changed-reloads",
        type=int,
        default=300,
        help="reloads of changed content (default 300; ~0.3 s each)",
    )
    ap.add_argument(
        "--changes", type=int, default=100, help="N: N x 1000 single-object changes (default 100)"
    )
    args = ap.parse_args(argv)

    from webhook.config.profile import load_profile
    from webhook.engine import allocate
    from webhook.state import StateStore

    claim = eb.SCENARIOS_A[0][2]
    print(f"state reload benchmark: {args.nodes:,} nodes x 8 GPUs (+ one allocated claim per node)")
    print(f"RSS at start: {rss_mib():.1f} MiB")
    a, b = cluster(args.nodes, "a"), cluster(args.nodes, "b")
    text_a = json.dumps(a)
    store = StateStore(load_profile("1.37"))
    t0 = time.perf_counter()
    store.replace_all(copy.deepcopy(a))
    snap = store.publish()
    allocate(snap.state, [claim])
    print(f"loaded in {time.perf_counter() - t0:.2f} s: {snap.counts()}; RSS {rss_mib():.1f} MiB")

    def phase(name: str, steps: int, step: Any) -> None:
        marks = set(checkpoints(steps))
        t0 = time.perf_counter()
        line = []
        for n in range(1, steps + 1):
            step(n)
            if n in marks:
                line.append(f"{n}: {rss_mib():.1f}")
        per = (time.perf_counter() - t0) / steps
        print(f"  {name:15} RSS MiB after " + ", ".join(line) + f"   ({per * 1000:.1f} ms per step)")

    def reload_same(n: int) -> None:
        store.replace_all(json.loads(text_a))  # new dicts, equal content: the server re-reading its files
        allocate(store.publish().state, [claim])

    def reload_changed(n: int) -> None:
        store.replace_all(b if n % 2 else a)
        allocate(store.publish().state, [claim])

    slices = [o for o in a if o["kind"] == "ResourceSlice"]
    versions = []
    for s in slices:
        other = copy.deepcopy(s)
        other["spec"]["devices"][0]["attributes"]["model"] = {"string": "H200"}
        versions.append((s, other))

    def change(n: int) -> None:
        for k in range(1000):
            i = (n * 1000 + k) % len(slices)
            if k % 2:
                store.apply(versions[i][(n + k) % 4 >= 2])
            else:  # allocate or release gpu-7 of node i
                if (n + k) % 4 == 0:
                    store.apply(holder(i, 7) | {"metadata": {"name": f"churn-{i:04d}", "namespace": "bench"}})
                else:
                    store.delete("ResourceClaim", "bench", f"churn-{i:04d}")
            store.publish()
        allocate(store.snapshot().state, [claim])

    store.replace_all(json.loads(text_a))
    store.publish()
    phase("reload-same", args.reloads, reload_same)
    phase("reload-changed", args.changed_reloads, reload_changed)
    store.replace_all(copy.deepcopy(a))
    store.publish()
    phase("changes x1000", args.changes, change)
    print(f"RSS at the end: {rss_mib():.1f} MiB (version {store.snapshot().version:,})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
