"""One budget for everything the allocator does (selectors, compilation, search), deadlines passed in,
no recursion limit, internal failures reported as such, and exact arithmetic on huge quantities."""

from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hostile import inputs_engine as hostile
from webhook.cel.runtime import SelectorEvaluator
from webhook.config.profile import load_profile
from webhook.engine import Budget, Deadline, allocate
from webhook.model.budget import Meter, OutOfBudget
from webhook.state import ClusterState


def load(path: Path, gates: dict[str, bool] | None = None) -> tuple[ClusterState, list[dict[str, Any]]]:
    text = path.read_text()
    if path.suffix == ".json":
        objs = json.loads(text)["items"]
    else:
        objs = [d for d in yaml.safe_load_all(text) if d]
    pending = [
        o for o in objs if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation")
    ]
    rest = [o for o in objs if o["kind"] != "ResourceClaim" or o not in pending]
    return ClusterState.from_objects(rest, load_profile("1.37", gates or {})), pending


# --- Budget, Deadline, Meter --------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -1.0, -math.inf, "2", True])
def test_budget_rejects_seconds_that_are_not_a_finite_non_negative_number(seconds: Any) -> None:
    with pytest.raises(ValueError):
        Budget(seconds=seconds)


@pytest.mark.parametrize("steps", [-1, 1.5, math.inf, True])
def test_budget_rejects_steps_that_are_not_a_whole_non_negative_number(steps: Any) -> None:
    with pytest.raises(ValueError):
        Budget(steps=steps)


def test_deadline_and_meter() -> None:
    assert Deadline.never().remaining() == math.inf and not Deadline.never().expired()
    with pytest.raises(ValueError):
        Deadline.after(math.nan)
    past = Deadline(time.monotonic() - 1)
    assert past.expired() and past.remaining() == 0.0
    meter = Meter(Budget(steps=3, seconds=60), past)
    assert meter.by_deadline and "deadline" in meter.reason()
    with pytest.raises(OutOfBudget):
        meter.check()
    steps = Meter(Budget(steps=2, seconds=60))
    steps.take()
    steps.take()
    with pytest.raises(OutOfBudget):
        steps.take()
    assert "2 steps" in steps.reason()


# --- selectors and compilation count against the budget ----------------------------------------


def test_selector_evaluations_are_charged_and_stop_the_call(tmp_path: Path) -> None:
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=300, iterations=400))
    out = allocate(state, claims, budget=Budget(steps=100, seconds=60))
    assert out.feasible is None, out.reason
    assert out.reason.startswith(
        "undecided: the search budget (100 steps, 60 s) ran out while devices were matched"
    )
    # With enough budget the same call is decided (no device satisfies the claim's selector), and the
    # steps it reports include one per selector evaluation (300 devices x class + request selector).
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=300, iterations=400))
    out = allocate(state, claims, budget=Budget(steps=100_000, seconds=600))
    assert out.feasible is False and out.steps >= 600, (out.steps, out.reason)


def test_a_deadline_that_passes_while_selectors_are_evaluated_makes_the_answer_undecided(
    tmp_path: Path,
) -> None:
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=256, iterations=100))
    out = allocate(state, claims, budget=Budget(), deadline=Deadline(time.monotonic()))
    assert out.feasible is None
    assert "the deadline of the run or request passed" in out.reason


def test_compiling_new_selectors_is_charged(tmp_path: Path) -> None:
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=1, iterations=4))
    assert allocate(state, claims, budget=Budget(steps=60, seconds=60)).feasible is False
    # the same class selector behind 10 KiB of `true && ...`: compiling it costs more than 60 steps
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=1, iterations=4))
    spec = state.classes["gpu"]["spec"]
    spec["selectors"][0]["cel"]["expression"] = "true && " * 1280 + spec["selectors"][0]["cel"]["expression"]
    out = allocate(state, claims, budget=Budget(steps=60, seconds=60))
    assert out.feasible is None and "ran out while devices were matched against the selectors" in out.reason


# --- no recursion limit, no quadratic rescans ---------------------------------------------------


