"""The webhook load benchmark still runs end to end (a tiny cluster, a few seconds) without errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp_path: Path, *args: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    out = tmp_path / "bench.json"
    p = subprocess.run(
        [sys.executable, "bench/webhook_bench.py", "--nodes", "20", "--json", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout, json.loads(out.read_text())


def test_load_run_with_churn(tmp_path: Path) -> None:
    stdout, figures = _bench(
        tmp_path,
        *("--rate", "20", "--warmup", "1", "--seconds", "2", "--steps", "30", "--step-seconds", "1"),
        *("--clients", "1", "--connections", "4"),
    )
    main = figures["main"]
    assert main["requests"] == 40 and main["errors"] == 0, stdout
    assert figures["steps"][0]["requests"] == 30 and figures["steps"][0]["errors"] == 0
    assert sum(figures["churn"]["changes"].values()) > 10 and figures["churn"]["publishes_all_workers"] > 0
    assert set(figures["cold_ms"]) >= {"Pod CREATE (template claim)", "ResourceSlice UPDATE"}
    assert all(v > 0 for v in figures["cold_ms"].values())  # -1 marks a wrong answer
    assert "p99" in stdout and "RSS MiB" in stdout
    # Pods are decided on the workers' real state (their template claims resolved), never skipped
    assert figures["feasibility"].get("Pod feasible", 0) > 0 and "Pod skipped" not in figures["feasibility"]


def test_rss_over_state_changes(tmp_path: Path) -> None:
    stdout, figures = _bench(
        tmp_path, "--reloads", "20", "--churn-interval", "0.05", "--reload-interval", "0.02"
    )
    rows = figures["reloads"]
    assert [r["changes"] for r in rows] == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    assert rows[-1]["publishes"] > 0 and all(r["worker0"] > 0 for r in rows), stdout
