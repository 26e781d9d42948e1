"""Compile-time and memory figures of the pure-Python CEL front end (parse + check + validators + cost), uncached,
and of planning (the closures the evaluator builds on first use).

    python bench/cel_compile_bench.py [--runs 200] [--large 40]
    CEL_TREE=/path/to/other/checkout python bench/cel_compile_bench.py   # the same figures for another tree

Prints:
- realistic selectors: p50 per selector and p50/p99 over all of them, compile and plan;
- the hostile large selectors of finding 7 (tests/hostile: distinct `||` chains of 2 KiB and 10 KB, the
  ~300 B selectors of `engine.many-selectors`): ms per selector and per KiB, compile and plan;
- hostile 10 KiB shapes (deep nesting, long chains, comprehensions, string building, garbage);
- where compile time goes (lexer, parser + macros, checker, validators, planning checks, cost);
- the bytes a compiled selector retains (tracemalloc, after gc) alone and with its planned program, and what
  the compile cache charges for it.
Times are CPU time of this process (`time.process_time`; `--wall` for wall clock): on a machine shared with
other work they vary less than wall clock, but are still indicative only.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("CEL_TREE") or str(Path(__file__).resolve().parent.parent))

from webhook.cel import compiler  # noqa: E402
from webhook.cel.compiler import _compile, _retained_bytes  # noqa: E402

try:
    from webhook.cel.interpreter.program import plan_compiled  # noqa: E402
except ImportError:  # a tree from before the CEL subpackages (CEL_TREE)
    from webhook.cel.program import plan_compiled  # type: ignore[no-redef]  # noqa: E402

REALISTIC = [
    'device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "A100" && device.attributes["gpu.example.com"].numa == 1',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3"))',
    'cel.bind(g, device.attributes["gpu.example.com"], g.model in ["A100", "H100"] && g.numa < 2)',
    'device.attributes["dra.example.com"].?family.orValue("") == "ampere"',
    "device.attributes.exists(d, d.endsWith('.example.com'))",
    'has(device.attributes["gpu.example.com"].uuid) && device.attributes["gpu.example.com"].uuid.startsWith("GPU-")',
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('16Gi')) >= 0",
    "device.attributes['net.example.com'].ip.matches('^10\\\\.')",
]
N = 10 * 1024
HOSTILE = {
    "nested parens": "(" * 249 + "true" + ")" * 249,
    "250-term sum": " + ".join(["1"] * 250) + " > 0",
    "long && chain": " && ".join(['device.driver == "a"'] * 450),
    "nested lists": "[" * 249 + "1" + "]" * 249 + " == []",
    "nested comprehensions": "device.attributes.exists(d, " * 40 + "true" + ")" * 40,
    "string building": "cel.bind(a, device.driver + device.driver, " * 60 + "a" + ")" * 60 + ".size() > 0",
    "deep member chain": "device" + ".a" * 249 + " == 1",
    "garbage": "((((" + "+-*/" * 2500,
    "many lists": " || ".join(["[1, 2, 3, 'a'] == []"] * 400),
    "ternary chain": "true ? true : " * 249 + "true",
}
DRIVER = "gpu.example.com"


def or_chain(target: int) -> str:
    """tests/hostile's `_or_chain`: `device.driver == 'd00000.example.com' || ...` padded to `target` bytes."""
    parts, size, i = [], 0, 0
    while True:
        p = f"device.driver == 'd{i:05d}.example.com'"
        if size + len(p) + 4 > target:
            break
        parts.append(p)
        size += len(p) + 4
        i += 1
    e = " || ".join(parts)
    return e + " " * (target - len(e))


def large_classes(n: int) -> dict[str, list[str]]:
    """The selectors of finding 7's inputs, `n` distinct ones each (as the corpus makes them distinct)."""
    pad = "x" * 220
    return {
        "or-chain 2 KiB (cel.selectors-32x32-distinct-2k)": [
            or_chain(2048).replace("d0", f"r0s{i}x", 1).rstrip() for i in range(n)
        ],
        "or-chain 10 KB (memory.selectors-280-distinct-10k)": [
            or_chain(10_000).replace("d0", f"c{i}x", 1).rstrip() for i in range(n)
        ],
        "300 B attribute (engine.many-selectors)": [
            f'device.attributes["{DRIVER}"].model == "{pad}0-0-{i}" || true' for i in range(n)
        ],
    }


def _compile1(expr: str) -> Any:
    return _compile(expr, False, True, True)


CLOCK = time.process_time


def _time(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    clock = CLOCK
    for _ in range(runs):
        t0 = clock()
        fn()
        out.append((clock() - t0) * 1e3)
    return out


def _fmt(ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):8.3f} ms  p99 {p99:8.3f} ms  max {ms[-1]:8.3f} ms"


def _plan_time(expr: str, runs: int) -> list[float]:
    c = _compile1(expr)
    if not isinstance(c, compiler.Compiled):
        return []
    return _time(lambda: plan_compiled(c), runs)


def _retained(expr: str) -> tuple[int, int, int]:
    """(bytes a compiled selector retains, with its planned program, what the compile cache charges)."""
    _compile1(expr)  # warm: environment, interned names, regex caches
    plan_compiled(_compile1(expr))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    c = _compile1(expr)
    gc.collect()
    alone = tracemalloc.get_traced_memory()[0] - base
    p = plan_compiled(c) if isinstance(c, compiler.Compiled) else None
    gc.collect()
    both = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del p
    return alone, both, _retained_bytes(c)


