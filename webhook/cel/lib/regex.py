"""Linear-time regular expressions for CEL (`matches`, `find`, `findAll`, named formats) with RE2, the
engine Go's regexp mirrors: no backtracking, no backreferences. Compiled patterns live in a cache
bounded by bytes (shared by all evaluators, so its size is fixed)."""

from __future__ import annotations

from typing import Any

import re2

from webhook.cel.common.values import CelError
from webhook.model.cache import ByteLRU

MAX_PATTERN_LENGTH = 64 * 1024  # longer patterns are refused rather than compiled
_MAX_MEM = 4 << 20  # RE2's memory budget per compiled pattern (default 8 MiB)
_CACHE: ByteLRU[str, Any] = ByteLRU(max_bytes=32 << 20)

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = _MAX_MEM


def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 pattern; raises CelError with Go's "error parsing regexp" wording."""
    hit = _CACHE.get(pattern)
    if hit is not None:
        if isinstance(hit, CelError):
            raise hit
        return hit
    try:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise CelError("error parsing regexp: expression too large")
        try:
            compiled: Any = re2.compile(pattern, options=_OPTIONS)
        except re2.error as e:
            msg = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
            raise CelError(f"error parsing regexp: {msg}") from None
    except CelError as err:
        _CACHE.put(pattern, err, 200 + 2 * len(pattern))
        raise
    # What a compiled pattern retains: its program (~16 bytes an instruction, twice: forward and
    # reverse) plus the DFA state RE2 builds lazily within its memory budget.
    _CACHE.put(pattern, compiled, 4096 + 64 * (compiled.programsize + 1) + 4 * len(pattern))
    return compiled


def error_of(pattern: str) -> str | None:
    """The compile error of a pattern, or None if RE2 (Go's syntax) accepts it."""
    try:
        compile_pattern(pattern)
    except CelError as e:
        return e.message
    return None


def find(s: str, pattern: str) -> str:
    """Go regexp.FindString: the leftmost match, "" if none."""
    m = compile_pattern(pattern).search(s)
    return m.group(0) if m is not None else ""


def find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    """Go regexp.FindAllString(s, limit): successive non-overlapping matches; an empty match right
    after the previous match is skipped; limit < 0 means all, 0 none."""
    if limit == 0:
        return []
    rx = compile_pattern(pattern)
    out: list[str] = []
    pos = 0
    end = len(s)
    prev_end = -1
    while pos <= end and (limit < 0 or len(out) < limit):
        m = rx.search(s, pos)
        if m is None:
            break
        start, stop = m.span()
        accept = True
        if stop == pos:  # an empty match at pos
            if start == prev_end:
                accept = False
            pos = pos + 1 if pos < end else end + 1
        else:
            pos = stop
        prev_end = stop
        if accept:
            out.append(s[start:stop])
    return out
