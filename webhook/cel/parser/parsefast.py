"""The parser's fast paths: the common operand (an identifier or a literal, then field selections and
`[literal]` indexes), relations between such operands, and nested exprs that are one such relation are parsed
without generators. Each first scans the tokens from the parser's position; if the input is not of that shape,
or a depth limit is near, it returns None and the general productions parse it: the same nodes, ids, positions
and errors either way (tests/cel/test_fastpaths.py compares the two). The parser holds one `FastPaths` per
parse and passes its position and its grammar-rule depths (`expr_d`, `rel_d`, `calc_d`) to every call."""

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
from webhook.cel.parser.nodes import Nodes
from webhook.cel.parser.parselits import Literals

# A fast parse: the node, its visitor depth and the token after it.
Parsed = tuple[Expr, int, int]


class FastPaths:
    """Reads the token arrays of one parse; builds nodes with its `nodes` and `literals`."""

    __slots__ = ("kinds", "texts", "starts", "nodes", "literals")

    def __init__(
        self, kinds: list[str], texts: list[str], starts: list[int], nodes: Nodes, literals: Literals
    ):
        self.kinds = kinds
        self.texts = texts
        self.starts = starts
        self.nodes = nodes
        self.literals = literals

    def literal_index(self, pos: int, expr_d: int, rel_d: int, calc_d: int) -> bool:
        """Whether the `[` at `pos` starts `[literal]` whose nested expr/relation/calc levels (each entered
        and left once) fit the depth limits."""
        kinds = self.kinds
        return (
            kinds[pos + 1] in SIMPLE_LITERALS
            and kinds[pos + 2] == "]"
            and expr_d < MAX_RECURSION
            and rel_d < MAX_RECURSION
            and calc_d < MAX_RECURSION
        )

    def unary(self, pos: int, expr_d: int, rel_d: int, calc_d: int) -> Parsed | None:
        """unary/member/primary for a simple operand (called where `calc` has entered its level)."""
        index = expr_d < MAX_RECURSION and rel_d < MAX_RECURSION and calc_d < MAX_RECURSION
        end = self.operand_end(pos, index)
        if end < 0:
            return None
        e, h = self.operand(pos, end)
        return e, h, end

    def relation(self, pos: int, expr_d: int, rel_d: int, calc_d: int) -> Parsed | None:
        """relation (with its calc levels) over simple operands and relational operators only."""
        ends = self.relation_ends(pos, expr_d + 1, rel_d, calc_d)
        return None if ends is None else self.relation_of(pos, ends)

    def expr(self, pos: int, expr_d: int, rel_d: int, calc_d: int) -> Parsed | None:
        """A nested expr that is one simple relation (no `&&`, `||`, `?` after it)."""
        ends = self.relation_ends(pos, expr_d + 2, rel_d, calc_d)
        if ends is None or self.kinds[ends[-1]] in EXPR_CONTINUES:
            return None
        return self.relation_of(pos, ends)

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

    def operand(self, pos: int, end: int) -> tuple[Expr, int]:
        """Build the simple operand from token `pos` up to token `end` (see `operand_end`)."""
        starts = self.starts
        texts = self.texts
        nodes = self.nodes
        literal = self.literals.literal
        if self.kinds[pos] == "IDENTIFIER":
            e: Expr = Ident(nodes.new_id(starts[pos]), texts[pos])
            pos += 1
        else:
            e, pos = literal(pos)
        h = 0
        while pos < end:
            t = pos
            h = nodes.counted(h, starts[t])
            if texts[t] == ".":
                e = Select(nodes.new_id(starts[t]), e, texts[t + 1])
                pos = t + 2
            else:  # `[literal]`: a nested expr that enters and leaves its levels once
                idx, _ = literal(t + 1)
                pos = t + 3
                e = nodes.call_or_macro(starts[t], "_[_]", None, (e, idx))
        return e, h

    def relation_ends(self, pos: int, expr_d: int, rel_d: int, calc_d: int) -> list[int] | None:
        """The token index after each operand of a relation over simple operands from `pos`, if the tokens
        have that shape and no depth check can fail in there (`expr_d`: the expr depth reached at most,
        counting the nested expr of a `[literal]` index); else None."""
        if not (expr_d <= MAX_RECURSION and rel_d + 3 <= MAX_RECURSION and calc_d + 2 <= MAX_RECURSION):
            return None  # the general productions report the limit
        kinds = self.kinds
        end = self.operand_end(pos, True)
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

    def relation_of(self, pos: int, ends: list[int]) -> Parsed:
        kinds = self.kinds
        starts = self.starts
        nodes = self.nodes
        lhs, h = self.operand(pos, ends[0])
        op = ends[0]  # the relational operator after each operand but the last
        for end in ends[1:]:
            rhs, hr = self.operand(op + 1, end)
            h = nodes.counted(max(h, hr), starts[op])
            lhs = nodes.call_or_macro(starts[op], RELOPS[kinds[op]], None, (lhs, rhs))
            op = end
        return lhs, h, ends[-1]
