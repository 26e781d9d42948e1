"""reads.analyse on the checked AST of real selectors."""

from webhook.cel.compiler import Compiled, compile_selector
from webhook.cel.interpreter.reads import analyse, attribute_ranges


def _ast(expr: str) -> Compiled:
    r = compile_selector(expr, list_attributes=True, consumable_capacity=True)
    assert isinstance(r, Compiled), r
    return r


def test_literal_lookups_are_projectable() -> None:
    c = _ast(
        'device.driver == "a" && device.attributes["gpu.example.com"].model == "x" && '
        'device.capacity["gpu.example.com"]["memory"].isGreaterThan(quantity("1Gi"))'
    )
    r = analyse(c.ast.expr)
    assert r.projectable and not r.whole_map
    assert r.reads == (
        ("attributes", "gpu.example.com", "model"),
        ("capacity", "gpu.example.com", "memory"),
        ("driver",),
    )


def test_whole_map_and_bound_variables() -> None:
    c = _ast('device.attributes.exists(d, d == "x")')
    r = analyse(c.ast.expr)
    assert not r.projectable and r.whole_map
    # a comprehension variable named `device` shadows the declared variable
    shadow = _ast('[1].exists(device, device == 1) && device.attributes["a"].b == 1')
    assert analyse(shadow.ast.expr).reads == (("attributes", "a", "b"),)
    bind = _ast('cel.bind(a, device.attributes["d"], a.x == 1)')
    assert analyse(bind.ast.expr).reads == (("attributes", "d"),)


def test_attribute_ranges() -> None:
    c = _ast('device.attributes["d.example.com"].ids.exists(x, x == 1)')
    assert attribute_ranges(c.ast.expr) == (("d.example.com", "ids"),)


def test_deep_expression_is_analysed_iteratively() -> None:
    expr = "device.driver == 'a' && " + " && ".join(f'device.attributes["d"].a{i} == 1' for i in range(250))
    r = analyse(_ast(expr).ast.expr)
    assert len(r.reads) == 251
