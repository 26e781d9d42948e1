"""The convert benchmark still runs (a few documents) and reports a figure per sort of document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_convert_bench_smoke() -> None:
    p = subprocess.run(
        [sys.executable, "bench/convert_bench.py", "--docs", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check
    )
    assert p.returncode == 0, p.stderr
    lines = [line for line in p.stdout.splitlines() if "docs/s" in line]
    assert len(lines) == 6 and all(" 5 docs " in line for line in lines), p.stdout
