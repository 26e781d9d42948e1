"""What the API server's program planner rejects after a successful check ("program instantiation failed"):
cel-go's OptOptimize folds type conversions of constants (`int("x")`, `uint(-1)`, nested `int(string(1.5))`)
and compiles constant regex patterns of `matches`, `find` and `findAll` (Go's regexp syntax).

    instantiation_error(root) -> "type conversion error from 'string' to 'int'" | None
"""

from __future__ import annotations

import math
import re

from webhook.cel.checker.validators import duration_valid, go_regexp_error, timestamp_valid
from webhook.cel.common.ast import Call, Const, Expr, ListExpr, children

_CONVERSIONS = frozenset(
    {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}
)
_REGEX = frozenset({"matches", "find", "findAll"})
_TYPE_NAMES = {
    "int": "int",
    "uint": "uint",
    "double": "double",
    "bool": "bool",
    "string": "string",
    "bytes": "bytes",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
    "null": "null_type",
    "list": "list",
    "type": "type",
}
_INT_RE = re.compile(r"[+-]?[0-9]+$")
_UINT_RE = re.compile(r"\+?[0-9]+$")
_FLOAT_RE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)$", re.I)
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_BOOLS.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False})
MIN_UNIX, MAX_UNIX = -62135596800, 253402300799


class _Fail(Exception):
    pass


def _conv_error(frm: str, to: str) -> _Fail:
    return _Fail(f"type conversion error from '{_TYPE_NAMES.get(frm, frm)}' to '{_TYPE_NAMES.get(to, to)}'")


def _convert(fn: str, kind: str, value: object) -> tuple[str, object]:
    """(kind, value) of `fn(value)` as cel-go evaluates it, or raises _Fail with its message."""
    if fn == "dyn":
        return kind, value
    if fn == "type":
        return "type", kind
    if kind == "string":
        assert isinstance(value, str)
        s = value
        if fn == "int":
            if _INT_RE.match(s) and -(1 << 63) <= int(s) < (1 << 63):
                return "int", int(s)
        elif fn == "uint":
            if _UINT_RE.match(s) and int(s) < (1 << 64):
                return "uint", int(s)
        elif fn == "double":
            if _FLOAT_RE.match(s.replace("_", "")) and "_" not in s:
                v = float(s)
                if not math.isinf(v) or s.lower().lstrip("+-").startswith("inf"):
                    return "double", v
        elif fn == "bool":
            if s in _BOOLS:
                return "bool", _BOOLS[s]
        elif fn == "bytes":
            return "bytes", s.encode()
        elif fn == "duration":
            if duration_valid(s):
                return "duration", s
        elif fn == "timestamp":
            if timestamp_valid(s):
                return "timestamp", s
        elif fn == "string":
            return "string", s
        raise _conv_error("string", fn)
    if kind == "int":
        assert isinstance(value, int)
        if fn == "uint":
            if value < 0:
                raise _Fail("unsigned integer overflow")
            return "uint", value
        if fn == "int":
            return "int", value
        if fn == "double":
            return "double", float(value)
        if fn == "string":
            return "string", str(value)
        if fn == "timestamp":
            if not MIN_UNIX <= value <= MAX_UNIX:
                raise _Fail("timestamp overflow")
            return "timestamp", value
        if fn == "duration":
            return "duration", value
        raise _conv_error("int", fn)
    if kind == "uint":
        assert isinstance(value, int)
        if fn == "int":
            if value >= 1 << 63:
                raise _Fail("integer overflow")
            return "int", value
        if fn == "string":
            return "string", str(value)
        if fn in ("uint", "double"):
            return fn, float(value) if fn == "double" else value
        raise _conv_error("uint", fn)
    if kind == "double":
        assert isinstance(value, float)
        if fn == "int":
            if math.isinf(value) or math.isnan(value) or value <= -(2.0**63) or value >= 2.0**63:
                raise _Fail("integer overflow")
            return "int", int(value)
        if fn == "uint":
            if math.isinf(value) or math.isnan(value) or value < 0 or value >= 2.0**64:
                raise _Fail("unsigned integer overflow")
            return "uint", int(value)
        if fn == "double":
            return fn, value
        if fn == "string":
            return "", None  # Go's %g text: not folded further
        raise _conv_error("double", fn)
    if kind == "bytes":
        assert isinstance(value, bytes)
        if fn == "string":
            try:
                return "string", value.decode("utf-8")
            except UnicodeDecodeError:
                raise _Fail("invalid UTF-8 in bytes, cannot convert to string") from None
        if fn == "bytes":
            return "bytes", value
        raise _conv_error("bytes", fn)
    if kind == "bool":
        if fn == "string":
            return "string", "true" if value else "false"
        if fn == "bool":
            return fn, value
        raise _conv_error("bool", fn)
    if kind in ("duration", "timestamp"):
        if fn in (kind, "string", "int"):
            return "", None
        raise _conv_error(kind, fn)
    return "", None  # not a constant we fold further


def instantiation_error(root: Expr) -> str | None:
    """The first planning error in cel-go's post-order, or None."""
    consts: dict[int, tuple[str, object]] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        e, done = stack.pop()
        if not done:
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(children(e)))
            continue
        if isinstance(e, Const):
            consts[e.id] = (e.kind, e.value)
        elif isinstance(e, ListExpr):
            if all(x.id in consts for x in e.elements) and not e.optional_indices:
                consts[e.id] = ("list", None)
        elif isinstance(e, Call):
            args = ([e.target] if e.target is not None else []) + list(e.args)
            if e.function in _CONVERSIONS and e.target is None and len(args) == 1 and args[0].id in consts:
                kind, value = consts[args[0].id]
                try:
                    out = _convert(e.function, kind, value)
                except _Fail as f:
                    return str(f)
                if out[0]:
                    consts[e.id] = out
            if e.function in _REGEX and len(args) > 1 and args[1].id in consts:
                kind, value = consts[args[1].id]
                if kind == "string":
                    assert isinstance(value, str)
                    err = go_regexp_error(value)
                    if err is not None:
                        return err
    return None
