"""Suite-wide ordering for pytest-xdist (`--dist loadscope`, see pyproject.toml): the hostile corpus is one
module whose fixture runs ~1,000 subprocesses (about half the suite's CPU time). Collected first, it is the
first scope handed out, so one worker runs it while the other takes every other module, instead of it
starting last and running alone at the end.

Bytecode: the suite starts well over a thousand `draguard` processes. Where the environment sets
PYTHONDONTWRITEBYTECODE (this project's CI machines do), none of them would find compiled modules and each
would compile the whole package again (0.85 s to validate one ConfigMap instead of 0.34 s). The session
compiles the checkout's sources once, as an ordinary import would have; the environment is left as it is."""

from __future__ import annotations

import compileall
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forkrun

FIRST = "tests/hostile/test_corpus.py"
ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    if sys.dont_write_bytecode and not hasattr(session.config, "workerinput"):  # the controller, once
        for part in ("webhook", "tests", "bench"):
            compileall.compile_dir(ROOT / part, quiet=1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    forkrun.close_all()


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] != FIRST)  # stable: the rest keep their order


# -- leaks: a test module that leaves threads or processes running fails ----------------------------
# what is ending on its own (a stopped server's last thread, a child being reaped) gets this long
LEAK_GRACE_SECONDS = float(os.environ.get("DRAGUARD_TEST_LEAK_GRACE", "10"))


def _children() -> set[int]:
    """This process's live child processes (Linux: /proc/self/task/*/children); empty elsewhere."""
    pids: set[int] = set()
    try:
        for task in os.scandir("/proc/self/task"):
            with open(os.path.join(task.path, "children"), encoding="ascii") as f:
                pids.update(int(p) for p in f.read().split())
    except OSError:
        return set()
    return {p for p in pids if _running(p)} - forkrun.server_pids()  # those live for the session


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")  # a zombie has ended
    except OSError:
        return False


def _leaks(threads: set[threading.Thread], children: set[int]) -> tuple[list[str], list[int]]:
    new_threads = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
    return [t.name for t in new_threads], sorted(_children() - children)


@pytest.fixture(autouse=True, scope="module")
def _no_leaks() -> Iterator[None]:
    """After the module's fixtures are torn down, nothing it started may still run: no thread, no
    child process (a server, a `draguard serve`). What is ending gets LEAK_GRACE_SECONDS."""
    threads, children = set(threading.enumerate()), _children()
    yield
    deadline = time.monotonic() + LEAK_GRACE_SECONDS
    names, pids = _leaks(threads, children)
    while (names or pids) and time.monotonic() < deadline:
        time.sleep(0.05)
        names, pids = _leaks(threads, children)
    assert not names and not pids, f"left running by this module: threads {names}, child processes {pids}"
