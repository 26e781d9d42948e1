"""Selector compilations in one `simulate` run: validation compiles with the API server's environment
(the feature gates), the allocator with the scheduler's stored-expression environment (every gate on,
no cost limit). With every gate on they are one compilation, shared through the byte-bounded compile
cache; otherwise the environments differ (attribute values are typed differently) and each selector is
compiled once per environment. The cache's size estimate covers what an entry retains, so its byte bound
holds for 10 KiB selectors too."""

from __future__ import annotations

import gc
import tracemalloc
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.inputs_cel import _or_chain
from tests.hostile.k8s import claim, pod, request, small_cluster, write
from webhook.cel import compiler
from webhook.simulate import SimulateOptions, simulate


def _cluster(tmp_path: Path, n: int) -> tuple[str, list[str]]:
    token = uuid.uuid4().hex  # selectors no earlier test compiled
    objs, cls = small_cluster(tmp_path, devices=n)
    exprs = [f"device.driver == 'gpu.example.com' && '{token}' != '{i}'" for i in range(n)]
    objs.append(claim("c", [request(f"r{i}", cls, [e]) for i, e in enumerate(exprs)]))
    objs.append(pod("p", ["c"]))
    return write(tmp_path, "cluster.yaml", objs), exprs


def _count_compilations(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    real = compiler._compile

    def counted(expression: str, *args: Any) -> Any:
        calls[expression] += 1
        return real(expression, *args)

    monkeypatch.setattr(compiler, "_compile", counted)
    return calls


def test_with_every_gate_on_each_selector_is_compiled_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, exprs = _cluster(tmp_path, 16)
    calls = _count_compilations(monkeypatch)
    gates = (("DRAConsumableCapacity", True), ("DRAListTypeAttributes", True))
    report = simulate([path], SimulateOptions(gates=gates))
    assert [p.feasible for p in report.pods] == [True]
    assert [calls[e] for e in exprs] == [1] * len(exprs)


def test_with_the_default_gates_each_environment_compiles_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, exprs = _cluster(tmp_path, 16)
    calls = _count_compilations(monkeypatch)
    report = simulate([path])
    assert [p.feasible for p in report.pods] == [True]
    assert [calls[e] for e in exprs] == [2] * len(exprs)  # the API server's and the scheduler's


def test_the_compile_cache_estimate_covers_what_a_10_kib_selector_retains() -> None:
    n = 12
    exprs = [_or_chain(10_000).replace("d00000", f"x{uuid.uuid4().hex[:5]}", 1) for _ in range(n)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        kept = [
            compiler.compile_selector(e, list_attributes=False, consumable_capacity=True, check_cost=False)
            for e in exprs
        ]
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # only memory allocated by the CEL package's code: threads other tests of this worker process left
    # running (servers, watches) allocate meanwhile and must not count
    only_cel = [tracemalloc.Filter(True, "*/webhook/cel/*")]
    diff = after.filter_traces(only_cel).compare_to(before.filter_traces(only_cel), "filename")
    retained = sum(d.size_diff for d in diff) / n
    assert all(isinstance(c, compiler.Compiled) for c in kept)
    estimate = compiler._retained_bytes(kept[0])
    assert retained > 100_000  # a 10 KiB selector's AST and side tables: hundreds of KB
    assert estimate >= retained, (estimate, retained)  # the cache's byte bound is a real bound
    assert estimate <= compiler.CACHE_BYTES // 4  # such an entry is cached at all
