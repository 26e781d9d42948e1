"""Differential check of CEL evaluation against upstream (development aid, not CI): for random selectors
(tests/cel/exprgen.py) that compile as stored expressions, upstream's allocator (`draoracle allocate`)
allocates a claim with `allocationMode: All` and the selector on one slice of varied devices; the devices
it returns must be exactly the devices our SelectorEvaluator matches, and a runtime error must be an
error here too (same first device, same message).

    python bench/cel_eval_diff.py --count 1000 --seed 1 [--oracle PATH] [--show 20]
    python bench/cel_eval_diff.py --corpus      # the expressions of tests/cel/test_eval.py instead

Prints the agreement figures and every disagreement (expression, upstream, ours).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cel.exprgen import ExprGen  # noqa: E402
from webhook.cel.compiler import CompileError, compile_selector  # noqa: E402
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator  # noqa: E402

ORACLE = "/work/shared/tools/upstream-allocator/draoracle"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}}


def devices() -> list[dict[str, Any]]:
    """Valid API devices that differ in every way the generator's selectors look at."""
    return [
        {
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
        },
        {
            "name": "d1",
            "attributes": {"model": {"string": "gpu"}, "ids": {"ints": []}, "index": {"bool": False}},
        },
        {"name": "d2"},
        {
            "name": "d3",
            "attributes": {
                "memory": {"string": "1Gi"},
                "uuid": {"int": 9223372036854775807},
                "driverVersion": {"version": "10.0.0"},
                "family": {"string": "10.0.0.0/8"},
            },
            "capacity": {"memory": {"value": "0"}, "numa": {"value": "2"}},
        },
        {
            "name": "d4",
            "attributes": {"model": {"string": "1.1.1.1"}, "numa": {"int": 3}, "ids": {"ints": [42]}},
            "capacity": {"memory": {"value": "1Ti"}},
        },
    ]


def scenario(expr: str, driver: str) -> list[dict[str, Any]]:
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": driver,
            "nodeName": "node-1",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": devices(),
        },
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r",
                        "exactly": {
                            "deviceClassName": "c",
                            "allocationMode": "All",
                            "selectors": [{"cel": {"expression": expr}}],
                        },
                    }
                ]
            }
        },
    }
    return [NODE, CLASS, slice_, claim]


def upstream(oracle: str, expr: str, driver: str) -> tuple[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump_all(scenario(expr, driver), f)
        path = f.name
    out = subprocess.run(
        [oracle, "allocate", "--features=all", path], capture_output=True, text=True, timeout=120
    )
    Path(path).unlink()
    try:
        got = json.loads(out.stdout)
    except json.JSONDecodeError:
        return "crash", (out.stdout + out.stderr)[:300]
    if got.get("feasible"):
        return "devices", sorted(d["device"] for c in got["claims"] for d in c["devices"])
    if got.get("errorKind") == "unschedulable":
        return "devices", []
    msg = got.get("error", "")
    marker = "CEL runtime error: "
    if marker in msg:
        device = msg.split("on device ", 1)[1].split(":", 1)[0].rsplit("/", 1)[-1]
        return "error", (device, msg.split(marker, 1)[1])
    return "other", msg


def ours(expr: str, driver: str) -> tuple[str, Any]:
    ev = SelectorEvaluator(list_attributes=True, consumable_capacity=True)
    matched = []
    for d in devices():
        try:
            if ev.matches(expr, d["name"], driver, d):
                matched.append(d["name"])
        except CelRuntimeError as e:
            if e.phase == "compile":
                return "other", e.detail
            return "error", (d["name"], e.detail)
    return "devices", sorted(matched)


def _literal(v: Any) -> str | None:
    """A CEL literal for a plain value (None when there is none)."""
    from webhook.cel.common.values import NONE, UInt

    if v is True or v is False:
        return "true" if v else "false"
    if type(v) is UInt:
        return f"{int(v)}u"
    if type(v) is int:
        return str(v) if v > -(2**63) else "-9223372036854775807 - 1"
    if type(v) is float:
        return repr(v) if v == v and abs(v) != float("inf") else None
    if type(v) is str:
        return json.dumps(v)
    if v is None:
        return "null"
    if v is NONE:
        return "optional.none()"
    if type(v) is list:
        parts = [_literal(x) for x in v]
        return None if None in parts else "[" + ", ".join(parts) + "]"  # type: ignore[arg-type]
    if type(v) is dict:
        items = [(_literal(k), _literal(x)) for k, x in v.items()]
        if any(a is None or b is None for a, b in items):
            return None
        return "{" + ", ".join(f"{a}: {b}" for a, b in items) + "}"
    return None


def _selector(expr: str, value: Any) -> str:
    """A bool selector from an evaluator-test case: the expression compared with our expected value."""
    if value is True or value is False:
        return expr
    lit = _literal(value)
    return f"({expr}) == {lit}" if lit is not None else f"type({expr}) != null_type"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--oracle", default=ORACLE)
    parser.add_argument("--show", type=int, default=30)
    parser.add_argument("--corpus", action="store_true", help="the evaluator tests' expressions")
    args = parser.parse_args()
    if args.corpus:
        from tests.cel.test_eval import ERRORS, VALUES

        corpus = iter([_selector(e, v) for e, v in VALUES] + [e for e, _ in ERRORS])
        args.count = len(VALUES) + len(ERRORS)
    gen = ExprGen(args.seed)
    tried = verdicts = messages = skipped = 0
    diffs = []
    while tried + skipped < args.count if args.corpus else tried < args.count:
        expr = next(corpus) if args.corpus else gen.expression()
        if isinstance(
            compile_selector(expr, list_attributes=True, consumable_capacity=True, check_cost=False),
            CompileError,
        ):
            skipped += 1
            continue
        tried += 1
        driver = "gpu.example.com" if tried % 2 else "x"
        up, mine = upstream(args.oracle, expr, driver), ours(expr, driver)
        same_verdict = up[0] == mine[0] and (up[0] != "devices" or up[1] == mine[1])
        same_verdict = same_verdict and (up[0] != "error" or up[1][0] == mine[1][0])
        verdicts += same_verdict
        messages += up == mine
        if up != mine:
            diffs.append(
                {"expr": expr, "driver": driver, "upstream": up, "ours": mine, "verdict": same_verdict}
            )
    print(f"seed {args.seed}: {tried} compiled selectors ({skipped} generated ones did not compile)")
    print(f"  same outcome (matched devices, or an error on the same device): {verdicts}/{tried}")
    print(f"  same outcome and same error text:                               {messages}/{tried}")
    for d in diffs[: args.show]:
        print(json.dumps(d))


if __name__ == "__main__":
    main()
