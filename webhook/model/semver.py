"""Semantic versions: blang/semver v4 strict ``Parse`` and precedence, plus the DRA version-attribute check.

``parse_semver`` follows blang's ``Parse`` (used by DRA's CEL environment for ``version`` attributes
and ``semver()``): ``MAJOR.MINOR.PATCH[-pre][+build]``, no ``v`` prefix, no leading zeros in numbers,
numbers within uint64. ``version_attribute`` is the API server's own check of
``DeviceAttribute.version`` (a semver.org 2.0.0 regular expression and at most 64 bytes), which
accepts numbers beyond uint64 that ``parse_semver`` rejects.
"""

from __future__ import annotations

import re
from functools import total_ordering

from webhook.model.cache import short_input_cache
from webhook.model.names import Problem, go_quote

__all__ = ["Semver", "is_semver", "parse_semver", "version_attribute"]

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = (1 << 64) - 1


def _only(s: str, charset: frozenset[str]) -> bool:
    return all(c in charset for c in s)


def _parse_uint(s: str) -> int:
    # Go strconv.ParseUint(s, 10, 64) error texts.
    if not s:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    digits = s.lstrip("0") or "0"
    n = int(digits) if len(digits) <= 20 else _UINT64_MAX + 1  # no int() of thousands of digits
    if n > _UINT64_MAX:
        raise ValueError(f'strconv.ParseUint: parsing "{s}": value out of range')
    return n


def _number(part: str, what: str) -> int:
    if not _only(part, _NUMBERS):
        raise ValueError(f"Invalid character(s) found in {what} number {_q(part)}")
    if len(part) > 1 and part[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes {_q(part)}")
    return _parse_uint(part)


def _q(s: str) -> str:
    return go_quote(s)


@total_ordering
class Semver:
    """A parsed version; ordered by semver 2.0.0 precedence (build metadata ignored)."""

    __slots__ = ("major", "minor", "patch", "pre", "build")

    def __init__(
        self, major: int, minor: int, patch: int, pre: tuple[int | str, ...] = (), build: tuple[str, ...] = ()
    ) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build

    def _key(self) -> tuple[int, int, int, tuple[int | str, ...]]:
        return (self.major, self.minor, self.patch, self.pre)

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 like blang ``Compare``."""
        a, b = self._key()[:3], other._key()[:3]
        if a != b:
            return -1 if a < b else 1
        pa, pb = self.pre, other.pre
        if not pa and not pb:
            return 0
        if not pa:
            return 1
        if not pb:
            return -1
        for x, y in zip(pa, pb, strict=False):
            if x == y:
                continue
            xn, yn = isinstance(x, int), isinstance(y, int)
            if xn and not yn:
                return -1
            if yn and not xn:
                return 1
            if xn:
                return -1 if x < y else 1  # type: ignore[operator]
            # Go compares strings byte-wise; these are ASCII.
            return -1 if str(x) < str(y) else 1
        if len(pa) == len(pb):
            return 0
        return -1 if len(pa) < len(pb) else 1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) < 0

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


@short_input_cache(4096)
def parse_semver(s: str) -> Semver:
    """blang/semver v4 ``Parse``; raises ``ValueError`` with blang's message."""
    if not s:
        raise ValueError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest = parts[2]
    build: list[str] = []
    pre_raw: list[str] = []
    if "+" in rest:
        rest, _, b = rest.partition("+")
        build = b.split(".")
    if "-" in rest:
        rest, _, p = rest.partition("-")
        pre_raw = p.split(".")
    patch = _number(rest, "patch")
    pre: list[int | str] = []
    for p in pre_raw:
        if not p:
            raise ValueError("Prerelease is empty")
        if _only(p, _NUMBERS):
            if len(p) > 1 and p[0] == "0":
                raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {_q(p)}")
            pre.append(_parse_uint(p))
        elif _only(p, _ALPHANUM):
            pre.append(p)
        else:
            raise ValueError(f"Invalid character(s) found in prerelease {_q(p)}")
    for b in build:
        if not b:
            raise ValueError("Build meta data is empty")
        if not _only(b, _ALPHANUM):
            raise ValueError(f"Invalid character(s) found in build meta data {_q(b)}")
    return Semver(major, minor, patch, tuple(pre), tuple(build))


def is_semver(s: str) -> bool:
    """True if :func:`parse_semver` accepts ``s``."""
    try:
        parse_semver(s)
    except ValueError:
        return False
    return True


_NUM = "(0|[1-9][0-9]*)"
_PRE_ID = "(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD_ID = "[0-9a-zA-Z-]+"
_SEMVER_RE = re.compile(
    _NUM + r"\." + _NUM + r"\." + _NUM + r"(-" + _PRE_ID + r"(\." + _PRE_ID + r")*)?"
    r"(\+" + _BUILD_ID + r"(\." + _BUILD_ID + r")*)?"
)
VERSION_ATTRIBUTE_MAX = 64
_NOT_SEMVER = "must be a string compatible with semver.org spec 2.0.0"


def version_attribute(v: str) -> list[str]:
    """The API server's check of ``DeviceAttribute.version``: semver.org 2.0.0, at most 64 bytes.

    Messages as in :mod:`webhook.model.names` (render them with ``names.render``).
    """
    errs: list[str] = []
    if not _SEMVER_RE.fullmatch(v):
        errs.append(_NOT_SEMVER)
    if (len(v) if v.isascii() else len(v.encode("utf-8"))) > VERSION_ATTRIBUTE_MAX:
        errs.append(Problem(f"may not be more than {VERSION_ATTRIBUTE_MAX} bytes", "too_long"))
    return errs
