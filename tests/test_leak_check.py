"""The suite's leak check (tests/conftest.py `_no_leaks`) fails a module that leaves a thread or a child
process running, and passes one that stops what it started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LEAKY = """
import subprocess, sys, threading

stop = threading.Event()

def test_starts_a_thread_and_a_process():
    threading.Thread(target=stop.wait, name="forgotten-watcher", daemon=True).start()
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(15)"])  # outlives the check
"""

TIDY = """
import subprocess, sys, threading

def test_stops_what_it_starts():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop.set(); t.join()
    p.kill(); p.wait()
"""


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text("from tests.conftest import _no_leaks  # noqa: F401\n")
    (tmp_path / "test_module.py").write_text(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DRAGUARD_TEST_LEAK_GRACE": "0.5"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_module_that_leaves_a_thread_and_a_process_running_fails(tmp_path: Path) -> None:
    p = _run(tmp_path, LEAKY)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "left running by this module: threads ['forgotten-watcher'], child processes [" in p.stdout


def test_a_module_that_stops_what_it_starts_passes(tmp_path: Path) -> None:
    p = _run(tmp_path, TIDY)
    assert p.returncode == 0, p.stdout + p.stderr
