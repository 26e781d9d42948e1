"""Suite-wide ordering for pytest-xdist (`--dist loadscope`, see pyproject.toml): the hostile corpus is one
module whose fixture runs ~1,000 subprocesses (about half the suite's CPU time). Collected first, it is the
first scope handed out, so one worker runs it while the other takes every other module, instead of it
starting last and running alone at the end."""

from __future__ import annotations

import pytest

FIRST = "tests/hostile/test_corpus.py"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] != FIRST)  # stable: the rest keep their order
