"""Upstream conformance: k8s.io/dynamic-resource-allocation cel/compile_test.go (TestCEL,
TestCELFeatureCombinations) as our own tables, through our entry points.

Environments: upstream compiles with `environment.StoredExpressions` unless a case says
`NewExpressions`. NewExpressions (a new object being validated: the gates decide which `device` fields
and functions exist) is `compile_selector(expr, list_attributes=<gate>, consumable_capacity=<gate>)`.
StoredExpressions (what the scheduler uses: every field and function of the current version, whatever
the gates say) is `SelectorEvaluator(...)` at run time; its estimated cost is the all-features compile
without the cost limit. Each case is run for both DRAListTypeAttributes states unless it names one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from webhook.cel.compiler import Compiled, CompileError, compile_selector
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator

DRA = "dra.example.com"
A = 'device.attributes["dra.example.com"]'
C = 'device.capacity["dra.example.com"]'
MAX_LIST = 64  # max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)
INCLUDES = 48  # ResourceSliceMaxAttributeValuesPerDevice


def b(v: bool) -> dict[str, Any]:
    return {"bool": v}


def i(v: int) -> dict[str, Any]:
    return {"int": v}


def s(v: str) -> dict[str, Any]:
    return {"string": v}


def ver(v: str) -> dict[str, Any]:
    return {"version": v}


def q(v: str) -> dict[str, Any]:
    return {"value": v}


class Case(NamedTuple):
    name: str
    expression: str
    expect: Any  # True / False, ("compile", substring), ("error", substring)
    cost: int = 0
    driver: str = ""
    attributes: dict[str, Any] | None = None
    capacity: dict[str, Any] | None = None
    new_env: bool = False  # environment.NewExpressions
    lists: bool | None = None  # None: both states
    consumable: bool = False
    allow_multiple: bool | None = None


def _long_list(n: int) -> dict[str, Any]:
    return {"name": {"strings": [f"value-{k}" for k in range(n)]}}


def _expensive_attributes() -> dict[str, Any]:
    out = {}
    for k in range(32):  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
        suffix = f"-{k}"
        out[f"{DRA}/" + "x" * (32 - len(suffix)) + suffix] = s("abc")
    return out


TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{TEN}.all(x, {TEN}.all(y, {TEN}.all(z, {TEN}.all(z2, {TEN}.all(z3, {TEN}.all(z4, "
    f"{TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
ALL = f"""
{C}.quantity.isGreaterThan(quantity("1Ki")) &&
{A}.bool &&
{A}.int > 0 &&
{A}.string == "fish" &&
{A}.version.isGreaterThan(semver("0.0.1")) &&
{C}["quantity"].isGreaterThan(quantity("1Ki")) &&
{A}["bool"] &&
{A}["int"] > 0 &&
{A}["string"] == "fish" &&
{A}["version"].isGreaterThan(semver("0.0.1"))
"""
NEW = {"new_env": True}

CASES = [
    Case("true", "true", True),
    Case("false", "false", False),
    Case("syntax-error", "?!", ("compile", "Syntax error")),
    Case("type-error", "1", ("compile", "must evaluate to bool or the unknown type, not int")),
    Case(
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        ("error", "no such key: noSuchAttr"),
        6,
    ),
    Case(
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        ("error", "no such key: noSuchAttr"),
        6,
    ),
    Case("domain-check-negative", '"no-such-domain" in device.attributes', False, 3),
    Case(
        "domain-check-positive",
        '"dra.example.com" in device.attributes',
        True,
        3,
        attributes={f"{DRA}/something": b(True)},
    ),
    Case("empty-driver-name", 'device.driver == ""', True, 2),
    Case("real-driver-name", 'device.driver == "dra.example.com"', True, 4, DRA),
    Case("driver-name-qualifier", f"{A}.name", True, 4, DRA, {"name": b(True)}),
    Case("driver-name-qualifier-map-lookup", f'{A}["name"]', True, 4, DRA, {"name": b(True)}),
    Case("bind", f"cel.bind(dra, {A}, dra.name)", True, 15, DRA, {"name": b(True)}),
    Case(
        "qualified-attribute-name",
        'device.attributes["other.example.com"].name',
        True,
        4,
        DRA,
        {"other.example.com/name": b(True)},
    ),
    Case("bool", f"{A}.name", True, 4, DRA, {"name": b(True)}),
    Case("int", f"{A}.name > 0", True, 5, DRA, {"name": i(1)}),
    Case("string", f'{A}.name == "fish"', True, 5, DRA, {"name": s("fish")}),
    Case(
        "macro-exists-on-int",
        f"{A}.name.exists(x, x > 0)",
        ("error", "got 'types.Int', expected iterable type"),
        5 + 6 * MAX_LIST,
        DRA,
        {"name": i(1)},
    ),
    Case(
        "macro-exists-on-bool",
        f"{A}.name.exists(x, x == true)",
        ("error", "got 'types.Bool', expected iterable type"),
        5 + 6 * MAX_LIST,
        DRA,
        {"name": b(True)},
    ),
    Case(
        "macro-exists-on-string",
        f'{A}.name.exists(x, x == "fish")',
        ("error", "got 'types.String', expected iterable type"),
        5 + 6 * MAX_LIST,
        DRA,
        {"name": s("fish")},
    ),
    Case(
        "list-result-type-causes-match-error",
        f"{A}.names",
        ("error", "CEL result of type list could not be converted to bool"),
        4,
        DRA,
        {"names": {"strings": ["fish", "bird"]}},
    ),
    Case(
        "includes-function-can-evaluate",
        f'{A}.name.includes("fish")',
        True,
        4 + INCLUDES,
        DRA,
        {"name": {"strings": ["fish", "bird"]}},
    ),
    *(
        Case(f"list-of-{kind}", f"{A}.names.size() == 2", True, 6, DRA, {"names": {key: vals}})
        for kind, key, vals in (
            ("bool", "bools", [True, False]),
            ("int", "ints", [1, 2]),
            ("string", "strings", ["fish", "bird"]),
            ("semver", "versions", ["1.0.0", "2.0.0"]),
        )
    ),
    Case(
        "macro-on-list-of-int",
        f"{A}.names.exists(x, x > 0)",
        True,
        5 + 6 * MAX_LIST,
        DRA,
        {"names": {"ints": [1, 2]}},
    ),
    Case(
        "macro-on-list-of-string",
        f'{A}.names.all(x, x != "")',
        True,
        5 + 4 * MAX_LIST,
        DRA,
        {"names": {"strings": ["fish", "bird"]}},
    ),
    Case(
        "macro-on-list-of-semver",
        f'{A}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
        True,
        5 + 6 * MAX_LIST,
        DRA,
        {"names": {"versions": ["1.0.0", "2.0.0"]}},
    ),
    Case(
        "includes-function-compilation-error",
        f'{A}.attr.includes("fish")',
        ("compile", "undeclared reference to 'includes'"),
        driver=DRA,
        lists=False,
        **NEW,
    ),
    Case(
        "includes-function-compilation-and-eval-success",
        f'{A}.attr.includes("fish")',
        True,
        4 + INCLUDES,
        DRA,
        {"attr": s("fish")},
        lists=True,
        **NEW,
    ),
    *(
        Case(
            f"includes-function-on-{name}",
            f"{A}.name.includes({arg})",
            want,
            4 + INCLUDES + extra,
            DRA,
            {"name": attr},
        )
        for name, arg, attr, want, extra in (
            ("bool-scalar-positive", "true", b(True), True, 0),
            ("bool-scalar-negative", "true", b(False), False, 0),
            ("bool-list-positive", "true", {"bools": [True, False]}, True, 0),
            ("bool-list-negative", "false", {"bools": [True, True]}, False, 0),
            ("int-scalar-positive", "1", i(1), True, 0),
            ("int-scalar-negative", "1", i(2), False, 0),
            ("int-list-positive", "1", {"ints": [1, 2]}, True, 0),
            ("int-list-negative", "3", {"ints": [1, 2]}, False, 0),
            ("string-scalar-positive", '"fish"', s("fish"), True, 0),
            ("string-scalar-negative", '"bird"', s("fish"), False, 0),
            ("string-list-positive", '"fish"', {"strings": ["fish", "bird"]}, True, 0),
            ("string-list-negative", '"cat"', {"strings": ["fish", "bird"]}, False, 0),
            ("semver-scalar-positive", 'semver("1.0.0")', ver("1.0.0"), True, 1),
            ("semver-scalar-negative", 'semver("2.0.0")', ver("1.0.0"), False, 1),
            ("semver-list-positive", 'semver("1.0.0")', {"versions": ["1.0.0", "2.0.0"]}, True, 1),
            ("semver-list-negative", 'semver("3.0.0")', {"versions": ["1.0.0", "2.0.0"]}, False, 1),
        )
    ),
    Case(
        "includes-function-on-very-long-list-positive",
        f'{A}.name.includes("value-48")',
        False,
        4 + INCLUDES,
        DRA,
        _long_list(48),
    ),
    Case(
        "includes-function-on-very-long-list-runtime-error",
        f'{A}.name.includes("value-49")',
        ("error", "'includes' function cannot be applied to lists longer than 48 values"),
        4 + INCLUDES,
        DRA,
        _long_list(49),
    ),
    Case("in-operator-on-list", f"1 in {A}.names", True, 4 + MAX_LIST, DRA, {"names": {"ints": [1, 2, 3]}}),
    Case("version", f'{A}.name.isGreaterThan(semver("0.0.1"))', True, 6, DRA, {"name": ver("1.0.0")}),
    Case(
        "version_v",
        f'{A}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        True,
        7,
        DRA,
        {"name": ver("1.0.0")},
    ),
    Case(
        "macro-exists-on-version",
        f'{A}.name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        ("error", "got 'cel.Semver', expected iterable type"),
        5 + 7 * MAX_LIST,
        DRA,
        {"name": ver("1.0.0")},
    ),
    Case("quantity", f'{C}.name.isGreaterThan(quantity("1Ki"))', True, 6, DRA, capacity={"name": q("1Mi")}),
    Case(
        "check-positive",
        f'"name" in {C} && {C}.name.isGreaterThan(quantity("1Ki"))',
        True,
        10,
        DRA,
        capacity={"name": q("1Mi")},
    ),
    Case("check-negative", f'!("name" in {C}) || {C}.name.isGreaterThan(quantity("1Ki"))', True, 11),
    Case(
        "all",
        ALL,
        True,
        52,
        DRA,
        {"bool": b(True), "int": i(1), "string": s("fish"), "version": ver("1.0.0")},
        {"quantity": q("1Mi")},
    ),
    Case("many", f"{A}.a && {A}.b && {A}.c", True, 12, DRA, {"a": b(True), "b": b(True), "c": b(True)}),
    Case(
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        True,
        164,
        DRA,
        {"services": s("some_example_value")},
    ),
    Case(
        "check_attribute_ids",
        f'{A}.exists_one(x, x == "services")',
        True,
        133,
        DRA,
        {"services": s("some_example_value")},
    ),
    Case(
        "split_attribute",
        f'{A}.services.split("example").size() >= 2',
        True,
        19,
        DRA,
        {"services": s("some_example_value")},
    ),
    Case(
        "regexp_attribute", f'{A}.services.matches("[^a]?sym")', True, 18, DRA, {"services": s("asymetric")}
    ),
    Case(
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        True,
        164,
        DRA,
        capacity={"memory": q("1Mi")},
    ),
    Case(
        "check_capacity_ids",
        f'{C}.exists_one(x, x == "memory")',
        True,
        133,
        DRA,
        capacity={"memory": q("1Mi")},
    ),
    Case(
        "expensive",
        EXPENSIVE,
        ("error", "actual cost limit exceeded"),
        85555551,
        DRA,
        _expensive_attributes(),
    ),
    Case(
        "allow_multiple_allocations",
        "device.allowMultipleAllocations == true",
        True,
        3,
        DRA,
        consumable=True,
        allow_multiple=True,
    ),
    Case(
        "allow_multiple_allocations_default",
        "device.allowMultipleAllocations == false",
        True,
        3,
        DRA,
        consumable=True,
    ),
    Case(
        "allow_multiple_allocations_false",
        "device.allowMultipleAllocations == false",
        True,
        3,
        DRA,
        consumable=True,
        allow_multiple=False,
    ),
    Case(
        "allow_multiple_allocations_new",
        "device.allowMultipleAllocations == false",
        True,
        3,
        DRA,
        consumable=True,
        allow_multiple=False,
        **NEW,
    ),
    Case(
        "allow_multiple_allocations_disabled",
        "device.allowMultipleAllocations == false",
        ("compile", "undefined field 'allowMultipleAllocations'"),
        driver=DRA,
        consumable=False,
        **NEW,
    ),
]


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for lists in (False, True) if case.lists is None else (case.lists,):
            out.append(pytest.param(case, lists, id=f"{case.name}-lists={lists}"))
    return out


def _device(case: Case) -> dict[str, Any]:
    device: dict[str, Any] = {"name": "dev"}
    if case.attributes:
        device["attributes"] = case.attributes
    if case.capacity:
        device["capacity"] = case.capacity
    if case.allow_multiple is not None:
        device["allowMultipleAllocations"] = case.allow_multiple
    return device


def _compile(case: Case, lists: bool) -> Compiled | CompileError:
    if case.new_env:
        return compile_selector(
            case.expression, list_attributes=lists, consumable_capacity=case.consumable, check_cost=False
        )
    # StoredExpressions: everything the current version knows.
    return compile_selector(case.expression, list_attributes=True, consumable_capacity=True, check_cost=False)


@pytest.mark.parametrize(("case", "lists"), _params())
def test_upstream_TestCEL(case: Case, lists: bool) -> None:
    compiled = _compile(case, lists)
    kind, detail = case.expect if isinstance(case.expect, tuple) else ("match", None)
    if kind == "compile":
        assert isinstance(compiled, CompileError), compiled
        assert detail in compiled.message
        if not case.new_env:  # the scheduler fails the same way
            with pytest.raises(CelRuntimeError) as info:
                _evaluator(case, lists).matches(case.expression, "k", case.driver, _device(case))
            assert info.value.phase == "compile" and detail in info.value.detail
        return
    assert isinstance(compiled, Compiled), compiled
    assert compiled.cost == case.cost
    evaluator = _evaluator(case, lists)
    if kind == "error":
        with pytest.raises(CelRuntimeError) as info:
            evaluator.matches(case.expression, "k", case.driver, _device(case))
        assert info.value.phase == "runtime"
        assert detail in info.value.detail
        return
    assert evaluator.matches(case.expression, "k", case.driver, _device(case)) is case.expect


def _evaluator(case: Case, lists: bool) -> SelectorEvaluator:
    return SelectorEvaluator(list_attributes=lists, consumable_capacity=case.consumable)


def test_expensive_is_rejected_for_new_objects() -> None:
    # Validation (NewExpressions, with the cost limit) refuses what the scheduler would cut off.
    got = compile_selector(EXPENSIVE, list_attributes=True, consumable_capacity=True)
    assert got == CompileError("Forbidden", "too complex, exceeds cost limit")


# ---- TestCELFeatureCombinations ------------------------------------------------------------------

COMBINATION_EXPRESSIONS = {
    # name: (expression, device, needs list-type attributes, needs consumable capacity)
    "scalar-attribute": (f"{A}.ready", {"attributes": {"ready": b(True)}}, False, False),
    "list-attribute": (
        f"{A}.ids.exists(id, id == 1)",
        {"attributes": {"ids": {"ints": [1, 2]}}},
        True,
        False,
    ),
    "includes-function": (f'{A}.name.includes("fish")', {"attributes": {"name": s("fish")}}, True, False),
    "multiple-allocations": (
        "device.allowMultipleAllocations",
        {"allowMultipleAllocations": True},
        False,
        True,
    ),
    "list-attribute-with-multiple-allocations": (
        f"device.allowMultipleAllocations && {A}.ids.exists(id, id == 1)",
        {"allowMultipleAllocations": True, "attributes": {"ids": {"ints": [1, 2]}}},
        True,
        True,
    ),
}
FEATURES = [(False, False), (False, True), (True, False), (True, True)]  # (lists, consumable)


@pytest.mark.parametrize("name", sorted(COMBINATION_EXPRESSIONS))
@pytest.mark.parametrize(("lists", "consumable"), FEATURES)
def test_upstream_feature_combinations_new_expressions(name: str, lists: bool, consumable: bool) -> None:
    expr, device, needs_lists, needs_consumable = COMBINATION_EXPRESSIONS[name]
    compiled = compile_selector(expr, list_attributes=lists, consumable_capacity=consumable)
    should_compile = (lists or not needs_lists) and (consumable or not needs_consumable)
    assert isinstance(compiled, Compiled) is should_compile, compiled
    if should_compile:
        ev = SelectorEvaluator(list_attributes=lists, consumable_capacity=consumable)
        assert ev.matches(expr, "k", DRA, {"name": "dev", **device}) is True


@pytest.mark.parametrize("name", sorted(COMBINATION_EXPRESSIONS))
@pytest.mark.parametrize(("lists", "consumable"), FEATURES)
def test_upstream_feature_combinations_stored_expressions(name: str, lists: bool, consumable: bool) -> None:
    # Stored expressions see every field and function whatever the gates say (version skew).
    expr, device, _, _ = COMBINATION_EXPRESSIONS[name]
    ev = SelectorEvaluator(list_attributes=lists, consumable_capacity=consumable)
    assert ev.matches(expr, "k", DRA, {"name": "dev", **device}) is True
