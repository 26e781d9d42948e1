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
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests import forkrun

FIRST = "tests/hostile/test_corpus.py"
ROOT = Path(__file__).resolve().parent.parent


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than cores. The suite's workers wait on subprocesses and servers much
    of the time; on 2 cores three workers were 8-10 % faster than two in every one of four paired runs."""
    return (os.cpu_count() or 1) + 1


def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput"):
        return
    # the controller, once, before the workers start
    if sys.dont_write_bytecode:
        for part in ("webhook", "tests", "bench"):
            compileall.compile_dir(ROOT / part, quiet=1, workers=os.cpu_count() or 1)
    if (config.getoption("numprocesses", None) or 0) > 1 and config.getoption("assertmode") == "rewrite":
        _rewrite_ahead(config)


def _rewrite_ahead(config: pytest.Config) -> None:
    """Write pytest's assertion-rewritten bytecode of every test module once, on every core, so that the
    workers load it instead of each rewriting all ~300 modules again (12 s of each worker's CPU on the
    CI machine). Reading such files is pytest's own cache path; this only fills it early. Best effort:
    any failure (another pytest version's internals, a read-only checkout) leaves it to the workers."""
    global _REWRITE_CONFIG
    try:
        from _pytest.assertion import rewrite

        rewrite.get_cache_dir, rewrite.PYC_TAIL, rewrite._rewrite_test, rewrite._write_pyc  # noqa: B018
    except (ImportError, AttributeError):
        return
    files = sorted((ROOT / "tests").rglob("test_*.py")) + sorted((ROOT / "tests").rglob("conftest.py"))
    _REWRITE_CONFIG = config
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=ctx) as pool:
            list(pool.map(_rewrite_one, files, chunksize=8))
    except (OSError, RuntimeError):
        return
    finally:
        _REWRITE_CONFIG = None


_REWRITE_CONFIG: pytest.Config | None = None


def _rewrite_one(path: Path) -> None:
    from _pytest.assertion import rewrite

    config = _REWRITE_CONFIG
    if config is None:
        return
    try:
        cache = rewrite.get_cache_dir(path)
        pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(path, pyc) is not None:  # up to date
            return
        cache.mkdir(exist_ok=True, parents=True)
        stat, code = rewrite._rewrite_test(path, config)
        rewrite._write_pyc(config.stash[rewrite.assertstate_key], code, stat, pyc)
    except (OSError, SyntaxError, KeyError):
        return


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
