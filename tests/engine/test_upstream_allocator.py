"""Conformance with upstream's allocator tests (kubernetes/dynamic-resource-allocation `structured/`).

`upstream_allocator_cases.yaml` holds upstream's TestAllocator table (allocator_testing.go and
lexicographical_testing.go) translated into our manifests; each case runs through `allocate()` on the
case's node with the feature gates the case enables (every other allocator gate off, as upstream's zero
`Features{}`; DRAAdminAccess and DRAPrioritizedList are GA and locked on in v1.37). Upstream compares
results as sets (gomega ConsistOf), so do we; node selectors compare without order too.

Modelled differently (documented per case in the YAML):
- "invalid resource pools were encountered" is upstream's per-node failure (ErrFailedAllocationOnNode),
  surfaced only when no node fits: ours is `feasible: False` with that text in the reason, no error;
- cases that turn off a GA, locked gate are skipped.

Also here: upstream's consumable-capacity unit tables (calculateConsumedCapacity, violatesPolicy).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from webhook.config.profile import load_profile
from webhook.engine import Budget, Outcome, allocate
from webhook.engine.capacity import _round, _violates
from webhook.model.quantity import parse_quantity
from webhook.model.records import parse_slice
from webhook.state import ClusterState

CASES_FILE = Path(__file__).with_name("upstream_allocator_cases.yaml")
# The allocator features of upstream's Features struct that v1.37 lets us switch.
SWITCHABLE = (
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRADeviceTaints",
    "DRAListTypeAttributes",
    "DRAPartitionableDevices",
)


def _load() -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(CASES_FILE.read_text(), Loader=loader)  # noqa: S506 (safe loader)


CASES = _load()


def _params() -> list[Any]:
    out = []
    for c in CASES:
        marks = []
        if c.get("skip"):
            marks.append(pytest.mark.skip(reason=c["skip"]))
        if c.get("xfail"):
            marks.append(pytest.mark.xfail(reason=c["xfail"], strict=True))
        out.append(pytest.param(c, id=f"{c['group']}/{c['name']}", marks=marks))
    return out


def run_case(case: dict[str, Any]) -> Outcome:
    features = set(case.get("features") or ())
    gates = {g: g in features for g in SWITCHABLE}
    state = ClusterState.from_objects(copy.deepcopy(case["objects"]), load_profile("1.37", gates))
    claims = copy.deepcopy(case["claims"])
    return allocate(state, claims, node=case["node"], budget=Budget(steps=1_000_000, seconds=30.0))


def _quantity(v: Any) -> str:
    return str(parse_quantity(v).value)


def _result(r: dict[str, Any]) -> str:
    r = dict(r)
    if "shareID" in r:
        r["shareID"] = "<share>"  # random per allocation (upstream replaces it with a fixed id too)
    if r.get("consumedCapacity"):
        r["consumedCapacity"] = {k: _quantity(v) for k, v in r["consumedCapacity"].items()}
    return json.dumps(r, sort_keys=True)


def _selector(sel: dict[str, Any] | None) -> list[str] | None:
    if not sel:
        return None
    terms = []
    for t in sel.get("nodeSelectorTerms") or []:
        term = {}
        for k in ("matchExpressions", "matchFields"):
            reqs = sorted(
                json.dumps([r["key"], r["operator"], sorted(r.get("values") or [])]) for r in t.get(k) or []
            )
            if reqs:
                term[k] = reqs
        terms.append(json.dumps(term, sort_keys=True))
    return sorted(terms)


def _allocation(results: list[Any], config: list[Any] | None, sel: dict[str, Any] | None) -> str:
    return json.dumps(
        {
            "results": sorted(_result(r) for r in results),
            "config": config or [],
            "nodeSelector": _selector(sel),
        },
        sort_keys=True,
    )


def mismatch(case: dict[str, Any], out: Outcome) -> str | None:
    """None if `out` is upstream's outcome for `case`, else what differs."""
    exp = case["expect"]
    if "error" in exp:
        if not out.error or exp["error"] not in out.error:
            return f"want error containing {exp['error']!r}, got feasible={out.feasible} error={out.error!r}"
        return None
    if out.error:
        return f"unexpected error: {out.error}"
    if not exp["feasible"]:
        if out.feasible is not False:
            return f"want no fit, got feasible={out.feasible}: {[[r.device for r in c.results] for c in out.claims]}"
        if exp.get("reason") and exp["reason"] not in out.reason:
            return f"want reason containing {exp['reason']!r}, got {out.reason!r}"
        return None
    if out.feasible is not True:
        return f"want a fit, got feasible={out.feasible}: {out.reason}"
    got = sorted(
        _allocation(
            c.allocation["devices"]["results"],
            c.allocation["devices"].get("config"),
            c.allocation.get("nodeSelector"),
        )
        for c in out.claims
    )
    want = sorted(
        _allocation(a["results"], a.get("config"), a.get("nodeSelector")) for a in exp["allocations"]
    )
    if got != want:
        return "allocations differ:\n got  " + "\n      ".join(got) + "\n want " + "\n      ".join(want)
    return None


@pytest.mark.parametrize("case", _params())
def test_upstream_allocator_case(case: dict[str, Any]) -> None:
    problem = mismatch(case, run_case(case))
    assert problem is None, problem


def test_table_covers_upstream() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)) == 223
    assert {c["source"] for c in CASES} == {"allocator_testing.go", "lexicographical_testing.go"}


