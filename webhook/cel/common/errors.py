"""CEL issues as cel-go reports them: `ERROR: <input>:L:C: message`, the source line and a caret,
sorted by location, at most 100."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_REPORTED = 100
_MAX_SNIPPET = 16384


@dataclass(frozen=True, slots=True)
class Issue:
    """One error: `line` is 1-based, `column` 0-based in code points; (-1, -1) for no location."""

    line: int
    column: int
    message: str


_NARROW = re.compile("[\x00-\x7f]")
_WIDE = re.compile("[^\x00-\x7f]")


def _dots(prefix: str) -> str:
    """The caret line's lead: "." per character, a wide dot for one of more than one byte in UTF-8."""
    if prefix.isascii():
        return "." * len(prefix)
    return _NARROW.sub(".", _WIDE.sub("\uff0e", prefix))


def render(issues: list[Issue], text: str, total: int | None = None) -> str:
    """cel-go's `Issues.String()` for `issues` over source `text` (total: errors counted incl. dropped)."""
    lines = text.split("\n")
    ordered = sorted(issues[:MAX_REPORTED], key=lambda i: (i.line, i.column))
    shown: dict[int, str | None] = {}  # line number -> the snippet shown for it (None: too long)
    out = []
    for iss in ordered:
        s = f"ERROR: <input>:{iss.line}:{iss.column + 1}: {iss.message}"
        if 1 <= iss.line <= len(lines):
            if iss.line not in shown:
                line = lines[iss.line - 1]
                fits = (
                    len(line) * 4 <= _MAX_SNIPPET
                    or len(line.encode("utf-8", "surrogatepass")) <= _MAX_SNIPPET
                )
                shown[iss.line] = line.replace("\t", " ") if fits else None
            snippet = shown[iss.line]
            if snippet is not None:
                ind = _dots(snippet[: max(iss.column, 0)])
                at = snippet[iss.column : iss.column + 1] if iss.column >= 0 else ""
                ind += "\uff3e" if at and not at.isascii() else "^"
                s += "\n | " + snippet + "\n | " + ind
        out.append(s)
    count = total if total is not None else len(issues)
    if count > MAX_REPORTED:
        out.append(f"{count - MAX_REPORTED} more errors were truncated")
    return "\n".join(out)
