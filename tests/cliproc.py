"""Runs the real `draguard` command line in a subprocess, from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def draguard(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`draguard ARGS...`; `stdin` is written to its standard input (for `-`)."""
    return subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
