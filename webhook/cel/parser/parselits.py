"""Literal tokens to constants as cel-go's parse-tree visitor makes them: numbers with their range checks,
strings and bytes with their escapes. Functions of one token (its kind, text and offset); ids and visitor
errors come from the parse's `Nodes`."""

from __future__ import annotations

import math
import sys

from webhook.cel.common.ast import Const, Expr
from webhook.cel.parser.grammar import INT64, UINT64
from webhook.cel.parser.nodes import Nodes
from webhook.cel.parser.unescape import UnescapeError, unescape


def literal(nodes: Nodes, kind: str, text: str, off: int) -> Expr:
    """The constant of an unsigned literal token (see `number` for a signed one)."""
    if kind == "STRING":
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
                return nodes.visitor_error(off, str(err))
        if len(value) <= 64:  # short literals repeat (domains, names): one object each
            value = sys.intern(value)  # type: ignore[arg-type]
        return Const(nodes.new_id(off), "string", value)
    if kind in ("NUM_INT", "NUM_UINT", "NUM_FLOAT"):
        return number(nodes, kind, text, off, "")
    if kind == "BYTES":
        try:
            value = unescape(text[1:], True)
        except UnescapeError as err:
            return nodes.visitor_error(off, str(err))
        return Const(nodes.new_id(off), "bytes", value)
    if kind in ("true", "false"):
        return Const(nodes.new_id(off), "bool", kind == "true")
    if kind == "null":
        return Const(nodes.new_id(off), "null", None)
    raise AssertionError(kind)


def number(nodes: Nodes, kind: str, text: str, off: int, sign: str) -> Expr:
    """The constant of a number token, negated if `sign` is "-" (`off`: the offset of the sign, if any)."""
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
