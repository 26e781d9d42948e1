"""The CEL parser: cel-go's grammar, macros, limits and syntax-error wording (as configured by Kubernetes:
optional syntax on, identifier escapes off, recursion limit 250, 100,000 code points).

    parse("device.driver == 'a'") -> ParseResult(expr=ParsedExpr | None, issues=[Issue, ...])

Limits, as cel-go counts them: ANTLR's per-rule invocation depth (> 250: "expression recursion limit
exceeded: 250"; each bracket or ternary level enters `expr` once, binary operators nest `relation` and `calc`
up to 2 and 3 times per level) and the parse-tree visitor's depth over selections, calls on a receiver,
indexes, binary operators and ternaries (> 250: "max recursion depth exceeded"). The recursive descent runs
on an explicit stack of generators: no input can exhaust Python's recursion limit.

Divergence: after the first syntax error cel-go's ANTLR parser recovers and may report more errors; we report
the lexer's errors and the first syntax error only (the verdict is the same: invalid).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from webhook.cel import macros
from webhook.cel.ast import (
    Call,
    Const,
    Expr,
    Ident,
    ListExpr,
    MapEntry,
    MapExpr,
    ParsedExpr,
    Select,
    SourceInfo,
    StructExpr,
    StructField,
    Unspecified,
)
from webhook.cel.errors import Issue
from webhook.cel.lexer import EOF, Token, display_set, display_token, tokenize
from webhook.cel.unescape import UnescapeError, unescape

MAX_RECURSION = 250
MAX_CODE_POINTS = 100_000

RESERVED = frozenset(
    "as break const continue else false for function if import in let loop package namespace null "
    "return true var void while".split()
)
_FIRST = frozenset(
    ["[", "{", "(", ".", "-", "!", "true", "false", "null", "NUM_FLOAT", "NUM_INT", "NUM_UINT", "STRING"]
    + ["BYTES", "IDENTIFIER"]
)
_PRIMARY_FIRST = _FIRST - {"!"}
_RELOPS = {"<": "_<_", "<=": "_<=_", ">=": "_>=_", ">": "_>_", "==": "_==_", "!=": "_!=_", "in": "@in"}
_MULOPS = {"*": "_*_", "/": "_/_", "%": "_%_"}
_ADDOPS = {"+": "_+_", "-": "_-_"}
_INT64 = 1 << 63
_UINT64 = 1 << 64
T = TypeVar("T")


_Gen = Generator[Any, Any, T]


class _Abort(Exception):
    """Stops the parse (first syntax error, or a recursion limit: `internal` is its message)."""

    def __init__(self, internal: str = "") -> None:
        self.internal = internal


@dataclass(frozen=True, slots=True)
class ParseResult:
    expr: ParsedExpr | None
    issues: list[Issue]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks, lex_errors = tokenize(text)
        self.source = SourceInfo(text)
        self.pos = 0
        self.next_id = 1
        self.syntax: list[tuple[int, str]] = [
            (e.start, f"Syntax error: token recognition error at: '{_esc(e.text)}'") for e in lex_errors
        ]
        self.visitor: list[tuple[int, str]] = []  # errors of cel-go's tree visitor (offset, message)
        self.expr_d = 0
        self.rel_d = 0
        self.calc_d = 0
        self.visit_overflow = -1  # offset of the first node beyond the visitor's depth limit

    # ids and tokens
    def new_id(self, offset: int) -> int:
        i = self.next_id
        self.next_id += 1
        self.source.offsets[i] = offset
        return i

    @property
    def la(self) -> Token:
        return self.toks[self.pos]

    def la2(self) -> Token:
        return self.toks[min(self.pos + 1, len(self.toks) - 1)]

    def consume(self) -> Token:
        t = self.toks[self.pos]
        if t.kind != EOF:
            self.pos += 1
        return t

    # errors
    def fail(self, tok: Token, message: str) -> _Abort:
        self.syntax.append((tok.start, "Syntax error: " + message))
        return _Abort()

    def mismatched(self, expected: frozenset[str] | set[str]) -> _Abort:
        return self.fail(
            self.la, f"mismatched input {display_token(self.la)} expecting {display_set(expected)}"
        )

    def expect(self, kind: str, follow: frozenset[str] | set[str]) -> Token:
        """ANTLR's match(): single-token deletion, then insertion, then mismatch."""
        t = self.la
        if t.kind == kind:
            return self.consume()
        if self.la2().kind == kind:
            self.syntax.append(
                (
                    t.start,
                    f"Syntax error: extraneous input {display_token(t)} expecting {display_set({kind})}",
                )
            )
            self.consume()
            return self.consume()
        if t.kind in follow:
            raise self.fail(t, f"missing '{kind}' at {display_token(t)}")
        raise self.mismatched({kind})

    def single_token_deletion(self, expected: frozenset[str]) -> None:
        """ANTLR's sync at a block start: drop one unexpected token when the next one fits, else fail."""
        t = self.la
        if self.la2().kind not in expected:
            raise self.mismatched(expected)
        msg = f"extraneous input {display_token(t)} expecting {display_set(expected)}"
        self.syntax.append((t.start, "Syntax error: " + msg))
        self.consume()

    def no_viable(self, start: Token, offending: Token) -> _Abort:
        end = offending.start + len(offending.text) if offending.kind != EOF else len(self.text)
        return self.fail(offending, f"no viable alternative at input '{_esc(self.text[start.start : end])}'")

    def visitor_error(self, offset: int, message: str) -> Unspecified:
        self.visitor.append((offset, message))
        return Unspecified(self.new_id(offset))

    def check_depth(self) -> None:
        if self.expr_d > MAX_RECURSION or self.rel_d > MAX_RECURSION or self.calc_d > MAX_RECURSION:
            raise _Abort(f"expression recursion limit exceeded: {MAX_RECURSION}")

    def counted(self, height: int, offset: int) -> int:
        """The visitor depth of a counted node over children of `height`."""
        if height + 1 > MAX_RECURSION and self.visit_overflow < 0:
            self.visit_overflow = offset
        return height + 1

    # grammar (inlined so that one bracket level costs at most three Python frames)
    def expr(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        """expr: conditionalOr ('?' conditionalOr ':' expr)? — the else-chain iteratively."""
        self.expr_d += 1
        self.check_depth()
        entered = 1
        chain: list[tuple[Expr, int, Token, Expr, int]] = []
        in_then = False
        pending: tuple[Expr, int, Token] | None = None
        while True:
            # conditionalOr: conditionalAnd ('||' conditionalAnd)*
            or_terms: list[tuple[Expr, int]] = []
            or_ops: list[Token] = []
            while True:
                and_terms: list[tuple[Expr, int]] = []
                and_ops: list[Token] = []
                while True:
                    and_terms.append((yield self.relation(follow)))
                    if self.la.kind == "&&":
                        and_ops.append(self.consume())
                        continue
                    break
                or_terms.append(self.balance("_&&_", and_terms, and_ops))
                if self.la.kind == "||":
                    or_ops.append(self.consume())
                    continue
                break
            part, hp = self.balance("_||_", or_terms, or_ops)
            if in_then:
                assert pending is not None
                self.expect(":", _FIRST)
                chain.append((pending[0], pending[1], pending[2], part, hp))
                self.expr_d += 1
                entered += 1
                self.check_depth()
                in_then = False
                continue
            if self.la.kind == "?":
                pending = (part, hp, self.consume())
                in_then = True
                continue
            break
        e, h = part, hp
        for c, hc, q, then, ht in reversed(chain):
            h = self.counted(max(hc, ht, h), q.start)
            e = self.global_call(q, "_?_:_", (c, then, e))
        self.expr_d -= entered
        return e, h

    def balance(self, fn: str, terms: list[tuple[Expr, int]], ops: list[Token]) -> tuple[Expr, int]:
        if not ops:
            return terms[0]
        h = max(t[1] for t in terms)
        ids = [self.new_id(op.start) for op in ops]

        def tree(lo: int, hi: int) -> Expr:  # recursion depth is log2(len(ops))
            mid = (lo + hi + 1) // 2
            left = terms[mid][0] if mid == lo else tree(lo, mid - 1)
            right = terms[mid + 1][0] if mid == hi else tree(mid + 1, hi)
            return Call(ids[mid], fn, None, (left, right))

        return tree(0, len(ops) - 1), h

    def relation(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        """relation and calc (left-associative, two precedence levels), as ANTLR nests their rules."""
        self.rel_d += 1
        self.check_depth()
        lhs, h = yield self.calc_chain(follow)
        while self.la.kind in _RELOPS:
            op = self.consume()
            self.rel_d += 1
            self.check_depth()
            rhs, hr = yield self.calc_chain(follow)
            self.rel_d -= 1
            h = self.counted(max(h, hr), op.start)
            lhs = self.global_call(op, _RELOPS[op.kind], (lhs, rhs))
        self.rel_d -= 1
        return lhs, h

    def calc_chain(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        self.calc_d += 1
        self.check_depth()
        lhs, h = yield self.unary(follow)
        while True:
            k = self.la.kind
            if k in _MULOPS:
                op = self.consume()
                self.calc_d += 1
                self.check_depth()
                rhs, hr = yield self.unary(follow)
                self.calc_d -= 1
            elif k in _ADDOPS:
                op = self.consume()
                self.calc_d += 1
                self.check_depth()
                rhs, hr = yield self.unary(follow)
                while self.la.kind in _MULOPS:  # calc(2): binds tighter
                    op2 = self.consume()
                    self.calc_d += 1
                    self.check_depth()
                    r2, h2 = yield self.unary(follow)
                    self.calc_d -= 1
                    hr = self.counted(max(hr, h2), op2.start)
                    rhs = self.global_call(op2, _MULOPS[op2.kind], (rhs, r2))
                self.calc_d -= 1
            else:
                break
            h = self.counted(max(h, hr), op.start)
            lhs = self.global_call(op, (_MULOPS | _ADDOPS)[op.kind], (lhs, rhs))
        self.calc_d -= 1
        return lhs, h

    def unary(self, follow: frozenset[str], extra: frozenset[str] = frozenset()) -> _Gen[tuple[Expr, int]]:
        """unary: member | '!'+ member | '-'+ member (a sign before a number is part of the literal)."""
        t = self.la
        if t.kind not in _FIRST:
            expected = _FIRST | extra
            if self.la2().kind in _FIRST:
                self.syntax.append(
                    (
                        t.start,
                        f"Syntax error: extraneous input {display_token(t)} expecting {display_set(expected)}",
                    )
                )
                self.consume()
                t = self.la
            else:
                raise self.mismatched(expected)
        if t.kind == "!" or (t.kind == "-" and self.la2().kind not in ("NUM_INT", "NUM_FLOAT")):
            ops = [self.consume()]
            while self.la.kind == t.kind:
                ops.append(self.consume())
            nxt = self.la
            signed = nxt.kind == "-" and self.toks[min(self.pos + 1, len(self.toks) - 1)].kind in (
                "NUM_INT",
                "NUM_FLOAT",
            )
            if nxt.kind not in _PRIMARY_FIRST or (nxt.kind == "-" and not signed):
                if t.kind == "!":
                    raise self.fail(
                        nxt, f"extraneous input {display_token(nxt)} expecting {display_set(_FIRST)}"
                    )
                raise self.no_viable(t, nxt)
            operand, h = yield self.member(follow)
            if len(ops) % 2 == 0:
                return operand, h
            return self.global_call(ops[0], "!_" if t.kind == "!" else "-_", (operand,)), h
        return (yield self.member(follow))

    def member(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        e, h = yield self.primary(follow)
        while True:
            k = self.la.kind
            if k == ".":
                dot = self.consume()
                opt = None
                if self.la.kind == "?":
                    opt = self.consume()
                name_tok = self.la
                if name_tok.kind not in ("IDENTIFIER", "ESC_IDENTIFIER") and opt is not None:
                    self.single_token_deletion(_IDENTS)
                    name_tok = self.la
                if name_tok.kind not in ("IDENTIFIER", "ESC_IDENTIFIER"):
                    if name_tok.kind in ("true", "false", "null"):
                        raise self.fail(name_tok, f"mismatched input '{name_tok.text}' expecting IDENTIFIER")
                    raise self.no_viable(dot, name_tok)
                self.consume()
                if name_tok.kind == "IDENTIFIER" and opt is None and self.la.kind == "(":
                    open_ = self.consume()
                    args, ha = yield self.args(open_, follow)
                    h = self.counted(max(h, ha), dot.start)
                    e = self.member_call(open_, name_tok.text, e, args)
                    continue
                name = name_tok.text
                if name_tok.kind == "ESC_IDENTIFIER":
                    self.visitor.append((name_tok.start, "unsupported syntax: '`'"))
                h = self.counted(h, dot.start)
                if opt is not None:
                    field = Const(self.new_id(name_tok.start), "string", name)
                    e = Call(self.new_id(dot.start), "_?._", None, (e, field))
                else:
                    e = Select(self.new_id(dot.start), e, name)
            elif k == "[":
                open_ = self.consume()
                fn = "_[_]"
                if self.la.kind == "?":
                    self.consume()
                    fn = "_[?_]"
                idx, hi = yield self.sub_expr(
                    frozenset({"]"}), frozenset({"?"}) if fn == "_[_]" else frozenset()
                )
                self.expect("]", follow | _POSTFIX)
                h = self.counted(max(h, hi), open_.start)
                e = self.global_call(open_, fn, (e, idx))
            else:
                return e, h

    def sub_expr(self, follow: frozenset[str], extra: frozenset[str] = frozenset()) -> _Gen[tuple[Expr, int]]:
        """A nested `expr`, with the extra tokens ANTLR would also accept where it starts."""
        t = self.la
        if t.kind not in _FIRST and extra:
            expected = _FIRST | extra
            if self.la2().kind not in _FIRST:
                raise self.mismatched(expected)
            msg = f"extraneous input {display_token(t)} expecting {display_set(expected)}"
            self.syntax.append((t.start, "Syntax error: " + msg))
            self.consume()
        return (yield self.expr(follow))

    def args(self, open_: Token, follow: frozenset[str]) -> _Gen[tuple[tuple[Expr, ...], int]]:
        if self.la.kind == ")":
            self.consume()
            return (), 0
        if self.la.kind not in _FIRST:
            t = self.la
            if self.la2().kind not in _FIRST and self.la2().kind != ")":
                raise self.mismatched(_FIRST | {")"})
            msg = f"extraneous input {display_token(t)} expecting {display_set(_FIRST | {')'})}"
            self.syntax.append((t.start, "Syntax error: " + msg))
            self.consume()
            if self.la.kind == ")":
                self.consume()
                return (), 0
        out = []
        h = 0
        while True:
            a, ha = yield self.expr(frozenset({",", ")"}))
            out.append(a)
            h = max(h, ha)
            if self.la.kind == ",":
                self.consume()
                continue
            self.expect(")", follow | _POSTFIX)
            return tuple(out), h

    def primary(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        t = self.la
        k = t.kind
        if k == "." or k == "IDENTIFIER":
            return (yield self.ident_or_call(follow))
        if k == "(":
            self.consume()
            e, h = yield self.expr(frozenset({")"}))
            self.expect(")", follow | _POSTFIX)
            return e, h
        if k == "[":
            return (yield self.list_lit(follow))
        if k == "{":
            return (yield self.map_lit(follow))
        return self.literal(), 0

    def ident_or_call(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        start = self.la
        lead = ""
        if start.kind == ".":
            self.consume()
            if self.la.kind != "IDENTIFIER":
                raise self.no_viable(start, self.la)
            lead = "."
        id_tok = self.consume()
        # CreateMessage: IDENT ('.' IDENT)* '{'
        j = self.pos
        while self.toks[j].kind == "." and self.toks[j + 1].kind == "IDENTIFIER":
            j += 2
        if self.toks[j].kind == "{":
            names = [self.toks[k].text for k in range(id_tok.index, j, 2)]
            self.pos = j
            return (yield self.message(start, lead + ".".join(names), follow))
        name = id_tok.text
        if name in RESERVED:
            if self.la.kind == "(":
                self.consume()
                (yield self.args(id_tok, follow))
            return self.visitor_error(start.start, f"reserved identifier: {name}"), 0
        if self.la.kind == "(":
            open_ = self.consume()
            args, h = yield self.args(open_, follow)
            return self.global_call(open_, lead + name, args), h
        return Ident(self.new_id(id_tok.start), lead + name), 0

    def message(self, start: Token, type_name: str, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        brace = self.consume()
        fields: list[StructField] = []
        h = 0
        while self.la.kind != "}":
            opt = False
            if self.la.kind == "?":
                self.consume()
                opt = True
            name_tok = self.la
            if name_tok.kind not in ("IDENTIFIER", "ESC_IDENTIFIER"):
                if opt:
                    self.single_token_deletion(_IDENTS)
                elif fields:
                    raise self.mismatched({"}", ","})
                else:
                    self.single_token_deletion(_IDENTS | {"}", ",", "?"})
                name_tok = self.la
            self.consume()
            col = self.expect(":", _FIRST)
            v, hv = yield self.expr(frozenset({",", "}"}))
            h = max(h, hv)
            if name_tok.kind == "ESC_IDENTIFIER":
                self.visitor.append((name_tok.start, "unsupported syntax: '`'"))
            fields.append(StructField(self.new_id(col.start), name_tok.text, v, opt))
            if self.la.kind == ",":
                self.consume()
                continue
            break
        self.expect("}", follow | _POSTFIX)
        return StructExpr(self.new_id(brace.start), type_name, tuple(fields)), h

    def list_lit(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        open_ = self.consume()
        elems: list[Expr] = []
        opts: list[int] = []
        h = 0
        first = True
        while True:
            k = self.la.kind
            if k == "]":
                break
            if k == "," and first:
                self.consume()
                if self.la.kind != "]":
                    raise self.mismatched({"]"})
                break
            if k == "?":
                self.consume()
                opts.append(len(elems))
            elif k not in _FIRST:
                raise self.mismatched(_FIRST | ({"]", ",", "?"} if first else {"]", "?"}))
            e, he = yield self.expr(frozenset({",", "]"}))
            elems.append(e)
            h = max(h, he)
            first = False
            if self.la.kind == ",":
                self.consume()
                continue
            if self.la.kind != "]":
                if self.la2().kind in ("]", ","):
                    t = self.la
                    self.syntax.append(
                        (t.start, f"Syntax error: extraneous input {display_token(t)} expecting {{']', ','}}")
                    )
                    self.consume()
                    continue
                raise self.mismatched({"]", ","})
        self.consume()
        return ListExpr(self.new_id(open_.start), tuple(elems), tuple(opts)), h

    def map_lit(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        open_ = self.consume()
        entries: list[MapEntry] = []
        h = 0
        first = True
        while True:
            k = self.la.kind
            if k == "}":
                break
            if k == "," and first:
                self.consume()
                if self.la.kind != "}":
                    raise self.mismatched({"}"})
                break
            opt = False
            if k == "?":
                self.consume()
                opt = True
            elif k not in _FIRST:
                raise self.mismatched(_FIRST | ({"}", ",", "?"} if first else {"}", "?"}))
            key, hk = yield self.expr(frozenset({":"}))
            col = self.expect(":", _FIRST)
            val, hv = yield self.expr(frozenset({",", "}"}))
            h = max(h, hk, hv)
            entries.append(MapEntry(self.new_id(col.start), key, val, opt))
            first = False
            if self.la.kind == ",":
                self.consume()
                continue
            if self.la.kind != "}":
                raise self.mismatched({"}", ","})
        self.consume()
        return MapExpr(self.new_id(open_.start), tuple(entries)), h

    def literal(self) -> Expr:
        t = self.consume()
        k = t.kind
        off = t.start
        if k == "-":  # sign of a number literal
            num = self.consume()
            return self.number(num, off, "-")
        if k in ("NUM_INT", "NUM_UINT", "NUM_FLOAT"):
            return self.number(t, off, "")
        if k == "STRING" or k == "BYTES":
            raw = t.text[1:] if k == "BYTES" else t.text
            try:
                value = unescape(raw, k == "BYTES")
            except UnescapeError as err:
                return self.visitor_error(off, str(err))
            return Const(self.new_id(off), "string" if k == "STRING" else "bytes", value)
        if k in ("true", "false"):
            return Const(self.new_id(off), "bool", k == "true")
        if k == "null":
            return Const(self.new_id(off), "null", None)
        raise AssertionError(k)

    def number(self, t: Token, off: int, sign: str) -> Expr:
        text = t.text
        if t.kind == "NUM_FLOAT":
            v = float(sign + text)
            if math.isinf(v):
                return self.visitor_error(off, "invalid double literal")
            return Const(self.new_id(off), "double", v)
        if t.kind == "NUM_UINT":
            body = text[:-1]
            u = int(body[2:], 16) if body.startswith("0x") else int(body)
            if u >= _UINT64:
                return self.visitor_error(off, "invalid uint literal")
            return Const(self.new_id(off), "uint", u)
        i = int(text[2:], 16) if text.startswith("0x") else int(text)
        if sign:
            i = -i
        if not -_INT64 <= i < _INT64:
            return self.visitor_error(off, "invalid int literal")
        return Const(self.new_id(off), "int", i)

    # calls and macros
    def global_call(self, op: Token, fn: str, args: tuple[Expr, ...]) -> Expr:
        return self.call_or_macro(op, fn, None, args)

    def member_call(self, op: Token, fn: str, target: Expr, args: tuple[Expr, ...]) -> Expr:
        return self.call_or_macro(op, fn, target, args)

    def call_or_macro(self, op: Token, fn: str, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        if fn in _MACRO_NAMES:
            factory = macros.Factory(self.new_id, op.start)
            try:
                expanded = macros.expand(factory, fn, target, args, self._offset_of)
            except macros.MacroError as err:
                return self.visitor_error(self._offset_of(err.node.id), err.message)
            if expanded is not None:
                return expanded
        return Call(self.new_id(op.start), fn, target, args)

    def _offset_of(self, node_id: int) -> int:
        return self.source.offsets.get(node_id, -1)


_MACRO_NAMES = frozenset(
    "has all exists exists_one existsOne map filter transformList transformMap transformMapEntry bind "
    "optMap optFlatMap sortBy".split()
)
# What may follow a complete operand inside its expression (the enclosing context adds its own closers).
_IDENTS = frozenset({"IDENTIFIER", "ESC_IDENTIFIER"})
_POSTFIX = frozenset({".", "[", "*", "/", "%", "+", "-", "&&", "||", "?"} | set(_RELOPS))


def _esc(text: str) -> str:
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _drive(gen: _Gen[T]) -> T:
    """Run a generator-based recursive descent with an explicit stack (no Python recursion)."""
    stack: list[Generator[Any, Any, Any]] = [gen]
    value: Any = None
    while True:
        try:
            sub = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value  # type: ignore[no-any-return]
            value = done.value
            continue
        stack.append(sub)
        value = None


def _run(text: str) -> ParseResult:
    p = _Parser(text)
    expr: Expr | None = None
    internal = ""
    try:
        e, _ = _drive(p.expr(frozenset({EOF})))
        if p.la.kind != EOF:
            t = p.la
            if p.la2().kind == EOF:
                p.syntax.append(
                    (t.start, f"Syntax error: extraneous input {display_token(t)} expecting <EOF>")
                )
            else:
                p.syntax.append(
                    (t.start, f"Syntax error: mismatched input {display_token(t)} expecting <EOF>")
                )
        expr = e
    except _Abort as a:
        internal = a.internal
    src = p.source
    issues = [Issue(*src.location_of_offset(off), msg) for off, msg in p.syntax]
    if internal:
        # ANTLR aborted: the tree visitor never ran.
        issues.append(Issue(-1, -1, internal))
        return ParseResult(None, issues)
    visitor = p.visitor
    if p.visit_overflow >= 0:
        visitor = [(off, msg) for off, msg in visitor if off < p.visit_overflow]
        visitor.append((-1, "max recursion depth exceeded"))
    issues += [Issue(*src.location_of_offset(off), msg) for off, msg in visitor]
    if issues or expr is None:
        return ParseResult(None, issues)
    return ParseResult(ParsedExpr(expr, src, p.next_id - 1), [])


def parse(text: str) -> ParseResult:
    """Parse and macro-expand `text` (see the module docstring)."""
    n = len(text)
    if n > MAX_CODE_POINTS:
        msg = f"expression code point size exceeds limit: size: {n}, limit {MAX_CODE_POINTS}"
        return ParseResult(None, [Issue(-1, -1, msg)])
    return _run(text)
