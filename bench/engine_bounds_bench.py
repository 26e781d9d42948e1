"""Worst cases for the rules and the allocation engine (issue 6): time and peak RSS of `draguard
validate` and `draguard simulate` on each, one fresh process per run.

    python bench/engine_bounds_bench.py            # the full-size cases (objects up to ~3 MiB)
    python bench/engine_bounds_bench.py --quick    # small sizes (a smoke run)
    python bench/engine_bounds_bench.py --json out.json
    python bench/engine_bounds_bench.py --code ../main   # the same inputs through another checkout

Cases (generators in tests/hostile/inputs_engine.py):
  slow-selector   10,000 devices, a legal class selector of ~3,600 comprehension steps per device
                  (simulate with --budget-seconds 2: must stop near 2 s, undecided)
  big-pod         one Pod with 4,000 claim references (half templates), 8 containers listing all
  many-selectors  one claim: 32 requests x 8 subrequests x 32 selectors of ~300 bytes (2.7 MB)
  max-slices      24 slices x 128 devices x (16 attributes + 16 capacities)
  many-claims     2,000 one-device claims no Pod uses (simulate asks each on its own)
  taint-rules     10,000 DeviceTaintRules over 2,048 devices, a claim for all of them
  huge-numbers    capacities, counters and requests of 1e9999 (exact comparisons)
  bad-numbers     quantities and int64 fields the API server rejects (decode errors)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile import inputs_engine as hostile  # noqa: E402

CONSUMABLE = ("--feature-gates", "DRAConsumableCapacity=true")


def cases(quick: bool) -> list[tuple[str, Any, dict[str, Any], tuple[str, ...]]]:
    """(name, generator, its arguments, extra CLI flags)."""
    q = quick
    return [
        (
            "slow-selector",
            hostile.write_slow_selector,
            {"devices": 100 if q else 10_000},
            ("--budget-seconds", "0.5" if q else "2"),
        ),
        ("big-pod", hostile.write_big_pod, {"claims": 200 if q else 4_000}, ()),
        (
            "many-selectors",
            hostile.write_many_selectors,
            {"requests": 4, "subrequests": 2, "selectors": 4} if q else {},
            (),
        ),
        ("max-slices", hostile.write_max_slices, {"slices": 2 if q else 24}, ()),
        ("many-claims", hostile.write_many_claims, {"claims": 100 if q else 2_000}, ()),
        (
            "taint-rules",
            hostile.write_many_taint_rules,
            {"rules": 200, "devices": 256} if q else {},
            ("--feature-gates", "DRADeviceTaintRules=true"),
        ),
        ("huge-numbers", hostile.write_huge_quantities, {}, CONSUMABLE),
        ("bad-numbers", hostile.write_bad_numbers, {}, ()),
    ]


def run(args: list[str], code: Path = ROOT) -> dict[str, Any]:
    """One draguard process: wall time, its own peak RSS (wait4), exit status, first output line."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, "-m", "webhook.cli.main", *args], cwd=code, env=env, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    first = (stdout.strip().splitlines() or stderr.strip().splitlines() or [""])[0]
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "exit": p.returncode,
        "first_line": first[:140],
        "traceback": "Traceback" in stderr,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--only", metavar="CASE", help="run one case")
    ap.add_argument(
        "--code",
        metavar="DIR",
        type=Path,
        default=ROOT,
        help="run the draguard of another checkout on the same inputs (before/after comparisons)",
    )
    args = ap.parse_args(argv)
    rows = []
    print(f"{'case':15} {'size':>9}  {'command':9} {'seconds':>8} {'peak RSS':>9}  exit  first line")
    with tempfile.TemporaryDirectory() as tmp:
        for name, gen, kw, flags in cases(args.quick):
            if args.only and name != args.only:
                continue
            path = gen(Path(tmp), **kw)
            size = path.stat().st_size
            for command in ("validate", "simulate"):
                extra = flags if command == "simulate" or "--feature-gates" in flags else ()
                r = run([command, "-j", "1", *extra, str(path)], args.code)
                r.update(case=name, command=command, bytes=size)
                rows.append(r)
                rss = f"{r['peak_rss_mb']:.0f} MB"
                print(
                    f"{name:15} {size / 1024:7.0f}KB  {command:9} {r['seconds']:7.2f}s {rss:>9}  {r['exit']:>4}  "
                    f"{r['first_line'][:90]}"
                )
    worst_t = max(rows, key=lambda r: r["seconds"])
    worst_m = max(rows, key=lambda r: r["peak_rss_mb"])
    print(
        f"\nworst time: {worst_t['seconds']:.2f} s ({worst_t['case']} {worst_t['command']}); "
        f"worst peak RSS: {worst_m['peak_rss_mb']:.0f} MB ({worst_m['case']} {worst_m['command']}); "
        f"tracebacks: {sum(r['traceback'] for r in rows)}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
