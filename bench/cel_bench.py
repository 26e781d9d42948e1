"""CEL selector benchmark: draguard's evaluator (webhook.cel.interpreter.program) against cel-expr-python (cel-cpp, the
former engine) on the same DRA selectors over 8,000 varied devices, and SelectorEvaluator end to end.

    python bench/cel_bench.py                 # 8,000 devices
    python bench/cel_bench.py --devices 64000

Per selector, microseconds per device:
  engine cold  first evaluation of every device: building the engine's input from the API device + one
               evaluation (no result sharing);
  engine warm  evaluation only, inputs already built;
  evaluator    SelectorEvaluator.matches over all devices: cold (new evaluator; compile, inputs, result
               sharing by projection) and warm (every answer cached), with the evaluations it ran.
cel-expr-python is optional (`pip install cel-expr-python==0.1.3`): it gets plain maps and a minimal
Python quantity/semver library (values as one-entry maps), as draguard used it before.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from webhook.cel.compiler import compile_selector
from webhook.cel.interpreter.activation import DeviceInput
from webhook.cel.interpreter.program import plan
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator
from webhook.model.quantity import parse_quantity
from webhook.model.semver import parse_semver

DRIVER = "gpu.example.com"
A = "device.attributes['gpu.example.com']"
C = "device.capacity['gpu.example.com']"
SELECTORS = {
    "model+numa": f"device.driver == 'gpu.example.com' && {A}.model == 'A100' && {A}.numa == 1",
    "quantity": f"{A}.model == 'A100' && {C}.memory.compareTo(quantity('40Gi')) >= 0",
    "semver": f"{A}.driverVersion.isGreaterThan(semver('1.2.0'))",
    "bind+strings": f"cel.bind(g, {A}, g.model.lowerAscii().startsWith('a1') && g.healthy)",
    "per-device uuid": f"{A}.uuid.startsWith('GPU-1')",
    "list attr exists": f"{A}.ids.exists(i, i == 3)",
}


def make_device(i: int) -> dict[str, Any]:
    """One GPU of a 1,000 nodes x 8 GPUs cluster: 7 attributes, 2 capacities."""
    return {
        "name": f"gpu-{i % 8}",
        "attributes": {
            "model": {"string": "A100" if i % 4 else "H100"},
            "uuid": {"string": f"GPU-{i:08d}"},
            "numa": {"int": (i % 8) // 4},
            "pcieRoot": {"string": f"pci-{(i % 8) // 2}"},
            "driverVersion": {"version": "1.10.0" if i % 3 else "1.1.0"},
            "healthy": {"bool": i % 5 != 0},
            "ids": {"ints": [i % 7, i % 5, 3]},
        },
        "capacity": {"memory": {"value": "80Gi" if i % 2 else "40Gi"}, "cores": {"value": 108}},
    }


def _us(seconds: float, n: int) -> float:
    return seconds / n * 1e6


def _best(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


# ---- engines ------------------------------------------------------------------------------------------


def ours(expr: str, devices: list[dict[str, Any]]) -> tuple[float, float]:
    compiled = compile_selector(expr, list_attributes=True, consumable_capacity=True, check_cost=False)
    assert not hasattr(compiled, "kind"), compiled
    program = plan(compiled.ast.expr, device="device", qualified=compiled.qualified)  # type: ignore[union-attr]

    def cold() -> None:
        for d in devices:
            program.evaluate(device=DeviceInput(d, DRIVER))

    inputs = [DeviceInput(d, DRIVER) for d in devices]

    def warm() -> None:
        for dev in inputs:
            program.evaluate(device=dev)

    return _best(cold), _best(warm)


def _cel_expr_python() -> Any:
    """A cel-expr-python environment with the DRA `device` variable and a minimal Kubernetes library."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    def q(s: str) -> dict[str, str]:
        return {"\x01q": str(parse_quantity(s).value)}

    def v(s: str) -> dict[str, str]:
        return {"\x01v": s}

    def cmp(a: dict[str, str], b: dict[str, str]) -> int:
        if "\x01q" in a:
            x, y = parse_quantity(a["\x01q"]), parse_quantity(b["\x01q"])
        else:
            x, y = parse_semver(a["\x01v"]), parse_semver(b["\x01v"])  # type: ignore[assignment]
        return (x > y) - (x < y)  # type: ignore[operator]

    T = cel.Type  # noqa: N806
    decls = [
        cel.FunctionDecl("quantity", [cel.Overload("q", T.DYN, [T.STRING], False, q)]),
        cel.FunctionDecl("semver", [cel.Overload("v", T.DYN, [T.STRING], False, v)]),
        cel.FunctionDecl("compareTo", [cel.Overload("c", T.INT, [T.DYN, T.DYN], True, cmp)]),
        cel.FunctionDecl(
            "isGreaterThan", [cel.Overload("g", T.BOOL, [T.DYN, T.DYN], True, lambda a, b: cmp(a, b) > 0)]
        ),
    ]
    return cel.NewEnv(
        variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
        extensions=[
            cel.CelExtension("k8s_bench", decls),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(),
            ext_bindings.ExtBindings(),
        ],
    ), cel


