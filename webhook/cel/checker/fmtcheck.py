"""Compile-time check of a constant `"...".format([args])` call (cel-go's ext strings v2 string-format
validator): clause syntax, argument count and argument types."""

from __future__ import annotations

from webhook.cel.checker import types as t
from webhook.cel.common.ast import Expr, ListExpr, MapExpr

_STRING_OK = (
    t.LIST,
    t.MAP,
    t.INT,
    t.UINT,
    t.DOUBLE,
    t.BOOL,
    t.STRING,
    t.TIMESTAMP,
    t.BYTES,
    t.DURATION,
    t.TYPE,
    t.NULL,
)
_CLAUSES = {
    "d": ((t.INT, t.UINT), "decimal clause can only be used on integers, was given %s"),
    "f": ((t.DOUBLE, t.STRING), "fixed-point clause can only be used on doubles, was given %s"),
    "e": ((t.DOUBLE, t.STRING), "scientific clause can only be used on doubles, was given %s"),
    "b": ((t.INT, t.UINT, t.BOOL), "only integers and bools can be formatted as binary, was given %s"),
    "x": (
        (t.INT, t.UINT, t.STRING, t.BYTES),
        "only integers, byte buffers, and strings can be formatted as hex, was given %s",
    ),
    "o": ((t.INT, t.UINT), "octal clause can only be used on integers, was given %s"),
}
_CLAUSES["X"] = _CLAUSES["x"]
_STRING_MSG = (
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, "
    "and timestamps, was given %s"
)


def _one_of(tt: t.Type, kinds: tuple[str, ...]) -> bool:
    return tt.kind == t.DYN or tt.kind in kinds


def _verify_string(e: Expr, types: dict[int, t.Type]) -> int | None:
    """The id of the first element that cannot be formatted with %s, None if all can (iteratively)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if not _one_of(types[x.id], _STRING_OK):
            return x.id
        if isinstance(x, ListExpr):
            stack.extend(reversed(x.elements))
        elif isinstance(x, MapExpr):
            for en in reversed(x.entries):
                stack.append(en.value)
                stack.append(en.key)
    return None


def check_format(fmt: str, args: ListExpr, types: dict[int, t.Type]) -> tuple[int | None, str] | None:
    """(node id or None for the call, message) for the first problem, None if the call is valid."""
    elems = args.elements
    i = 0
    arg_index = 0
    requested = 0
    n = len(fmt)
    while i < n:
        if fmt[i] != "%":
            i += 1
            continue
        if i + 1 < n and fmt[i + 1] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= n:
            return None, "unexpected end of string"
        if arg_index >= len(elems):
            return None, f"index {arg_index} out of range"
        j = i + 1
        if fmt[j] == ".":
            j += 1
            while True:
                if j >= n:
                    return None, (
                        "could not parse formatting clause: error while parsing precision: could not find end of "
                        "precision specifier"
                    )
                if not ("0" <= fmt[j] <= "9"):
                    break
                j += 1
            if j == i + 2:
                return None, (
                    "could not parse formatting clause: error while parsing precision: error while converting "
                    'precision to integer: strconv.Atoi: parsing "": invalid syntax'
                )
        clause = fmt[j]
        arg = elems[arg_index]
        if clause == "s":
            bad = _verify_string(arg, types)
            if bad is not None:
                return bad, "error during formatting: " + _STRING_MSG % types[bad].name
        elif clause in _CLAUSES:
            kinds, msg = _CLAUSES[clause]
            at = types[arg.id]
            if not _one_of(at, kinds):
                return arg.id, "error during formatting: " + msg % at.name
        else:
            return None, f'could not parse formatting clause: unrecognized formatting clause "{clause}"'
        i = j + 1
        arg_index += 1
    if len(elems) > requested:
        return None, f"too many arguments supplied to string.format (expected {requested}, got {len(elems)})"
    return None
