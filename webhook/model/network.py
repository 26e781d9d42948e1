"""IP addresses and interface addresses, checked like apimachinery's ``IsValidIP`` / ``IsValidInterfaceAddress``.

Parsing follows ``k8s.io/utils/net``'s "sloppy" parsers (IPv4 octets may have leading zeros and are
read as decimal); the checks then demand the canonical text, so ``192.0.2.005/24`` and
``2001:DB8::1/64`` are rejected with the canonical form in the message.
"""

from __future__ import annotations

import ipaddress

from webhook.model.cache import short_input_cache
from webhook.model.names import go_quote

__all__ = ["interface_address", "ip_address"]

_CIDR_MSG = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_BIG = 0xFFFFFF


def _dtoi(s: str) -> tuple[int, int] | None:
    """Go's ``dtoi``: leading decimal digits -> (value, count), None if none or too big."""
    n = i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= _BIG:
            return None
        i += 1
    return (n, i) if i else None


def _parse_ipv4_sloppy(s: str) -> bytes | None:
    out = bytearray()
    for i in range(4):
        if not s:
            return None
        if i > 0:
            if s[0] != ".":
                return None
            s = s[1:]
        r = _dtoi(s)
        if r is None or r[0] > 0xFF:
            return None
        out.append(r[0])
        s = s[r[1] :]
    return bytes(out) if not s else None


def _parse_ip_sloppy(s: str) -> tuple[int, bytes] | None:
    """(family, 16-or-4 bytes) like ``ParseIPSloppy``; IPv4-mapped IPv6 text gives 16 bytes."""
    if not s.isascii():
        return None
    if ":" not in s:
        b4 = _parse_ipv4_sloppy(s)
        return (4, b4) if b4 is not None else None
    if "%" in s or "/" in s:
        return None
    text = s
    # An embedded IPv4 tail may have leading zeros in the sloppy parser: normalize it first.
    head, sep, tail = s.rpartition(":")
    if "." in tail:
        b4 = _parse_ipv4_sloppy(tail)
        if b4 is None:
            return None
        text = head + sep + ".".join(str(x) for x in b4)
    try:
        return (6, ipaddress.IPv6Address(text).packed)
    except ValueError:
        return None


def _ip_string(family: int, b: bytes) -> str:
    """Go ``net.IP.String()``: IPv4 and IPv4-mapped IPv6 print dotted, other IPv6 RFC 5952."""
    if family == 4:
        return ".".join(str(x) for x in b)
    if b[:12] == b"\x00" * 10 + b"\xff\xff":
        return ".".join(str(x) for x in b[12:])
    return str(ipaddress.IPv6Address(b))


@short_input_cache(4096)
def _interface_address(v: str) -> tuple[str, ...]:
    addr, slash, mask = v.partition("/")
    parsed = _parse_ip_sloppy(addr) if slash else None
    if parsed is None:
        return (_CIDR_MSG,)
    family, b = parsed
    bits = 32 if family == 4 else 128
    r = _dtoi(mask)
    if r is None or r[1] != len(mask) or r[0] > bits:
        return (_CIDR_MSG,)
    size = r[0]
    is_v4 = family == 4 or b[:12] == b"\x00" * 10 + b"\xff\xff"
    if is_v4 and size > 32:
        size -= 96
    canonical = f"{_ip_string(family, b)}/{size}"
    if v != canonical:
        return (f"must be in canonical form ({go_quote(canonical)})",)
    return ()


def interface_address(v: str) -> list[str]:
    """``IsValidInterfaceAddress``: ``ip/prefix`` (the host address, not the network) in canonical form."""
    return list(_interface_address(v))


def ip_address(v: str) -> list[str]:
    """``IsValidIP`` (strict): a valid IP, no leading zeros, not IPv4-mapped IPv6, canonical form."""
    parsed = _parse_ip_sloppy(v)
    if parsed is None:
        return [_IP_MSG]
    family, b = parsed
    errs: list[str] = []
    try:
        ipaddress.ip_address(v)
    except ValueError:
        errs.append("must not have leading 0s")
    if family == 6 and b[:12] == b"\x00" * 10 + b"\xff\xff":
        errs.append("must not be an IPv4-mapped IPv6 address")
    if errs:
        return errs
    canonical = _ip_string(family, b)
    if v != canonical:
        return [f"must be in canonical form ({go_quote(canonical)})"]
    return []
