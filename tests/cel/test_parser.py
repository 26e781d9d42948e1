"""The CEL parser against cel-go's behaviour (messages and limits recorded from upstream's compiler)."""

import pytest

from webhook.cel.common import ast
from webhook.cel.common.errors import render
from webhook.cel.parser.parser import parse

FIRST = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
    "IDENTIFIER}"
)


def _errors(text: str) -> str:
    r = parse(text)
    assert r.expr is None, f"{text!r} parsed"
    return render(r.issues, text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "1 +",
            f"ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {FIRST}\n | 1 +\n | ...^",
        ),
        ("(1", "ERROR: <input>:1:3: Syntax error: missing ')' at '<EOF>'\n | (1\n | ..^"),
        ("1 2", "ERROR: <input>:1:3: Syntax error: extraneous input '2' expecting <EOF>\n | 1 2\n | ..^"),
        ("a b c", "ERROR: <input>:1:3: Syntax error: mismatched input 'b' expecting <EOF>\n | a b c\n | ..^"),
        ("a.", "ERROR: <input>:1:3: Syntax error: no viable alternative at input '.'\n | a.\n | ..^"),
        (
            "device..x",
            "ERROR: <input>:1:8: Syntax error: no viable alternative at input '..'\n | device..x\n | .......^",
        ),
        (
            "[1,2",
            "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {']', ','}\n | [1,2\n | ....^",
        ),
        (
            "1 ? 2",
            "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting ':'\n | 1 ? 2\n | .....^",
        ),
        (
            "a.true",
            "ERROR: <input>:1:3: Syntax error: mismatched input 'true' expecting IDENTIFIER\n | a.true\n | ..^",
        ),
        ("(1 2)", "ERROR: <input>:1:4: Syntax error: extraneous input '2' expecting ')'\n | (1 2)\n | ...^"),
        ("a.`b c`", "ERROR: <input>:1:3: unsupported syntax: '`'\n | a.`b c`\n | ..^"),
        ("if", "ERROR: <input>:1:1: reserved identifier: if\n | if\n | ^"),
        ("has(a)", "ERROR: <input>:1:5: invalid argument to has() macro\n | has(a)\n | ....^"),
        (
            "a.all(1, true)",
            "ERROR: <input>:1:7: argument must be a simple name\n | a.all(1, true)\n | ......^",
        ),
        ("a.map(x.y, 1)", "ERROR: <input>:1:8: argument is not an identifier\n | a.map(x.y, 1)\n | .......^"),
        (
            "[1].all(i, i, true)",
            "ERROR: <input>:1:12: duplicate variable name: i\n | [1].all(i, i, true)\n | ...........^",
        ),
        (
            "cel.bind(a.b, 1, 2)",
            "ERROR: <input>:1:11: cel.bind() variable names must be simple identifiers\n"
            " | cel.bind(a.b, 1, 2)\n | ..........^",
        ),
        ("9223372036854775808", "ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^"),
        (
            "--9223372036854775808",
            "ERROR: <input>:1:3: invalid int literal\n | --9223372036854775808\n | ..^",
        ),
        ("18446744073709551616u", "ERROR: <input>:1:1: invalid uint literal\n | 18446744073709551616u\n | ^"),
        ("1e999 > 0.0", "ERROR: <input>:1:1: invalid double literal\n | 1e999 > 0.0\n | ^"),
        ('"\\uD800"', 'ERROR: <input>:1:1: invalid unicode code point\n | "\\uD800"\n | ^'),
        ('b"\\u0041"', 'ERROR: <input>:1:1: unable to unescape string\n | b"\\u0041"\n | ^'),
        (
            "a & b",
            "ERROR: <input>:1:3: Syntax error: token recognition error at: '& '\n | a & b\n | ..^\n"
            "ERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>\n | a & b\n | ....^",
        ),
        (
            '"\\q"',
            'ERROR: <input>:1:1: Syntax error: token recognition error at: \'"\\q\'\n | "\\q"\n | ^\n'
            'ERROR: <input>:1:4: Syntax error: token recognition error at: \'"\'\n | "\\q"\n | ...^\n'
            f"ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {FIRST}\n | \"\\q\"\n | ....^",
        ),
        (
            '"é" +',
            f"ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {FIRST}\n | \"é\" +\n | .．...^",
        ),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    assert _errors(text) == message


