"""A command-line run sets up its own process (the collector, webhook/cli/main.py `_tune_collector`); a
caller of `main(argv)` in its own process, as these tests are, keeps its interpreter as it was."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from webhook.cli.main import FULL_COLLECTION_EVERY, main

ROOT = Path(__file__).resolve().parents[2]

# what the collector looks like when the interpreter ends (argparse's --version exits through SystemExit,
# so atexit handlers run)
_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("collector", gc.get_threshold()[2], gc.get_freeze_count() > 0))
sys.argv = ["draguard", "--version"]
from webhook.cli.main import main
main()
"""


def test_a_command_line_run_tunes_the_collector() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("draguard ")
    assert out.stdout.splitlines()[-1] == f"collector {FULL_COLLECTION_EVERY} True"
    assert FULL_COLLECTION_EVERY != 10  # CPython's default: the probe would not tell them apart


def test_main_called_in_process_leaves_the_collector_alone(capsys: pytest.CaptureFixture[str]) -> None:
    before = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("draguard ")
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
