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


_NODE = "NODEIDX"  # placeholder replaced per node in the dumped text (generation speed)


def _device(gpu: int, part: int) -> dict:
    return {
        "name": f"gpu-{gpu}-part-{part}",
        "attributes": {
            "model": {"string": "ExampleGPU-X100"},
            "index": {"int": gpu},
            "partition": {"int": part},
            "driverVersion": {"version": "1.2.3"},
            "uuid": {"string": f"GPU-{_NODE}-{gpu}-{part}"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{gpu // 4:02d}"},
        },
        "capacity": {"memory": {"value": "10Gi"}, "cores": {"value": 16}},
        "consumesCounters": [
            {"counterSet": f"gpu-{gpu}", "counters": {"memory": {"value": "10Gi"}, "cores": {"value": "16"}}}
        ],
    }


def _node_template() -> str:
    """Both slices of one node's pool (a counter slice and a slice of 64 partitions) as YAML text."""
    pool = {"name": f"node-{_NODE}", "generation": 1, "resourceSliceCount": 2}
    counters = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"node-{_NODE}-counters"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": pool,
            "nodeName": f"node-{_NODE}",
            "sharedCounters": [
                {"name": f"gpu-{g}", "counters": {"memory": {"value": "80Gi"}, "cores": {"value": "132"}}}
                for g in range(8)
            ],
        },
    }
    devices = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"node-{_NODE}-devices"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": pool,
            "nodeName": f"node-{_NODE}",
            "devices": [_device(g, p) for g in range(8) for p in range(8)],
        },
    }
    return yaml.dump_all([counters, devices], Dumper=yaml.CSafeDumper, sort_keys=False, explicit_start=True)


def generate(slices: int, out_dir: str) -> tuple[int, int]:
    """Write `slices` device slices (+ one counter slice per pool); return (objects, devices)."""
    template = _node_template()
    per_file = SLICES_PER_FILE // 2
    for first in range(0, slices, per_file):
        nodes = range(first, min(slices, first + per_file))
        with open(os.path.join(out_dir, f"slices-{first // per_file:05d}.yaml"), "w") as f:
            f.write("".join(template.replace(_NODE, f"{n:05d}") for n in nodes))
    return 2 * slices, DEVICES_PER_SLICE * slices


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
