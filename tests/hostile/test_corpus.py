"""The hostile corpus in CI (issue 6): every input through real `draguard` subprocesses, asserting no
crash (signal), no traceback, no run past its hang bound (its run deadline + 1 s, or 10 s for a command
without one: a subprocess timeout that detects hangs, not a performance assertion), peak RSS within its
bound (1 GiB for inputs up to 3 MiB), and each input's expected outcome. The large variants run in
`bench/hostile_bench.py` only. Plain `validate` inputs share processes (read back per file from JSON
output); any input whose shared run fails is rerun alone, so each failure is one input's own. Runs known
to fail (`known_open.py`, FINDINGS.md) must fail exactly as recorded until fixed, then leave the list."""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from tests.hostile import corpus, harness
from tests.hostile.corpus import Case, validate
from tests.hostile.known_open import KNOWN_OPEN
from tests.hostile.runner import CorpusRun, Result, judge, remove_tree

CASES = corpus.load()


@pytest.fixture(scope="module")
def results() -> dict[str, list[Result]]:
    work = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        run = CorpusRun(CASES, work, jobs=2)
        by_case: dict[str, list[Result]] = {}
        for r in run.execute():
            by_case.setdefault(r.case.id, []).append(r)
    finally:
        remove_tree(work)
    return by_case


def _allowed(known: str | None) -> tuple[str, ...]:
    """What a run may end with: ok; a known-open run its recorded failure (a time or memory blow-up may
    show as either, or pass on a faster machine). Anything else is a change to look at."""
    if known is None:
        return (harness.OK,)
    if known in (harness.TIMEOUT, harness.MEMORY):
        return (harness.OK, harness.TIMEOUT, harness.MEMORY)
    return (known,)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case: Case, results: dict[str, list[Result]]) -> None:
    got = results[case.id]
    assert len(got) == len(case.runs)
    assert all(r.input_bytes <= 3 * harness.MiB for r in got), "CI inputs stay within the API server's 3 MiB"
    allowed = {r.run.label(): _allowed(KNOWN_OPEN.get((case.id, r.run.label()))) for r in got}
    fixed = [
        r.run.label() for r in got if r.status == harness.OK and harness.OK not in allowed[r.run.label()]
    ]
    assert not fixed, f"fixed: remove {[(case.id, f) for f in fixed]} from known_open.py"
    failures = [r for r in got if r.status not in allowed[r.run.label()]]
    assert not failures, "\n".join(
        f"{r.status}: {r.run.label()}: {r.detail} ({r.wall:.2f} s, {r.rss >> 20} MiB)\n{r.excerpt}"
        for r in failures
    )


def test_corpus_covers_every_class() -> None:
    """Well over the issue's ~140 inputs, every class populated, ids unique, no megabytes committed."""
    classes = Counter(c.cls for c in CASES)
    assert len(CASES) >= 300
    for cls in (
        "cel",
        "regex",
        "typecheck",
        "yaml",
        "numbers",
        "quadratic",
        "output",
        "files",
        "flags",
        "budget",
        "memory",
        "io",
        "engine",
    ):
        assert classes[cls] >= 5, cls
    assert len({c.id for c in CASES}) == len(CASES)
    here = Path(__file__).parent
    assert all(p.stat().st_size < 64 * 1024 for p in here.glob("*.py"))
    assert set(KNOWN_OPEN) <= {(c.id, r.label()) for c in CASES for r in c.runs}, (
        "stale known_open.py entries"
    )


# ---- the harness classifies real failures (so a green corpus means something) -------------------------


def _py(code: str, **kw: object) -> harness.Outcome:
    return harness.run_argv([sys.executable, "-c", code], ["python3", "-c"], **kw)  # type: ignore[arg-type]


def test_harness_sees_a_native_crash() -> None:
    o = _py("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", timeout=10, mem_bound=harness.GiB)
    assert (o.status, o.signal) == (harness.CRASH, 11)


def test_harness_kills_a_hang_at_its_bound() -> None:
    o = _py("import time; time.sleep(60)", timeout=0.5, mem_bound=harness.GiB)
    assert o.status == harness.TIMEOUT and o.exit is None
    assert o.wall < 30  # killed, not waited for (a bound on the harness, not on draguard)


def test_harness_kills_the_workers_of_a_hang() -> None:
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\nelse:\n    os.wait()"
    o = _py(code, timeout=0.5, mem_bound=harness.GiB)
    assert o.status == harness.TIMEOUT


def test_harness_sees_memory_over_its_bound() -> None:
    o = _py(
        "b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096])", timeout=20, mem_bound=256 * harness.MiB
    )
    assert o.status == harness.MEMORY and o.rss > 256 * harness.MiB


def test_harness_guard_stops_a_blow_up_fast() -> None:
    o = _py("x = [bytearray(1 << 20) for _ in range(100_000)]", timeout=20, mem_bound=256 * harness.MiB)
    assert o.status == harness.MEMORY  # MemoryError at the address-space guard, not 100 GB later


def test_harness_sees_a_traceback() -> None:
    o = _py("raise ValueError('boom')", timeout=10, mem_bound=harness.GiB)
    assert (o.status, o.detail) == (harness.TRACEBACK, "ValueError: boom")


def test_judge_reports_unmet_expectations() -> None:
    o = _py(
        "print('internal.rule-crash: please report it'); raise SystemExit(1)",
        timeout=10,
        mem_bound=harness.GiB,
    )
    status, detail = judge(validate(exit=0, rules=("claim.selectors",)), o)
    assert status == harness.WRONG
    assert "exit 1, expected 0" in detail and "no claim.selectors finding" in detail
    assert "'internal.rule-crash' in output" in detail
    assert judge(validate(exit=1, allow_internal=True), o)[0] == harness.OK


def test_unreadable_inputs_are_unreadable_to_the_child() -> None:
    """The files class relies on it (root bypasses permissions unless the child drops the capability)."""
    assert harness.can_drop_dac()
