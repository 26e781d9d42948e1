"""The workloads benchmark still runs (small sizes) and reports its figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_workloads_bench_smoke() -> None:
    p = subprocess.run(
        [sys.executable, "bench/workloads_bench.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check
    )
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(
        r"simulate: .* \(46 Pods, \d+ KiB\): [0-9.]+ s, peak RSS \d+ MiB, exit 1\n", p.stdout
    ), p.stdout
