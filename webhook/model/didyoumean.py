"""Did-you-mean for names and values: the closest candidate within a typo's reach (an edit distance of 1,
or 2 for words of 8 characters or more, adjacent transpositions counting once; case is ignored), so a
suggestion is made only when a typo is likely — `gpu.exmaple.com` → `gpu.example.com`, never
`gpu.example.com` → `latest-gpu.example.com`."""

from __future__ import annotations

from collections.abc import Iterable


def reach(word: str) -> int:
    """The edit distance a typo of `word` may have."""
    return 2 if len(word) >= 8 else 1


def distance(a: str, b: str, limit: int) -> int:
    """The optimal-string-alignment distance of `a` and `b`, or `limit + 1` once it exceeds `limit`
    (rows are cut at the limit: O(len × limit))."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [limit + 1] * len(b)
        lo, hi = max(1, i - limit), min(len(b), i + limit)
        for j in range(lo, hi + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[len(b)], limit + 1)


def closest(word: str, options: Iterable[str]) -> str | None:
    """The option a typo of `word` most likely meant (ties: the first in sorted order), or None. An option
    equal to `word` apart from case wins."""
    if not word:
        return None
    low = word.lower()
    limit = reach(word)
    best: tuple[int, str] | None = None
    for o in sorted(set(options)):
        if o == word:
            continue
        d = 0 if o.lower() == low else distance(low, o.lower(), limit)
        if d <= limit and (best is None or d < best[0]):
            best = (d, o)
    return best[1] if best is not None else None
