"""The engine benchmark still runs (on a tiny cluster) and its answers are the expected ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    p = subprocess.run(
        [sys.executable, "bench/engine_bench.py", "--nodes", "4", "--calls", "2", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "cluster A: 32 devices" in p.stdout and "cluster B: 256 devices" in p.stdout, p.stdout + p.stderr
    rows = {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"A1", "A2", "A3", "U", "U+A1", "B1", "B2"}
    for rid, row in rows.items():
        assert row["answer"] == row["expected"], (rid, row)  # no wrong or undecided answers