def test_hundreds_of_claims_allocated_together_need_no_deep_recursion(tmp_path: Path) -> None:
    state, claims = load(hostile.write_many_claims(tmp_path, claims=1200))
    out = allocate(state, claims, budget=Budget(steps=1_000_000, seconds=600))
    assert out.feasible is True and out.internal is None, out.reason
    picked = [r.device for c in out.claims for r in c.results]
    assert len(picked) == 1200 and len({(r.pool, r.device) for c in out.claims for r in c.results}) == 1200
    assert out.steps < 10_000  # each claim takes the first free device: no rescans of taken ones


def test_one_device_too_few_is_proven_by_counting(tmp_path: Path) -> None:
    state, claims = load(hostile.write_many_claims(tmp_path, claims=300))
    extra = copy.deepcopy(claims[0])
    extra["metadata"]["name"] = "one-too-many"
    out = allocate(state, [*claims, extra], budget=Budget(steps=50_000, seconds=600))
    # 301 one-device claims on 300 devices: every request alone has devices, together they do not;
    # the search cannot finish within 50,000 steps: undecided, never a wrong answer and never a crash.
    assert out.feasible in (False, None) and out.internal is None


# --- internal failures ---------------------------------------------------------------------------


def test_a_memory_error_in_the_engine_is_an_internal_error_not_undecided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, claims = load(hostile.write_slow_selector(tmp_path, devices=4, iterations=4))

    def exhausted(self: Any, *args: Any) -> bool:
        raise MemoryError()

    monkeypatch.setattr(SelectorEvaluator, "matches", exhausted)
    out = allocate(state, claims)
    assert out.feasible is None and out.internal == "MemoryError"
    assert out.reason.startswith("internal error in the allocator (MemoryError)")


# --- exact numbers -------------------------------------------------------------------------------

CONSUMABLE = {"DRAConsumableCapacity": True}


def test_huge_quantities_are_compared_exactly(tmp_path: Path) -> None:
    state, claims = load(hostile.write_huge_quantities(tmp_path), CONSUMABLE)
    out = allocate(state, claims)
    assert out.feasible is True, out.reason
    assert out.claims[0].results[0].device == "d0"

    state, claims = load(hostile.write_huge_quantities(tmp_path), CONSUMABLE)
    claims[0]["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = "2e9999"
    out = allocate(state, claims)
    assert out.feasible is False and "1 without enough free capacity" in out.reason, out.reason


def test_counter_sets_of_huge_quantities_are_exact(tmp_path: Path) -> None:
    path = hostile.write_huge_quantities(tmp_path)
    doc = json.loads(path.read_text())
    dev = doc["items"][2]["spec"]["devices"][0]
    dev["consumesCounters"][0]["counters"]["mem"]["value"] = "2e9999"  # more than the set holds (1e9999)
    path.write_text(json.dumps(doc))
    state, claims = load(path, CONSUMABLE)
    out = allocate(state, claims)
    assert out.feasible is False and "free counters in set" in out.reason, out.reason


def test_values_too_far_apart_to_combine_make_the_answer_undecided(tmp_path: Path) -> None:
    path = hostile.write_huge_quantities(tmp_path)
    doc = json.loads(path.read_text())
    doc["items"][3]["spec"]["sharedCounters"][0]["counters"]["mem"]["value"] = "1e500000"
    doc["items"][2]["spec"]["devices"][0]["consumesCounters"][0]["counters"]["mem"]["value"] = "1"
    path.write_text(json.dumps(doc))
    state, claims = load(path, CONSUMABLE)
    # an allocated claim holds the device: its consumption (1) is subtracted from 1e500000
    allocated = copy.deepcopy(claims[0])
    allocated["metadata"]["name"] = "holder"
    allocated["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "r", "driver": hostile.DRIVER, "pool": "huge", "device": "d0"}]
            }
        }
    }
    state.apply(allocated)
    out = allocate(state, claims)
    assert out.feasible is None and out.internal is None
    assert out.reason.startswith("undecided: quantities of magnitudes 10^")
    assert out.undecided_by is not None and out.reason == f"undecided: {out.undecided_by}"
    assert "digits apart: draguard cannot add or subtract them exactly" in out.reason
