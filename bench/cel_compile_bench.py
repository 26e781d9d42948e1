"""Compile-time figures of the pure-Python CEL front end (parse + check + validators + cost), uncached.

    python bench/cel_compile_bench.py [--runs 200]

Prints p50/p99/max per class: realistic selectors, and hostile 10 KiB expressions (deep nesting, long
chains, many comprehensions, string building, garbage). Also the bytes a cached 10 KiB selector retains.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webhook.cel.compiler import _compile  # noqa: E402

REALISTIC = [
    'device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "A100" && device.attributes["gpu.example.com"].numa == 1',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3"))',
    'cel.bind(g, device.attributes["gpu.example.com"], g.model in ["A100", "H100"] && g.numa < 2)',
    'device.attributes["dra.example.com"].?family.orValue("") == "ampere"',
    "device.attributes.exists(d, d.endsWith('.example.com'))",
    'has(device.attributes["gpu.example.com"].uuid) && device.attributes["gpu.example.com"].uuid.startsWith("GPU-")',
]
N = 10 * 1024
HOSTILE = {
    "nested parens": "(" * 249 + "true" + ")" * 249,
    "250-term sum": " + ".join(["1"] * 250) + " > 0",
    "long && chain": " && ".join(['device.driver == "a"'] * 450),
    "nested lists": "[" * 249 + "1" + "]" * 249 + " == []",
    "nested comprehensions": "device.attributes.exists(d, " * 40 + "true" + ")" * 40,
    "string building": "cel.bind(a, device.driver + device.driver, " * 60 + "a" + ")" * 60 + ".size() > 0",
    "deep member chain": "device" + ".a" * 249 + " == 1",
    "garbage": "((((" + "+-*/" * 2500,
    "many lists": " || ".join(["[1, 2, 3, 'a'] == []"] * 400),
    "ternary chain": "true ? true : " * 249 + "true",
}


def _time(expr: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _compile(expr, False, True, True)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _fmt(ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):8.3f} ms  p99 {p99:8.3f} ms  max {ms[-1]:8.3f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    all_real: list[float] = []
    for e in REALISTIC:
        all_real += _time(e, a.runs)
    print(f"realistic selectors ({len(REALISTIC)} x {a.runs}): {_fmt(all_real)}")
    for name, e in HOSTILE.items():
        e = e[:N]
        r = _compile(e, False, True, True)
        verdict = type(r).__name__ if not hasattr(r, "kind") else f"{r.kind}"
        print(
            f"hostile {name:22s} ({len(e.encode()):5d} B, {verdict:9s}): {_fmt(_time(e, max(3, a.runs // 20)))}"
        )
    big = " && ".join(f'device.attributes["gpu.example.com"].a{i} == "v{i}"' for i in range(190))[:N]
    tracemalloc.start()
    compiled = _compile(big, False, True, True)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"a compiled {len(big.encode())} B selector retains ~{current / 1024:.0f} KiB ({type(compiled).__name__})"
    )


if __name__ == "__main__":
    main()
