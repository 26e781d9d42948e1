"""The worst-case bench runs (small sizes) and every case ends without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_bounds_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bounds.json"
    p = subprocess.run(
        [sys.executable, "bench/engine_bounds_bench.py", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {r["case"] for r in rows} >= {"slow-selector", "big-pod", "many-selectors", "many-claims"}
    assert not [r for r in rows if r["traceback"]]
    exits = {(r["case"], r["command"]): r["exit"] for r in rows}
    assert exits[("big-pod", "simulate")] == 0 and exits[("many-claims", "simulate")] == 0
    assert exits[("huge-numbers", "simulate")] == 0 and exits[("bad-numbers", "validate")] == 1
