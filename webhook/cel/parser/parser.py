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

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from webhook.cel.common.ast import (
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
)
from webhook.cel.common.errors import Issue
from webhook.cel.parser import parsefast
from webhook.cel.parser.grammar import (
    ADDOPS,
    ARG_FOLLOW,
    ARITH,
    CLOSE_BRACKET,
    CLOSE_PAREN,
    COLON,
    FIELD_FOLLOW,
    FIRST,
    IDENTS,
    LIST_FOLLOW,
    MAX_CODE_POINTS,
    MAX_RECURSION,
    MULOPS,
    NONE,
    POSTFIX,
    PRIMARY_FIRST,
    QUESTION,
    RELOPS,
    RESERVED,
)
from webhook.cel.parser.lexer import EOF, display_set, lex
from webhook.cel.parser.nodes import Nodes
from webhook.cel.parser.parselits import literal, number

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
    """Recursive descent over the token arrays. Productions within one bracket level delegate with `yield from`
    (no Python recursion across levels); a nested `expr` (brackets, arguments, literals) is yielded to the
    driver, which keeps the levels on an explicit stack.

    The parse's node ids, visitor errors and macro expansion are its `nodes` (`Nodes`); literal tokens become
    constants through `parselits`; before a general production it tries the fast path for it (`parsefast`),
    handing itself over as the state those functions read and move on (`parsefast.ParseState`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        toks = lex(text)
        self.kinds = toks.kinds
        self.texts = toks.texts
        self.starts = toks.starts
        self.last = len(self.kinds) - 1  # the EOF token
        self.nodes = Nodes()
        self.pos = 0
        self.syntax: list[tuple[int, str]] = [
            (e.start, f"Syntax error: token recognition error at: '{_esc(e.text)}'") for e in toks.errors
        ]
        self.expr_d = 0
        self.rel_d = 0
        self.calc_d = 0

    # tokens (a token is its index in the arrays)
    def kind2(self) -> str:
        """The kind of the token after the lookahead."""
        return self.kinds[min(self.pos + 1, self.last)]

    def consume(self) -> int:
        t = self.pos
        if t != self.last:
            self.pos = t + 1
        return t

    def shown(self, tok: int) -> str:
        """ANTLR's quoting of a token's text in messages ('<EOF>', escaped newlines and tabs)."""
        if tok == self.last:
            return "'<EOF>'"
        return "'" + _esc(self.texts[tok]) + "'"

    # errors
    def fail(self, tok: int, message: str) -> _Abort:
        self.syntax.append((self.starts[tok], "Syntax error: " + message))
        return _Abort()

    def mismatched(self, expected: frozenset[str] | set[str]) -> _Abort:
        return self.fail(
            self.pos, f"mismatched input {self.shown(self.pos)} expecting {display_set(expected)}"
        )

    def extraneous(self, tok: int, expected: frozenset[str] | set[str]) -> None:
        self.syntax.append(
            (
                self.starts[tok],
                f"Syntax error: extraneous input {self.shown(tok)} expecting {display_set(expected)}",
            )
        )

    def expect(self, kind: str, follow: frozenset[str] | set[str]) -> int:
        """ANTLR's match(): single-token deletion, then insertion, then mismatch."""
        t = self.pos
        k = self.kinds[t]
        if k == kind:
            return self.consume()
        if self.kind2() == kind:
            self.extraneous(t, {kind})
            self.consume()
            return self.consume()
        if k in follow:
            raise self.fail(t, f"missing '{kind}' at {self.shown(t)}")
        raise self.mismatched({kind})

    def single_token_deletion(self, expected: frozenset[str]) -> None:
        """ANTLR's sync at a block start: drop one unexpected token when the next one fits, else fail."""
        if self.kind2() not in expected:
            raise self.mismatched(expected)
        self.extraneous(self.pos, expected)
        self.consume()

    def no_viable(self, start: int, offending: int) -> _Abort:
        end = (
            self.starts[offending] + len(self.texts[offending]) if offending != self.last else len(self.text)
        )
        return self.fail(
            offending, f"no viable alternative at input '{_esc(self.text[self.starts[start] : end])}'"
        )

    def check_depth(self) -> None:
        if self.expr_d > MAX_RECURSION or self.rel_d > MAX_RECURSION or self.calc_d > MAX_RECURSION:
            raise _Abort(f"expression recursion limit exceeded: {MAX_RECURSION}")

    def literal(self) -> Expr:
        """The constant of the literal at the lookahead (a number may be signed)."""
        t = self.consume()
        if self.kinds[t] != "-":
            return literal(self.nodes, self.kinds[t], self.texts[t], self.starts[t])
        num = self.consume()  # the sign of a number
        return number(self.nodes, self.kinds[num], self.texts[num], self.starts[t], "-")

    # grammar (inlined so that one bracket level costs at most three Python frames)
    def expr(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        """expr: conditionalOr ('?' conditionalOr ':' expr)? — the else-chain iteratively."""
        self.expr_d += 1
        self.check_depth()
        entered = 1
        chain: list[tuple[Expr, int, int, Expr, int]] = []
        in_then = False
        pending: tuple[Expr, int, int] | None = None
        kinds = self.kinds
        while True:
            # conditionalOr: conditionalAnd ('||' conditionalAnd)*
            or_terms: list[tuple[Expr, int]] = []
            or_ops: list[int] = []
            while True:
                and_terms: list[tuple[Expr, int]] = []
                and_ops: list[int] = []
                while True:
                    and_terms.append(parsefast.relation(self) or (yield from self.relation(follow)))
                    if kinds[self.pos] == "&&":
                        and_ops.append(self.consume())
                        continue
                    break
                or_terms.append(self.balance("_&&_", and_terms, and_ops) if and_ops else and_terms[0])
                if kinds[self.pos] == "||":
                    or_ops.append(self.consume())
                    continue
                break
            part, hp = self.balance("_||_", or_terms, or_ops) if or_ops else or_terms[0]
            if in_then:
                assert pending is not None
                self.expect(":", FIRST)
                chain.append((pending[0], pending[1], pending[2], part, hp))
                self.expr_d += 1
                entered += 1
                self.check_depth()
                in_then = False
                continue
            if kinds[self.pos] == "?":
                pending = (part, hp, self.consume())
                in_then = True
                continue
            break
        e, h = part, hp
        for c, hc, q, then, ht in reversed(chain):
            h = self.nodes.counted(max(hc, ht, h), self.starts[q])
            e = self.nodes.call_or_macro(self.starts[q], "_?_:_", None, (c, then, e))
        self.expr_d -= entered
        return e, h

    def balance(self, fn: str, terms: list[tuple[Expr, int]], ops: list[int]) -> tuple[Expr, int]:
        h = max(t[1] for t in terms)
        starts = self.starts
        ids = [self.nodes.new_id(starts[op]) for op in ops]

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
        lhs, h = yield from self.calc_chain(follow)
        kinds = self.kinds
        while kinds[self.pos] in RELOPS:
            op = self.consume()
            self.rel_d += 1
            self.check_depth()
            rhs, hr = yield from self.calc_chain(follow)
            self.rel_d -= 1
            h = self.nodes.counted(max(h, hr), self.starts[op])
            lhs = self.nodes.call_or_macro(self.starts[op], RELOPS[kinds[op]], None, (lhs, rhs))
        self.rel_d -= 1
        return lhs, h

    def calc_chain(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        self.calc_d += 1
        self.check_depth()
        lhs, h = parsefast.unary(self) or (yield from self.unary(follow))
        kinds = self.kinds
        while True:
            k = kinds[self.pos]
            if k in MULOPS:
                op = self.consume()
                self.calc_d += 1
                self.check_depth()
                rhs, hr = parsefast.unary(self) or (yield from self.unary(follow))
                self.calc_d -= 1
            elif k in ADDOPS:
                op = self.consume()
                self.calc_d += 1
                self.check_depth()
                rhs, hr = parsefast.unary(self) or (yield from self.unary(follow))
                while kinds[self.pos] in MULOPS:  # calc(2): binds tighter
                    op2 = self.consume()
                    self.calc_d += 1
                    self.check_depth()
                    r2, h2 = parsefast.unary(self) or (yield from self.unary(follow))
                    self.calc_d -= 1
                    hr = self.nodes.counted(max(hr, h2), self.starts[op2])
                    rhs = self.nodes.call_or_macro(self.starts[op2], MULOPS[kinds[op2]], None, (rhs, r2))
                self.calc_d -= 1
            else:
                break
            h = self.nodes.counted(max(h, hr), self.starts[op])
            lhs = self.nodes.call_or_macro(self.starts[op], ARITH[kinds[op]], None, (lhs, rhs))
        self.calc_d -= 1
        return lhs, h

    def unary(self, follow: frozenset[str], extra: frozenset[str] = frozenset()) -> _Gen[tuple[Expr, int]]:
        """unary: member | '!'+ member | '-'+ member (a sign before a number is part of the literal)."""
        kinds = self.kinds
        t = self.pos
        k = kinds[t]
        if k not in FIRST:
            expected = FIRST | extra
            if self.kind2() in FIRST:
                self.extraneous(t, expected)
                self.consume()
                t = self.pos
                k = kinds[t]
            else:
                raise self.mismatched(expected)
        if k == "!" or (k == "-" and self.kind2() not in ("NUM_INT", "NUM_FLOAT")):
            ops = [self.consume()]
            while kinds[self.pos] == k:
                ops.append(self.consume())
            nxt = self.pos
            nk = kinds[nxt]
            signed = nk == "-" and self.kind2() in ("NUM_INT", "NUM_FLOAT")
            if nk not in PRIMARY_FIRST or (nk == "-" and not signed):
                if k == "!":
                    raise self.fail(nxt, f"extraneous input {self.shown(nxt)} expecting {display_set(FIRST)}")
                raise self.no_viable(t, nxt)
            operand, h = yield from self.member(follow)
            if len(ops) % 2 == 0:
                return operand, h
            return self.nodes.call_or_macro(
                self.starts[ops[0]], "!_" if k == "!" else "-_", None, (operand,)
            ), h
        return (yield from self.member(follow))

    def member(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        e, h = yield from self.primary(follow)
        kinds = self.kinds
        starts = self.starts
        while True:
            k = kinds[self.pos]
            if k == ".":
                dot = self.consume()
                opt = -1
                if kinds[self.pos] == "?":
                    opt = self.consume()
                name_tok = self.pos
                nk = kinds[name_tok]
                if nk not in IDENTS and opt >= 0:
                    self.single_token_deletion(IDENTS)
                    name_tok = self.pos
                    nk = kinds[name_tok]
                if nk not in IDENTS:
                    if nk in ("true", "false", "null"):
                        raise self.fail(
                            name_tok, f"mismatched input '{self.texts[name_tok]}' expecting IDENTIFIER"
                        )
                    raise self.no_viable(dot, name_tok)
                self.consume()
                name = self.texts[name_tok]
                if nk == "IDENTIFIER" and opt < 0 and kinds[self.pos] == "(":
                    open_ = self.consume()
                    args, ha = yield from self.args(follow)
                    h = self.nodes.counted(max(h, ha), starts[dot])
                    e = self.nodes.call_or_macro(starts[open_], name, e, args)
                    continue
                if nk == "ESC_IDENTIFIER":
                    self.nodes.visitor.append((starts[name_tok], "unsupported syntax: '`'"))
                h = self.nodes.counted(h, starts[dot])
                if opt >= 0:
                    field = Const(self.nodes.new_id(starts[name_tok]), "string", name)
                    e = Call(self.nodes.new_id(starts[dot]), "_?._", None, (e, field))
                else:
                    e = Select(self.nodes.new_id(starts[dot]), e, name)
            elif k == "[" and parsefast.literal_index(self):
                open_ = self.consume()
                idx = self.literal()
                self.consume()
                h = self.nodes.counted(h, starts[open_])
                e = self.nodes.call_or_macro(starts[open_], "_[_]", None, (e, idx))
            elif k == "[":
                open_ = self.consume()
                fn = "_[_]"
                if kinds[self.pos] == "?":
                    self.consume()
                    fn = "_[?_]"
                idx, hi = yield from self.sub_expr(CLOSE_BRACKET, QUESTION if fn == "_[_]" else NONE)
                self.expect("]", follow | POSTFIX)
                h = self.nodes.counted(max(h, hi), starts[open_])
                e = self.nodes.call_or_macro(starts[open_], fn, None, (e, idx))
            else:
                return e, h

    def sub_expr(self, follow: frozenset[str], extra: frozenset[str] = frozenset()) -> _Gen[tuple[Expr, int]]:
        """A nested `expr`, with the extra tokens ANTLR would also accept where it starts."""
        t = self.pos
        if self.kinds[t] not in FIRST and extra:
            expected = FIRST | extra
            if self.kind2() not in FIRST:
                raise self.mismatched(expected)
            self.extraneous(t, expected)
            self.consume()
        return parsefast.expr(self) or (yield self.expr(follow))

    def args(self, follow: frozenset[str]) -> _Gen[tuple[tuple[Expr, ...], int]]:
        kinds = self.kinds
        if kinds[self.pos] == ")":
            self.consume()
            return (), 0
        if kinds[self.pos] not in FIRST:
            t = self.pos
            k2 = self.kind2()
            if k2 not in FIRST and k2 != ")":
                raise self.mismatched(FIRST | {")"})
            self.extraneous(t, FIRST | {")"})
            self.consume()
            if kinds[self.pos] == ")":
                self.consume()
                return (), 0
        out = []
        h = 0
        while True:
            a, ha = parsefast.expr(self) or (yield self.expr(ARG_FOLLOW))
            out.append(a)
            if ha > h:
                h = ha
            if kinds[self.pos] == ",":
                self.consume()
                continue
            self.expect(")", follow | POSTFIX)
            return tuple(out), h

    def primary(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        k = self.kinds[self.pos]
        if k == "IDENTIFIER" or k == ".":
            return (yield from self.ident_or_call(follow))
        if k == "(":
            self.consume()
            e, h = parsefast.expr(self) or (yield self.expr(CLOSE_PAREN))
            self.expect(")", follow | POSTFIX)
            return e, h
        if k == "[":
            return (yield from self.list_lit(follow))
        if k == "{":
            return (yield from self.map_lit(follow))
        return self.literal(), 0

    def ident_or_call(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        kinds = self.kinds
        start = self.pos
        lead = ""
        if kinds[start] == ".":
            self.consume()
            if kinds[self.pos] != "IDENTIFIER":
                raise self.no_viable(start, self.pos)
            lead = "."
        id_tok = self.consume()
        name = self.texts[id_tok]
        k = kinds[self.pos]
        # CreateMessage: IDENT ('.' IDENT)* '{'
        if k == "." or k == "{":
            j = self.pos
            while kinds[j] == "." and kinds[j + 1] == "IDENTIFIER":
                j += 2
            if kinds[j] == "{":
                names = [self.texts[x] for x in range(id_tok, j, 2)]
                self.pos = j
                return (yield from self.message(lead + ".".join(names), follow))
        if name in RESERVED:
            if k == "(":
                self.consume()
                yield from self.args(follow)
            return self.nodes.visitor_error(self.starts[start], f"reserved identifier: {name}"), 0
        if k == "(":
            open_ = self.consume()
            args, h = yield from self.args(follow)
            return self.nodes.call_or_macro(self.starts[open_], lead + name if lead else name, None, args), h
        return Ident(self.nodes.new_id(self.starts[id_tok]), lead + name if lead else name), 0

    def message(self, type_name: str, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        kinds = self.kinds
        brace = self.consume()
        fields: list[StructField] = []
        h = 0
        while kinds[self.pos] != "}":
            opt = False
            if kinds[self.pos] == "?":
                self.consume()
                opt = True
            name_tok = self.pos
            if kinds[name_tok] not in IDENTS:
                if opt:
                    self.single_token_deletion(IDENTS)
                elif fields:
                    raise self.mismatched({"}", ","})
                else:
                    self.single_token_deletion(IDENTS | {"}", ",", "?"})
                name_tok = self.pos
            self.consume()
            col = self.expect(":", FIRST)
            v, hv = parsefast.expr(self) or (yield self.expr(FIELD_FOLLOW))
            h = max(h, hv)
            if kinds[name_tok] == "ESC_IDENTIFIER":
                self.nodes.visitor.append((self.starts[name_tok], "unsupported syntax: '`'"))
            fields.append(StructField(self.nodes.new_id(self.starts[col]), self.texts[name_tok], v, opt))
            if kinds[self.pos] == ",":
                self.consume()
                continue
            break
        self.expect("}", follow | POSTFIX)
        return StructExpr(self.nodes.new_id(self.starts[brace]), type_name, tuple(fields)), h

    def list_lit(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        kinds = self.kinds
        open_ = self.consume()
        elems: list[Expr] = []
        opts: list[int] = []
        h = 0
        first = True
        while True:
            k = kinds[self.pos]
            if k == "]":
                break
            if k == "," and first:
                self.consume()
                if kinds[self.pos] != "]":
                    raise self.mismatched({"]"})
                break
            if k == "?":
                self.consume()
                opts.append(len(elems))
            elif k not in FIRST:
                raise self.mismatched(FIRST | ({"]", ",", "?"} if first else {"]", "?"}))
            e, he = parsefast.expr(self) or (yield self.expr(LIST_FOLLOW))
            elems.append(e)
            if he > h:
                h = he
            first = False
            if kinds[self.pos] == ",":
                self.consume()
                continue
            if kinds[self.pos] != "]":
                if self.kind2() in ("]", ","):
                    self.extraneous(self.pos, {"]", ","})
                    self.consume()
                    continue
                raise self.mismatched({"]", ","})
        self.consume()
        return ListExpr(self.nodes.new_id(self.starts[open_]), tuple(elems), tuple(opts)), h

    def map_lit(self, follow: frozenset[str]) -> _Gen[tuple[Expr, int]]:
        kinds = self.kinds
        open_ = self.consume()
        entries: list[MapEntry] = []
        h = 0
        first = True
        while True:
            k = kinds[self.pos]
            if k == "}":
                break
            if k == "," and first:
                self.consume()
                if kinds[self.pos] != "}":
                    raise self.mismatched({"}"})
                break
            opt = False
            if k == "?":
                self.consume()
                opt = True
            elif k not in FIRST:
                raise self.mismatched(FIRST | ({"}", ",", "?"} if first else {"}", "?"}))
            key, hk = parsefast.expr(self) or (yield self.expr(COLON))
            col = self.expect(":", FIRST)
            val, hv = parsefast.expr(self) or (yield self.expr(FIELD_FOLLOW))
            h = max(h, hk, hv)
            entries.append(MapEntry(self.nodes.new_id(self.starts[col]), key, val, opt))
            first = False
            if kinds[self.pos] == ",":
                self.consume()
                continue
            if kinds[self.pos] != "}":
                raise self.mismatched({"}", ","})
        self.consume()
        return MapExpr(self.nodes.new_id(self.starts[open_]), tuple(entries)), h


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
        if p.pos != p.last:
            t = p.pos
            word = "extraneous" if p.kind2() == EOF else "mismatched"
            p.syntax.append((p.starts[t], f"Syntax error: {word} input {p.shown(t)} expecting <EOF>"))
        expr = e
    except _Abort as a:
        internal = a.internal
    nodes = p.nodes
    nodes.done()
    src = SourceInfo(text, nodes.offsets)
    issues = [Issue(*src.location_of_offset(off), msg) for off, msg in p.syntax]
    if internal:
        # ANTLR aborted: the tree visitor never ran.
        issues.append(Issue(-1, -1, internal))
        return ParseResult(None, issues)
    visitor = nodes.visitor
    if nodes.visit_overflow >= 0:
        visitor = [(off, msg) for off, msg in visitor if off < nodes.visit_overflow]
        visitor.append((-1, "max recursion depth exceeded"))
    issues += [Issue(*src.location_of_offset(off), msg) for off, msg in visitor]
    if issues or expr is None:
        return ParseResult(None, issues)
    return ParseResult(ParsedExpr(expr, src, nodes.next_id - 1), [])


def parse(text: str) -> ParseResult:
    """Parse and macro-expand `text` (see the module docstring)."""
    n = len(text)
    if n > MAX_CODE_POINTS:
        msg = f"expression code point size exceeds limit: size: {n}, limit {MAX_CODE_POINTS}"
        return ParseResult(None, [Issue(-1, -1, msg)])
    return _run(text)
