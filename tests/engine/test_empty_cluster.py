"""`allocate(..., ignore_allocations=True, ignore_taints=True)`: the same cluster with nothing allocated and
device taints ignored, read through a view that never changes the state (admission-time *busy* vs
*unsatisfiable*)."""

from __future__ import annotations

from typing import Any

from engine_fixtures import claim, devices, gpu_class, node_slice, req, state_of

from tests.builders import allocated, resource_slice, result
from webhook.engine import Budget, allocate

GPUS = [{"name": "g0"}, {"name": "g1"}]
BUDGET = Budget(steps=100_000, seconds=20.0)


def _allocated(name: str, device: str, node: str = "n1") -> dict[str, Any]:
    return claim(req(), name=name, status=allocated(result("gpu", node, device)))


def _claim(count: int, selectors: list[str] | None = None) -> dict[str, Any]:
    return claim(req(count=count, selectors=selectors or []), name="new")


def test_allocated_devices_are_free_in_the_empty_cluster_and_the_state_is_untouched() -> None:
    state = state_of([gpu_class(), node_slice("n1", GPUS), _allocated("a", "g0"), _allocated("b", "g1")])
    version = state.version
    now = allocate(state, [_claim(1)], budget=BUDGET)
    assert now.feasible is False
    empty = allocate(state, [_claim(1)], budget=BUDGET, ignore_allocations=True)
    assert empty.feasible is True and devices(empty) == ["g0"]
    # the real state still has both devices in use, its caches were not overwritten by the view
    assert state.version == version
    assert set(state.allocated.exclusive) == {
        ("gpu.example.com", "n1", "g0"),
        ("gpu.example.com", "n1", "g1"),
    }
    again = allocate(state, [_claim(1)], budget=BUDGET)
    assert again.feasible is False and again.reason == now.reason


def test_too_many_devices_stay_infeasible_in_the_empty_cluster() -> None:
    state = state_of([gpu_class(), node_slice("n1", GPUS), _allocated("a", "g0")])
    out = allocate(state, [_claim(3)], budget=BUDGET, ignore_allocations=True, ignore_taints=True)
    assert out.feasible is False
    assert "request gpu" in out.reason


def test_taints_are_ignored_only_when_asked() -> None:
    tainted = [
        {"name": "g0", "taints": [{"key": "broken", "effect": "NoSchedule"}]},
        {"name": "g1", "taints": [{"key": "drain", "effect": "NoExecute"}]},
    ]
    state = state_of([gpu_class(), node_slice("n1", tainted)])
    assert allocate(state, [_claim(1)], budget=BUDGET).feasible is False
    out = allocate(state, [_claim(2)], budget=BUDGET, ignore_taints=True)
    assert out.feasible is True and devices(out) == ["g0", "g1"]
    # the memoised per-version counts of the taint-aware run are not reused by the other mode and back
    assert allocate(state, [_claim(1)], budget=BUDGET).feasible is False
    assert allocate(state, [_claim(1)], budget=BUDGET, ignore_taints=True).feasible is True


def test_partitioned_counters_are_available_again_in_the_empty_cluster() -> None:
    def half(name: str, whole: bool, memory: str) -> dict[str, Any]:
        counters = {"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}
        return {"name": name, "attributes": {"whole": {"bool": whole}}, "consumesCounters": [counters]}

    slice_ = resource_slice(
        "n1-slice",
        [half("half-a", False, "40Gi"), half("half-b", False, "40Gi"), half("whole", True, "80Gi")],
        pool="n1",
        node="n1",
        sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
    )
    whole = 'device.attributes["gpu.example.com"].whole == true'
    state = state_of([gpu_class(), slice_, _allocated("a", "half-a")])
    whole_claim = _claim(1, [whole])
    assert allocate(state, [whole_claim], budget=BUDGET).feasible is False
    out = allocate(state, [whole_claim], budget=BUDGET, ignore_allocations=True)
    assert out.feasible is True and devices(out) == ["whole"]
    pools = state.pools_for(state.candidate_nodes()[0])
    assert (
        pools[0].over_committed is False
        and pools[0].available["gpu-0"]["memory"] < pools[0].counter_sets["gpu-0"]["memory"]
    )


def test_concurrent_readers_of_both_modes_get_the_single_threaded_answers() -> None:
    """Threads alternating normal and empty-cluster runs on one published version: every answer equals
    the one computed alone (the view's cached copies and counts never leak into the real ones)."""
    from concurrent.futures import ThreadPoolExecutor

    state = state_of(
        [
            gpu_class(),
            node_slice("n1", GPUS),
            node_slice("n2", GPUS),
            _allocated("a", "g0"),
            _allocated("b", "g1"),
        ]
    )
    view = state.view
    calls = [(count, empty) for count in (1, 2, 3) for empty in (False, True)] * 8
    alone = {
        (count, empty): allocate(view, [_claim(count)], budget=BUDGET, ignore_allocations=empty).feasible
        for count, empty in set(calls)
    }
    assert alone[(3, False)] is False and alone[(3, True)] is False and alone[(2, True)] is True

    def run(call: tuple[int, bool]) -> bool | None:
        count, empty = call
        return allocate(view, [_claim(count)], budget=BUDGET, ignore_allocations=empty).feasible

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(run, calls))
    assert got == [alone[c] for c in calls]
