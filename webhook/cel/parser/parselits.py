"""Literal tokens to constants as cel-go's parse-tree visitor makes them (a mixin of
`webhook.cel.parser.parser._Parser`): numbers with their range checks, strings and bytes with their escapes."""

from __future__ import annotations

import math
import sys

from webhook.cel.common.ast import Const, Expr, Unspecified
from webhook.cel.parser.grammar import INT64, UINT64
from webhook.cel.parser.unescape import UnescapeError, unescape


class Literals:
    """Needs the parser's token arrays and node builders."""

    kinds: list[str]
    texts: list[str]
    starts: list[int]

    def new_id(self, offset: int) -> int:
        raise NotImplementedError

    def consume(self) -> int:
        raise NotImplementedError

    def visitor_error(self, offset: int, message: str) -> Unspecified:
        raise NotImplementedError

    def literal(self) -> Expr:
        t = self.consume()
        k = self.kinds[t]
        off = self.starts[t]
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
                    return self.visitor_error(off, str(err))
            if len(value) <= 64:  # short literals repeat (domains, names): one object each
                value = sys.intern(value)  # type: ignore[arg-type]
            return Const(self.new_id(off), "string", value)
        if k == "-":  # sign of a number literal
            num = self.consume()
            return self.number(num, off, "-")
        if k in ("NUM_INT", "NUM_UINT", "NUM_FLOAT"):
            return self.number(t, off, "")
        if k == "BYTES":
            try:
                value = unescape(self.texts[t][1:], True)
            except UnescapeError as err:
                return self.visitor_error(off, str(err))
            return Const(self.new_id(off), "bytes", value)
        if k in ("true", "false"):
            return Const(self.new_id(off), "bool", k == "true")
        if k == "null":
            return Const(self.new_id(off), "null", None)
        raise AssertionError(k)

    def number(self, t: int, off: int, sign: str) -> Expr:
        text = self.texts[t]
        kind = self.kinds[t]
        if kind == "NUM_FLOAT":
            v = float(sign + text)
            if math.isinf(v):
                return self.visitor_error(off, "invalid double literal")
            return Const(self.new_id(off), "double", v)
        if kind == "NUM_UINT":
            body = text[:-1]
            u = int(body[2:], 16) if body.startswith("0x") else int(body)
            if u >= UINT64:
                return self.visitor_error(off, "invalid uint literal")
            return Const(self.new_id(off), "uint", u)
        i = int(text[2:], 16) if text.startswith("0x") else int(text)
        if sign:
            i = -i
        if not -INT64 <= i < INT64:
            return self.visitor_error(off, "invalid int literal")
        return Const(self.new_id(off), "int", i)
