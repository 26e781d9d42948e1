"""DeviceTaintRule cases ported from upstream's unit tests.

Source: kubernetes/kubernetes `pkg/apis/resource/validation/validation_devicetaintrule_test.go`
(TestValidateDeviceTaint, TestValidateDeviceTaintUpdate; version 0b1dcaba), checked against `validation.go`
009801d9. That test file predates the v1 API: its `deviceSelector.deviceClassName` and `selectors` no longer
exist (`bad-class`, `CEL-*` are left out; the valid rule drops those fields). The v1.37 status rules
(ValidateDeviceTaintRuleStatusUpdate) are covered by cases written from the code.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.rules.upstream_util import VALID_META, errors, want

GOOD, BAD = "foo", "!@#$%^"


def rule(name: str = GOOD, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "deviceSelector": {"driver": "test.example.com", "pool": GOOD, "device": GOOD},
        "taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"},
    }
    base.update(spec)
    meta = {"name": name} if name else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": meta, "spec": base}


def with_meta(**meta: Any) -> dict[str, Any]:
    r = rule()
    r["metadata"].update(meta)
    return r


def selector(**kw: Any) -> dict[str, Any]:
    r = rule()
    r["spec"]["deviceSelector"].update(kw)
    return r


def conditions(n: int, **kw: Any) -> list[dict[str, Any]]:
    base = {"status": "True", "reason": "Ok", "lastTransitionTime": "2026-07-01T00:00:00Z"}
    return [{"type": f"T{i}", **base, **kw} for i in range(n)]


CASES: list[tuple[str, Callable[[], dict[str, Any]], Any]] = [
    ("good", rule, want()),
    ("missing-name", lambda: rule(""), want(("metadata.name", "Required"))),
    ("bad-name", lambda: rule(BAD), want(("metadata.name", "Invalid"))),
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
    ("bad-driver", lambda: selector(driver=BAD), want(("spec.deviceSelector.driver", "Invalid"))),
    ("bad-pool", lambda: selector(pool=BAD), want(("spec.deviceSelector.pool", "Invalid"))),
    ("bad-device", lambda: selector(device=BAD), want(("spec.deviceSelector.device", "Invalid"))),
    (
        "valid-taint",
        lambda: rule(taint={"key": GOOD, "value": GOOD, "effect": "NoExecute"}),
        want(),
    ),
    (
        "invalid-taint",
        lambda: rule(taint={"key": GOOD, "value": GOOD}),
        want(("spec.taint.effect", "Required")),
    ),
    # From validateDeviceTaint / ValidateDeviceTaintRuleStatusUpdate (009801d9):
    (
        "taint-effect-unsupported",
        lambda: rule(taint={"key": GOOD, "effect": "PreferNoSchedule"}),
        want(("spec.taint.effect", "NotSupported")),
    ),
    (
        "taint-bad-key",
        lambda: rule(taint={"key": BAD, "effect": "None"}),
        want(("spec.taint.key", "Invalid")),
    ),
    (
        "taint-bad-value",
        lambda: rule(taint={"key": GOOD, "value": "a b", "effect": "None"}),
        want(("spec.taint.value", "Invalid")),
    ),
    ("empty-selector", lambda: rule(deviceSelector={}), want()),
    ("status-conditions", lambda: {**rule(), "status": {"conditions": conditions(8)}}, want()),
    (
        "status-too-many-conditions",
        lambda: {**rule(), "status": {"conditions": conditions(9)}},
        want(("status.conditions", "TooMany")),
    ),
]


@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_validate_device_taint_rule(name: str, build: Callable[[], dict[str, Any]], expected: Any) -> None:
    obj = build()
    # status cases are ValidateDeviceTaintRuleStatusUpdate's: a CREATE resets the status
    assert errors(obj, status="status" in obj) == expected


def _effect(value: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def update(r: dict[str, Any]) -> dict[str, Any]:
        r = copy.deepcopy(r)
        r["spec"]["taint"]["effect"] = value
        return r

    return update


OLD_EFFECT = rule(taint={"key": GOOD, "effect": "Unknown"})
UPDATE_CASES: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]], Any]] = [
    ("valid-no-op-update", rule(), lambda r: r, want()),
    (
        "invalid-name-update",
        rule(),
        lambda r: {**r, "metadata": {"name": GOOD + "-update"}},
        want(("metadata.name", "Invalid")),
    ),
    # From validateDeviceTaint (009801d9): an unchanged effect is not checked again.
    ("stored-unknown-effect", OLD_EFFECT, lambda r: r, want()),
    ("changed-to-unknown-effect", rule(), _effect("Unknown"), want(("spec.taint.effect", "NotSupported"))),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "expected"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES]
)
def test_validate_device_taint_rule_update(
    name: str, old: dict[str, Any], update: Any, expected: Any
) -> None:
    assert errors(update(copy.deepcopy(old)), old=old) == expected
