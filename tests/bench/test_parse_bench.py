"""The parser benchmark still runs (tiny corpora) and draguard's own parsers report figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_parse_bench_smoke() -> None:
    p = subprocess.run(
        [sys.executable, "bench/parse_bench.py", "--only", "parsers", "--mb", "0.05"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check
    )
    assert p.returncode == 0, p.stderr
    for parser in ("draguard-fast", "draguard-libyaml", "draguard-json", "json-stdlib"):
        lines = [line for line in p.stdout.splitlines() if line.strip().startswith(parser + " ")]
        assert lines and all("MB/s" in line and "peak RSS" in line for line in lines), p.stdout
