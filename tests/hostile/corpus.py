"""The hostile corpus: cases (an input builder + the commands to run on it + what must come out) and
the registry the `inputs_*` modules fill. Inputs are written by code at run time, never committed."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.harness import GiB, Outcome

# Which helper's area a case exercises (the FINDINGS file names it for each failure).
CEL_FRONT, CEL_EVAL, INPUT_IO, ENGINE = "cel-front", "cel-eval", "input-io", "engine-bounds"
CLI = "cli"  # argument handling in webhook/cli/ (main.py and a module per command)

VALIDATE_BOUND = 10.0  # seconds: the default admission timeout; every ≤ 3 MiB input is checked within it
DEFAULT_BUDGET = 2.0  # --budget-seconds given to every simulate/--feasibility run that names none
# --deadline-seconds given to every simulate/--feasibility run that names none (at least its budget): the
# deadline of the whole run (reading, validation, allocation), so the run ends within deadline + 1 s. It
# leaves room for reading a 3 MiB input and one Pod's budget on a busy 2-core machine.
DEFAULT_DEADLINE = 5.0

Check = Callable[[Outcome], "str | None"]


@dataclass(frozen=True)
class Run:
    """One command over a case's input and what must come out of it."""

    cmd: str  # validate | simulate | strip
    flags: tuple[str, ...] = ()
    exit: frozenset[int] = frozenset({0})
    rules: tuple[str, ...] = ()  # rule ids that must appear on stdout
    contains: tuple[str, ...] = ()  # texts that must appear on stdout or stderr
    absent: tuple[str, ...] = ()  # texts that must not appear on stdout
    check: Check | None = None  # more: returns a problem, or None
    budget: float | None = None  # --budget-seconds (simulate, --feasibility): per Pod's allocation
    deadline: float | None = None  # --deadline-seconds: the whole run; the timeout is this + 1 s
    timeout: float | None = None  # hang bound for a command without a budget
    mem: int = GiB  # peak RSS bound
    stdin: str | None = None  # file fed on stdin (relative to the case directory, or absolute)
    paths: tuple[str, ...] | None = None  # instead of the builder's paths ("-" for stdin)
    allow_internal: bool = False  # internal.rule-crash is an acceptable answer (a MemoryError, say)
    drop_dac: bool = False  # run without root's permission bypass (unreadable files must be unreadable)
    solo: bool = False  # never batched with other cases
    shared: bool = False  # may run over many cases' inputs at once: its check reads the whole output
    pod_batch: bool = False  # `simulate` of a case whose claims use only its own devices: one Pod per case

    def argv(self, inputs: Sequence[str]) -> list[str]:
        flags = list(self.flags)
        if self.budget is not None and "--budget-seconds" not in flags:
            flags += ["--budget-seconds", repr(self.budget)]
        if self.deadline is not None and "--deadline-seconds" not in flags:
            flags += ["--deadline-seconds", repr(self.deadline)]
        if self.cmd == "validate" and "--no-progress" not in flags:
            flags.append("--no-progress")
        return [self.cmd, *flags, *(self.paths if self.paths is not None else inputs)]

    @property
    def wall_bound(self) -> float:
        if self.timeout is not None:
            return self.timeout
        if self.deadline is not None:
            return self.deadline + 1.0
        if self.budget is not None:
            return self.budget + 1.0
        return VALIDATE_BOUND

    @property
    def batchable(self) -> bool:
        """Plain `validate` over files, whose outcome can be read per file from JSON output."""
        return (
            self.cmd == "validate"
            and not self.flags
            and self.stdin is None
            and self.paths is None
            and bool(self.exit & {0, 1})
            and self.check is None
            and not self.contains
            and not self.drop_dac
            and not self.solo
            and self.timeout is None
            and self.mem == GiB
        )

    @property
    def share_key(self) -> tuple[object, ...] | None:
        """Runs with equal keys may share one process (`shared` runs whose check reads all output)."""
        if not self.shared or self.stdin is not None or self.paths is not None or self.drop_dac:
            return None
        return (
            self.cmd,
            self.flags,
            self.exit,
            self.rules,
            self.contains,
            self.absent,
            self.check,
            self.budget,
            self.deadline,
            self.timeout,
            self.mem,
            self.allow_internal,
        )

    def label(self) -> str:
        flags = [f for f in self.flags if f != "--no-progress"]
        return " ".join([self.cmd, *flags] + (["<stdin"] if self.stdin else []))


