"""The progress line of `validate` (on a terminal): nothing during the first second, whatever the call
(the first file, the last one); then one self-overwriting line, erased at the end. A fake clock and
stream: no sleeps, no terminal."""

from __future__ import annotations

import io

from webhook.cli.validate import PROGRESS_AFTER, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_run_shorter_than_a_second_prints_nothing_even_when_it_finishes() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress(clock, out)
    p(1, 1)  # the only file, done at once: a quick run is not announced
    clock.now += PROGRESS_AFTER - 0.01
    p(1, 1)
    p.finish()
    assert out.getvalue() == "" and not p.shown


def test_the_line_appears_after_a_second_and_is_erased_at_the_end() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress(clock, out)
    p(1, 3)
    assert out.getvalue() == ""
    clock.now += PROGRESS_AFTER
    p(2, 3)
    p(3, 3)
    assert out.getvalue() == "\rdraguard: 2/3 files\rdraguard: 3/3 files"
    p.finish()
    assert out.getvalue().endswith("\r\033[K")


def test_the_first_call_after_a_second_shows_the_line() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress(clock, out)
    clock.now += 5
    p(0, 10)
    assert out.getvalue() == "\rdraguard: 0/10 files"
