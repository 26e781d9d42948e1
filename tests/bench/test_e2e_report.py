"""bench/e2e_report.py runs the e2e scenarios and prints each one's result with its figures."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="the e2e scenarios render deploy/ with kubectl")
def test_the_report_runs_a_scenario_and_prints_its_result_and_figures() -> None:
    p = subprocess.run(
        [sys.executable, "bench/e2e_report.py", "-k", "status_write or never_fit"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("run 1/1: 2 scenarios in ") and lines[0].endswith("exit 0")
    assert any(line.split()[:1] == ["passed"] and "test_a_status_write" in line for line in lines)
    assert any("setup: stand-in + draguard serve ready in" in line for line in lines)
    assert any("Pod that can never fit denied in" in line for line in lines)
