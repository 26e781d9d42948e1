"""What config.driver-schema costs per claim: the three driver-schema rules on real claims from the realistic
fixtures (NVIDIA TimeSlicing and MPS GpuConfig, the dra-example-driver's two-config template, DraNet's
claim with its driver renamed to one no schema knows, a claim without config), then the whole object pipeline on the same claim for scale.
Prints microseconds per claim, every run (median of --rounds rounds of --n calls).

    python3 bench/config_schema_bench.py [--n 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webhook.config.context import Context  # noqa: E402
from webhook.rules.driverconfig import check_custom_driver_schema, check_driver_schema, check_unknown_kind  # noqa: E402
from webhook.validate import object_violations  # noqa: E402

REALISTIC = ROOT / "tests" / "fixtures" / "realistic"
CASES = {
    "nvidia GpuConfig TimeSlicing (claim)": "nvidia/specs/quickstart/gpu-test3.yaml",
    "nvidia GpuConfig MPS (template)": "nvidia/specs/quickstart/gpu-test4.yaml",
    "example GpuConfig x2 (template)": "dra-example-driver/demo/gpu-test5.yaml",
    "unknown driver, no schema (claim)": "dranet/examples/resourceclaim-advanced.yaml",
    "no config (template)": "dra-example-driver/demo/gpu-test1.yaml",
}
UNKNOWN_DRIVER = "nic.acme.example.com"  # invented: no bundled schema names it (dra.net has one now)
RENAMED = {"unknown driver, no schema (claim)": UNKNOWN_DRIVER}


def _claim(rel: str) -> dict[str, Any]:
    docs = yaml.safe_load_all((REALISTIC / rel).read_text())
    return next(d for d in docs if d and d.get("kind") in ("ResourceClaim", "ResourceClaimTemplate"))


def _rules(obj: dict[str, Any], ctx: Context) -> int:
    return sum(
        1
        for fn in (check_driver_schema, check_custom_driver_schema, check_unknown_kind)
        for _ in fn(obj, ctx)
    )


def _median_us(fn: Any, n: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    ctx = Context()
    print(f"{'claim':40} {'schema rules µs':>16} {'whole object µs':>16}")
    for name, rel in CASES.items():
        obj = _claim(rel)
        for c in obj["spec"]["devices"]["config"] if name in RENAMED else ():
            c["opaque"]["driver"] = RENAMED[name]
        assert _rules(obj, ctx) == 0, name  # the real configs pass
        rules = _median_us(lambda o=obj: _rules(o, ctx), args.n, args.rounds)
        whole = _median_us(
            lambda o=obj: object_violations(copy.deepcopy(o), ctx), max(args.n // 10, 1), args.rounds
        )
        print(f"{name:40} {rules:16.1f} {whole:16.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
