"""CEL string and bytes literal decoding (cel-go's `parser/unescape.go` rules)."""

from __future__ import annotations

from webhook.model.errors import DraguardError


class UnescapeError(DraguardError, ValueError):
    """A literal the lexer accepted but cel-go cannot decode (message in cel-go's words)."""


_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_HEX = set("0123456789abcdefABCDEF")


def _valid_rune(v: int) -> bool:
    return 0 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF


def unescape(text: str, is_bytes: bool) -> str | bytes:
    """Decode a quoted literal (with r/R prefix, single/triple quotes); bytes literals without the b."""
    value = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(value) < 2:
        raise UnescapeError("unable to unescape string")
    raw = value[0] in "rR"
    if raw:
        value = value[1:]
    n = len(value)
    if value[0] != value[-1] or value[0] not in "\"'":
        raise UnescapeError("unable to unescape string")
    if n >= 6 and (value.startswith("'''") or value.startswith('"""')):
        if not value.endswith(value[:3]):
            raise UnescapeError("unable to unescape string")
        value = value[3:-3]
    else:
        value = value[1:-1]
    if raw or "\\" not in value:
        return value.encode() if is_bytes else value
    chars: list[str] = []
    buf = bytearray()
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c != "\\":
            if is_bytes:
                buf += c.encode()
            else:
                chars.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise UnescapeError("unable to unescape string, found '\\' as last character")
        e = value[i + 1]
        i += 2
        if e in _SIMPLE:
            if is_bytes:
                buf += _SIMPLE[e].encode()
            else:
                chars.append(_SIMPLE[e])
            continue
        if e in "xXuU":
            width = 2 if e in "xX" else 4 if e == "u" else 8
            if is_bytes and e in "uU":
                raise UnescapeError("unable to unescape string")
            digits = value[i : i + width]
            if len(digits) < width or not set(digits) <= _HEX:
                raise UnescapeError("unable to unescape string")
            i += width
            v = int(digits, 16)
            if is_bytes:
                buf.append(v)
                continue
            if not _valid_rune(v):
                raise UnescapeError("invalid unicode code point")
            chars.append(chr(v))
            continue
        if e in "0123":
            digits = value[i : i + 2]
            if len(digits) < 2 or not set(digits) <= set("01234567"):
                raise UnescapeError("unable to unescape octal sequence in string")
            i += 2
            v = int(e + digits, 8)
            if is_bytes:
                buf.append(v)
            else:
                chars.append(chr(v))
            continue
        raise UnescapeError("unable to unescape string")
    return bytes(buf) if is_bytes else "".join(chars)