_PHASES = [
    ("lexer", "webhook.cel.parser.parser", "lex"),
    ("lexer", "webhook.cel.parser", "tokenize"),  # trees from before the CEL subpackages (CEL_TREE)
    ("lexer", "webhook.cel.parser", "lex"),
    ("parser+macros", "webhook.cel.compiler", "parse"),
    ("checker", "webhook.cel.compiler", "check"),
    ("validators", "webhook.cel.compiler", "validate"),
    ("planning checks", "webhook.cel.compiler", "instantiation_error"),
    ("cost", "webhook.cel.compiler", "estimate_cost"),
    ("domains", "webhook.cel.compiler", "_domains"),
]


def phases(exprs: list[str], rounds: int) -> str:
    """Wall time per phase, by wrapping the functions the compiler calls (those present in this tree)."""
    spent: dict[str, float] = {}
    saved = []
    for label, mod_name, fn_name in _PHASES:
        mod = sys.modules.get(mod_name)
        fn = getattr(mod, fn_name, None) if mod is not None else None
        if fn is None:
            continue

        def wrapped(*a: Any, _fn: Any = fn, _label: str = label, **k: Any) -> Any:
            t0 = CLOCK()
            try:
                return _fn(*a, **k)
            finally:
                spent[_label] = spent.get(_label, 0.0) + CLOCK() - t0

        saved.append((mod, fn_name, fn))
        setattr(mod, fn_name, wrapped)
    try:
        t0 = CLOCK()
        for _ in range(rounds):
            for e in exprs:
                _compile1(e)
        total = CLOCK() - t0
    finally:
        for mod, fn_name, fn in saved:
            setattr(mod, fn_name, fn)
    n = rounds * len(exprs)
    if "parser+macros" in spent and "lexer" in spent:
        spent["parser+macros"] -= spent["lexer"]
    parts = [f"{k} {v / n * 1e3:.3f}" for k, v in spent.items()]
    return f"total {total / n * 1e3:.3f} ms = " + ", ".join(parts) + " (ms per selector)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--large", type=int, default=40, help="distinct selectors per large class")
    ap.add_argument("--wall", action="store_true", help="wall clock instead of CPU time")
    a = ap.parse_args()
    global CLOCK
    if a.wall:
        CLOCK = time.perf_counter
    print(f"tree: {compiler.__file__} ({'wall clock' if a.wall else 'CPU time'})")
    _compile1("true")  # the environment is built once per process

    all_real: list[float] = []
    all_plan: list[float] = []
    per: list[str] = []
    for e in REALISTIC:
        ms = _time(lambda e=e: _compile1(e), a.runs)
        all_real += ms
        all_plan += _plan_time(e, max(10, a.runs // 4))
        per.append(f"{statistics.median(ms) * 1e3:.0f}")
    print(f"realistic selectors ({len(REALISTIC)} x {a.runs}): compile {_fmt(all_real)}")
    print(f"  p50 per selector (us): {' '.join(per)}")
    print(f"  plan (first use):      {_fmt(all_plan)}")
    print(f"  phases: {phases(REALISTIC, max(5, a.runs // 10))}")

    for name, exprs in large_classes(a.large).items():
        size = len(exprs[0].encode())
        ms = [_time(lambda e=e: _compile1(e), 1)[0] for e in exprs]
        pl = [x for e in exprs[: max(3, len(exprs) // 4)] for x in _plan_time(e, 1)]
        kib = size / 1024
        print(
            f"large {name} ({size} B x {len(exprs)}): compile p50 {statistics.median(ms):7.2f} ms "
            f"({statistics.median(ms) / kib:5.2f} ms/KiB), max {max(ms):7.2f} ms; "
            f"plan p50 {statistics.median(pl):6.2f} ms"
        )
        print(f"  phases: {phases(exprs[:10], 1)}")

    for name, e in HOSTILE.items():
        e = e[:N]
        r = _compile1(e)
        verdict = type(r).__name__ if not hasattr(r, "kind") else f"{r.kind}"
        print(
            f"hostile {name:22s} ({len(e.encode()):5d} B, {verdict:9s}): "
            f"{_fmt(_time(lambda e=e: _compile1(e), max(3, a.runs // 20)))}"
        )

    attr10k = " && ".join(f'device.attributes["gpu.example.com"].a{i} == "v{i}"' for i in range(190))[:N]
    attr10k = attr10k[: attr10k.rindex(" &&")]
    retained = {
        "realistic (model && numa)": REALISTIC[1],
        "realistic (cel.bind)": REALISTIC[4],
        "or-chain 10 KB": large_classes(1)["or-chain 10 KB (memory.selectors-280-distinct-10k)"][0],
        "attribute && chain 10 KiB": attr10k,
    }
    for name, e in retained.items():
        alone, both, charged = _retained(e)
        print(
            f"retained {name:27s} ({len(e.encode()):5d} B): compiled {alone / 1024:7.1f} KiB, "
            f"+ program {both / 1024:7.1f} KiB; cache charges {charged / 1024:7.1f} KiB"
        )


if __name__ == "__main__":
    main()
