"""Upstream conformance: k8s.io/apiserver pkg/cel/library semver_test.go (TestSemver) as DRA selectors.

A library case `expr -> value` becomes the selector `expr == value` evaluated on a device (compile
errors through `compile_selector`, runtime errors through `SelectorEvaluator`).
"""

from __future__ import annotations

import pytest

from webhook.cel.compiler import Compiled, CompileError, compile_selector
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator

DEVICE = {"name": "d"}

SEMVER_VALUES = [
    ('isSemver("1.2.3-beta.1+build.1")', "true"),
    *((f"isSemver({arg})", "false") for arg in ('""', '"v1.0.0"', '" 1.0.0"', '"1. 0.0"', '"1.0.0 "')),
    *((f"isSemver({arg})", "false") for arg in ('"01.01.01"', '"1"', '"1.1"')),
    *((f"isSemver({arg}, true)", "false") for arg in ('""', '" 1.0.0"', '"1. 0.0"', '"1.0.0 "')),
    *((f"isSemver({arg}, true)", "true") for arg in ('"v1.0.0"', '"01.01.01"', '"1"', '"1.1"')),
    ('semver("v01.01", true) == semver("1.1.0")', "true"),
    ('semver("1.2.3") == semver("1.2.3")', "true"),
    ('semver("1.2.3") == semver("1.0.0")', "false"),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', "true"),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', "false"),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', "true"),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', "false"),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', "0"),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', "-1"),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', "1"),
    ('semver("1.2.3").major()', "1"),
    ('semver("1.2.3").minor()', "2"),
    ('semver("1.2.3").patch()', "3"),
]


def _matches(expr: str) -> bool:
    ev = SelectorEvaluator(list_attributes=True, consumable_capacity=True)
    return ev.matches(expr, "k", "dra.example.com", DEVICE)


@pytest.mark.parametrize(("expr", "value"), SEMVER_VALUES)
def test_upstream_semver_values(expr: str, value: str) -> None:
    selector = f"({expr}) == {value}"
    assert isinstance(compile_selector(selector, list_attributes=True, consumable_capacity=True), Compiled)
    assert _matches(selector) is True


def test_upstream_semver_parse_invalid_is_a_runtime_error() -> None:
    with pytest.raises(CelRuntimeError) as info:
        _matches('semver("v1.0") == semver("1.0.0")')
    assert info.value.phase == "runtime" and "No Major.Minor.Patch elements found" in info.value.detail


def test_upstream_semver_wrong_argument_is_a_compile_error() -> None:
    got = compile_selector("isSemver([1, 2, 3])", list_attributes=True, consumable_capacity=True)
    assert isinstance(got, CompileError)
    assert "found no matching overload for 'isSemver' applied to" in got.message
