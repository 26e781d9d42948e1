"""DeviceClass cases ported from upstream's unit tests.

Source: kubernetes/kubernetes `pkg/apis/resource/validation/validation_deviceclass_test.go` (TestValidateClass,
TestValidateClassUpdate; version 16913111), checked against `validation.go` 009801d9. Raw parameters that are
not JSON (`xxx`) cannot be written in a manifest: that entry is replaced by a valid one, keeping the indexes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.rules.upstream_util import VALID_META, errors, want

GOOD, BAD = "foo", "!@#$%^"
VALID_SELECTOR = {"cel": {"expression": "true"}}
VALID_CONFIG = {"opaque": {"driver": GOOD, "parameters": {"foo": 42}}}


def params_of_size(extra: int = 0) -> dict[str, Any]:
    return {"str": "x" * (10 * 1024 - 10 + extra)}


def device_class(name: str = GOOD, **spec: Any) -> dict[str, Any]:
    meta = {"name": name} if name else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta, "spec": spec}


def with_meta(**meta: Any) -> dict[str, Any]:
    c = device_class()
    c["metadata"].update(meta)
    return c


def opaque(parameters: Any = None, **kw: Any) -> dict[str, Any]:
    o: dict[str, Any] = {"driver": GOOD, **kw}
    if parameters is not None:
        o["parameters"] = parameters
    return {"opaque": o}


def _selectors() -> dict[str, Any]:
    sels = [VALID_SELECTOR, {}, {"cel": {"expression": "noSuchVar"}}]
    return device_class(selectors=sels + [VALID_SELECTOR] * (32 - len(sels)))


def _configuration() -> dict[str, Any]:
    configs = [
        VALID_CONFIG,
        {"opaque": {}},
        VALID_CONFIG,  # upstream: `xxx` (not JSON)
        VALID_CONFIG,  # upstream: `"hello-world"`, see `configuration-not-an-object`
        opaque(),  # upstream: `null`
        {},
        opaque(params_of_size()),
        opaque(params_of_size(1)),
    ]
    return device_class(config=configs + [VALID_CONFIG] * (32 - len(configs)))


CASES: list[tuple[str, Callable[[], dict[str, Any]], Any]] = [
    ("good-class", device_class, want()),
    ("missing-name", lambda: device_class(""), want(("metadata.name", "Required"))),
    ("bad-name", lambda: device_class(BAD), want(("metadata.name", "Invalid"))),
    *[(name, lambda m=m: with_meta(**m), want()) for name, m in VALID_META.items()],
    (
        "bad-labels",
        lambda: with_meta(labels={"hello-world": "spaces not allowed"}),
        want(("metadata.labels", "Invalid")),
    ),
    (
        "bad-annotations",
        lambda: with_meta(annotations={BAD: "hello world"}),
        want(("metadata.annotations", "Invalid")),
    ),
    ("good-extended-resource-name", lambda: device_class(extendedResourceName="example.com/gpu"), want()),
    (
        "bad-extended-resource-name",
        lambda: device_class(extendedResourceName="example.com"),
        want(("spec.extendedResourceName", "Invalid")),
    ),
    (
        "selectors",
        _selectors,
        want(("spec.selectors[1].cel", "Required"), ("spec.selectors[2].cel.expression", "Invalid")),
    ),
    (
        "too-many-selectors",
        lambda: device_class(selectors=[VALID_SELECTOR] * 33),
        want(("spec.selectors", "TooMany")),
    ),
    (
        "configuration",
        _configuration,
        want(
            ("spec.config[1].opaque.driver", "Required"),
            ("spec.config[1].opaque.parameters", "Required"),
            ("spec.config[4].opaque.parameters", "Required"),
            ("spec.config[5].opaque", "Required"),
            ("spec.config[7].opaque.parameters", "TooLong"),
        ),
    ),
    (
        "configuration-not-an-object",
        lambda: device_class(config=[opaque("hello-world")]),
        want(("spec.config[0].opaque.parameters", "Invalid")),
    ),
    ("too-many-configs", lambda: device_class(config=[VALID_CONFIG] * 33), want(("spec.config", "TooMany"))),
]


@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_validate_class(name: str, build: Callable[[], dict[str, Any]], expected: Any) -> None:
    assert errors(build()) == expected


def _set_config(c: dict[str, Any], config: list[Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c["spec"]["config"] = config
    return c


LARGE = [opaque(params_of_size())]
TOO_LARGE = [opaque(params_of_size(1))]
BAD_SELECTORS = [{"cel": {"expression": "noSuchVar"}}]

UPDATE_CASES: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]], Any]] = [
    ("valid-no-op-update", device_class(), lambda c: c, want()),
    ("valid-config-large", device_class(), lambda c: _set_config(c, LARGE), want()),
    (
        "invalid-config-too-large",
        device_class(),
        lambda c: _set_config(c, TOO_LARGE),
        want(("spec.config[0].opaque.parameters", "TooLong")),
    ),
    ("too-large-config-valid-if-stored", device_class(config=TOO_LARGE), lambda c: c, want()),
    # From validateDeviceClassSpec (009801d9): unchanged selectors are not compiled again.
    ("bad-selector-valid-if-stored", device_class(selectors=BAD_SELECTORS), lambda c: c, want()),
    (
        "invalid-name-update",
        device_class(),
        lambda c: {**c, "metadata": {"name": "foo-update"}},
        want(("metadata.name", "Invalid")),
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "expected"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES]
)
def test_validate_class_update(name: str, old: dict[str, Any], update: Any, expected: Any) -> None:
    assert errors(update(copy.deepcopy(old)), old=old) == expected
