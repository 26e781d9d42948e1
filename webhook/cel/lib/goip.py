"""Go's net/netip parsers (`ParseAddr`, `ParsePrefix`): what they accept and their error texts, which
Kubernetes' `ip()` / `cidr()` put in their runtime errors."""

from __future__ import annotations

from webhook.model.errors import DraguardError
from webhook.model.names import go_quote


class NetipError(DraguardError, ValueError):
    """A parse failure, with Go's message."""


def _addr_error(text: str, msg: str, at: str | None = None) -> NetipError:
    if at:
        return NetipError(f"ParseAddr({go_quote(text)}): {msg} (at {go_quote(at)})")
    return NetipError(f"ParseAddr({go_quote(text)}): {msg}")


def _ipv4_fields(text: str, s: str) -> list[int]:
    fields: list[int] = []
    val = digits = 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(c) - 48
            digits += 1
            if val > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(val)
            val = digits = 0
        else:
            raise _addr_error(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    fields.append(val)
    return fields


def _ipv6(text: str) -> tuple[int, str]:
    s = text
    zone = ""
    pct = s.find("%")
    if pct != -1:
        s, zone = s[:pct], s[pct + 1 :]
        if not zone:
            raise _addr_error(text, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if not s:
            return 0, zone
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s):
            c = s[off]
            if "0" <= c <= "9":
                acc = (acc << 4) + ord(c) - 48
            elif "a" <= c <= "f":
                acc = (acc << 4) + ord(c) - 87
            elif "A" <= c <= "F":
                acc = (acc << 4) + ord(c) - 55
            else:
                break
            if off > 3:
                raise _addr_error(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    text, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _addr_error(
                    text, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            ip[i : i + 4] = _ipv4_fields(text, s)
            s = ""
            i += 4
            break
        ip[i] = acc >> 8
        ip[i + 1] = acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(text, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(text, "address string too short")
        n = 16 - i
        ip = ip[:ellipsis] + [0] * n + ip[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(text, "the :: must expand to at least one field of zeros", s)
    return int.from_bytes(bytes(ip), "big"), zone


def parse_addr(text: str) -> tuple[int, int, str]:
    """netip.ParseAddr: (4 or 6, the address as an integer, zone); raises NetipError."""
    for c in text:
        if c == ".":
            f = _ipv4_fields(text, text)
            return 4, (f[0] << 24) | (f[1] << 16) | (f[2] << 8) | f[3], ""
        if c == ":":
            value, zone = _ipv6(text)
            return 6, value, zone
        if c == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def parse_prefix(text: str) -> tuple[int, int, str, int]:
    """netip.ParsePrefix: (family, address, zone, bits); raises NetipError."""

    def err(msg: str) -> NetipError:
        return NetipError(f"netip.ParsePrefix({go_quote(text)}): {msg}")

    slash = text.rfind("/")
    if slash < 0:
        raise err("no '/'")
    try:
        family, value, zone = parse_addr(text[:slash])
    except NetipError as e:
        raise err(str(e)) from None
    if family == 6 and zone:
        raise err("IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    if len(bits_text) > 1 and not ("1" <= bits_text[0] <= "9"):
        raise err("bad bits after slash: " + go_quote(bits_text))
    if not bits_text or not all("0" <= c <= "9" for c in bits_text.lstrip("+-")) or len(bits_text) > 18:
        raise err("bad bits after slash: " + go_quote(bits_text))
    bits = int(bits_text)
    if bits < 0 or bits > (32 if family == 4 else 128):
        raise err("prefix length out of range")
    return family, value, zone, bits
