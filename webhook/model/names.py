"""Name formats of the Kubernetes API (DNS labels, label keys, DRA driver/pool/attribute names, UUIDs).

Every check returns a list of problem messages in apimachinery wording; an empty list means valid.
Most messages are plain ``str`` and belong in an ``Invalid value`` error about the whole input.
Messages whose upstream error has another type, or that are about one part of the input, are
:class:`Problem` instances (still ``str``): ``kind`` is ``"invalid"``, ``"too_long"`` or
``"required"`` and ``bad_value`` the value upstream shows. :func:`render` turns any message into
the API server's text (``Invalid value: "x": ...``, ``Too long: ...``, ``Required value``).

Lengths are counted in UTF-8 bytes, like Go's ``len``. Patterns are ASCII-only, like Go's regexp.
"""

from __future__ import annotations

import re

from webhook.model.cache import short_input_cache
from webhook.model.text import clip

__all__ = [
    "Problem",
    "attribute_key",
    "c_identifier",
    "device_name",
    "dns_label",
    "dns_subdomain",
    "driver_name",
    "driver_name_has_upper",
    "extended_resource_name",
    "go_quote",
    "quote",
    "label_key",
    "label_value",
    "node_name",
    "pool_name",
    "render",
    "resource_claim_name",
    "uuid",
]


class Problem(str):
    """A message that is not a plain ``Invalid value`` about the whole input."""

    kind: str
    bad_value: str | None

    def __new__(cls, message: str, kind: str = "invalid", bad_value: str | None = None) -> Problem:
        self = super().__new__(cls, message)
        self.kind = kind
        self.bad_value = bad_value
        return self


def _too_long(limit: int) -> Problem:
    return Problem(f"may not be more than {limit} bytes", "too_long")


_REQUIRED = Problem("", "required")


def go_quote(s: str) -> str:
    """Quote like Go's ``%q`` for strings (printable characters kept, others escaped)."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        else:
            cp = ord(ch)
            if cp < 0x80:
                out.append(f"\\x{cp:02x}")
            elif cp < 0x10000:
                out.append(f"\\u{cp:04x}")
            else:
                out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def quote(s: str) -> str:
    """How a message quotes a value from the input: `go_quote` of it clipped (`text.clip`)."""
    return go_quote(clip(s))


def render(value: str, message: str) -> str:
    """The API server's error text for one message about ``value`` (without the field path)."""
    if isinstance(message, Problem):
        if message.kind == "required":
            return "Required value" + (f": {message}" if message else "")
        if message.kind == "too_long":
            return f"Too long: {message}"
        if message.bad_value is not None:
            value = message.bad_value
    return f"Invalid value: {quote(value)}: {message}"


def _blen(v: str) -> int:
    return len(v) if v.isascii() else len(v.encode("utf-8"))


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    ex = " or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {ex}, regex used for validation is '{fmt}')"


# --- RFC 1123 (k8s.io/apimachinery/pkg/util/validation) -----------------------------------------

_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_DNS_LABEL_RE = re.compile(_DNS_LABEL_FMT)
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)
_DNS_LABEL_MSG = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _DNS_LABEL_FMT,
    "my-name",
    "123-abc",
)
_DNS_SUBDOMAIN_MSG = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    _DNS_SUBDOMAIN_FMT,
    "example.com",
)


def dns_label(v: str) -> list[str]:
    """``IsDNS1123Label``: lower-case RFC 1123 label, at most 63 bytes."""
    if len(v) <= 63 and _DNS_LABEL_RE.fullmatch(v):
        return []
    errs: list[str] = []
    if _blen(v) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS_LABEL_RE.fullmatch(v):
        errs.append("must not contain dots" if _DNS_SUBDOMAIN_RE.fullmatch(v) else _DNS_LABEL_MSG)
    return errs


