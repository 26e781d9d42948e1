"""Run the end-to-end scenarios (tests/e2e/: the API-server stand-in with its admission side in front of a
real `draguard serve --state cluster`) and print each scenario's result, time and measured figures.

    python3 bench/e2e_report.py [--runs N] [-k EXPR]

The figures are the `e2e: ...` lines the scenarios print (latencies of real client writes through the
stand-in, event-to-visible time, outage windows); the tests assert behaviour, never these times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(k: str | None) -> tuple[int, list[tuple[str, str, float, list[str]]], float]:
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "e2e.xml"
        cmd = [sys.executable, "-m", "pytest", "tests/e2e", "-n", "0", "-q", "-p", "no:cacheprovider"]
        cmd += ["-o", "junit_logging=system-out", f"--junitxml={junit}"]
        if k:
            cmd += ["-k", k]
        t0 = time.monotonic()
        p = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
        wall = time.monotonic() - t0
        if not junit.exists():
            sys.stderr.write(p.stdout + p.stderr)
            return p.returncode, [], wall
        cases = []
        for case in ET.parse(junit).getroot().iter("testcase"):
            outcome = "passed"
            for tag in ("failure", "error", "skipped"):
                if case.find(tag) is not None:
                    outcome = {"failure": "FAILED", "error": "ERROR", "skipped": "skipped"}[tag]
            out = case.findtext("system-out") or ""
            figures = [line[len("e2e: ") :] for line in out.splitlines() if line.startswith("e2e: ")]
            cases.append((case.get("name", "?"), outcome, float(case.get("time", "0")), figures))
        if p.returncode != 0:
            sys.stderr.write(p.stdout[-4000:])
        return p.returncode, cases, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="run the scenarios this many times (default 1)")
    ap.add_argument("-k", help="pytest -k expression: only these scenarios")
    args = ap.parse_args()
    worst = 0
    for run in range(1, args.runs + 1):
        load = os.getloadavg()[0]
        code, cases, wall = run_once(args.k)
        worst = max(worst, code)
        print(
            f"run {run}/{args.runs}: {len(cases)} scenarios in {wall:.1f} s (load {load:.1f} at start), exit {code}"
        )
        for name, outcome, seconds, figures in cases:
            print(f"  {outcome:7} {seconds:6.2f} s  {name}")
            for f in figures:
                print(f"                     {f}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
