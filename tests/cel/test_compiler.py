"""CEL selector compilation (length, syntax, fields, result type, cost) and evaluation on one device."""

from __future__ import annotations

import pytest

from webhook.cel.compiler import Compiled, CompileError, compile_selector
from webhook.cel.interpreter.activation import EvaluationError, normalise_device


def compile_(expr: str, *, lists: bool = False, consumable: bool = True) -> Compiled | CompileError:
    return compile_selector(expr, list_attributes=lists, consumable_capacity=consumable)


# Expected costs are the upstream values (k8s.io/dynamic-resource-allocation cel/compile_test.go).
@pytest.mark.parametrize(
    ("expr", "cost"),
    [
        ("true", 0),
        ('device.driver == ""', 2),
        ('device.driver == "dra.example.com"', 4),
        ('"no-such-domain" in device.attributes', 3),
        ('device.attributes["dra.example.com"].name', 4),
        ('device.attributes["dra.example.com"].name == "fish"', 5),
        ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
        (
            'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1", true)',
            7,
        ),
        ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
        ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
        ('device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
        ("device.allowMultipleAllocations == true", 3),
    ],
)
def test_valid_expressions_and_upstream_costs(expr: str, cost: int) -> None:
    r = compile_(expr)
    assert isinstance(r, Compiled), r
    assert r.cost == cost


@pytest.mark.parametrize(
    "expr",
    [
        'device.attributes["gpu.example.com"].?numa.orValue(1) == 1',
        "device.attributes['gpu.example.com'].model.lowerAscii().startsWith('a100')",
        "[1, 2].isSorted() && sets.contains([1, 2], [1]) && 'abc'.find('b') == 'b'",
        "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0",
        "device.attributes['gpu.example.com'].model",  # unknown (any) type: accepted like upstream
    ],
)
def test_dra_style_expressions_compile(expr: str) -> None:
    assert isinstance(compile_(expr), Compiled)


def test_syntax_error_reports_position() -> None:
    r = compile_("device.driver ==")
    assert isinstance(r, CompileError) and r.kind == "Invalid"
    assert r.message.startswith("compilation failed: ERROR: <input>:1:17: Syntax error")


def test_undeclared_variable() -> None:
    r = compile_("foo == 1")
    assert isinstance(r, CompileError)
    assert "<input>:1:1: undeclared reference to 'foo'" in r.message


def test_unknown_device_field_and_gate_dependent_field() -> None:
    r = compile_("device.model == 'x'")
    assert isinstance(r, CompileError) and "<input>:1:7: undefined field 'model'" in r.message
    r = compile_("device.allowMultipleAllocations", consumable=False)
    assert isinstance(r, CompileError) and "undefined field 'allowMultipleAllocations'" in r.message


def test_comprehension_variable_named_device_is_not_the_device() -> None:
    assert isinstance(compile_("[{'a': 1}].all(device, device.a == 1)"), Compiled)


@pytest.mark.parametrize(
    ("expr", "type_"),
    [
        ("1", "int"),
        ("device.driver", "string"),
        ("'a' + 'b'", "string"),
        ('quantity("1")', "kubernetes.Quantity"),
    ],
)
def test_non_bool_result(expr: str, type_: str) -> None:
    r = compile_(expr)
    assert r == CompileError("Invalid", f"must evaluate to bool or the unknown type, not {type_}")


def test_too_long() -> None:
    expr = "true && " * 1280 + "true"
    assert len(expr) > 10240
    assert compile_(expr) == CompileError("TooLong", "may not be more than 10240 bytes")
    ok = "true" + " " * (10240 - 4)
    assert isinstance(compile_(ok), Compiled)


def test_cost_limit() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expr = f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, f > 0))))))"
    assert compile_(expr) == CompileError("Forbidden", "too complex, exceeds cost limit")
    assert isinstance(compile_(f"{ten}.all(a, {ten}.all(b, b > a))"), Compiled)


def test_includes_needs_list_attributes() -> None:
    expr = "device.attributes['d.example.com'].ids.includes(3)"
    assert isinstance(compile_(expr), CompileError)
    r = compile_(expr, lists=True)
    assert isinstance(r, Compiled) and r.cost == 4 + 48


def test_url_library_is_type_checked() -> None:
    r = compile_('url("https://example.com").getScheme() == "https"')
    assert isinstance(r, Compiled) and not r.unchecked
    bad = compile_('url("https://example.com").getScheme() == 1')
    assert isinstance(bad, CompileError) and "found no matching overload for '_==_'" in bad.message


API_DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "A100"},
        "numa": {"int": 1},
        "driverVersion": {"version": "1.2.3"},
        "other.example.com/flag": {"bool": True},
        "ids": {"ints": [1, 2, 3]},
    },
    "capacity": {"memory": {"value": "40Gi"}},
}


@pytest.mark.parametrize(
    ("expr", "lists", "want"),
    [
        (
            'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "A100"',
            True,
            True,
        ),
        ('device.capacity["gpu.example.com"].memory == quantity("40960Mi")', True, True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', True, False),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True, True),
        ('device.attributes["gpu.example.com"].driverVersion.minor() == 2', True, True),
        ('device.attributes["gpu.example.com"].?missing.orValue(7) == 7', True, True),
        ('"x" in device.attributes["unknown.example.com"]', True, False),
        ("cel.bind(o, device.attributes['other.example.com'], o.flag)", True, True),
        ("device.allowMultipleAllocations", True, False),
        ("device.attributes['gpu.example.com'].ids.includes(2)", True, True),
    ],
)
def test_evaluate(expr: str, lists: bool, want: bool) -> None:
    compiled = compile_(expr, lists=lists)
    assert isinstance(compiled, Compiled), compiled
    assert compiled.evaluate(normalise_device(API_DEVICE, "gpu.example.com")) is want


def test_evaluate_errors() -> None:
    device = normalise_device(API_DEVICE, "gpu.example.com")
    missing = compile_('device.attributes["gpu.example.com"].missing == 1', lists=True)
    assert isinstance(missing, Compiled)
    with pytest.raises(EvaluationError, match="missing"):
        missing.evaluate(device)
    scalar_only = compile_('device.attributes["gpu.example.com"].model == "A100"')
    assert isinstance(scalar_only, Compiled)
    # upstream converts list attributes whatever DRAListTypeAttributes says (the allocator's
    # list-attributes-disabled-* cases): an expression that does not read them evaluates normally
    assert scalar_only.evaluate(device) is True
    # a quantity compared with a semver is a type error at compile time, as in the API server
    cross = compile_('device.capacity["gpu.example.com"].memory.compareTo(semver("1.0.0")) == 0', lists=True)
    assert isinstance(cross, CompileError) and "found no matching overload for 'compareTo'" in cross.message
