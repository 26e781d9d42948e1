"""Token sets and limits of cel-go's CEL grammar as the parser (`webhook.cel.parser.parser`) and its fast paths
(`webhook.cel.parser.parsefast`) use them."""

from __future__ import annotations

MAX_RECURSION = 250
MAX_CODE_POINTS = 100_000

RESERVED = frozenset(
    "as break const continue else false for function if import in let loop package namespace null "
    "return true var void while".split()
)
FIRST = frozenset(
    ["[", "{", "(", ".", "-", "!", "true", "false", "null", "NUM_FLOAT", "NUM_INT", "NUM_UINT", "STRING"]
    + ["BYTES", "IDENTIFIER"]
)
PRIMARY_FIRST = FIRST - {"!"}
RELOPS = {"<": "_<_", "<=": "_<=_", ">=": "_>=_", ">": "_>_", "==": "_==_", "!=": "_!=_", "in": "@in"}
MULOPS = {"*": "_*_", "/": "_/_", "%": "_%_"}
ADDOPS = {"+": "_+_", "-": "_-_"}
INT64 = 1 << 63
UINT64 = 1 << 64

MACRO_NAMES = frozenset(
    "has all exists exists_one existsOne map filter transformList transformMap transformMapEntry bind "
    "optMap optFlatMap sortBy".split()
)
IDENTS = frozenset({"IDENTIFIER", "ESC_IDENTIFIER"})
# What may follow a complete operand inside its expression (the enclosing context adds its own closers).
POSTFIX = frozenset({".", "[", "*", "/", "%", "+", "-", "&&", "||", "?"} | set(RELOPS))
ARITH = MULOPS | ADDOPS
# The fast paths: tokens of a literal operand, of what continues an operand after it (a call, an index, a
# message, `.?`) and of what continues an expr after a relation.
SIMPLE_LITERALS = frozenset({"STRING", "BYTES", "NUM_INT", "NUM_UINT", "NUM_FLOAT", "true", "false", "null"})
CONTINUES = frozenset({".", "[", "{", "("})
EXPR_CONTINUES = frozenset({"&&", "||", "?"})
# Follow sets of nested exprs.
NONE: frozenset[str] = frozenset()
QUESTION = frozenset({"?"})
CLOSE_BRACKET = frozenset({"]"})
CLOSE_PAREN = frozenset({")"})
COLON = frozenset({":"})
ARG_FOLLOW = frozenset({",", ")"})
LIST_FOLLOW = frozenset({",", "]"})
FIELD_FOLLOW = frozenset({",", "}"})