def dns_subdomain(v: str, _unit: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain``: lower-case RFC 1123 subdomain, at most 253 bytes."""
    if len(v) <= 253 and _DNS_SUBDOMAIN_RE.fullmatch(v):
        return []
    errs: list[str] = []
    if _blen(v) > 253:
        # util/validation says "characters", the newer validate/content package "bytes".
        errs.append(f"must be no more than 253 {_unit}")
    if not _DNS_SUBDOMAIN_RE.fullmatch(v):
        errs.append(_DNS_SUBDOMAIN_MSG)
    return errs


device_name = dns_label
node_name = dns_subdomain
resource_claim_name = dns_subdomain
"""Names a ResourceClaim may have (``ValidateResourceClaimName`` = ``NameIsDNSSubdomain``)."""


# --- C identifiers, label keys and values (k8s.io/apimachinery/pkg/api/validate/content) -------

_CID_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_CID_RE = re.compile(_CID_FMT)
_CID_MSG = _regex_error(
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'",
    _CID_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)


def c_identifier(v: str) -> list[str]:
    """``IsCIdentifier``: format only, no length limit."""
    return [] if _CID_RE.fullmatch(v) else [_CID_MSG]


_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_KEY_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_NAME_MSG = "name part " + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
_LABEL_KEY_MANY_SLASHES = (
    "a valid label key "
    + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)


def _label_key_uncached(v: str) -> tuple[str, ...]:
    parts = v.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns_subdomain(prefix, "bytes"))
    else:
        return (_LABEL_KEY_MANY_SLASHES,)
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(_LABEL_NAME_MSG)
    return tuple(errs)


@short_input_cache(4096)
def _label_key(v: str) -> tuple[str, ...]:
    return _label_key_uncached(v)


def label_key(v: str) -> list[str]:
    """``IsLabelKey`` (a.k.a. ``IsQualifiedName``): ``[dns-subdomain/]name``, name at most 63 bytes."""
    return list(_label_key(v))


def label_value(v: str) -> list[str]:
    """``IsLabelValue``: empty, or a label-key name part; at most 63 bytes."""
    if len(v) <= 63 and _LABEL_VALUE_RE.fullmatch(v):
        return []
    errs: list[str] = []
    if _blen(v) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(v):
        errs.append(_LABEL_VALUE_MSG)
    return errs


# --- DRA names (pkg/apis/resource/validation) -------------------------------------------------


def _driver_name_uncached(v: str, bad_value: str | None) -> tuple[str, ...]:
    # ValidateCSIDriverName: required, <= 63 bytes, lower(name) must be a DNS subdomain.
    if not v:
        return (_REQUIRED,)
    errs: list[str] = []
    if _blen(v) > 63:
        errs.append(_too_long(63))
    for m in dns_subdomain(v.lower()):
        errs.append(m if bad_value is None else Problem(m, "invalid", bad_value))
    return tuple(errs)


@short_input_cache(4096)
def _driver_name(v: str) -> tuple[str, ...]:
    return _driver_name_uncached(v, None)


def driver_name(v: str) -> list[str]:
    """A DRA driver name (CSI driver rules): non-empty, at most 63 bytes, lower-cased DNS subdomain.

    Upper case is accepted (upstream lower-cases before checking); see :func:`driver_name_has_upper`.
    """
    return list(_driver_name(v))


def driver_name_has_upper(v: str) -> bool:
    """True if the API server would accept ``v`` only because it lower-cases driver names first."""
    return v != v.lower()


def _pool_name_uncached(v: str) -> tuple[str, ...]:
    if not v:
        return (_REQUIRED,)
    errs: list[str] = []
    if _blen(v) > 253:
        errs.append(_too_long(253))
    for part in v.split("/"):
        errs.extend(Problem(m, "invalid", part) for m in dns_subdomain(part))
    return tuple(errs)


@short_input_cache(4096)
def _pool_name(v: str) -> tuple[str, ...]:
    return _pool_name_uncached(v)


def pool_name(v: str) -> list[str]:
    """A pool name: non-empty, at most 253 bytes, every ``/``-separated segment a DNS subdomain.

    An empty segment (``a//b``, leading or trailing ``/``) fails the DNS subdomain pattern.
    """
    return list(_pool_name(v))


_ATTR_ID_MAX = 32
_FQN_MSG = "a fully qualified name must be a domain and a name separated by a slash"


def _cid_limited(part: str) -> list[str]:
    errs: list[str] = []
    if _blen(part) > _ATTR_ID_MAX:
        errs.append(_too_long(_ATTR_ID_MAX))
    if not _CID_RE.fullmatch(part):
        errs.append(Problem(_CID_MSG, "invalid", part))
    return errs


def _attribute_key_uncached(v: str, fully_qualified: bool) -> tuple[str, ...]:
    parts = v.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        errs.extend(_cid_limited(parts[0]))
    elif len(parts) == 2:
        domain, ident = parts
        if not domain:
            errs.append(Problem("the domain must not be empty", "invalid", ""))
        else:
            errs.extend(_driver_name_uncached(domain, domain))
        if not ident:
            errs.append(Problem("the name must not be empty", "invalid", ""))
        else:
            errs.extend(_cid_limited(ident))
    # More than one "/": upstream validateQualifiedName has no case for it and accepts the
    # name (a TODO in validation.go and in the declarative strfmt.go as of mid-2026).
    if fully_qualified and "/" not in v:
        errs.append(_FQN_MSG)
    return tuple(errs)


@short_input_cache(8192)
def _attribute_key(v: str, fully_qualified: bool) -> tuple[str, ...]:
    return _attribute_key_uncached(v, fully_qualified)


def attribute_key(v: str, fully_qualified: bool = False) -> list[str]:
    """A DRA ``QualifiedName`` (attribute/capacity key): ``<cid>`` or ``<driver-domain>/<cid>``.

    The C identifier may have at most 32 bytes, the domain follows driver-name rules (at most 63
    bytes). ``fully_qualified=True`` checks a ``FullyQualifiedName``, which needs the domain.
    Names with more than one ``/`` pass, as they do in the API server (see
    :func:`attribute_key_has_extra_slash` for a lint).
    """
    r = _attribute_key(v, fully_qualified)
    return list(r) if r else []


def attribute_key_has_extra_slash(v: str) -> bool:
    """True for keys like ``a/b/c`` that the API server accepts but that name no real attribute."""
    return v.count("/") > 1


# --- extended resource names (pkg/apis/core/v1/helper) -----------------------------------------

_EXTENDED_MSG = "must be a valid extended resource name"


def extended_resource_name(v: str) -> list[str]:
    """``IsExtendedResourceName``: has a ``/``, no ``kubernetes.io/`` anywhere, not ``requests.``-
    prefixed, and ``"requests." + v`` is a valid label key (so the name part is at most 63 bytes).

    The API server reports every failure with one message (``must be a valid extended resource
    name``); :func:`extended_resource_name_reasons` says why.
    """
    return [_EXTENDED_MSG] if extended_resource_name_reasons(v) else []


def extended_resource_name_reasons(v: str) -> list[str]:
    """The detailed reasons (worded like the declarative ``ExtendedResourceName`` check)."""
    errs: list[str] = []
    if "/" not in v:
        errs.append("a name must be a domain-prefixed path, such as 'example.com/my-prop'")
    elif "kubernetes.io/" in v:
        errs.append('must not have "kubernetes.io/" domain')
    if v.startswith("requests."):
        errs.append('must not have "requests." prefix')
    errs.extend(_label_key("requests." + v))
    return errs


# --- UUIDs (validateUID in pkg/apis/resource/validation, github.com/google/uuid.Validate) ------

_UUID_CANON_RE = re.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_UUID_ANYCASE_RE = re.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_UUID_HEX32_RE = re.compile("[0-9a-fA-F]{32}")
_UUID_NORMALIZED_MSG = (
    "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
    "with lowercase hexadecimal characters"
)


def _google_uuid_validate(s: str) -> str | None:
    """Port of ``uuid.Validate``: None when ``s`` is one of the four accepted spellings."""
    n = _blen(s)
    if n == 36:
        body = s
    elif n == 45:
        if s[:9].lower() != "urn:uuid:" or not s.isascii():
            return f"invalid urn prefix: {go_quote(s.encode('utf-8')[:9].decode('utf-8', 'replace'))}"
        body = s[9:]
    elif n == 38:
        if not s.isascii() or s[0] != "{" or s[-1] != "}":
            return "invalid bracketed UUID format"
        body = s[1:-1]
    elif n == 32:
        return None if _UUID_HEX32_RE.fullmatch(s) else "invalid UUID format"
    else:
        return f"invalid UUID length: {n}"
    return None if _UUID_ANYCASE_RE.fullmatch(body) else "invalid UUID format"


def uuid(v: str) -> list[str]:
    """A ``shareID``: lower-case RFC 4122 UUID, exactly ``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``."""
    if _UUID_CANON_RE.fullmatch(v):
        return []
    err = _google_uuid_validate(v)
    if err is not None:
        return [f"error validating uid: {err}"]
    return [_UUID_NORMALIZED_MSG]
