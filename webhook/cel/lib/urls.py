"""`url()` for CEL: Go's net/url ParseRequestURI (validation) and Parse (the value), and the accessors
Kubernetes exposes (scheme, host, hostname, port, escaped path, query)."""

from __future__ import annotations

from typing import Any

from webhook.cel.common.values import CelError
from webhook.model.names import go_quote

_HEX = "0123456789ABCDEF"


class _URLError(Exception):
    pass


def _is_ctl(s: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in s)


def _get_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if "a" <= c <= "z" or "A" <= c <= "Z":
            continue
        if "0" <= c <= "9" or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _unhex(c: str) -> int:
    return int(c, 16)


def _should_escape(c: str, mode: str) -> bool:
    """Go net/url shouldEscape for the modes used here (path, host, userinfo, query component)."""
    if "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9":
        return False
    if mode in ("host", "zone"):
        if c in "!$&'()*+,;=:[]<>\"":
            return False
    if c in "-_.~":
        return False
    if c in "$&+,/:;=?@":
        if mode == "path":
            return c == "?"
        if mode == "userinfo":
            return c in "@/?:"
        if mode == "query":
            return True
        return False
    return True


def _unescape(s: str, mode: str) -> str:
    """Go net/url unescape; raises _URLError for a bad escape or an invalid host character."""
    n = s.count("%")
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == "%":
            if i + 2 >= len(s) or not _is_hex(s[i + 1 : i + 3]):
                bad = s[i:]
                if len(bad) > 3:
                    bad = bad[:3]
                raise _URLError(f"invalid URL escape {go_quote(bad)}")
            if mode == "host" and _unhex(s[i + 1]) < 8 and s[i : i + 3] != "%25":
                raise _URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            i += 3
        elif c == "+":
            has_plus = mode == "query"
            i += 1
        else:
            if mode in ("host", "zone") and ord(c) < 0x80 and _should_escape(c, mode):
                raise _URLError(f"invalid character {go_quote(c)} in host name")
            i += 1
    if n == 0 and not has_plus:
        return s
    out = bytearray()
    raw = s.encode("utf-8", "surrogatepass")
    j = 0
    while j < len(raw):
        b = raw[j]
        if b == 0x25:
            out.append(int(raw[j + 1 : j + 3], 16))
            j += 3
        elif b == 0x2B and mode == "query":
            out.append(0x20)
            j += 1
        else:
            out.append(b)
            j += 1
    return out.decode("utf-8", "replace")


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def _escape(s: str, mode: str) -> str:
    out = []
    for b in s.encode("utf-8", "surrogatepass"):
        c = chr(b)
        if b < 0x80 and not _should_escape(c, mode):
            out.append(c)
        elif c == " " and mode == "query":
            out.append("+")
        else:
            out.append("%" + _HEX[b >> 4] + _HEX[b & 15])
    return "".join(out)


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    if port[0] != ":":
        return False
    return all("0" <= c <= "9" for c in port[1:])


def _parse_host(host: str) -> str:
    if host.startswith("["):
        i = host.rfind("]")
        if i < 0:
            raise _URLError("missing ']' in host")
        colon_port = host[i + 1 :]
        if not _valid_optional_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
        zone = host[:i].find("%25")
        if zone >= 0:
            host1 = _unescape(host[:zone], "host")
            host2 = _unescape(host[zone:i], "zone")
            host3 = _unescape(host[i:], "host")
            return host1 + host2 + host3
    else:
        i = host.rfind(":")
        if i != -1:
            colon_port = host[i:]
            if not _valid_optional_port(colon_port):
                raise _URLError(f"invalid port {go_quote(colon_port)} after host")
    return _unescape(host, "host")


def _valid_userinfo(s: str) -> bool:
    for c in s:
        if "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9":
            continue
        if c in "-._:~!$&'()*+,;=%@":
            continue
        return False
    return True


class URL:
    """A parsed URL (the fields of Go's url.URL that the accessors read)."""

    __slots__ = ("scheme", "opaque", "host", "path", "raw_path", "raw_query", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.scheme = self.opaque = self.host = self.path = self.raw_path = self.raw_query = ""

    def __eq__(self, other: object) -> bool:
        return type(other) is URL and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"url({self.text!r})"

    def getScheme(self) -> str:  # noqa: N802 - the CEL function name
        return self.scheme

    def getHost(self) -> str:  # noqa: N802
        return self.host

    def getHostname(self) -> str:  # noqa: N802
        host, _ = _split_host_port(self.host)
        return host

    def getPort(self) -> str:  # noqa: N802
        _, port = _split_host_port(self.host)
        return port

    def getEscapedPath(self) -> str:  # noqa: N802
        if self.raw_path and _valid_encoded(self.raw_path) and _unescape_ok(self.raw_path) == self.path:
            return self.raw_path
        if self.path == "*":
            return "*"
        return _escape(self.path, "path")

    def getQuery(self) -> dict[str, Any]:  # noqa: N802
        out: dict[str, Any] = {}
        for part in self.raw_query.split("&"):
            if not part or ";" in part:
                continue
            key, _, value = part.partition("=")
            try:
                k = _unescape(key, "query")
                v = _unescape(value, "query")
            except _URLError:
                continue
            out.setdefault(k, []).append(v)
        return out


def _unescape_ok(s: str) -> str | None:
    try:
        return _unescape(s, "path")
    except _URLError:
        return None


def _valid_encoded(s: str) -> bool:
    for c in s:
        if c in "!$&'()*+,;=:@[]":
            continue
        if c == "%":
            continue
        if _should_escape(c, "path"):
            return False
    return True


def _split_host_port(hostport: str) -> tuple[str, str]:
    host = hostport
    colon = host.rfind(":")
    port = ""
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _parse(raw: str, via_request: bool) -> URL:
    if _is_ctl(raw):
        raise _URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise _URLError("empty url")
    u = URL(raw)
    if raw == "*":
        u.path = "*"
        return u
    scheme, rest = _get_scheme(raw)
    u.scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if u.scheme:
            u.opaque = rest
            return u
        if via_request:
            raise _URLError("invalid URI for request")
        segment = rest.partition("/")[0]
        if ":" in segment:
            raise _URLError("first path segment in URL cannot contain colon")
    if (u.scheme or not via_request and not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        at = authority.rfind("@")
        if at >= 0:
            userinfo = authority[:at]
            if not _valid_userinfo(userinfo):
                raise _URLError("net/url: invalid userinfo")
            u.host = _parse_host(authority[at + 1 :])
        else:
            u.host = _parse_host(authority)
    path = _unescape(rest, "path")
    u.path = path
    escaped = _escape(path, "path")
    u.raw_path = "" if rest == escaped else rest
    return u


def _error(raw: str, e: _URLError) -> str:
    return f"parse {go_quote(raw)}: {e}"


def request_uri_error(raw: str) -> str | None:
    """url.ParseRequestURI's error text, or None if the string is a valid request URI."""
    try:
        _parse(raw, True)
    except _URLError as e:
        return _error(raw, e)
    return None


def is_url(raw: str) -> bool:
    return request_uri_error(raw) is None


def parse_url(raw: str) -> URL:
    err = request_uri_error(raw)
    if err is not None:
        raise CelError(f"URL parse error during conversion from string: {err}")
    # Parse again without the request-URI rules: a fragment is split off, as Kubernetes does.
    text, _, _frag = raw.partition("#")
    try:
        u = _parse(text, False)
    except _URLError as e:
        raise CelError(f"URL parse error during conversion from string: {_error(raw, e)}") from None
    u.text = raw
    return u
