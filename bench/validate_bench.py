"""End-to-end benchmark of `draguard validate`: generates N ResourceSlices of 64 devices (attributes,
capacities, shared counters) as YAML files and validates them through the CLI.

    python bench/validate_bench.py                 # 1,000 slices (64,000 devices)
    python bench/validate_bench.py --slices 10000  # 10,000 slices (640,000 devices)

Prints objects/s and devices/s. Each node's pool has one counter slice (8 GPUs x memory/cores) and
device slices of 64 partitions; every device consumes counters and carries 6 attributes and 2 capacities.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

DEVICES_PER_SLICE = 64
SLICES_PER_FILE = 50


def _device(node: int, gpu: int, part: int) -> dict:
    return {
        "name": f"gpu-{gpu}-part-{part}",
        "attributes": {
            "model": {"string": "ExampleGPU-X100"},
            "index": {"int": gpu},
            "partition": {"int": part},
            "driverVersion": {"version": "1.2.3"},
            "uuid": {"string": f"GPU-{node:05d}-{gpu}-{part}"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{gpu // 4:02d}"},
        },
        "capacity": {"memory": {"value": "10Gi"}, "cores": {"value": 16}},
        "consumesCounters": [
            {"counterSet": f"gpu-{gpu}", "counters": {"memory": {"value": "10Gi"}, "cores": {"value": "16"}}}
        ],
    }


def generate(slices: int, out_dir: str) -> tuple[int, int]:
    """Write `slices` device slices (+ one counter slice per pool); return (objects, devices)."""
    docs: list[dict] = []
    objects = devices = 0
    file_no = 0

    def flush() -> None:
        nonlocal docs, file_no
        if docs:
            with open(os.path.join(out_dir, f"slices-{file_no:05d}.yaml"), "w") as f:
                yaml.dump_all(docs, f, Dumper=yaml.CSafeDumper, sort_keys=False)
            file_no += 1
            docs = []

    per_pool = 1  # device slices per pool: 64 partitions = 8 GPUs x 8 partitions
    for node in range(slices // per_pool):
        pool = {"name": f"node-{node}", "generation": 1, "resourceSliceCount": per_pool + 1}
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"node-{node}-counters"},
                "spec": {
                    "driver": "gpu.example.com",
                    "pool": pool,
                    "nodeName": f"node-{node}",
                    "sharedCounters": [
                        {
                            "name": f"gpu-{g}",
                            "counters": {"memory": {"value": "80Gi"}, "cores": {"value": "132"}},
                        }
                        for g in range(8)
                    ],
                },
            }
        )
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"node-{node}-devices"},
                "spec": {
                    "driver": "gpu.example.com",
                    "pool": pool,
                    "nodeName": f"node-{node}",
                    "devices": [_device(node, g, p) for g in range(8) for p in range(8)],
                },
            }
        )
        objects += 2
        devices += DEVICES_PER_SLICE
        if len(docs) >= SLICES_PER_FILE:
            flush()
    flush()
    return objects, devices


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slices", type=int, default=1000, help="device slices to generate (64 devices each)")
    ap.add_argument("-j", "--jobs", type=int, default=0, help="draguard -j (default: all cores)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        t0 = time.perf_counter()
        objects, devices = generate(args.slices, tmp)
        gen = time.perf_counter() - t0
        size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
        cmd = [sys.executable, "-m", "webhook.cli.main", "validate", "--format", "json", "--no-progress", tmp]
        if args.jobs:
            cmd[4:4] = ["-j", str(args.jobs)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        return 1
    summary = json.loads(proc.stdout)["summary"]
    print(
        f"generated {objects} ResourceSlices ({args.slices} with 64 devices, {devices} devices), "
        f"{size / 1e6:.1f} MB of YAML in {gen:.1f} s"
    )
    print(f"draguard validate: {elapsed:.2f} s wall, {os.cpu_count()} cores, exit {proc.returncode}")
    print(f"  {objects / elapsed:,.0f} objects/s, {devices / elapsed:,.0f} devices/s")
    print(f"  summary: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