@dataclass(frozen=True)
class Case:
    id: str  # "<class>.<name>", unique
    cls: str
    area: str
    build: Callable[[Path], Sequence[str]]  # writes the input into a directory, returns the paths to pass
    runs: tuple[Run, ...]
    large: bool = False  # a large variant: bench only
    note: str = ""


CASES: dict[str, Case] = {}


def register(c: Case) -> Case:
    if c.id in CASES:
        raise ValueError(f"duplicate hostile case {c.id}")
    if not re.fullmatch(r"[a-z0-9]+\.[a-z0-9.-]+", c.id):
        raise ValueError(f"bad case id {c.id!r}")
    CASES[c.id] = c
    return c


def case(
    cls: str, *runs: Run, area: str, name: str = "", large: bool = False, note: str = ""
) -> Callable[[Callable[[Path], Sequence[str]]], Callable[[Path], Sequence[str]]]:
    """Decorator: register the builder as case `<cls>.<name or function name>`."""

    def deco(fn: Callable[[Path], Sequence[str]]) -> Callable[[Path], Sequence[str]]:
        cid = f"{cls}.{name or fn.__name__.strip('_').replace('_', '-')}"
        register(Case(cid, cls, area, fn, tuple(runs), large, note or (fn.__doc__ or "").strip()))
        return fn

    return deco


# ---- run constructors: the usual expectations ------------------------------------------------------


def _ex(codes: int | Sequence[int]) -> frozenset[int]:
    return frozenset({codes} if isinstance(codes, int) else codes)


def validate(*flags: str, exit: int | Sequence[int] = 0, **kw: object) -> Run:
    return Run("validate", tuple(flags), _ex(exit), **kw)  # type: ignore[arg-type]


def simulate(
    *flags: str,
    exit: int | Sequence[int] = 0,
    budget: float = DEFAULT_BUDGET,
    deadline: float | None = None,
    **kw: object,
) -> Run:
    """A `simulate` run with `--budget-seconds budget` and `--deadline-seconds deadline` (default: 5 s,
    or the budget if larger): bounded by deadline + 1 s."""
    d = max(DEFAULT_DEADLINE, budget) if deadline is None else deadline
    return Run("simulate", tuple(flags), _ex(exit), budget=budget, deadline=d, **kw)  # type: ignore[arg-type]


def feasibility(
    *flags: str,
    exit: int | Sequence[int] = 0,
    budget: float = DEFAULT_BUDGET,
    deadline: float | None = None,
    **kw: object,
) -> Run:
    """A `validate --feasibility` run, budget and deadline as for `simulate`."""
    d = max(DEFAULT_DEADLINE, budget) if deadline is None else deadline
    return Run("validate", ("--feasibility", *flags), _ex(exit), budget=budget, deadline=d, **kw)  # type: ignore[arg-type]


def strip(*flags: str, exit: int | Sequence[int] = 0, **kw: object) -> Run:
    return Run("strip", tuple(flags), _ex(exit), **kw)  # type: ignore[arg-type]


INPUT_ERROR = (1, 2)  # a clear error on the input: an error finding (1) or an unreadable input (2)


def input_error_everywhere(**kw: object) -> tuple[Run, ...]:
    """An input error in every command (issue §4): validate, simulate, strip."""
    return (
        validate(exit=INPUT_ERROR, **kw),
        simulate(exit=INPUT_ERROR, **kw),
        strip(exit=INPUT_ERROR, **kw),
    )


MODULES = (
    "inputs_cel",
    "inputs_regex",
    "inputs_typecheck",
    "inputs_yaml",
    "inputs_numbers",
    "inputs_quadratic",
    "inputs_output",
    "inputs_files",
    "inputs_flags",
    "inputs_budget",
    "inputs_memory",
    "inputs_others",
)


def load(large: bool = False) -> list[Case]:
    """Every registered case (the large variants only when asked), in registration order."""
    for m in MODULES:
        importlib.import_module(f"tests.hostile.{m}")
    return [c for c in CASES.values() if large or not c.large]
