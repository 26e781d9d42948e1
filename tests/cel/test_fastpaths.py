"""The front end's fast paths give exactly what its general paths give: the token regex against ANTLR's
character rules, the parser's generator-free operands/relations against the full productions, the
checker's inline nodes and overload memo against its generators, the cost estimator's inline calls and
&&/|| trees against its generic walk, and the compiler's skipped validators/planning checks against
running them always. Same verdict, message, AST (ids, positions), types, references and cost."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cel.exprgen import ExprGen
from webhook.cel import compiler
from webhook.cel.checker import checker, cost
from webhook.cel.common import ast as A
from webhook.cel.compiler import Compiled, CompileError, _compile
from webhook.cel.parser import lexer, nodes, parsefast
from webhook.cel.parser.unescape import unescape

GATES = [(False, True), (True, True), (False, False)]


def _corpus() -> list[str]:
    out: list[str] = []
    gen = ExprGen(4242, wrong=0.12)
    out += [gen.expression() for _ in range(200)]
    rnd = random.Random(4243)
    alphabet = list("()[]{}.,?:!-+*/%<>=&|'\"`\\ \n\t0123456789abcxyz_é") + ["in", "has(", ".?", "[?", "'''"]
    for _ in range(200):
        text = list(gen.expression())
        for _ in range(rnd.randrange(1, 5)):
            pos = rnd.randrange(len(text) + 1)
            if rnd.randrange(2):
                text.insert(pos, rnd.choice(alphabet))
            elif text:
                del text[min(pos, len(text) - 1)]
        out.append("".join(text))
    # depth limits around the fast paths (a nested expr in a ternary chain, parentheses, indexes, lists)
    for x in ('a["x"] == b["y"]', "a.b[1] < 2", '"s"[0]', "a < b < c", "a.b.c"):
        for n in (124, 125, 246, 247, 248, 249, 250):
            out += [
                "x ? y : " * n + "f(" + x + ")",
                "x ? y : " * n + "[" + x + "]",
                "(" * n + x + ")" * n,
                "[" * n + x + "]" * n,
                "a[" * n + x + "]" * n,
            ]
    out += [
        " || ".join(f"device.driver == 'd{i}.example.com'" for i in range(240)),
        " && ".join(f'device.attributes["gpu.example.com"].a{i} == "v{i}"' for i in range(100)),
        "[1, 2, 'a'].exists(x, x == 1) && {'a': 1, 'b': 'c'}.size() > 0",
        "'%d %s'.format([1, [2, 'x']]) == '' && duration('1x') > duration('1s')",
        "device.driver.matches('(') || int('x') == 1 || timestamp('2020') > timestamp(0)",
        "net.IP == type(ip('1.2.3.4')) && sets.contains([1], [1]) && .device.driver == ''",
    ]
    return [e[:10240] for e in out]


def _value(v: Any) -> Any:
    if isinstance(v, A.Expr):
        return v.id
    if isinstance(v, A.MapEntry):
        return ("entry", v.id, v.key.id, v.value.id, v.optional)
    if isinstance(v, A.StructField):
        return ("field", v.id, v.name, v.value.id, v.optional)
    if isinstance(v, tuple):
        return tuple(_value(x) for x in v)
    return repr(v)


def _nodes(root: A.Expr) -> Iterator[tuple[Any, ...]]:
    for e in A.walk(root):
        yield (type(e).__name__, e.id, tuple(_value(getattr(e, f.name)) for f in dataclasses.fields(e)))


def _outcome(expr: str, lists: bool, consumable: bool) -> Any:
    r = _compile(expr, lists, consumable, True)
    if isinstance(r, CompileError):
        return (r.kind, r.message)
    assert isinstance(r, Compiled)
    src = r.ast.source
    nodes = list(_nodes(r.ast.expr))
    return (
        r.cost,
        str(r.output_type),
        nodes,
        [src.location(n[1]) for n in nodes],
        sorted((k, repr(v)) for k, v in r.types.items()),
        sorted(r.refs.items()),
        sorted(r.qualified.items()),
    )


def _outcomes(corpus: list[str]) -> list[Any]:
    return [_outcome(e, lists, consumable) for e in corpus for lists, consumable in GATES]


def _generic_start(self: Any, e: A.Expr) -> Any:
    """The checker's walk with a generator for every inner node (no inline nodes, no &&/|| trees)."""
    if isinstance(e, A.Const):
        self.types[e.id] = checker._CONST_TYPES[e.kind]
        return None
    if isinstance(e, A.Ident):
        self.check_ident(e)
        return None
    return {
        A.Call: self.check_call,
        A.Select: self.check_select,
        A.ListExpr: self.check_list,
        A.MapExpr: self.check_map,
        A.StructExpr: self.check_struct,
        A.Comprehension: self.check_comprehension,
    }[type(e)](e)


