"""The churn-vs-upstream bench still runs (tiny clusters, ours only: no test depends on draoracle) and
every answer it checks is the expected one, the cold first requests included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_churn_vs_upstream_smoke(tmp_path: Path) -> None:
    out = tmp_path / "churn.json"
    p = subprocess.run(
        [
            sys.executable,
            "bench/churn_vs_upstream.py",
            "--no-go",
            "--nodes",
            "12",
            "--changes",
            "4",
            "--cold-runs",
            "1",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cluster A: 12 nodes, 96 devices" in p.stdout and "cluster B: 12 nodes, 864 devices" in p.stdout
    rows = {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"A1", "A4", "A9", "B1"}
    for row in rows.values():
        assert len(row["cold_ms"]) == 1 and row["claim"]["ours"]["n"] == 4 and row["slice"]["ours"]["n"] == 4
