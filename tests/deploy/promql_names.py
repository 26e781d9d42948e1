"""What a PromQL expression reads: its vector selectors (metric name + label matchers) and the labels
its aggregations and vector matchings group by. A tokenizer plus a walk over the tokens, enough to
check names against what the server exports; `promtool check rules` (when installed) checks the syntax
in full. Anything this walk does not understand (an unknown function, a bare `{...}` selector,
unbalanced brackets) is an error, never silently skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FUNCTIONS = frozenset(
    """abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month day_of_week
    day_of_year days_in_month delta deriv exp floor histogram_avg histogram_count histogram_fraction
    histogram_quantile histogram_stddev histogram_stdvar histogram_sum holt_winters hour idelta increase
    irate label_join label_replace ln log10 log2 minute month predict_linear rate resets round scalar sgn
    sort sort_desc sqrt time timestamp vector year avg_over_time min_over_time max_over_time sum_over_time
    count_over_time quantile_over_time stddev_over_time stdvar_over_time last_over_time present_over_time
    acos acosh asin asinh atan atanh cos cosh sin sinh tan tanh deg pi rad""".split()
)
AGGREGATIONS = frozenset(
    "sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk limit_ratio".split()
)
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2"})

_TOKEN = re.compile(
    r"""(?P<space>\s+|\#[^\n]*)
    |(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
    |(?P<duration>\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*)
    |(?P<number>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    |(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
    |(?P<op>==|!=|<=|>=|=~|!~|[-+*/%^<>=,(){}\[\]:@])""",
    re.VERBOSE,
)


class PromQLError(ValueError):
    pass


@dataclass
class Selector:
    metric: str
    matchers: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (op, value)


@dataclass
class Reads:
    selectors: list[Selector] = field(default_factory=list)
    grouping: set[str] = field(default_factory=set)  # labels named in by/without/on/ignoring/group_*
    functions: set[str] = field(default_factory=set)


def tokenize(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise PromQLError(f"unexpected character {expr[pos]!r} at {pos} in {expr!r}")
        pos = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup or "", m.group()))
    return out


def reads(expr: str) -> Reads:
    toks = tokenize(expr)
    r = Reads()
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    i = 0

    def labels_in_parens(j: int) -> int:
        if j >= len(toks) or toks[j][1] != "(":
            return j  # group_left / group_right without a label list
        j += 1
        while toks[j][1] != ")":
            kind, text = toks[j]
            if kind == "ident":
                r.grouping.add(text)
            elif text != ",":
                raise PromQLError(f"{text!r} in a label list of {expr!r}")
            j += 1
        return j + 1

    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "ident" and text in GROUPING:
            i = labels_in_parens(i + 1)
            continue
        if kind == "ident" and text in KEYWORDS:
            if text == "offset":
                if i + 1 >= len(toks) or toks[i + 1][0] != "duration":
                    raise PromQLError(f"offset without a duration in {expr!r}")
                i += 2
                continue
            i += 1
            continue
        if kind == "ident" and (text in AGGREGATIONS and nxt in ("(", "by", "without")):
            r.functions.add(text)
            i += 1
            continue
        if kind == "ident" and nxt == "(":
            if text not in FUNCTIONS:
                raise PromQLError(f"unknown function {text}() in {expr!r}")
            r.functions.add(text)
            i += 1
            continue
        if kind == "ident":
            if text in ("inf", "Inf", "nan", "NaN"):
                i += 1
                continue
            sel = Selector(text)
            i += 1
            if i < len(toks) and toks[i][1] == "{":
                i += 1
                while toks[i][1] != "}":
                    if toks[i][1] == ",":
                        i += 1
                        continue
                    (lk, label), (_, op), (vk, value) = toks[i : i + 3]
                    if lk != "ident" or op not in ("=", "!=", "=~", "!~") or vk != "string":
                        raise PromQLError(f"bad label matcher {label}{op}{value} in {expr!r}")
                    sel.matchers[label] = (op, value[1:-1])
                    i += 3
                i += 1
            r.selectors.append(sel)
            continue
        if text == "{":
            raise PromQLError(f"a selector without a metric name in {expr!r}")
        if text == "[":
            # range or subquery: [5m] or [1h:1m]
            j = i + 1
            while toks[j][1] != "]":
                if toks[j][0] not in ("duration",) and toks[j][1] != ":":
                    raise PromQLError(f"{toks[j][1]!r} in a range in {expr!r}")
                j += 1
            i = j + 1
            continue
        if text in depth:
            depth[text] += 1
        elif text in closing:
            depth[closing[text]] -= 1
            if depth[closing[text]] < 0:
                raise PromQLError(f"unbalanced {text!r} in {expr!r}")
        i += 1
    if any(depth.values()):
        raise PromQLError(f"unbalanced brackets in {expr!r}")
    return r
