"""cel-go's AST validators of the Kubernetes environment, run after a successful type check in upstream's
order: homogeneous aggregate literals, duration and timestamp literals, `matches` regex literals (RE2),
and constant `format()` strings (ext strings v2)."""

from __future__ import annotations

import re
from datetime import datetime

import re2

from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Checked
from webhook.cel.checker.fmtcheck import check_format
from webhook.cel.common.ast import Call, Const, Expr, Ident, ListExpr, MapExpr, children

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_EXEMPT = frozenset({"format", "cel.@block"})


_GO_CODES = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "invalid escape sequence": "invalid escape sequence",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "missing argument to repetition operator": "missing argument to repetition operator",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid named capture group": "invalid named capture",
    "trailing \\": "trailing backslash at end of expression",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
}


def go_regexp_error(pattern: str) -> str | None:
    """Go's `regexp.Compile` error for `pattern` ("error parsing regexp: <code>: `<expr>`"), None if valid."""
    if "\\C" in pattern.replace("\\\\", ""):
        return (
            "error parsing regexp: invalid escape sequence: `\\C`"  # RE2 accepts \C (any byte); Go does not
        )
    try:
        re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as e:
        text = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        code, _, arg = text.partition(": ")
        return f"error parsing regexp: {_GO_CODES.get(code, code)}: `{arg}`"
    return None


def regex_compiles(pattern: str) -> bool:
    """Whether Go's regexp (RE2 syntax) accepts `pattern`."""
    return go_regexp_error(pattern) is None


_DUR = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_MAX_DURATION_NS = 315_576_000_000 * 10**9  # CEL's duration range: +-10,000 years


def duration_valid(s: str) -> bool:
    """Go's time.ParseDuration plus CEL's duration range."""
    orig = s
    neg = False
    if s[:1] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return True
    if not s:
        return False
    total = 0
    pos = 0
    while pos < len(s):
        m = _DUR.match(s, pos)
        if not m or m.group(1) in ("", "."):
            return False
        num = m.group(1)
        whole, _, frac = num.partition(".")
        unit = _UNITS[m.group(2)]
        value = int(whole or "0") * unit
        if frac:
            value += int(frac) * unit // 10 ** len(frac)
        total += value
        if total > (1 << 63) - (0 if neg else 1):
            return False
        pos = m.end()
    del orig
    return total <= _MAX_DURATION_NS


_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def timestamp_valid(s: str) -> bool:
    """RFC 3339 as Go's time.Parse reads it, within CEL's range (years 1 to 9999)."""
    m = _TS.match(s)
    if not m:
        return False
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    try:
        datetime(y, mo, d, h, mi, sec)
    except ValueError:
        return False
    tz = m.group(8)
    if tz not in "Zz":
        th, tm = int(tz[1:3]), int(tz[4:6])
        if th > 23 or tm > 59:
            return False
        offset = (th * 60 + tm) * (1 if tz[0] == "+" else -1)
        minutes = (((y * 12 + mo) * 31 + d) * 24 + h) * 60 + mi - offset
        if minutes < ((1 * 12 + 1) * 31 + 1) * 24 * 60 or y > 9999:
            return y >= 1 and y <= 9999 and minutes >= ((1 * 12 + 1) * 31 + 1) * 24 * 60
    return 1 <= y <= 9999


_LITERAL_ARGS = {"duration": 0, "timestamp": 1, "matches": 2}


def validate(root: Expr, checked: Checked, error: object) -> None:
    """Run the validators; `error(node_id, message)` records an issue. One pre-order walk collects what each
    validator looks at; the validators then run one after the other (lists, maps, duration, timestamp,
    matches, format: upstream's order of errors)."""
    report = error  # callable
    lists: list[ListExpr] = []
    maps: list[MapExpr] = []
    literal_calls: tuple[list[Call], list[Call], list[Call]] = ([], [], [])
    formats: list[Call] = []
    # (node, inside a call of `format` or `cel.@block`: homogeneous literals are not required there)
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        e, exempt = stack.pop()
        k = type(e)
        if k is Call:
            fn = e.function  # type: ignore[attr-defined]
            which = _LITERAL_ARGS.get(fn)
            if which is not None:
                literal_calls[which].append(e)  # type: ignore[arg-type]
            elif fn == "format":
                formats.append(e)  # type: ignore[arg-type]
            if fn in _EXEMPT:
                exempt = True
        elif k is ListExpr:
            if not exempt:
                lists.append(e)  # type: ignore[arg-type]
        elif k is MapExpr:
            if not exempt:
                maps.append(e)  # type: ignore[arg-type]
        elif k is Const or k is Ident:
            continue
        for c in reversed(children(e)):
            stack.append((c, exempt))
    ty = checked.types
    # homogeneous aggregate literals (lists first, then maps, in pre-order)
    for le in lists:
        elem: t.Type | None = None
        opts = set(le.optional_indices)
        for i, x in enumerate(le.elements):
            et = ty[x.id]
            if i in opts and et.params:
                et = et.params[0]
            if elem is None:
                elem = et
            elif not t.is_equivalent(elem, et):
                report(x.id, f"expected type '{t.format_type(elem)}' but found '{t.format_type(et)}'")  # type: ignore[operator]
                break
    for me in maps:
        kt: t.Type | None = None
        vt: t.Type | None = None
        for en in me.entries:
            k2, v = ty[en.key.id], ty[en.value.id]
            if en.optional and v.params:
                v = v.params[0]
            if kt is None or vt is None:
                kt, vt = k2, v
                continue
            if not t.is_equivalent(kt, k2):
                report(en.key.id, f"expected type '{t.format_type(kt)}' but found '{t.format_type(k2)}'")  # type: ignore[operator]
            if not t.is_equivalent(vt, v):
                report(en.value.id, f"expected type '{t.format_type(vt)}' but found '{t.format_type(v)}'")  # type: ignore[operator]
    # literal arguments: duration(), timestamp(), matches()
    for fn, check, calls in zip(
        ("duration", "timestamp", "matches"),
        (_duration_arg, _timestamp_arg, _regex_arg),
        literal_calls,
        strict=True,
    ):
        for ce in calls:
            if ce.args and isinstance(ce.args[0], Const):
                if not check(ce.args[0]):
                    report(ce.args[0].id, f"invalid {fn} argument")  # type: ignore[operator]
    for ce in formats:
        if (
            ce.target is not None
            and isinstance(ce.target, Const)
            and ce.target.kind == "string"
            and len(ce.args) == 1
            and isinstance(ce.args[0], ListExpr)
            and (not checked.refs.get(ce.id) or "string_format" in checked.refs[ce.id])
        ):
            assert isinstance(ce.target.value, str)
            err = check_format(ce.target.value, ce.args[0], ty)
            if err is not None:
                report(err[0] if err[0] is not None else ce.id, err[1])  # type: ignore[operator]


def _duration_arg(c: Const) -> bool:
    if c.kind == "string":
        assert isinstance(c.value, str)
        return duration_valid(c.value)
    if c.kind == "int":
        return True
    return True


def _timestamp_arg(c: Const) -> bool:
    if c.kind == "string":
        assert isinstance(c.value, str)
        return timestamp_valid(c.value)
    if c.kind == "int":
        assert isinstance(c.value, int)
        return -62135596800 <= c.value <= 253402300799
    return True


def _regex_arg(c: Const) -> bool:
    if c.kind != "string":
        return True
    assert isinstance(c.value, str)
    return regex_compiles(c.value)
