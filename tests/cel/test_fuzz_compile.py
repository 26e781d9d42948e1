"""The CEL front end on random and hostile input: every expression compiles or is a CompileError, never an
exception (no RecursionError at any nesting, no crash on garbage)."""

import random

import pytest

from tests.cel.exprgen import ExprGen
from webhook.cel.compiler import Compiled, CompileError, _compile
from webhook.cel.parser.parser import parse


@pytest.mark.parametrize("seed", range(4))
def test_generated_expressions_never_raise(seed: int) -> None:
    gen = ExprGen(1000 + seed, wrong=0.15)
    for _ in range(150):
        for lists in (False, True):
            r = _compile(gen.expression(), lists, True, True)
            assert isinstance(r, Compiled | CompileError)


def test_mutated_expressions_never_raise() -> None:
    rnd = random.Random(7)
    gen = ExprGen(99)
    alphabet = list("()[]{}.,?:!-+*/%<>=&|'\"`\\ \n\t0123456789abcxyz_@#$é") + [
        "in",
        "has(",
        ".?",
        "[?",
        "u",
        "e5",
    ]
    for _ in range(400):
        text = list(gen.expression())
        for _ in range(rnd.randrange(1, 6)):
            pos = rnd.randrange(len(text) + 1)
            op = rnd.randrange(3)
            if op == 0:
                text.insert(pos, rnd.choice(alphabet))
            elif op == 1 and text:
                del text[min(pos, len(text) - 1)]
            elif text:
                text[min(pos, len(text) - 1)] = rnd.choice(alphabet)
        r = _compile("".join(text), bool(rnd.randrange(2)), True, True)
        assert isinstance(r, Compiled | CompileError)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000,
        "[" * 5000 + "]" * 5000,
        "!" * 10000 + "true",
        "-" * 10000 + "1",
        "a." * 3000 + "b",
        "f(" * 3000,
        "{" * 3000,
        "true ? " * 2000,
        "x" + "[0]" * 2000,
        "1" + " + 1" * 2000,
        "a" + " && a" * 2000,
        '"' * 5001,
        "'''" + "a" * 9000,
        "[" + "1," * 4000 + "]",
        "{" + "1: 2," * 2000 + "}",
    ],
)
def test_hostile_inputs_are_bounded_findings(text: str) -> None:
    r = _compile(text[:10240], True, True, True)
    assert isinstance(r, Compiled | CompileError)
    parse(text * 4)  # past the DRA length limit the parser alone still holds (up to 100,000 code points)
