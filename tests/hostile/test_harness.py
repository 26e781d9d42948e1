"""The hostile harness's hang detector: a command that spins is killed when its CPU time reaches the bound,
one that sleeps at the cap, and one that other work kept from the CPU is not taken for a hang."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.hostile import harness

MiB = 1 << 20


def _run(code: str, timeout: float) -> harness.Outcome:
    return harness.run_argv([sys.executable, "-c", code], ["-c"], timeout=timeout, mem_bound=512 * MiB)


def test_a_command_that_spins_is_killed_at_its_bound() -> None:
    o = _run("while True: pass", 1.0)
    assert o.timed_out and o.status == harness.TIMEOUT
    assert o.wall < harness.STARVED_CAP * 1.0 + 1.0


def test_a_command_that_sleeps_is_killed_at_the_cap() -> None:
    start = time.monotonic()
    o = _run("import time; time.sleep(60)", 0.5)
    assert o.timed_out and o.status == harness.TIMEOUT
    assert harness.STARVED_CAP * 0.5 - 0.1 <= time.monotonic() - start < 10


def test_a_command_kept_from_the_cpu_is_not_a_hang() -> None:
    """Pinned to one core beside three processes that spin on it, 0.6 s of work takes ~2.4 s of wall
    time: past a 1 s bound, within its CPU time."""
    pin = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
    spinners = [
        subprocess.Popen([sys.executable, "-c", pin + "import time\nwhile True: time.process_time()"])
        for _ in range(3)
    ]
    try:
        time.sleep(0.3)  # the spinners are on the core
        o = _run(pin + "import time\nwhile time.process_time() < 0.6: pass\nprint('done')", 1.0)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert not o.timed_out, o.detail
    assert o.exit == 0 and o.stdout.strip() == "done"
    assert o.wall > 1.0, f"not starved ({o.wall:.2f} s): the test shows nothing"
