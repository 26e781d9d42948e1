"""Budgets and deadlines: every search has a budget, every run and every request a deadline.

    deadline = Deadline.after(10.0)            # absolute (monotonic clock): a whole run or one request
    budget = Budget(steps=200_000, seconds=2)  # what one allocate() call may spend (validated)
    meter = Meter(budget, deadline)            # the running account of one call:
    meter.take()          # one search step (a device placement attempt)
    meter.charge(n)       # n steps of other work (a selector evaluation, a compilation); checks the clock
    meter.tick()          # a loop iteration: no step, the clock is read every TICKS_PER_CHECK ticks
    deadline.check()      # outside a search (loading, validating): raises DeadlinePassed once passed

Each of them raises `OutOfBudget` once the steps are used up or the clock has passed the earlier of
`budget.seconds` after the meter was made and the deadline; `meter.reason()` then says which one.
`DeadlinePassed` (an `OutOfBudget`) is what work outside allocate() raises: the caller reports what was
not done as not checked / undecided, never as a verdict.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from webhook.model.errors import DraguardError

__all__ = [
    "SEARCH_RUNS",
    "Budget",
    "Deadline",
    "DeadlinePassed",
    "Meter",
    "OutOfBudget",
    "check_seconds",
    "check_steps",
]

SEARCH_RUNS = 64  # allocator runs a search for changes may make by default (`explain pod --search-runs`)
TICKS_PER_CHECK = 256  # loop iterations between two reads of the clock (a tick costs ~50 ns)


class OutOfBudget(DraguardError):
    """The step budget, the time budget or the deadline ran out: the answer is undecided."""


class DeadlinePassed(OutOfBudget):
    """The deadline of the run or request passed while loading or validating (`Deadline.check`)."""


def check_seconds(value: float, what: str = "seconds") -> float:
    """`value` as a float if it is a finite, non-negative number of seconds; else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number of seconds, not {value!r}")
    f = float(value)
    if not math.isfinite(f) or f < 0:
        raise ValueError(f"{what} must be a finite number of seconds >= 0, not {value!r}")
    return f


def check_steps(value: int, what: str = "steps") -> int:
    """`value` if it is a non-negative integer; else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, not {value!r}")
    return value


@dataclass(frozen=True)
class Budget:
    """What one allocate() call may spend: search steps and wall-clock seconds (both >= 0, finite)."""

    steps: int = 200_000  # search steps (device placement attempts) and selector work, in steps
    seconds: float = 2.0  # wall-clock limit for one allocate() call

    def __post_init__(self) -> None:
        check_steps(self.steps, "budget steps")
        object.__setattr__(self, "seconds", check_seconds(self.seconds, "budget seconds"))


class Deadline:
    """An absolute point on the monotonic clock, shared by everything one run or request does."""

    __slots__ = ("at",)

    def __init__(self, at: float) -> None:
        if math.isnan(at):
            raise ValueError("a deadline cannot be NaN")
        self.at = at

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline `seconds` from now (finite, >= 0)."""
        return cls(time.monotonic() + check_seconds(seconds, "deadline seconds"))

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf)

    def remaining(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def check(self) -> None:
        """Raise `DeadlinePassed` once the deadline has passed (one clock read, ~50 ns)."""
        if time.monotonic() >= self.at:
            raise DeadlinePassed()

    def earliest(self, other: Deadline | None) -> Deadline:
        """This deadline or `other`, whichever comes first."""
        return other if other is not None and other.at < self.at else self

    def __repr__(self) -> str:
        return f"Deadline(in {self.remaining():.3f} s)" if math.isfinite(self.at) else "Deadline(never)"


class Meter:
    """The running account of one budgeted computation (see the module docstring)."""

    __slots__ = ("left", "stop_at", "used", "steps", "seconds", "by_deadline", "_ticks")

    def __init__(self, budget: Budget, deadline: Deadline | None = None) -> None:
        self.steps = budget.steps
        self.seconds = budget.seconds
        self.left = budget.steps
        self.used = 0
        self._ticks = 0
        own = time.monotonic() + budget.seconds
        self.by_deadline = deadline is not None and deadline.at < own
        self.stop_at = deadline.at if deadline is not None and self.by_deadline else own

    def take(self) -> None:
        """One search step; the clock is read every 128 steps."""
        self.used += 1
        self.left -= 1
        if self.left < 0 or (self.used & 127 == 0 and time.monotonic() > self.stop_at):
            raise OutOfBudget()

    def charge(self, steps: int) -> None:
        """`steps` steps of work done outside the search (charged after the fact); reads the clock."""
        self.used += steps
        self.left -= steps
        if self.left < 0 or time.monotonic() > self.stop_at:
            raise OutOfBudget()

    def tick(self) -> None:
        """One iteration of a loop that spends no steps (over nodes, slices, devices, claims)."""
        self._ticks += 1
        if self._ticks % TICKS_PER_CHECK == 0 and time.monotonic() > self.stop_at:
            raise OutOfBudget()

    def check(self) -> None:
        """Read the clock now."""
        if self.left < 0 or time.monotonic() > self.stop_at:
            raise OutOfBudget()

    def exhausted(self) -> bool:
        return self.left < 0 or time.monotonic() > self.stop_at

    def reason(self) -> str:
        """Which limit stops this meter: the budget or the (earlier) deadline."""
        if self.by_deadline and self.left >= 0:
            return "the deadline of the run or request passed"
        return f"the search budget ({self.steps} steps, {self.seconds:g} s) ran out"
