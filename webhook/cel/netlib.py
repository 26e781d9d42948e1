"""The Kubernetes CEL IP and CIDR library (`ip()`, `cidr()`, `isIP`, `containsIP`, ...) for cel-expr-python.

Values travel as one-entry maps (`{"\\x01ip": "10.0.0.1"}`, `{"\\x01cidr": "10.0.0.1/8"}`, see
`webhook.cel.k8slib`). Parsing follows Go's `netip` as Kubernetes uses it: no zones, no IPv4-mapped
IPv6 addresses, a CIDR keeps its host bits until `masked()`. `string(ip)` is not available here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from webhook.cel.k8slib import CIDR_KEY, IP_KEY, kind, tag_of

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

_PREFIX_BITS = re.compile(r"^(0|[1-9][0-9]{0,2})$")


@lru_cache(maxsize=4096)
def parse_ip(text: str) -> Address:
    """An IP address as Kubernetes' `ip()` accepts it. Raises ValueError."""
    if "%" in text:
        raise ValueError(f"IP address with zone value is not allowed: {text}")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {text}")
    return addr


@lru_cache(maxsize=4096)
def parse_cidr(text: str) -> Interface:
    """A CIDR (address with its host bits, and the prefix length) as `cidr()` accepts it."""
    addr_text, sep, bits = text.partition("/")
    if not sep or not _PREFIX_BITS.match(bits):
        raise ValueError(f"network address parse error during conversion from string: {text!r}")
    addr = parse_ip(addr_text)
    if int(bits) > addr.max_prefixlen:
        raise ValueError(f"network address parse error during conversion from string: {text!r}")
    return ipaddress.ip_interface(f"{addr}/{bits}")


def _ip_value(addr: Address) -> dict[str, str]:
    return {IP_KEY: str(addr)}


def _cidr_value(iface: Interface) -> dict[str, str]:
    return {CIDR_KEY: f"{iface.ip}/{iface.network.prefixlen}"}


def _ip(x: Any) -> Address:
    if tag_of(x) == IP_KEY:
        return parse_ip(x[IP_KEY])
    raise TypeError(f"no such overload: expected a net.IP, got {kind(x)}")


def _cidr(x: Any) -> Interface:
    if tag_of(x) == CIDR_KEY:
        return parse_cidr(x[CIDR_KEY])
    raise TypeError(f"no such overload: expected a net.CIDR, got {kind(x)}")


def _ok(parse: Callable[[str], Any], text: str) -> bool:
    try:
        parse(text)
        return True
    except ValueError:
        return False


def ip_of(x: Any) -> dict[str, str]:
    """`ip(string)` or, on a CIDR, `cidr.ip()` (the address part, host bits kept)."""
    if isinstance(x, str):
        return _ip_value(parse_ip(x))
    return _ip_value(_cidr(x).ip)


def is_canonical(text: str) -> bool:
    """`ip.isCanonical(string)`: the string is how Go would print the address."""
    return str(parse_ip(text)) == text


def is_global_unicast(x: Any) -> bool:
    """Go's IsGlobalUnicast: not unspecified, loopback, link-local, multicast or the IPv4 broadcast."""
    a = _ip(x)
    if a.is_unspecified or a.is_loopback or a.is_link_local or a.is_multicast:
        return False
    return not (a.version == 4 and int(a) == 0xFFFFFFFF)


def is_link_local_multicast(x: Any) -> bool:
    a = _ip(x)
    if a.version == 4:
        return a in ipaddress.IPv4Network("224.0.0.0/24")
    return (int(a) >> 112) & 0xFF0F == 0xFF02


def contains_ip(c: Any, x: Any) -> bool:
    net = _cidr(c).network
    addr = parse_ip(x) if isinstance(x, str) else _ip(x)
    return addr.version == net.version and addr in net


def contains_cidr(c: Any, x: Any) -> bool:
    outer = _cidr(c).network
    inner = (parse_cidr(x) if isinstance(x, str) else _cidr(x)).network
    return inner.version == outer.version and inner.prefixlen >= outer.prefixlen and inner.subnet_of(outer)  # type: ignore[arg-type]


def masked(c: Any) -> dict[str, str]:
    net = _cidr(c).network
    return {CIDR_KEY: str(net)}


# (name, overload id, parameter kinds, result kind, implementation, member)
FUNCTIONS: list[tuple[str, str, list[str], str, Callable[..., Any], bool]] = [
    ("ip", "string_to_ip", ["string"], "dyn", ip_of, False),
    ("ip", "cidr_ip", ["dyn"], "dyn", ip_of, True),
    ("isIP", "is_ip", ["string"], "bool", lambda s: _ok(parse_ip, s), False),
    ("ip.isCanonical", "ip_is_canonical", ["string"], "bool", is_canonical, False),
    ("family", "ip_family", ["dyn"], "int", lambda x: _ip(x).version, True),
    ("isUnspecified", "ip_is_unspecified", ["dyn"], "bool", lambda x: _ip(x).is_unspecified, True),
    ("isLoopback", "ip_is_loopback", ["dyn"], "bool", lambda x: _ip(x).is_loopback, True),
    ("isLinkLocalMulticast", "ip_is_link_local_multicast", ["dyn"], "bool", is_link_local_multicast, True),
    ("isLinkLocalUnicast", "ip_is_link_local_unicast", ["dyn"], "bool", lambda x: _ip(x).is_link_local, True),
    ("isGlobalUnicast", "ip_is_global_unicast", ["dyn"], "bool", is_global_unicast, True),
    ("cidr", "string_to_cidr", ["string"], "dyn", lambda s: _cidr_value(parse_cidr(s)), False),
    ("isCIDR", "is_cidr", ["string"], "bool", lambda s: _ok(parse_cidr, s), False),
    ("containsIP", "cidr_contains_ip", ["dyn", "dyn"], "bool", contains_ip, True),
    ("containsCIDR", "cidr_contains_cidr", ["dyn", "dyn"], "bool", contains_cidr, True),
    ("masked", "cidr_masked", ["dyn"], "dyn", masked, True),
    ("prefixLength", "cidr_prefix_length", ["dyn"], "int", lambda c: _cidr(c).network.prefixlen, True),
]
