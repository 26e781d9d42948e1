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
    """Pinned to one core beside three processes that spin on it, 1.5 s of work takes more than its 2 s
    bound of wall time, within its CPU time. Every process has its own session, so its own scheduling
    group where the kernel groups by session: the command gets about a quarter of the core."""
    pin = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
    spin = pin + "import sys, time\nprint('on', flush=True)\nwhile True: time.process_time()"
    spinners = [
        subprocess.Popen(
            [sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        for _ in range(3)
    ]
    try:
        for p in spinners:
            assert p.stdout is not None and p.stdout.readline() == "on\n"  # pinned and spinning
        o = _run(pin + "import time\nwhile time.process_time() < 1.5: pass\nprint('done')", 2.0)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
            if p.stdout is not None:
                p.stdout.close()
    assert not o.timed_out, o.detail
    assert o.exit == 0 and o.stdout.strip() == "done"
    assert o.wall > 2.0, f"not starved ({o.wall:.2f} s): the test shows nothing"
