"""The `device` variable's check of every attribute and capacity (upstream converts them all before
evaluating: one value it cannot convert fails every selector on the device) gives the same verdict on its
fast path (the API's usual shapes, quantities already seen to parse) as value by value."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.cel.interpreter.activation import DeviceInput, attribute_value, capacity_value


def _slow(device: dict[str, Any]) -> str | None:
    """The failure as the converters give it, one value at a time."""
    try:
        for name, attr in device.get("attributes", {}).items():
            attribute_value(name, attr)
        for name, cap in device.get("capacity", {}).items():
            capacity_value(name, cap)
    except Exception as e:  # noqa: BLE001 - compared as text
        return str(e)
    return None


@pytest.mark.parametrize(
    "attr",
    [
        {"string": "x"},
        {"int": 7},
        {"bool": False},
        {"version": "1.2.3"},
        {"ints": [1, 2]},
        {"int": True},  # a bool is no int
        {"string": 5},
        {"bool": "true"},
        {"int": 2**63},  # past int64
        {"int": -(2**63)},
        {"version": "1.2"},
        {},
        {"string": "x", "int": 1},
        "x",
    ],
)
def test_attributes_fail_the_device_as_their_conversion_does(attr: Any) -> None:
    device = {"attributes": {"a": attr}}
    assert DeviceInput(device, "d.example.com").failure == _slow(device)


def test_a_quantity_that_does_not_parse_fails_every_time_and_one_that_does_never() -> None:
    bad = {"capacity": {"memory": {"value": "1x"}}}
    good = {"capacity": {"memory": {"value": "80Gi"}}}
    for _ in range(3):
        assert DeviceInput(bad, "d.example.com").failure == _slow(bad) is not None
        assert DeviceInput(good, "d.example.com").failure is None
    unhashable = {"capacity": {"memory": {"value": ["80Gi"]}}}
    assert DeviceInput(unhashable, "d.example.com").failure == _slow(unhashable) is not None
