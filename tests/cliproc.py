"""Runs the real `draguard` command line in a process of its own, from the repository root (forked from
a warm interpreter where that is faithful: tests/forkrun.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import forkrun

ROOT = Path(__file__).resolve().parents[1]


def draguard(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`draguard ARGS...`; `stdin` is written to its standard input (for `-`)."""
    return forkrun.run(args, cwd=ROOT, input=stdin, timeout=300)
