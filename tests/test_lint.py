"""ruff (lint + format) and mypy run as part of the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint() -> None:
    p = _run("ruff", "check", ".")
    assert p.returncode == 0, p.stdout + p.stderr


def test_ruff_format() -> None:
    p = _run("ruff", "format", "--check", ".")
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_package() -> None:
    p = _run("mypy", "webhook")
    assert p.returncode == 0, p.stdout + p.stderr
