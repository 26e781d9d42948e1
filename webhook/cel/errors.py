"""CEL issues as cel-go reports them: `ERROR: <input>:L:C: message`, the source line and a caret,
sorted by location, at most 100."""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPORTED = 100
_MAX_SNIPPET = 16384


@dataclass(frozen=True, slots=True)
class Issue:
    """One error: `line` is 1-based, `column` 0-based in code points; (-1, -1) for no location."""

    line: int
    column: int
    message: str


def _wide(ch: str) -> bool:
    return ord(ch) > 0x7F  # more than one byte in UTF-8


def render(issues: list[Issue], text: str, total: int | None = None) -> str:
    """cel-go's `Issues.String()` for `issues` over source `text` (total: errors counted incl. dropped)."""
    lines = text.split("\n")
    ordered = sorted(issues[:MAX_REPORTED], key=lambda i: (i.line, i.column))
    out = []
    for iss in ordered:
        s = f"ERROR: <input>:{iss.line}:{iss.column + 1}: {iss.message}"
        if (
            1 <= iss.line <= len(lines)
            and len(lines[iss.line - 1].encode("utf-8", "surrogatepass")) <= _MAX_SNIPPET
        ):
            snippet = lines[iss.line - 1].replace("\t", " ")
            ind = "".join("\uff0e" if _wide(ch) else "." for ch in snippet[: max(iss.column, 0)])
            at = snippet[iss.column : iss.column + 1] if iss.column >= 0 else ""
            ind += "\uff3e" if at and _wide(at) else "^"
            s += "\n | " + snippet + "\n | " + ind
        out.append(s)
    count = total if total is not None else len(issues)
    if count > MAX_REPORTED:
        out.append(f"{count - MAX_REPORTED} more errors were truncated")
    return "\n".join(out)
