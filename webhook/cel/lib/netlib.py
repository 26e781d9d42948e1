"""The Kubernetes CEL IP and CIDR library (`ip()`, `cidr()`, `isIP`, `containsIP`, ...) at run time.

Parsing follows Go's `netip` as Kubernetes uses it: no zones, no IPv4-mapped IPv6 addresses, a CIDR
keeps its host bits until `masked()`; `string(ip)` / `string(cidr)` print Go's canonical text.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from webhook.cel.common.values import STRICT_EQUALITY, TYPE_NAMES, CelError, no_such_overload
from webhook.cel.lib.functions import TRAVERSAL, actual_size, register
from webhook.cel.lib.goip import NetipError, parse_addr, parse_prefix
from webhook.model.cache import bounded_cache
from webhook.model.names import go_quote

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class IP:
    """A `net.IP` value."""

    __slots__ = ("addr",)

    def __init__(self, addr: Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return type(other) is IP and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def cel_string(self) -> str:
        return str(self.addr)

    def __repr__(self) -> str:
        return f"ip({str(self.addr)!r})"


class CIDR:
    """A `net.CIDR` value: an address (host bits kept) and a prefix length."""

    __slots__ = ("addr", "bits")

    def __init__(self, addr: Address, bits: int) -> None:
        self.addr = addr
        self.bits = bits

    def __eq__(self, other: object) -> bool:
        return type(other) is CIDR and other.addr == self.addr and other.bits == self.bits

    def __hash__(self) -> int:
        return hash((self.addr, self.bits))

    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)

    def cel_string(self) -> str:
        return f"{self.addr}/{self.bits}"

    def __repr__(self) -> str:
        return f"cidr({self.cel_string()!r})"


TYPE_NAMES[IP] = "net.IP"
TYPE_NAMES[CIDR] = "net.CIDR"
STRICT_EQUALITY.update((IP, CIDR))


def _parse_ip_uncached(text: str) -> Address | str:
    """Kubernetes parseIPAddr: the address, or the error text."""
    try:
        family, value, zone = parse_addr(text)
    except NetipError as e:
        return f"IP Address {go_quote(text)} parse error during conversion from string: {e}"
    if zone:
        return f"IP address {go_quote(text)} with zone value is not allowed"
    if family == 6 and value >> 32 == 0xFFFF:
        return f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed"
    return ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value)


_parse_ip = bounded_cache(max_bytes=1 << 20)(_parse_ip_uncached)


def parse_ip(text: str) -> Address:
    r = _parse_ip(text)
    if isinstance(r, str):
        raise CelError(r)
    return r


_PREFIX = "network address parse error during conversion from string: "


def _parse_cidr_uncached(text: str) -> CIDR | str:
    """Kubernetes parseCIDR: the prefix, or the error text (as `cidr()` reports it)."""
    try:
        family, value, _zone, bits = parse_prefix(text)
    except NetipError as e:
        return _PREFIX + _PREFIX + str(e)
    if family == 6 and value >> 32 == 0xFFFF:
        return _PREFIX + f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed"
    addr: Address = ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value)
    return CIDR(addr, bits)


_parse_cidr = bounded_cache(max_bytes=1 << 20)(_parse_cidr_uncached)


def parse_cidr(text: str) -> CIDR:
    r = _parse_cidr(text)
    if isinstance(r, str):
        raise CelError(r)
    return r


def to_cidr(s: Any) -> CIDR:
    if type(s) is not str:
        raise no_such_overload("cidr", s)
    return parse_cidr(s)


def _ip(fn: str, x: Any, *rest: Any) -> Address:
    if type(x) is not IP:
        raise no_such_overload(fn, x, *rest)
    return x.addr


def _ok(parse: Any, text: Any, fn: str) -> bool:
    if type(text) is not str:
        raise no_such_overload(fn, text)
    try:
        parse(text)
    except CelError:
        return False
    return True


def ip_of(x: Any) -> IP:
    """`ip(string)` or, on a CIDR, `cidr.ip()` (the address part, host bits kept)."""
    if type(x) is str:
        return IP(parse_ip(x))
    if type(x) is CIDR:
        return IP(x.addr)
    raise no_such_overload("ip", x)


def is_canonical(text: Any) -> bool:
    if type(text) is not str:
        raise no_such_overload("ip.isCanonical", text)
    return str(parse_ip(text)) == text


def is_global_unicast(x: Any) -> bool:
    """Go's IsGlobalUnicast: not unspecified, loopback, link-local, multicast or the IPv4 broadcast."""
    a = _ip("isGlobalUnicast", x)
    if a.is_unspecified or a.is_loopback or a.is_link_local or a.is_multicast:
        return False
    return not (a.version == 4 and int(a) == 0xFFFFFFFF)


