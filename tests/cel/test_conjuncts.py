"""The top-level terms of a CEL conjunction (what `explain pod` drops one at a time): split only where
`&&` joins the whole expression, never inside strings, calls, lists, maps, a disjunction or a ternary;
what is left of a selector after dropping a term compiles and means the conjunction of the others."""

from __future__ import annotations

import pytest

from webhook.cel.conjuncts import conjuncts, without
from webhook.cel.parser.parser import parse


@pytest.mark.parametrize(
    ("expression", "terms"),
    [
        ("a && b", ["a", "b"]),
        ("(a && b)", ["a", "b"]),
        ("((a && b) && c)", ["a", "b", "c"]),
        ("(a || b) && c", ["(a || b)", "c"]),
        ('a.b == "x && y" && c', ['a.b == "x && y"', "c"]),
        ("f(a && b, c) && d", ["f(a && b, c)", "d"]),
        ('{"k": a && b}.k && [x && y][0]', ['{"k": a && b}.k', "[x && y][0]"]),
        ("\n  a // first\n  && b\n", ["a", "b"]),
        ("a && b || c", ["a && b || c"]),
        ("x ? a && b : c", ["x ? a && b : c"]),
        ("!(a && b)", ["!(a && b)"]),
        ("a", ["a"]),
        ("a &&", ["a &&"]),
        ("a && 'unterminated", ["a && 'unterminated"]),
    ],
)
def test_terms_are_split_at_the_top_level_only(expression: str, terms: list[str]) -> None:
    assert conjuncts(expression) == terms


def test_dropping_a_term_keeps_the_others_and_compiles() -> None:
    expr = (
        'device.attributes["gpu.example.com"].model == "A100" && '
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0 && '
        '(device.attributes["gpu.example.com"].index < 4 || device.attributes["gpu.example.com"].index > 6)'
    )
    terms = conjuncts(expr)
    assert len(terms) == 3
    for i in range(3):
        rest = without(terms, i)
        assert terms[i] not in rest
        assert not parse(rest).issues, rest
    assert without(["only"], 0) == ""
