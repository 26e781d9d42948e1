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
import sys
from pathlib import Path

import pytest

FIRST = "tests/hostile/test_corpus.py"
ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    if sys.dont_write_bytecode and not hasattr(session.config, "workerinput"):  # the controller, once
        for part in ("webhook", "tests", "bench"):
            compileall.compile_dir(ROOT / part, quiet=1)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] != FIRST)  # stable: the rest keep their order