def is_link_local_multicast(x: Any) -> bool:
    a = _ip("isLinkLocalMulticast", x)
    if a.version == 4:
        return a in ipaddress.IPv4Network("224.0.0.0/24")
    return (int(a) >> 112) & 0xFF0F == 0xFF02


def is_link_local_unicast(x: Any) -> bool:
    a = _ip("isLinkLocalUnicast", x)
    if a.version == 4:
        return a in ipaddress.IPv4Network("169.254.0.0/16")
    return (int(a) >> 118) == 0x3FA  # fe80::/10


def contains_ip(c: Any, x: Any) -> bool:
    if type(c) is not CIDR or type(x) not in (IP, str):
        raise no_such_overload("containsIP", c, x)
    if type(x) is str:
        try:
            addr = parse_ip(x)
        except CelError:  # Kubernetes: the parse error is lost, `cidrContainsIP` sees a non-IP
            raise CelError("no such overload") from None
    else:
        addr = x.addr
    net = c.network()
    return addr.version == net.version and addr in net


def contains_cidr(c: Any, x: Any) -> bool:
    if type(c) is not CIDR or type(x) not in (CIDR, str):
        raise no_such_overload("containsCIDR", c, x)
    inner = (parse_cidr(x) if type(x) is str else x).network()
    outer = c.network()
    return (
        inner.version == outer.version and inner.prefixlen >= outer.prefixlen and inner.subnet_of(outer)  # type: ignore[arg-type]
    )


def masked(c: Any) -> CIDR:
    if type(c) is not CIDR:
        raise no_such_overload("masked", c)
    net = c.network()
    return CIDR(net.network_address, c.bits)


def _c(fn: str, c: Any) -> CIDR:
    if type(c) is not CIDR:
        raise no_such_overload(fn, c)
    return c  # type: ignore[no-any-return]


def _size_cost(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(actual_size(args[0]) * TRAVERSAL)


def _ip_cost(args: tuple[Any, ...], result: Any) -> int:
    return 1 if type(args[0]) is CIDR else math.ceil(actual_size(args[0]) * TRAVERSAL)


def _contains_ip_cost(args: tuple[Any, ...], result: Any) -> int:
    n = actual_size(args[0])
    cost = math.ceil((n + n) * TRAVERSAL)
    if type(args[1]) is str:
        cost += math.ceil(actual_size(args[1]) * TRAVERSAL)
    return cost


def _contains_cidr_cost(args: tuple[Any, ...], result: Any) -> int:
    n = actual_size(args[0])
    cost = math.ceil((n + n) * TRAVERSAL) + math.ceil(n * TRAVERSAL) + 1
    if type(args[1]) is str:
        cost += math.ceil(actual_size(args[1]) * TRAVERSAL)
    return cost


def _register() -> None:
    m = {"member": True}
    register("ip", 1, ip_of, both=True, cost=_ip_cost)
    register("isIP", 1, lambda s: _ok(parse_ip, s, "isIP"), cost=_size_cost)
    register(
        "ip.isCanonical", 1, is_canonical, cost=lambda a, r: math.ceil(actual_size(a[0]) * 2 * TRAVERSAL)
    )
    register("family", 1, lambda x: _ip("family", x).version, **m)  # type: ignore[arg-type]
    register("isUnspecified", 1, lambda x: _ip("isUnspecified", x).is_unspecified, **m)  # type: ignore[arg-type]
    register("isLoopback", 1, lambda x: _ip("isLoopback", x).is_loopback, **m)  # type: ignore[arg-type]
    register("isLinkLocalMulticast", 1, is_link_local_multicast, **m)  # type: ignore[arg-type]
    register("isLinkLocalUnicast", 1, is_link_local_unicast, **m)  # type: ignore[arg-type]
    register("isGlobalUnicast", 1, is_global_unicast, **m)  # type: ignore[arg-type]
    register("cidr", 1, to_cidr, cost=_size_cost)
    register("isCIDR", 1, lambda s: _ok(parse_cidr, s, "isCIDR"), cost=_size_cost)
    register("containsIP", 2, contains_ip, **m, cost=_contains_ip_cost)  # type: ignore[arg-type]
    register("containsCIDR", 2, contains_cidr, **m, cost=_contains_cidr_cost)  # type: ignore[arg-type]
    register("masked", 1, masked, **m)  # type: ignore[arg-type]
    register("prefixLength", 1, lambda c: _c("prefixLength", c).bits, **m)  # type: ignore[arg-type]


_register()