def test_comparison_can_fail() -> None:
    case = next(c for c in CASES if c["name"] == "small-and-large")
    out = run_case(case)
    assert mismatch(case, out) is None
    wrong = copy.deepcopy(case)
    wrong["expect"]["allocations"][0]["results"][0]["device"] = "device-2"
    assert "allocations differ" in (mismatch(wrong, out) or "")
    wrong = copy.deepcopy(case)
    wrong["expect"] = {"feasible": False}
    assert "want no fit" in (mismatch(wrong, out) or "")


# --- consumable capacity unit tables (consumable_capacity_test.go) ---------------------------------


def _capacity(value: str, policy: dict[str, Any] | None) -> Any:
    cap: dict[str, Any] = {"value": value}
    if policy is not None:
        cap["requestPolicy"] = policy
    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "driver-a",
            "nodeName": "node-1",
            "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": "device-1", "allowMultipleAllocations": True, "capacity": {"capacity-0": cap}}
            ],
        },
    }
    return parse_slice(obj, 1).devices[0].capacity["capacity-0"]


@pytest.mark.parametrize(
    ("requested", "value", "policy", "want"),
    [
        pytest.param(None, "1", {}, "1", id="empty"),
        pytest.param(None, "2", {"default": "1", "validRange": {"min": "1"}}, "1", id="min in range"),
        pytest.param(None, "2", {"default": "1", "validValues": ["1"]}, "1", id="default in set"),
        pytest.param(
            "2", "2", {"default": "1", "validRange": {"min": "1"}}, "2", id="more than min in range"
        ),
        pytest.param(
            "1", "2", {"default": "1", "validRange": {"min": "2"}}, "2", id="less than min in range"
        ),
        pytest.param(
            "2", "3", {"default": "1", "validRange": {"min": "1", "step": "2"}}, "3", id="step round up"
        ),
        pytest.param(
            "2", "2", {"default": "1", "validRange": {"min": "1", "step": "1"}}, "2", id="step exact"
        ),
        pytest.param(
            "2", "3", {"default": "1", "validValues": ["1", "2", "3"]}, "2", id="valid value in set"
        ),
        pytest.param("2", "3", {"default": "1", "validValues": ["1", "3"]}, "3", id="set round up"),
        pytest.param("3", "3", {"default": "1", "validValues": ["1", "2"]}, "3", id="larger than set"),
    ],
)
def test_upstream_calculate_consumed_capacity(
    requested: str | None, value: str, policy: dict[str, Any], want: str
) -> None:
    cap = _capacity(value, policy)
    got = _round(parse_quantity(requested) if requested is not None else None, cap)
    assert got == parse_quantity(want)


@pytest.mark.parametrize(
    ("requested", "policy", "violates"),
    [
        pytest.param("1", None, False, id="no constraint"),
        pytest.param(
            "1", {"default": "1", "validRange": {"min": "1", "max": "2"}}, False, id="less than max"
        ),
        pytest.param("2", {"default": "1", "validRange": {"min": "1", "max": "1"}}, True, id="more than max"),
        pytest.param("1", {"default": "1", "validValues": ["1"]}, False, id="in set"),
        pytest.param("2", {"default": "1", "validValues": ["1"]}, True, id="not in set"),
    ],
)
def test_upstream_violates_policy(requested: str, policy: dict[str, Any] | None, violates: bool) -> None:
    assert _violates(parse_quantity(requested), _capacity("4", policy)) is violates


# --- TestAllocator "interrupt": a cancelled/timed-out allocation is never a wrong answer -----------

INTERRUPT = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class-a}
spec: {selectors: [{cel: {expression: device.driver == "driver-a"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: slice-1}
spec:
  driver: driver-a
  nodeName: node-1
  pool: {name: pool-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: device-1}, {name: device-2}, {name: device-3}, {name: device-4}, {name: device-5}]
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {region: region-1}}
"""
SIX = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "claim-0"},
    "spec": {
        "devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "class-a", "count": 6}}]}
    },
}


@pytest.mark.parametrize(
    ("count", "budget", "feasible"),
    [
        pytest.param(6, Budget(), False, id="off"),
        # 6 of 5 is proven impossible by counting, but counting evaluates the class selector, and
        # selector work is charged to the budget: without any budget the answer stays undecided.
        pytest.param(6, Budget(steps=0, seconds=0.0), {None}, id="cancel-before-counting"),
        pytest.param(6, Budget(steps=20, seconds=10.0), False, id="proven-by-counting"),
        pytest.param(5, Budget(), True, id="off-fits"),
        pytest.param(5, Budget(steps=200_000, seconds=0.0), {True, None}, id="deadline"),
        pytest.param(5, Budget(steps=0, seconds=10.0), {None}, id="cancel"),
    ],
)
def test_upstream_interrupt(count: int, budget: Budget, feasible: bool | set[bool | None]) -> None:
    # Upstream: without interruption no error and no result; interrupted, the context's error. Ours:
    # the answer, or undecided (None) when the budget is gone; never a wrong "infeasible".
    state = ClusterState.from_objects(list(yaml.safe_load_all(INTERRUPT)), load_profile("1.37"))
    claim = copy.deepcopy(SIX)
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = count
    out = allocate(state, [claim], node="node-1", budget=budget)
    assert out.error is None
    assert out.feasible in feasible if isinstance(feasible, set) else out.feasible is feasible
