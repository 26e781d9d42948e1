"""Hostile command lines (issue §2): `--budget-seconds nan`/negative/inf, absurd step budgets, `-j 100000`
(capped to what the input and the machine can use), garbage feature gates and versions. Each is a usage
error (exit 2) or a normal run, never a traceback, a fork bomb or a hang."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.corpus import CLI, ENGINE, Run, register, simulate, validate
from tests.hostile.corpus import Case as _Case
from tests.hostile.k8s import selector_case, uid, write

USAGE = 2


def _cluster(d: Path) -> list[str]:
    return selector_case(d, "device.driver == 'gpu.example.com'")


FLAG_CASES: dict[str, tuple[Run, str]] = {
    "budget-seconds-nan": (simulate("--budget-seconds", "nan", exit=USAGE, budget=2.0), ENGINE),
    "budget-seconds-negative": (simulate("--budget-seconds", "-1", exit=USAGE, budget=2.0), ENGINE),
    "budget-seconds-inf": (simulate("--budget-seconds", "inf", exit=(0, USAGE), budget=2.0), ENGINE),
    "budget-seconds-1e309": (simulate("--budget-seconds", "1e309", exit=(0, USAGE), budget=2.0), ENGINE),
    "budget-seconds-zero": (simulate("--budget-seconds", "0", exit=(0, 3, USAGE), budget=0.0), ENGINE),
    "budget-seconds-tiny": (simulate("--budget-seconds", "1e-300", exit=(0, 3), budget=0.0), ENGINE),
    "budget-seconds-text": (simulate("--budget-seconds", "soon", exit=USAGE, budget=2.0), CLI),
    "budget-steps-negative": (simulate("--budget-steps", "-1", exit=USAGE), ENGINE),
    "budget-steps-huge": (simulate("--budget-steps", "9" * 40, exit=(0, USAGE)), ENGINE),
    "budget-steps-zero": (simulate("--budget-steps", "0", exit=(0, 3, USAGE)), ENGINE),
    "feasibility-budget-nan": (
        validate("--feasibility", "--budget-seconds", "nan", exit=USAGE, budget=2.0),
        ENGINE,
    ),
    "feasibility-budget-negative": (
        validate("--feasibility", "--budget-seconds", "-0.5", exit=USAGE, budget=2.0),
        ENGINE,
    ),
    "validate-budget-nan-without-feasibility": (validate("--budget-seconds", "nan", exit=(0, USAGE)), ENGINE),
    "jobs-100000-validate": (validate("-j", "100000", exit=0), ENGINE),
    "jobs-100000-simulate": (simulate("-j", "100000", exit=0), ENGINE),
    "jobs-negative": (validate("-j", "-1", exit=USAGE), CLI),
    "jobs-huge-int": (validate("-j", "9" * 30, exit=(0, USAGE)), ENGINE),
    "k8s-version-unknown": (validate("--k8s-version", "9.99", exit=USAGE), CLI),
    "feature-gates-garbage": (validate("--feature-gates", "=,==,a=maybe,=true", exit=USAGE), CLI),
    "feature-gates-100000": (
        validate("--feature-gates", ",".join(f"G{i}=true" for i in range(10_000)), exit=USAGE),
        CLI,
    ),
    "feature-gates-newline": (validate("--feature-gates", "DRAAdminAccess=true\nFORGED=1", exit=USAGE), CLI),
    "skip-huge": (
        validate("--skip", ",".join(f"Kind{i}" for i in range(10_000)), exit=USAGE),
        CLI,
    ),  # unknown kinds
    "jobs-zero": (validate("-j", "0", exit=USAGE), CLI),  # leaving -j out means every core
    "output-format-unknown": (validate("-o", "yaml", exit=USAGE), CLI),
}
for _n, (_run, _area) in FLAG_CASES.items():
    register(_Case(f"flags.{_n}", "flags", _area, _cluster, (_run,), note=" ".join(_run.flags)))


register(
    _Case(
        "flags.jobs-100000-many-files",
        "flags",
        ENGINE,
        lambda d: [
            write(
                d,
                f"f{i}.yaml",
                [
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "DeviceClass",
                        "metadata": {"name": f"{uid(d)}-{i}"},
                        "spec": {},
                    }
                ],
            )
            for i in range(200)
        ],
        (validate("-j", "100000", exit=0),),
        note="-j 100000 over 200 files: workers capped, no fork bomb",
    )
)