def _generic_visit(self: Any, e: A.Expr) -> Any:
    """The cost walk with a generator for every inner node (no inline calls, no &&/|| trees)."""
    if isinstance(e, A.Const):
        self.ret = (0, 0)
        return None
    if isinstance(e, A.Ident):
        self.ident(e)
        return None
    if isinstance(e, A.Select):
        return self.cost_select(e)
    if isinstance(e, A.Call):
        return self.cost_call(e)
    return self.cost_other(e)


def test_fast_paths_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus()
    fast = _outcomes(corpus)
    never = re.compile(r"(?!)")
    monkeypatch.setattr(lexer, "_FAST", never)
    monkeypatch.setattr(parsefast, "relation", lambda p: None)
    monkeypatch.setattr(parsefast, "expr", lambda p: None)
    monkeypatch.setattr(parsefast, "unary", lambda p: None)
    monkeypatch.setattr(parsefast, "SIMPLE_LITERALS", frozenset())
    monkeypatch.setattr(nodes, "_ID_POOL", ())
    monkeypatch.setattr(checker, "_MEMO_TYPE_NODES", -1)  # no resolution memoised
    monkeypatch.setattr(checker._Checker, "start", _generic_start)
    monkeypatch.setattr(cost._Coster, "visit", _generic_visit)
    monkeypatch.setattr(cost._Coster, "leaf", lambda self, a: None)
    monkeypatch.setattr(compiler, "_needs_validators", lambda checked: True)
    monkeypatch.setattr(compiler, "_needs_planning_checks", lambda checked: True)
    monkeypatch.setattr(compiler, "_ENVS", {})  # fresh environments: an empty overload memo
    general = _outcomes(corpus)
    assert len(fast) == len(general)
    for i, (a, b) in enumerate(zip(fast, general, strict=True)):
        assert a == b, (corpus[i // len(GATES)], GATES[i % len(GATES)])


def test_token_regex_agrees_with_the_character_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(99)
    pieces = list("()[]{}.,?:!-+*/%<>=&|'\"`\\ \n\t\r\f0123456789abcxyz_éxXuUeErRbB") + [
        "'''",
        '"""',
        "//",
        "0x",
        "1.5",
        "r'",
        "b'",
        'br"',
        "\\u00",
        "in",
        "true",
        "null",
    ]
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 14))) for _ in range(20000)]

    def tokens(s: str) -> tuple[Any, ...]:
        t = lexer.lex(s)
        return (t.kinds, t.texts, t.starts, [(e.start, e.text) for e in t.errors])

    fast = [tokens(s) for s in texts]
    monkeypatch.setattr(lexer, "_FAST", re.compile(r"(?!)"))
    for s, expected in zip(texts, fast, strict=True):
        assert tokens(s) == expected, s


@pytest.mark.parametrize("body", ["", "a", "abc def", "é ü", "x\ty", "1.5e3", "%s", "'", '"'])
def test_plain_string_literals_need_no_decoding(body: str) -> None:
    # the parser takes the text between the quotes of a literal without backslash or CR as its value
    for q in ("'", '"'):
        if q in body:
            continue
        assert unescape(q + body + q, False) == body
