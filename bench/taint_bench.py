"""DeviceTaintRule admission cost: `review()` of a DeviceTaintRule CREATE (the validating endpoint's whole
path: decoding, the rule's own checks, the blast radius, the policy's limits) on bench/churn_vs_upstream.py's
cluster B (1,000 nodes x 72 MIG-style partitions over counters = 72,000 devices; 600 allocated claims, here
each reserved for one Pod; every tenth claim's results tolerate the taint for 300 s, every tenth + 1 forever).

    python bench/taint_bench.py                 # 1,000 nodes, 5 runs of 200 reviews per rule
    python bench/taint_bench.py --nodes 250 --runs 3 --calls 100

Rules: `everything` (deviceSelector {} — every device), `driver` (the driver: every device too, through the
pool filter), `one-pool` (one node's pool), `one-device`; all NoExecute, with a policy of maxDevices 1,000 and
maxPods 100 (the two wide ones are denied, as in production). `cold` is the first review at a new state
version (the claims' pool index is built then: one claim republished before each), `warm` the others.
The process's cyclic collector is tuned as `draguard serve` tunes its workers (a full collection considered
every 100th gen1 collection: webhook/server/run.py); the full collections that fell in each scenario's
reviews are printed beside its figures. Every run's figures are printed (ms), with the load average.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from churn_vs_upstream import cluster_b  # noqa: E402
from engine_bench import DRIVER, node_name  # noqa: E402

from tests.server.server_proc import review_of  # noqa: E402
from webhook.admission import AdmissionConfig  # noqa: E402
from webhook.admission.review import review  # noqa: E402
from webhook.config.policy import PolicySpec, TaintSettings, combine  # noqa: E402
from webhook.config.profile import load_profile  # noqa: E402
from webhook.state.store import StateStore  # noqa: E402

PROFILE = load_profile("1.37")


def cluster(nodes: int) -> list[dict[str, Any]]:
    objs = cluster_b(nodes)
    i = 0
    for o in objs:
        if o["kind"] != "ResourceClaim":
            continue
        o["metadata"].setdefault("namespace", "default")
        o["status"]["reservedFor"] = [{"resource": "pods", "name": f"job-{i:04d}", "uid": f"uid-{i}"}]
        tol: dict[str, Any] | None = None
        if i % 10 == 0:
            tol = {
                "key": "maintenance",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        elif i % 10 == 1:
            tol = {"operator": "Exists", "effect": "NoExecute"}
        if tol is not None:
            for r in o["status"]["allocation"]["devices"]["results"]:
                r["tolerations"] = [tol]
        i += 1
    return objs


def rule(name: str, selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": selector, "taint": {"key": "maintenance", "effect": "NoExecute"}},
    }


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    objs = cluster(args.nodes)
    store = StateStore(PROFILE)
    store.replace_all(objs)
    snap = store.publish()
    devices = sum(len(s.devices) for s in snap.state.slices.values())
    claims = [o for o in objs if o["kind"] == "ResourceClaim"]
    print(
        f"cluster B (churn_vs_upstream), {args.nodes} nodes: {devices:,} devices, {len(claims):,} allocated claims; state built in "
        f"{time.perf_counter() - t0:.1f} s"
    )
    gc.collect()
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, 100)  # as webhook/server/run.py's _tune_collector
    policy = combine([PolicySpec(taints=TaintSettings(max_devices=1000, max_pods=100))])
    config = AdmissionConfig(profile=PROFILE, policy=policy)
    rules = {
        "everything": rule("everything", {}),
        "driver": rule("driver", {"driver": DRIVER}),
        "one-pool": rule("one-pool", {"driver": DRIVER, "pool": node_name(args.nodes // 2)}),
        "one-device": rule("one-device", {"pool": node_name(4), "device": "gpu-0-3g-40gb-0"}),
    }
    for name, r in rules.items():
        answer = review(review_of(r), store.snapshot(), config)["response"]
        print(
            f"  {name}: allowed={answer['allowed']} audit={answer.get('auditAnnotations', {}).get('taint-blast-radius')}"
        )
    flip = 0
    for run in range(1, args.runs + 1):
        print(f"run {run} (load average {os.getloadavg()[0]:.2f})")
        for name, r in rules.items():
            victim = claims[flip % len(claims)]
            flip += 1
            victim["metadata"]["labels"] = {"bench-flip": str(flip)}  # a new state version
            store.apply(dict(victim))
            store.publish()
            snap = store.snapshot()
            ar = review_of(r)
            t = time.perf_counter()
            review(ar, snap, config)
            cold = (time.perf_counter() - t) * 1000
            warm: list[float] = []
            full = gc.get_stats()[2]["collections"]
            for _ in range(args.calls):
                t = time.perf_counter()
                review(ar, snap, config)
                warm.append((time.perf_counter() - t) * 1000)
            print(
                f"  {name:11s} cold {cold:7.2f}  warm p50 {statistics.median(warm):6.2f}  p99 {pct(warm, 99):6.2f}"
                f"  max {max(warm):6.2f} ms  ({gc.get_stats()[2]['collections'] - full} full collections)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
