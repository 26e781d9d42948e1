"""Literal tokens to constants as cel-go's parse-tree visitor makes them: numbers with their range checks,
strings and bytes with their escapes. The parser and its fast paths hold one `Literals` per parse."""

from __future__ import annotations

import math
import sys

from webhook.cel.common.ast import Const, Expr
from webhook.cel.parser.grammar import INT64, UINT64
from webhook.cel.parser.nodes import Nodes
from webhook.cel.parser.unescape import UnescapeError, unescape


class Literals:
    """Reads the token arrays of one parse; ids and visitor errors come from its `nodes`."""

    __slots__ = ("kinds", "texts", "starts", "nodes")

    def __init__(self, kinds: list[str], texts: list[str], starts: list[int], nodes: Nodes) -> None:
        self.kinds = kinds
        self.texts = texts
        self.starts = starts
        self.nodes = nodes

    def literal(self, t: int) -> tuple[Expr, int]:
        """The constant of the literal at token `t` (a number may be signed: `-` then the number), and the
        token after it."""
        k = self.kinds[t]
        off = self.starts[t]
        nodes = self.nodes
        if k == "STRING":
            text = self.texts[t]
            if (
                len(text) > 2
                and text[0] in "\"'"
                and "\\" not in text
                and "\r" not in text
                and text[1] != text[0]
            ):
                value: str | bytes = text[1:-1]  # a plain single-quoted string: nothing to decode
            else:
                try:
                    value = unescape(text, False)
                except UnescapeError as err:
                    return nodes.visitor_error(off, str(err)), t + 1
            if len(value) <= 64:  # short literals repeat (domains, names): one object each
                value = sys.intern(value)  # type: ignore[arg-type]
            return Const(nodes.new_id(off), "string", value), t + 1
        if k == "-":  # sign of a number literal
            return self.number(t + 1, off, "-"), t + 2
        if k in ("NUM_INT", "NUM_UINT", "NUM_FLOAT"):
            return self.number(t, off, ""), t + 1
        if k == "BYTES":
            try:
                value = unescape(self.texts[t][1:], True)
            except UnescapeError as err:
                return nodes.visitor_error(off, str(err)), t + 1
            return Const(nodes.new_id(off), "bytes", value), t + 1
        if k in ("true", "false"):
            return Const(nodes.new_id(off), "bool", k == "true"), t + 1
        if k == "null":
            return Const(nodes.new_id(off), "null", None), t + 1
        raise AssertionError(k)

    def number(self, t: int, off: int, sign: str) -> Expr:
        text = self.texts[t]
        kind = self.kinds[t]
        nodes = self.nodes
        if kind == "NUM_FLOAT":
            v = float(sign + text)
            if math.isinf(v):
                return nodes.visitor_error(off, "invalid double literal")
            return Const(nodes.new_id(off), "double", v)
        if kind == "NUM_UINT":
            body = text[:-1]
            u = int(body[2:], 16) if body.startswith("0x") else int(body)
            if u >= UINT64:
                return nodes.visitor_error(off, "invalid uint literal")
            return Const(nodes.new_id(off), "uint", u)
        i = int(text[2:], 16) if text.startswith("0x") else int(text)
        if sign:
            i = -i
        if not -INT64 <= i < INT64:
            return nodes.visitor_error(off, "invalid int literal")
        return Const(nodes.new_id(off), "int", i)
