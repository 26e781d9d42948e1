"""The generators other helpers wrote for issue 6 (`inputs_io.py`: input-io, `inputs_engine.py`:
engine-bounds), registered in this corpus (classes `io` and `engine`) so that one registry, one harness and
one bench cover them all. Their inputs use fixed object names, so their runs are never batched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.hostile import inputs_engine as eng
from tests.hostile import inputs_io as io
from tests.hostile.corpus import ENGINE, INPUT_IO, Run, register, simulate, strip, validate
from tests.hostile.corpus import Case as _Case
from tests.hostile.harness import GiB
from tests.hostile.inputs_output import check_text

SOLO: dict[str, Any] = {"solo": True}


def _io_runs(h: io.Hostile) -> tuple[Run, ...]:
    rules = (h.rule,) if h.rule else ()
    if h.expect == "input-error":
        return (validate(exit=1, rules=rules), strip(exit=(1, 2)))
    if h.expect == "warning":
        return (validate(exit=(0, 1), rules=rules),)
    if h.expect == "skipped":  # inside a directory: a warning on it; named: a usage error
        return (validate(exit=(0, 1), rules=rules, contains=(h.message,)),)
    if h.name == "forged-output":
        return (validate(exit=1, check=check_text),)
    return (validate(exit=(0, 1)),)


def _io_build(h: io.Hostile) -> Any:
    def build(d: Path) -> list[str]:
        sub = d / "in"
        sub.mkdir()
        p = h.make(sub)
        return [str(sub)] if h.expect == "skipped" or p.is_dir() else [str(p)]

    return build


for _h in io.INPUTS.values():
    if _h.name == "oversize":
        runs: tuple[Run, ...] = (
            validate("--max-input-bytes", "1Mi", exit=1, rules=(_h.rule or "",)),
            simulate("--max-input-bytes", "1Mi", exit=(1, 2)),
        )
    else:
        runs = _io_runs(_h)
    register(
        _Case(
            f"io.{_h.name}",
            "io",
            INPUT_IO,
            _io_build(_h),
            runs,
            large=_h.big,
            note=f"inputs_io: {(_h.make.__doc__ or '').strip()}",
        )
    )
    if _h.expect == "skipped":  # the same special file named on the command line: a usage error
        register(
            _Case(
                f"io.{_h.name}-named",
                "io",
                INPUT_IO,
                (lambda h: lambda d: [str(h.make(d))])(_h),
                (validate(exit=2), simulate(exit=2), strip(exit=2)),
                note=f"inputs_io: {_h.name} given as the path",
            )
        )

_TAINT_GATES = ("--feature-gates", "DRADeviceTaintRules=true")
ENGINE_CASES: dict[str, tuple[Any, tuple[Run, ...], bool]] = {
    "slow-selector-10000": (
        lambda d: eng.write_slow_selector(d),
        (validate(exit=(0, 1), **SOLO), simulate(exit=(1, 3))),
        False,
    ),
    "big-pod-4000": (
        lambda d: eng.write_big_pod(d, claims=4000),
        (validate(exit=(0, 1), **SOLO), simulate(exit=(0, 3), deadline=2.0)),
        False,
    ),
    "many-selectors": (
        lambda d: eng.write_many_selectors(d),
        (validate(exit=(0, 1), **SOLO), simulate(exit=(0, 1, 3))),
        False,
    ),
    "max-slices": (lambda d: eng.write_max_slices(d), (validate(exit=0, **SOLO), simulate(exit=0)), False),
    "many-claims-600": (lambda d: eng.write_many_claims(d), (simulate(exit=(0, 3)),), False),
    "many-taint-rules": (
        lambda d: eng.write_many_taint_rules(d, rules=5000),
        # the claim no Pod uses fits once its devices are untainted: busy, a warning (as in admission)
        (validate(*_TAINT_GATES, exit=(0, 1)), simulate(*_TAINT_GATES, exit=(0, 3))),
        False,
    ),
    "huge-quantities": (
        lambda d: eng.write_huge_quantities(d),
        (validate(exit=0, **SOLO), simulate(exit=0)),
        False,
    ),
    "bad-numbers": (lambda d: eng.write_bad_numbers(d), (validate(exit=1, **SOLO), simulate(exit=1)), False),
    "slow-selector-50000": (
        lambda d: eng.write_slow_selector(d, devices=50_000),
        (simulate(exit=(1, 3), mem=2 * GiB),),
        True,
    ),
}
for _n, (_build, _runs, _large) in ENGINE_CASES.items():
    register(
        _Case(
            f"engine.{_n}",
            "engine",
            ENGINE,
            (lambda b: lambda d: [str(b(d))])(_build),
            _runs,
            large=_large,
            note="inputs_engine: " + _n,
        )
    )