def _cel_input(d: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for name, a in d["attributes"].items():
        ((key, val),) = a.items()
        attrs[name] = {"\x01v": val} if key == "version" else val
    caps = {name: {"\x01q": str(parse_quantity(c["value"]).value)} for name, c in d["capacity"].items()}
    return {"driver": DRIVER, "attributes": {DRIVER: attrs}, "capacity": {DRIVER: caps}}


def cel_cpp(env: Any, cel: Any, expr: str, devices: list[dict[str, Any]]) -> tuple[float, float]:
    program = env.compile(expr)

    def run(act: Any) -> None:
        value = program.eval(act)
        if value.type() == cel.Type.ERROR:
            raise ValueError(value.value())

    def cold() -> None:
        for d in devices:
            run(env.Activation({"device": _cel_input(d)}))

    acts = [env.Activation({"device": _cel_input(d)}) for d in devices]

    def warm() -> None:
        for act in acts:
            run(act)

    return _best(cold), _best(warm)


def bench_engines(devices: list[dict[str, Any]]) -> None:
    n = len(devices)
    try:
        env, cel = _cel_expr_python()
    except ImportError:
        env = cel = None
    print(f"Engines, {n} devices (us per device; cold = input from the API device + 1 evaluation)")
    print(f"{'selector':<18} {'ours cold':>10} {'ours warm':>10} {'cel-cpp cold':>13} {'cel-cpp warm':>13}")
    for name, expr in SELECTORS.items():
        oc, ow = ours(expr, devices)
        row = f"{name:<18} {_us(oc, n):>10.2f} {_us(ow, n):>10.2f}"
        if env is not None:
            try:
                cc, cw = cel_cpp(env, cel, expr, devices)
                row += f" {_us(cc, n):>13.2f} {_us(cw, n):>13.2f}"
            except Exception as e:  # a selector the minimal library lacks
                row += f"  cel-cpp: {type(e).__name__}"
        else:
            row += "  cel-expr-python not installed"
        print(row)


def bench_evaluator(devices: list[dict[str, Any]]) -> None:
    n = len(devices)
    print(f"\nSelectorEvaluator.matches, {n} devices (us per device; cold = new evaluator)")
    print(f"{'selector':<18} {'cold':>8} {'warm':>8} {'evaluations':>12} {'cost/eval':>10}")
    for name, expr in SELECTORS.items():
        colds, warms = [], []
        evals = cost = 0
        for _ in range(3):
            gc.collect()
            ev = SelectorEvaluator(list_attributes=True, consumable_capacity=True)
            t = time.perf_counter()
            for i, d in enumerate(devices):
                try:
                    ev.matches(expr, i, DRIVER, d)
                except CelRuntimeError:
                    pass
            colds.append(time.perf_counter() - t)
            t = time.perf_counter()
            for i, d in enumerate(devices):
                try:
                    ev.matches(expr, i, DRIVER, d)
                except CelRuntimeError:
                    pass
            warms.append(time.perf_counter() - t)
            evals, cost = ev.evaluations, ev.cost_used
        print(
            f"{name:<18} {_us(min(colds), n):>8.2f} {_us(min(warms), n):>8.3f} {evals:>12} "
            f"{cost / max(evals, 1):>10.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8000)
    args = parser.parse_args()
    devices = [make_device(i) for i in range(args.devices)]
    bench_engines(devices)
    bench_evaluator(devices)


if __name__ == "__main__":
    main()
