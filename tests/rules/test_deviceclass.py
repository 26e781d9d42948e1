"""DeviceClass rules: selectors, config, extendedResourceName."""

from __future__ import annotations

from typing import Any

import yaml

from webhook.config.context import Context
from webhook.rules import deviceclass

VALID = """
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
  config:
  - opaque: {driver: gpu.example.com, parameters: {mode: shared}}
  extendedResourceName: example.com/gpu
"""


def run(fn: Any, obj: dict[str, Any], ctx: Context | None = None) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(obj, ctx or Context())]


def cls(spec: str) -> dict[str, Any]:
    return {"kind": "DeviceClass", "metadata": {"name": "c"}, "spec": yaml.safe_load(spec)}


def test_valid_class() -> None:
    obj = yaml.safe_load(VALID)
    for fn in (
        deviceclass.check_class_selectors,
        deviceclass.check_class_config,
        deviceclass.check_extended_resource_name,
    ):
        assert run(fn, obj) == []


def test_selectors() -> None:
    found = run(deviceclass.check_class_selectors, cls("selectors: [{cel: {expression: 'device.nope'}}]"))
    assert found[0][0] == "spec.selectors[0].cel.expression"
    assert "undefined field 'nope'" in found[0][1]
    many = cls("selectors: [" + ", ".join("{cel: {expression: 'true'}}" for _ in range(33)) + "]")
    assert run(deviceclass.check_class_selectors, many) == [
        ("spec.selectors", "Too many: 33: must have at most 32 items")
    ]


def test_unchanged_selectors_are_not_revalidated() -> None:
    obj = cls("selectors: [{cel: {expression: 'device.nope'}}]")
    assert run(deviceclass.check_class_selectors, obj, Context(old=obj, operation="UPDATE")) == []


def test_config() -> None:
    assert run(deviceclass.check_class_config, cls("config: [{}]")) == [
        ("spec.config[0].opaque", "Required value")
    ]
    big = cls("config: [{opaque: {driver: d.io, parameters: {x: '" + "y" * 10240 + "'}}}]")
    assert run(deviceclass.check_class_config, big) == [
        ("spec.config[0].opaque.parameters", "Too long: must have at most 10240 bytes")
    ]
    assert run(deviceclass.check_class_config, big, Context(old=big, operation="UPDATE")) == []


def test_extended_resource_name() -> None:
    found = run(
        deviceclass.check_extended_resource_name,
        cls("extendedResourceName: deviceclass.resource.kubernetes.io/gpu"),
    )
    assert found[0][0] == "spec.extendedResourceName"
    assert found[0][1].startswith(
        'Invalid value: "deviceclass.resource.kubernetes.io/gpu": must be a valid extended'
    )
    assert run(deviceclass.check_extended_resource_name, cls("extendedResourceName: gpu"))[0][1].endswith(
        "must be a valid extended resource name"
    )
