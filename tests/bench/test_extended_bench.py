"""The extended-resources bench still runs (a tiny cluster) and every case gets the expected answer:
feasible in native mode, translated in translate mode, an apply only when the state lacks the template."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_extended_bench_smoke() -> None:
    p = subprocess.run(
        [sys.executable, "bench/extended_bench.py", "--nodes", "8", "--classes", "3", "--requests", "4"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check
    )
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {line[:48].strip(): line[48:].split()[0] for line in p.stdout.splitlines()[2:]}
    assert rows == {
        "validate native: 1 container": "feasible:5",
        "validate native: init+sidecar+2 containers": "feasible:5",
        "mutate translate: template in the state": "translated:5",
        "mutate translate: template applied": "translated:5",
        "mutate translate: init+sidecar+2, in the state": "translated:5",
    }
    assert "translated:5 (5 applies)" in p.stdout
    assert p.stdout.count("applies") == 1
