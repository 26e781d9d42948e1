"""device.consumes-counters and device.compat-groups (KEP-5963 compatibility groups)."""

from __future__ import annotations

from typing import Any

import pytest
from slice_fixtures import ctx, device_slice, only, run


def consumer(*consumptions: dict[str, Any]) -> dict:
    return device_slice({"name": "gpu-0-mig", "consumesCounters": list(consumptions)})


def use(counter_set: str = "gpu-0", groups: Any = "unset", **counters: str) -> dict[str, Any]:
    c: dict[str, Any] = {
        "counterSet": counter_set,
        "counters": {k: {"value": v} for k, v in (counters or {"memory": "10Gi"}).items()},
    }
    if groups != "unset":
        c["compatibilityGroups"] = groups
    return c


# --- consumesCounters -----------------------------------------------------------------------------


def test_consumes_counters_valid() -> None:
    assert run(consumer(use("gpu-0"), use("gpu-0-nvlink", links="1"))) == []


def test_consumes_counters_max_2() -> None:
    found = only(run(consumer(use("a"), use("b"), use("c"))), "device.consumes-counters")
    assert found == [("spec.devices[0].consumesCounters", "Too many: 3: must have at most 2 items")]


def test_consumes_counters_unique_counter_set() -> None:
    found = only(run(consumer(use("c"), use("c"))), "device.consumes-counters")
    assert found == [("spec.devices[0].consumesCounters[1]", 'Duplicate value: "c"')]


def test_consumes_counters_shapes() -> None:
    bad = {"counterSet": "Bad_Set", "counters": {"Mem": {"value": "1"}}}
    empty = {"counterSet": "ok", "counters": {}}
    found = only(run(consumer(bad, empty)), "device.consumes-counters")
    base = "spec.devices[0].consumesCounters"
    assert any(f == base + "[0].counterSet" and m.startswith('Invalid value: "Bad_Set"') for f, m in found)
    assert any(f == base + "[0].counters" and m.startswith('Invalid value: "Mem"') for f, m in found)
    assert (base + "[1].counters", "Required value") in found
    many = {"counterSet": "ok", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}
    assert only(run(consumer(many)), "device.consumes-counters") == [
        (base + "[0].counters", "Too many: 33: must have at most 32 items")
    ]


# --- compatibilityGroups --------------------------------------------------------------------------

GROUPS = "spec.devices[0].consumesCounters[0].compatibilityGroups"


@pytest.mark.parametrize("groups", [None, [], ["mig"], ["mig", "vgpu"]])
def test_compat_groups_valid(groups: Any) -> None:
    assert run(consumer(use(groups=groups))) == []


def test_compat_groups_at_most_two() -> None:
    found = only(run(consumer(use(groups=["a", "b", "c"]))), "device.compat-groups")
    assert found == [(GROUPS, "Too many: 3: must have at most 2 items")]


def test_compat_groups_unique() -> None:
    found = only(run(consumer(use(groups=["mig", "mig"]))), "device.compat-groups")
    assert found == [(GROUPS + "[1]", 'Duplicate value: "mig"')]


def test_compat_groups_names_are_dns_labels() -> None:
    found = only(run(consumer(use(groups=["MIG_1g", "x" * 64]))), "device.compat-groups")
    assert [f for f, _ in found] == [GROUPS + "[0]", GROUPS + "[1]"]
    assert found[0][1].startswith('Invalid value: "MIG_1g"') and "RFC 1123 label" in found[0][1]
    assert "63" in found[1][1]


def test_compat_groups_second_consumption() -> None:
    found = only(run(consumer(use("a"), use("b", groups=["a", "a"]))), "device.compat-groups")
    assert found == [("spec.devices[0].consumesCounters[1].compatibilityGroups[1]", 'Duplicate value: "a"')]


def test_compat_groups_skipped_when_consumptions_exceed_limit() -> None:
    found = run(consumer(use("a", groups=["x", "x"]), use("b"), use("c")))
    assert only(found, "device.compat-groups") == []
    assert only(found, "device.consumes-counters") != []


def test_compat_groups_dropped_without_gate() -> None:
    found = run(consumer(use(groups=["mig", "mig"])), ctx(DRADeviceCompatibilityGroups=False))
    assert only(found, "device.compat-groups") == []
