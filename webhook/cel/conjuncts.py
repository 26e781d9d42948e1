"""The terms of a CEL expression that is a conjunction (`a && b && c` at its top level), as source text:
what `draguard explain pod` drops one at a time from a request's selector to find the term that keeps
every device out. Parentheses around the whole expression, or around a term that is a conjunction
itself, are looked through."""

from __future__ import annotations

from webhook.cel.parser.lexer import EOF, lex

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
_NOT_A_CONJUNCTION = frozenset({"||", "?", ":"})  # at the top level: `a && b || c`, `a ? b : c`


def conjuncts(expression: str) -> list[str]:
    """The top-level `&&` terms of `expression`, each trimmed to its tokens (comments between terms are
    dropped); `[expression]` when it is not a conjunction (or does not lex: the engine reports that)."""
    t = lex(expression)
    if t.errors:
        return [expression]
    kinds, texts, starts = t.kinds, t.texts, t.starts
    lo, hi = 0, len(kinds) - 1  # hi: the EOF token (excluded)
    while hi - lo >= 2 and kinds[lo] == "(" and _closing(kinds, lo) == hi - 1:
        lo, hi = lo + 1, hi - 1
    depth = 0
    cuts: list[int] = []  # token indexes of the top-level `&&`
    for i in range(lo, hi):
        k = kinds[i]
        if k in _OPEN:
            depth += 1
        elif k in _CLOSE:
            depth -= 1
        elif depth == 0 and k in _NOT_A_CONJUNCTION:
            return [expression]
        elif depth == 0 and k == "&&":
            cuts.append(i)
    if not cuts or depth != 0:
        return [expression]
    bounds = [lo, *(c + 1 for c in cuts)]
    ends = [*cuts, hi]
    out = []
    for a, b in zip(bounds, ends, strict=True):
        if a >= b:
            return [expression]  # `a && && b`: not ours to mend
        term = expression[starts[a] : starts[b - 1] + len(texts[b - 1])]
        out.extend(conjuncts(term) if kinds[a] == "(" else [term])  # `(a && b) && c`: three terms
    return out


def _closing(kinds: list[str], i: int) -> int:
    """The index of the bracket closing the one at `i` (-1 when it is not closed)."""
    depth = 0
    for j in range(i, len(kinds)):
        k = kinds[j]
        if k in _OPEN:
            depth += 1
        elif k in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
        elif k == EOF:
            break
    return -1


def without(terms: list[str], index: int) -> str:
    """The conjunction of `terms` (from `conjuncts`) without the one at `index`; "" when none is left.
    The terms were split at top-level `&&` of an expression without a top-level `||` or `?:`, so joining
    the rest with `&&` parses them as they parsed before."""
    return " && ".join(t for i, t in enumerate(terms) if i != index)