# Where upstream's parser starts rejecting (probed with cel-go v0.27 in the Kubernetes environment).
NESTING = [
    ("(" * 249 + "true" + ")" * 249, None),
    ("(" * 250 + "true" + ")" * 250, "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"),
    (" + ".join(["1"] * 250) + " > 0", None),
    (" + ".join(["1"] * 251) + " > 0", "ERROR: <input>:-1:0: max recursion depth exceeded"),
    ("true ? true : " * 249 + "true", None),
    ("true ? true : " * 250 + "true", "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"),
    ("1 + (" * 124 + "1" + ")" * 124 + " > 0", None),
    (
        "1 + (" * 125 + "1" + ")" * 125 + " > 0",
        "ERROR: <input>:-1:0: expression recursion limit exceeded: 250",
    ),
    ("1 + 2 * (" * 83 + "1" + ")" * 83 + " > 0", None),
    (
        "1 + 2 * (" * 84 + "1" + ")" * 84 + " > 0",
        "ERROR: <input>:-1:0: expression recursion limit exceeded: 250",
    ),
    ("true == (" * 124 + "true" + ")" * 124, None),
    ("true == (" * 125 + "true" + ")" * 125, "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"),
    ("x" + "[0]" * 250, None),
    ("x" + "[0]" * 251, "ERROR: <input>:-1:0: max recursion depth exceeded"),
    ("x" + ".f()" * 250, None),
    ("x" + ".f()" * 251, "ERROR: <input>:-1:0: max recursion depth exceeded"),
    ("a && (" * 249 + "b" + ")" * 249, None),
    ("a && (" * 250 + "b" + ")" * 250, "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"),
    ("[" * 249 + "1" + "]" * 249, None),
]


@pytest.mark.parametrize(("text", "error"), NESTING, ids=range(len(NESTING)))
def test_nesting_limits_as_upstream(text: str, error: str | None) -> None:
    r = parse(text)
    if error is None:
        assert r.expr is not None, render(r.issues, text)
    else:
        assert r.expr is None and render(r.issues, text) == error


def test_deep_ast_is_walked_without_recursion() -> None:
    text = "x" + ".f()" * 250
    r = parse(text)
    assert r.expr is not None
    assert ast.depth(r.expr.expr) == 251
    assert sum(1 for _ in ast.walk(r.expr.expr)) == 251


def test_macros_expand_like_cel_go() -> None:
    r = parse("device.attributes['x'].exists(k, v, v == 1)")
    assert r.expr is not None
    e = r.expr.expr
    assert isinstance(e, ast.Comprehension)
    assert (e.iter_var, e.iter_var2, e.accu_var) == ("k", "v", "@result")
    assert isinstance(e.loop_condition, ast.Call) and e.loop_condition.function == "@not_strictly_false"
    bind = parse("cel.bind(x, 1, x + 1)").expr
    assert bind is not None and isinstance(bind.expr, ast.Comprehension)
    assert (bind.expr.iter_var, bind.expr.accu_var) == ("#unused", "x")
    # `has` on a selection becomes a presence test located at the selection's '.'
    h = parse("has(a.b)").expr
    assert h is not None and isinstance(h.expr, ast.Select) and h.expr.test_only


def test_literals() -> None:
    cases = {
        "0x1F": ("int", 31),
        "1u": ("uint", 1),
        "0xFFu": ("uint", 255),
        "-9223372036854775808": ("int", -(1 << 63)),
        "1.5e3": ("double", 1500.0),
        ".5": ("double", 0.5),
        "r'a\\n'": ("string", "a\\n"),
        "'''a\nb'''": ("string", "a\nb"),
        'b"\\xff\\101"': ("bytes", b"\xffA"),
        '"\\x41\\u00e9\\101"': ("string", "Aé" + "A"),
        "null": ("null", None),
    }
    for text, (kind, value) in cases.items():
        r = parse(text)
        assert r.expr is not None, text
        c = r.expr.expr
        assert isinstance(c, ast.Const) and (c.kind, c.value) == (kind, value), text


def test_locations_are_code_points_and_lines() -> None:
    r = parse('"é" ==\n  x')
    assert r.expr is not None
    e = r.expr.expr
    assert isinstance(e, ast.Call)
    assert r.expr.source.location(e.id) == (1, 4)
    assert r.expr.source.location(e.args[1].id) == (2, 2)
