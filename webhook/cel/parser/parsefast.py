"""The parser's fast paths (a mixin of `webhook.cel.parser.parser._Parser`): the common operand (an identifier or a
literal, then field selections and `[literal]` indexes), relations between such operands, and nested exprs
that are one such relation are parsed without generators. Each first scans the tokens without consuming any;
if the input is not of that shape, or a depth limit is near, it returns None (consuming nothing) and the
general productions parse it: the same nodes, ids, positions and errors either way
(tests/cel/test_fastpaths.py compares the two)."""

from __future__ import annotations

from webhook.cel.common.ast import Expr, Ident, Select
from webhook.cel.parser.grammar import (
    ARITH,
    CONTINUES,
    EXPR_CONTINUES,
    MAX_RECURSION,
    RELOPS,
    RESERVED,
    SIMPLE_LITERALS,
)
from webhook.cel.parser.parselits import Literals


class FastPaths(Literals):
    """Needs the parser's token arrays, position, depth counters and node builders."""

    pos: int
    expr_d: int
    rel_d: int
    calc_d: int

    def counted(self, height: int, offset: int) -> int:
        raise NotImplementedError

    def call_or_macro(self, op: int, fn: str, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        raise NotImplementedError

    def literal_index(self) -> bool:
        """Whether the lookahead `[` starts `[literal]` whose nested expr/relation/calc levels (each entered
        and left once) fit the depth limits."""
        kinds = self.kinds
        return (
            kinds[self.pos + 1] in SIMPLE_LITERALS
            and kinds[self.pos + 2] == "]"
            and self.expr_d < MAX_RECURSION
            and self.rel_d < MAX_RECURSION
            and self.calc_d < MAX_RECURSION
        )

    def operand_end(self, pos: int, index: bool) -> int:
        """The token index just after a simple operand starting at `pos`, or -1."""
        kinds = self.kinds
        k = kinds[pos]
        if k == "IDENTIFIER":
            if self.texts[pos] in RESERVED:
                return -1
        elif k not in SIMPLE_LITERALS:
            return -1
        j = pos + 1
        while True:
            k = kinds[j]
            if k == "." and kinds[j + 1] == "IDENTIFIER" and kinds[j + 2] != "(":
                j += 2
            elif k == "[" and index and kinds[j + 1] in SIMPLE_LITERALS and kinds[j + 2] == "]":
                j += 3
            elif k in CONTINUES:
                return -1
            else:
                return j

    def operand(self, end: int) -> tuple[Expr, int]:
        """Build the simple operand from the lookahead up to token `end` (see `operand_end`)."""
        pos = self.pos
        starts = self.starts
        texts = self.texts
        if self.kinds[pos] == "IDENTIFIER":
            e: Expr = Ident(self.new_id(starts[pos]), texts[pos])
            self.pos = pos + 1
        else:
            e = self.literal()
        h = 0
        while self.pos < end:
            t = self.pos
            h = self.counted(h, starts[t])
            if texts[t] == ".":
                e = Select(self.new_id(starts[t]), e, texts[t + 1])
                self.pos = t + 2
            else:  # `[literal]`: a nested expr that enters and leaves its levels once
                self.pos = t + 1
                idx = self.literal()
                self.pos = t + 3
                e = self.call_or_macro(t, "_[_]", None, (e, idx))
        return e, h

    def simple_unary(self) -> tuple[Expr, int] | None:
        """unary/member/primary for a simple operand (called where `calc` has entered its level)."""
        index = self.expr_d < MAX_RECURSION and self.rel_d < MAX_RECURSION and self.calc_d < MAX_RECURSION
        end = self.operand_end(self.pos, index)
        if end < 0:
            return None
        return self.operand(end)

    def relation_ends(self, expr_levels: int) -> list[int] | None:
        """The token index after each operand of a relation over simple operands from the lookahead, if the
        tokens have that shape and no depth check can fail in there (`expr_levels`: the expr levels entered
        at most, counting the nested expr of a `[literal]` index); else None."""
        if not (
            self.expr_d + expr_levels <= MAX_RECURSION
            and self.rel_d + 3 <= MAX_RECURSION
            and self.calc_d + 2 <= MAX_RECURSION
        ):
            return None  # the general productions report the limit
        kinds = self.kinds
        end = self.operand_end(self.pos, True)
        if end < 0:
            return None
        ends = [end]
        while kinds[end] in RELOPS:
            end = self.operand_end(end + 1, True)
            if end < 0:
                return None
            ends.append(end)
        if kinds[end] in ARITH:
            return None
        return ends

    def relation_of(self, ends: list[int]) -> tuple[Expr, int]:
        kinds = self.kinds
        lhs, h = self.operand(ends[0])
        for end in ends[1:]:
            op = self.consume()
            rhs, hr = self.operand(end)
            h = self.counted(max(h, hr), self.starts[op])
            lhs = self.call_or_macro(op, RELOPS[kinds[op]], None, (lhs, rhs))
        return lhs, h

    def simple_relation(self) -> tuple[Expr, int] | None:
        """relation (with its calc levels) over simple operands and relational operators only."""
        ends = self.relation_ends(1)
        return None if ends is None else self.relation_of(ends)

    def simple_expr(self) -> tuple[Expr, int] | None:
        """A nested expr that is one simple relation (no `&&`, `||`, `?` after it)."""
        ends = self.relation_ends(2)
        if ends is None or self.kinds[ends[-1]] in EXPR_CONTINUES:
            return None
        return self.relation_of(ends)
