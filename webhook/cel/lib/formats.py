"""Kubernetes' named formats for CEL (`format.dns1123Label()`, `format.named("uuid")`, `.validate(s)`):
apimachinery's name validators and the OpenAPI (strfmt) formats, with their messages."""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
from collections.abc import Callable

from webhook.cel.common.values import STRICT_EQUALITY, TYPE_NAMES
from webhook.cel.lib import regex, urls
from webhook.model import names


class NamedFormat:
    """A `kubernetes.NamedFormat` (format.dns1123Label(), format.named("uuid"), ...)."""

    __slots__ = ("name", "validate", "max_regex_size")

    def __init__(self, name: str, validate: Callable[[str], list[str]], max_regex_size: int) -> None:
        self.name = name
        self.validate = validate
        self.max_regex_size = max_regex_size

    def __eq__(self, other: object) -> bool:
        return type(other) is NamedFormat and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"format.{self.name}"


TYPE_NAMES[NamedFormat] = "kubernetes.NamedFormat"
STRICT_EQUALITY.add(NamedFormat)

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    f"validation is '{_DNS1035_FMT}')"
)


def _full(pattern: str, s: str) -> bool:
    m = regex.compile_pattern(f"^(?:{pattern})$").search(s)
    return m is not None


def _mask_trailing_dash(s: str) -> str:
    """apimachinery maskTrailingDash (generateName prefixes may end with '-')."""
    if len(s.encode("utf-8", "surrogatepass")) > 1 and s.endswith("-"):
        return s[:-2] + "a"
    return s


def dns1035_label(s: str) -> list[str]:
    errs: list[str] = []
    if len(s.encode("utf-8", "surrogatepass")) > 63:
        errs.append("must be no more than 63 characters")
    if not _full(_DNS1035_FMT, s):
        errs.append(_DNS1035_MSG)
    return errs


_UUID = "(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)"
_DATE = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_DATETIME = (
    "^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(:([0-9]{2})(\\.[0-9]+)?)?"
    "([Zz]|[+-][0-9]{2}:?[0-9]{2})?$"
)


def _uuid(s: str) -> list[str]:
    return [] if regex.compile_pattern(_UUID).search(s) else ["does not match the UUID format"]


def _byte(s: str) -> list[str]:
    try:
        base64.b64decode(s.replace("\r", "").replace("\n", "").encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return ["invalid base64"]
    return []


def _date(s: str) -> list[str]:
    if not regex.compile_pattern(_DATE).search(s):
        return ["invalid date"]
    try:
        _dt.date(int(s[:4]), int(s[5:7]), int(s[8:10]))
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(s: str) -> list[str]:
    m = regex.compile_pattern(_DATETIME).search(s)
    if m is None:
        return ["invalid datetime"]
    try:
        _dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
        if m.group(7) is not None and int(m.group(7)) > 59:
            return ["invalid datetime"]
    except ValueError:
        return ["invalid datetime"]
    return []


def _uri(s: str) -> list[str]:
    err = urls.request_uri_error(s)
    return [err] if err else []


def _fmt(name: str, validate: Callable[[str], list[str]], size: int) -> NamedFormat:
    return NamedFormat(name, validate, size)


FORMATS: dict[str, NamedFormat] = {
    "dns1123Label": _fmt("dns1123Label", names.dns_label, 30),
    "dns1123Subdomain": _fmt("dns1123Subdomain", names.dns_subdomain, 60),
    "dns1035Label": _fmt("dns1035Label", dns1035_label, 30),
    "qualifiedName": _fmt("qualifiedName", names.label_key, 60),
    "dns1123LabelPrefix": _fmt("dns1123LabelPrefix", lambda s: names.dns_label(_mask_trailing_dash(s)), 30),
    "dns1123SubdomainPrefix": _fmt(
        "dns1123SubdomainPrefix", lambda s: names.dns_subdomain(_mask_trailing_dash(s)), 60
    ),
    "dns1035LabelPrefix": _fmt("dns1035LabelPrefix", lambda s: dns1035_label(_mask_trailing_dash(s)), 30),
    "labelValue": _fmt("labelValue", names.label_value, 40),
    "uri": _fmt("uri", _uri, 1200),
    "uuid": _fmt("uuid", _uuid, len(_UUID)),
    "byte": _fmt("byte", _byte, 70),
    "date": _fmt("date", _date, 160),
    "datetime": _fmt("datetime", _datetime, 160),
}
