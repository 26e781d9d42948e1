"""`draguard audit --cluster DIR` on a large generated cluster: wall time and peak RSS.

    python bench/audit_bench.py                       # 1,000 nodes, 64,000 devices, 10,000 Pods
    python bench/audit_bench.py --nodes 100 --pending 20

The cluster is engine_bench's cluster B (per node a counter slice and a slice of 64 partitions, one
allocated claim holding a 3g.40gb partition of every GPU) plus, per node, Pods bound to it (Running)
each holding one more partition through an allocated claim reserved for it — 10 per node: 10,000 Pods —
of which `--pending` are replaced by Pods pending on DRA (nine in ten ask for one 1g.10gb partition and
fit, one in ten for 65 partitions on one node: unsatisfiable). Written as YAML files (slices, claims,
Pods), audited by the real command in a process of its own (`-o json`, `-j` workers for loading);
peak RSS is the largest process's (getrusage of the children).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_bench as eb  # noqa: E402

PODS_PER_NODE = 10
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def partition(pod: int) -> str:
    """The partition the pod-th Pod of a node holds: a 2g.20gb of GPU 0-7, then a 1g.10gb of GPU 0-1
    (what the counters leave beside the 3g.40gb each GPU already gives)."""
    return f"gpu-{pod}-2g-20gb-0" if pod < 8 else f"gpu-{pod - 8}-1g-10gb-0"


def pod(name: str, claim: str, node: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example.com/app:1",
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        out["spec"]["nodeName"] = node
    return out


def generate(
    nodes: int, pending: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    base = eb.cluster_b(nodes)
    slices = [o for o in base if o["kind"] != "ResourceClaim"]
    claims = [o for o in base if o["kind"] == "ResourceClaim"]
    pods: list[dict[str, Any]] = []
    total = nodes * PODS_PER_NODE
    step = max(total // pending, 1) if pending else 0
    waiting = set(range(0, total, step)[:pending]) if pending else set()
    for n in range(total):
        i, k = divmod(n, PODS_PER_NODE)
        name = f"job-{n:05d}"
        if n in waiting:
            unsatisfiable = (n // step) % 10 == 9
            c = eb.claim_for(
                f"{name}-gpu",
                "part",
                None if unsatisfiable else eb.PROFILE.format("1g.10gb"),
                65 if unsatisfiable else 1,
            )
            claims.append(c)
            pods.append(pod(name, c["metadata"]["name"], None))
            continue
        node = eb.node_name(i)
        c = eb.claim_for(f"{name}-gpu", "part", None, 1)
        c["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "part", "driver": eb.DRIVER, "pool": node, "device": partition(k)}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}],
        }
        claims.append(c)
        pods.append(pod(name, c["metadata"]["name"], node))
    return slices, claims, pods


def write(d: Path, name: str, objs: list[dict[str, Any]], per_file: int) -> None:
    for n in range(0, len(objs), per_file):
        (d / f"{name}-{n // per_file:03d}.yaml").write_text(
            yaml.dump_all(objs[n : n + per_file], Dumper=DUMPER, sort_keys=False)
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pending", type=int, default=100, help="Pods pending on DRA among the 10 per node")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        d = Path(tmp)
        t0 = time.perf_counter()
        slices, claims, pods = generate(args.nodes, args.pending)
        write(d, "slices", slices, 100)
        write(d, "claims", claims, 1000)
        write(d, "pods", pods, 1000)
        devices = sum(len(s["spec"].get("devices") or []) for s in slices if s["kind"] == "ResourceSlice")
        waiting = sum(1 for p in pods if "nodeName" not in p["spec"])
        print(
            f"generated {args.nodes} nodes, {devices} devices, {len(claims)} claims, {len(pods)} Pods "
            f"({waiting} pending) in {time.perf_counter() - t0:.1f} s"
        )
        cmd = [sys.executable, "-m", "webhook.cli.main", "audit", "--cluster", tmp, "-o", "json"]
        cmd += ["-j", str(args.jobs), "--deadline-seconds", "3600", "--max-pending-pods", str(args.pending)]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        t1 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - t1
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if p.returncode not in (0, 1):
            print(p.stderr, file=sys.stderr)
            return 1
        out = json.loads(p.stdout)
        print(
            f"audit: exit {p.returncode}, {out['resources']} objects, {out['pendingPods']} pending Pods "
            f"({out['explained']} explained), summary {out['summary']}"
        )
        print(f"wall {wall:.1f} s, peak RSS {peak:.0f} MiB (largest process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
