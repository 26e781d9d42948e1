"""Text from the input made safe to print: one finding stays one line, and the output stays valid.

    one_line("a\\nb")        -> 'a\\\\nb'   (line breaks, control and bidi characters escaped)
    xml_text("a\\x07b")      -> 'a\\\\x07b' (only what XML 1.0 allows is left as it is)
    listing(names, "; ")     -> 'a; b; c; d; e; and 995 more' (explanations stay bounded)
    clip("é" * 1000, 10)     -> 'éééééééééé…[+990 characters]' (a quoted value stays bounded)

Escaped: C0 controls (tab included) and DEL, C1 controls (NEL is a line break for some terminals), the
Unicode line and paragraph separators, bidirectional overrides and isolates (they can reorder what a
terminal shows) and lone surrogates (a file name that is not UTF-8, which stdout cannot encode: the
byte is shown as `\\xNN`). Backslashes are left alone: they cannot start a line.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# XML 1.0 allows #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF; the rest cannot appear even escaped
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` with everything that could break or disguise a line of output escaped."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 forbids (even as references) escaped, lone surrogates too."""
    return _NOT_XML.sub(_escape, text) if _NOT_XML.search(text) else text


LISTED = 5  # items a reason names before "and N more"


def listing(items: list[str], sep: str = ", ", limit: int = LISTED) -> str:
    """`items` joined by `sep`, cut after `limit` with "and N more": an explanation that lists what is
    missing (claims, nodes, devices, pools) stays bounded however many there are."""
    if len(items) <= limit:
        return sep.join(items)
    return sep.join(items[:limit]) + f"{sep}and {len(items) - limit} more"


CLIP = 256  # characters of a name or value a message quotes (a valid name is at most 253)


def clip_marker(cut: int) -> str:
    """What `clip` puts where it cut: how many characters are not shown."""
    return f"…[+{cut:,} character{'' if cut == 1 else 's'}]"


def clip(text: str, limit: int = CLIP) -> str:
    """`text` as it is when it has at most `limit` characters; otherwise its first `limit` characters and
    a marker counting the rest (`…[+999,744 characters]`): a message quoting a value from the input stays
    bounded however long the value is, and says how much it left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + clip_marker(len(text) - limit)


_SPACE_RUN = re.compile(r"\s+")
SNIPPET = 160  # characters of an expression a message quotes


def snippet(text: str, limit: int = SNIPPET) -> str:
    """`text` on one line for quoting in a message: runs of whitespace (line breaks of a multi-line CEL
    expression included) become one space, and a long text is cut with "..." after `limit` characters."""
    flat = _SPACE_RUN.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def compact(message: str) -> str:
    """A message for one line of text output: the source excerpts and carets a CEL error quotes
    (` | device.x` / ` | ......^` lines) are dropped and the remaining lines joined with "; " (the JSON
    output keeps the message as the API server words it)."""
    if "\n" not in message:
        return message
    kept = [part for part in message.split("\n") if not part.startswith(" | ") and part.strip()]
    return "; ".join(kept)
