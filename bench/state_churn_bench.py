"""The engine under churn: allocate() right after a state change, on a StateStore snapshot.

    python bench/state_churn_bench.py              # 1,000 nodes; 40 changes per scenario and kind
    python bench/state_churn_bench.py --nodes 100 --changes 20

A live cluster changes between admission requests: the scheduler allocates and releases claims, drivers
republish slices. Per scenario the bench loads the cluster into a StateStore, makes the first call (cold,
after startup), then repeats for each kind of change: change one object, publish(), allocate() — and
prints the publish time (the writer's work) and the allocate() time right after it (a reader's).

Clusters (engine_bench): A = N nodes x 8 GPUs with 6 attributes; B = N nodes x 64 MIG-style partitions
over 8 counter sets, half of every set in use.
Changes: `claim` allocates or releases (alternately) a claim holding one device of a rotating node
(gpu-7 in A, a 1g.10gb partition of gpu-7 in B); `slice` republishes a rotating node's device slice
with one device's uuid changed (the answers stay the same, the slice's caches do not).
Scenarios: A1 1 GPU by model, A4 4 GPUs on one NUMA node, A9 9 GPUs (infeasible), B1 1 partition 3g.40gb.
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

SCENARIOS = {
    "A": [
        ("A1", "1 GPU by model", eb.claim_for("one", "gpu", eb.MODEL, 1), True),
        (
            "A4",
            "4 GPUs on one NUMA node",
            eb.claim_for("four", "gpu", None, 4, [{"matchAttribute": f"{eb.DRIVER}/numa"}]),
            True,
        ),
        ("A9", "9 GPUs on one node (infeasible)", eb.claim_for("nine", "gpu", None, 9), False),
    ],
    "B": [
        (
            "B1",
            "1 partition 3g.40gb, counters half used",
            eb.claim_for("part", "mig", eb.PROFILE.format("3g.40gb"), 1),
            True,
        )
    ],
}


def holder(cluster: str, i: int) -> dict[str, Any]:
    device = "gpu-7" if cluster == "A" else "gpu-7-1g-10gb-0"
    claim = eb.claim_for(f"churn-{i:04d}", "gpu", None, 1)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": eb.DRIVER, "pool": eb.node_name(i), "device": device}
                ]
            }
        }
    }
    return claim


def percentile(values: list[float], p: float) -> float:
    return eb.percentile(values, p)


def fmt(values: list[float]) -> str:
    return f"p50 {percentile(values, 50):7.2f}  p99 {percentile(values, 99):7.2f}  max {max(values):7.2f}"


def run(cluster: str, nodes: int, changes: int) -> list[dict[str, Any]]:
    from webhook.config.profile import load_profile
    from webhook.engine import allocate
    from webhook.state import StateStore

    objs = eb.cluster_a(nodes) if cluster == "A" else eb.cluster_b(nodes)
    slices = [o for o in objs if o["kind"] == "ResourceSlice" and o["spec"].get("devices")]
    versions = []
    for s in slices:
        other = copy.deepcopy(s)
        other["spec"]["devices"][0]["attributes"]["uuid"] = {"string": "GPU-republished"}
        versions.append((s, other))
    rows = []
    for sid, title, claim, expect in SCENARIOS[cluster]:
        store = StateStore(load_profile("1.37"))
        t0 = time.perf_counter()
        store.replace_all(copy.deepcopy(objs))
        snap = store.publish()
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = allocate(snap.state, [claim])
        cold = (time.perf_counter() - t0) * 1000
        warm = []
        for _ in range(changes):
            t0 = time.perf_counter()
            out = allocate(store.snapshot().state, [claim])
            warm.append((time.perf_counter() - t0) * 1000)
        row: dict[str, Any] = {
            "id": sid,
            "scenario": title,
            "load_s": round(load, 2),
            "cold_ms": round(cold, 2),
        }
        ok = out.feasible is expect
        print(
            f"\n{sid} {title} ({cluster}, {nodes:,} nodes): state loaded in {load:.2f} s, answer {out.feasible}"
        )
        print(f"  cold first call {cold:8.2f} ms;  warm (no change)   {fmt(warm)} ms")
        row["warm"] = {"p50": percentile(warm, 50), "p99": percentile(warm, 99)}
        flip: dict[int, int] = {}
        for kind in ("claim", "slice"):
            pub, after = [], []
            for n in range(changes):
                i = (n * 37) % nodes
                if kind == "claim":
                    if n % 2 == 0:
                        store.apply(holder(cluster, i))
                    else:
                        store.delete("ResourceClaim", "bench", f"churn-{(((n - 1) * 37) % nodes):04d}")
                else:
                    flip[i] = flip.get(i, 0) ^ 1  # the other version than the stored one
                    store.apply(versions[i][flip[i]])
                t0 = time.perf_counter()
                snap = store.publish()
                pub.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                out = allocate(snap.state, [claim])
                after.append((time.perf_counter() - t0) * 1000)
                ok = ok and out.feasible is expect
            stats = store.last_publish
            print(
                f"  after a {kind:5} change: publish {fmt(pub)} ms (last: {stats.nodes_gathered} node(s) "
                f"gathered, {stats.nodes_recounted} re-counted); allocate {fmt(after)} ms"
            )
            row[kind] = {
                "publish_p50": percentile(pub, 50),
                "publish_p99": percentile(pub, 99),
                "allocate_p50": percentile(after, 50),
                "allocate_p99": percentile(after, 99),
            }
        row["answers_ok"] = ok
        if not ok:
            print("  WRONG ANSWER somewhere in this scenario")
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--changes", type=int, default=40, help="changes per scenario and kind (default 40)")
    ap.add_argument("--only", choices=("A", "B"))
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    rows = []
    for cluster in ("A", "B"):
        if args.only in (None, cluster):
            rows += run(cluster, args.nodes, args.changes)
    if args.json:
        Path(args.json).write_text(json.dumps({"nodes": args.nodes, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["answers_ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
