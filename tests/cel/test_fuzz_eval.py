"""CEL fuzzing through the whole selector path: thousands of random well- and ill-typed expressions
(tests/cel/exprgen.py, seeded) are compiled as stored expressions and evaluated on varied devices.
Every one is a compile finding, a bool, or a CelRuntimeError: never another exception, never unbounded
(every evaluation stops at the runtime cost limit)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cel.exprgen import ExprGen
from webhook.cel.compiler import CompileError, compile_selector
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator

DRIVERS = ["gpu.example.com", "dra.example.com"]


def _devices() -> list[dict[str, Any]]:
    full = {
        "name": "d0",
        "attributes": {
            "model": {"string": "A100"},
            "memory": {"int": 40},
            "numa": {"int": -1},
            "uuid": {"string": "GPU-0a1b"},
            "driverVersion": {"version": "1.2.3-rc.1+b"},
            "ids": {"ints": [1, 2, 3]},
            "index": {"bool": True},
            "family": {"strings": ["a", "b"]},
            "numa.k8s.io/numa": {"int": 0},
            "y.example.com/model": {"versions": ["1.0.0", "2.0.0"]},
        },
        "capacity": {"memory": {"value": "40Gi"}, "numa.k8s.io/memory": {"value": "1500m"}},
        "allowMultipleAllocations": True,
    }
    sparse = {"name": "d1", "attributes": {"model": {"string": ""}, "ids": {"ints": []}}}
    empty: dict[str, Any] = {"name": "d2"}
    odd = {
        "name": "d3",
        "attributes": {"memory": {"string": "1Gi"}, "uuid": {"int": 9223372036854775807}},
        "capacity": {"memory": {"value": "0"}},
    }
    return [full, sparse, empty, odd]


def _run(seed: int, count: int) -> dict[str, int]:
    gen = ExprGen(seed)
    devices = _devices()
    outcomes = {"compile": 0, "true": 0, "false": 0, "runtime": 0}
    evaluators = [
        SelectorEvaluator(list_attributes=lists, consumable_capacity=True) for lists in (False, True)
    ]
    for n in range(count):
        expr = gen.expression()
        compiled = compile_selector(expr, list_attributes=True, consumable_capacity=True, check_cost=False)
        if isinstance(compiled, CompileError):
            outcomes["compile"] += 1
            continue
        ev = evaluators[n % 2]
        for i, device in enumerate(devices):
            try:
                got = ev.matches(expr, (n, i), DRIVERS[i % 2], device)
            except CelRuntimeError as e:
                assert e.phase == "runtime", (expr, e)
                assert not e.detail.startswith(("internal evaluation error", "evaluation ran out")), (expr, e)
                outcomes["runtime"] += 1
                continue
            assert got is True or got is False, (expr, got)
            outcomes["true" if got else "false"] += 1
    return outcomes


@pytest.mark.parametrize("seed", [1, 2])
def test_random_expressions_compile_or_evaluate(seed: int) -> None:
    outcomes = _run(seed, 2500)
    # the generator exercises every outcome: findings, both results and runtime errors
    assert all(v > 50 for v in outcomes.values()), outcomes
