"""`draguard simulate` on a rendered chart of many workloads over a large GPU cluster: time and peak RSS of
one fresh process per run (the whole CLI: reading, validation, expansion, every Pod, output).

    python bench/workloads_bench.py            # 64 nodes x 8 GPUs; 60 Deployments x 8 replicas, ...
    python bench/workloads_bench.py --quick    # small sizes (a smoke run)

Figures taken while other work runs on the machine are indicative only.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def cluster(nodes: int, gpus: int) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for n in range(nodes):
        name = f"node-{n:03d}"
        labels = {"kubernetes.io/hostname": name, "gpu": "yes" if n % 4 else "no"}
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
        devices = [
            {
                "name": f"gpu-{d}",
                "attributes": {"model": {"string": "A100" if n % 2 else "L4"}, "index": {"int": d}},
            }
            for d in range(gpus)
        ]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpus"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return objs


def chart(deployments: int, replicas: int) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    for count in (1, 2, 4):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpus-{count}", "namespace": "ml"},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": count}}]
                        }
                    }
                },
            }
        )

    def template(count: int) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"app": "x"}},
            "spec": {
                "resourceClaims": [{"name": "g", "resourceClaimTemplateName": f"gpus-{count}"}],
                "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}],
            },
        }

    for d in range(deployments):
        objs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"svc-{d:03d}", "namespace": "ml"},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": template(1 + d % 2),
                },
            }
        )
        objs.append(
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{d:03d}", "namespace": "ml"}}
        )
    probe = template(1)
    probe["spec"]["nodeSelector"] = {"gpu": "yes"}
    objs.append(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "probe", "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": probe},
        }
    )
    objs.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": "ml"},
            "spec": {
                "parallelism": 16,
                "completions": 64,
                "template": {**template(4), "spec": {**template(4)["spec"], "restartPolicy": "Never"}},
            },
        }
    )
    return objs


def run(directory: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "simulate", "-o", "json", str(directory)],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, rss >> 10, p.returncode


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    nodes, gpus, deployments, replicas = (8, 4, 6, 4) if args.quick else (64, 8, 60, 8)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "cluster.yaml").write_text(yaml.safe_dump_all(cluster(nodes, gpus)))
        (d / "chart.yaml").write_text(yaml.safe_dump_all(chart(deployments, replicas)))
        size = sum(f.stat().st_size for f in d.iterdir())
        wall, rss, code = run(d)
    pods = deployments * replicas + nodes * 3 // 4 + 16
    print(
        f"simulate: {nodes} nodes x {gpus} GPUs, {deployments} Deployments x {replicas} replicas, 1 DaemonSet, "
        f"1 Job of 16 ({pods} Pods, {size / 1024:.0f} KiB): {wall:.2f} s, peak RSS {rss} MiB, exit {code}"
    )


if __name__ == "__main__":
    main()
