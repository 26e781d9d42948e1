"""The parser's fast paths: the common operand (an identifier or a literal, then field selections and
`[literal]` indexes), relations between such operands, and nested exprs that are one such relation are parsed
without generators. Each first scans the tokens from the parse's position; if the input is not of that shape,
or a depth limit is near, it returns None (moving nothing) and the general productions parse it: the same
nodes, ids, positions and errors either way (tests/cel/test_fastpaths.py compares the two).

Functions of the parse's state (`ParseState`, which the parser is): they read its tokens and rule depths, build
with its `Nodes`, and move its position past what they parsed."""

from __future__ import annotations

from typing import Protocol

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
from webhook.cel.parser.parselits import literal


class ParseState(Protocol):
    """The token arrays and nodes of one parse, the lookahead `pos`, and the depths of the grammar rules entered
    (`expr_d`, `rel_d`, `calc_d`: ANTLR's per-rule limit applies to each)."""

    kinds: list[str]
    texts: list[str]
    starts: list[int]
    nodes: Nodes
    pos: int
    expr_d: int
    rel_d: int
    calc_d: int


def literal_index(p: ParseState) -> bool:
    """Whether the `[` at the lookahead starts `[literal]` whose nested expr/relation/calc levels (each entered
    and left once) fit the depth limits."""
    kinds = p.kinds
    pos = p.pos
    return (
        kinds[pos + 1] in SIMPLE_LITERALS
        and kinds[pos + 2] == "]"
        and p.expr_d < MAX_RECURSION
        and p.rel_d < MAX_RECURSION
        and p.calc_d < MAX_RECURSION
    )


def unary(p: ParseState) -> tuple[Expr, int] | None:
    """unary/member/primary for a simple operand (called where `calc` has entered its level)."""
    index = p.expr_d < MAX_RECURSION and p.rel_d < MAX_RECURSION and p.calc_d < MAX_RECURSION
    pos = p.pos
    end = operand_end(p.kinds, p.texts, pos, index)
    if end < 0:
        return None
    parsed = operand(p, pos, end)
    p.pos = end
    return parsed


def relation(p: ParseState) -> tuple[Expr, int] | None:
    """relation (with its calc levels) over simple operands and relational operators only."""
    ends = relation_ends(p, 1)
    return None if ends is None else relation_of(p, ends)


def expr(p: ParseState) -> tuple[Expr, int] | None:
    """A nested expr that is one simple relation (no `&&`, `||`, `?` after it)."""
    ends = relation_ends(p, 2)
    if ends is None or p.kinds[ends[-1]] in EXPR_CONTINUES:
        return None
    return relation_of(p, ends)


def operand_end(kinds: list[str], texts: list[str], pos: int, index: bool) -> int:
    """The token index just after a simple operand starting at `pos`, or -1."""
    k = kinds[pos]
    if k == "IDENTIFIER":
        if texts[pos] in RESERVED:
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


def operand(p: ParseState, pos: int, end: int) -> tuple[Expr, int]:
    """Build the simple operand from token `pos` up to token `end` (see `operand_end`)."""
    kinds = p.kinds
    starts = p.starts
    texts = p.texts
    nodes = p.nodes
    if kinds[pos] == "IDENTIFIER":
        e: Expr = Ident(nodes.new_id(starts[pos]), texts[pos])
    else:  # one token: a signed number is no simple operand
        e = literal(nodes, kinds[pos], texts[pos], starts[pos])
    pos += 1
    h = 0
    while pos < end:
        t = pos
        h = nodes.counted(h, starts[t])
        if texts[t] == ".":
            e = Select(nodes.new_id(starts[t]), e, texts[t + 1])
            pos = t + 2
        else:  # `[literal]`: a nested expr that enters and leaves its levels once
            idx = literal(nodes, kinds[t + 1], texts[t + 1], starts[t + 1])
            pos = t + 3
            e = nodes.call_or_macro(starts[t], "_[_]", None, (e, idx))
    return e, h


def relation_ends(p: ParseState, expr_levels: int) -> list[int] | None:
    """The token index after each operand of a relation over simple operands from the lookahead, if the tokens
    have that shape and no depth check can fail in there (`expr_levels`: the expr levels entered at most,
    counting the nested expr of a `[literal]` index); else None."""
    if not (
        p.expr_d + expr_levels <= MAX_RECURSION
        and p.rel_d + 3 <= MAX_RECURSION
        and p.calc_d + 2 <= MAX_RECURSION
    ):
        return None  # the general productions report the limit
    kinds = p.kinds
    texts = p.texts
    end = operand_end(kinds, texts, p.pos, True)
    if end < 0:
        return None
    ends = [end]
    while kinds[end] in RELOPS:
        end = operand_end(kinds, texts, end + 1, True)
        if end < 0:
            return None
        ends.append(end)
    if kinds[end] in ARITH:
        return None
    return ends


def relation_of(p: ParseState, ends: list[int]) -> tuple[Expr, int]:
    """Build the relation whose operands end at `ends`, and move past it."""
    kinds = p.kinds
    starts = p.starts
    nodes = p.nodes
    lhs, h = operand(p, p.pos, ends[0])
    op = ends[0]  # the relational operator after each operand but the last
    for end in ends[1:]:
        rhs, hr = operand(p, op + 1, end)
        h = nodes.counted(max(h, hr), starts[op])
        lhs = nodes.call_or_macro(starts[op], RELOPS[kinds[op]], None, (lhs, rhs))
        op = end
    p.pos = ends[-1]
    return lhs, h
