"""YAML scalars as kubectl reads them: go-yaml v2's resolution (YAML 1.1: `y`, `on`, `0777` are a boolean
and an octal int, timestamps stay strings, integers fit 64 bits or are strings) and sigs.k8s.io/yaml's
conversion of mapping keys to JSON."""

from __future__ import annotations

import re
from typing import Any

_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
YAML11_BOOLEANS = _TRUE | _FALSE
# go-yaml v2's `yamlStyleFloat`, matched (like its integers) on the text without `_` separators
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = frozenset((".nan", ".NaN", ".NAN"))

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


def plain_scalar(text: str) -> Any:
    """go-yaml v2 resolution of a plain (unquoted, untagged) scalar."""
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text and (text[0] in "0123456789+-."):
        return _number(text)
    return text


def _number(text: str) -> Any:
    """go-yaml v2's `resolve` for a scalar starting with a digit, a sign or a dot (`.inf` and `.nan`
    are entries of its table). Integers must fit 64 bits (int64, or uint64 without a sign) in every
    form (`0x`, `0o`/`0`, `0b`, decimal; `_` separators and signs): a longer hex, octal or binary number
    is a string there and here, whatever its length, so no unbounded Python int is ever made. Base 60
    (`1:30`) is not supported there: a string."""
    if len(text) < 19 and text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1):
        return int(text)  # the common case: a small decimal integer
    if _INF.fullmatch(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if text in _NAN:
        return float("nan")
    if text[0] == ".":  # only a float: ParseFloat of the text as written
        return _float(text, text) if _FLOAT.fullmatch(text) else text
    plain = text.replace("_", "")
    if not plain:
        return text
    v = _go_int(plain)
    if v is not None:
        return v
    if _FLOAT.fullmatch(plain):
        unsigned = plain.lstrip("+-")
        if unsigned[0] != "0" and unsigned.isdigit():
            # A decimal integer beyond 64 bits: go-yaml v2 makes it a float64 (a string past float64's
            # range); draguard keeps it exact up to 4,300 digits for the int64 field rules to report
            # (PARSERS.md), and a string beyond that (Python's int-str limit).
            try:
                return int(plain)
            except ValueError:
                return text
        return _float(plain, text)  # 1.5, 1e3, and 08 / 0999 / 0777...7 beyond 64 bits (not octal)
    if plain[:2] == "0b" and plain[2:3] in ("+", "-") and len(plain) > 3 and _BINARY.fullmatch(plain, 3):
        v = _ranged(plain[3:], 2, plain[2])  # go-yaml retries `0b` numbers with ParseInt(s[2:], 2, 64)
        if v is not None:
            return v
    return text


_BASES = {"b": 2, "B": 2, "o": 8, "O": 8, "x": 16, "X": 16}
_DIGITS = {
    2: re.compile(r"[01]*"),
    8: re.compile(r"[0-7]*"),
    10: re.compile(r"[0-9]*"),
    16: re.compile(r"[0-9a-fA-F]*"),
}
_BINARY = _DIGITS[2]
_WIDTH = {2: 64, 8: 22, 10: 20, 16: 16}  # digits of 2**64 - 1 in each base


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), else strconv.ParseUint(plain, 0, 64) (base from the prefix:
    `0b`, `0o`, `0x` in either case, a leading `0` for octal); None when neither parses."""
    sign = plain[0] if plain[0] in "+-" else ""
    body = plain[1:] if sign else plain
    if not body:
        return None
    base, digits = 10, body
    if body[0] == "0":
        if len(body) >= 3 and body[1] in _BASES:
            base, digits = _BASES[body[1]], body[2:]
        else:
            base, digits = 8, body[1:]
    if not _DIGITS[base].fullmatch(digits):
        return None
    return _ranged(digits, base, sign)


def _ranged(digits: str, base: int, sign: str) -> int | None:
    """The value of `digits` if it fits int64 (any sign) or uint64 (no sign); at most 64 bits are
    ever converted."""
    significant = digits.lstrip("0")
    if len(significant) > _WIDTH[base]:
        return None
    v = int(significant, base) if significant else 0
    if sign == "-":
        return -v if v <= 1 << 63 else None
    if v < 1 << 63 or (not sign and v < 1 << 64):
        return v
    return None


def _float(plain: str, text: str) -> Any:
    f = float(plain)
    if f in (_INF_F, -_INF_F):
        return text  # out of float64 range (1e9999): go-yaml's ParseFloat fails, the text stays a string
    if f.is_integer() and abs(f) < 2**63 and "." not in plain and "e" not in plain.lower():
        return int(f)  # 08 is the float64 8 there: the same JSON number
    return f


_INF_F = float("inf")

_TYPE_CHECKS = {
    "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "float": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "bool": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def tagged_scalar(tag: str, text: str) -> Any:
    """A scalar with an explicit tag: `!!int '7'` is 7, `!!str 1` is "1"; other tags keep the text."""
    short = tag.rsplit(":", 1)[-1] if tag.startswith("tag:yaml.org,2002:") else ""
    check = _TYPE_CHECKS.get(short)
    if check is not None:
        v = plain_scalar(text)
        if check(v):
            if short != "float":
                return v
            try:
                return float(v)
            except OverflowError:  # a decimal integer past float64's range (go-yaml: an error)
                return text
    return text


def json_key(k: Any) -> str:
    """Non-string keys become strings, as in the YAML → JSON conversion kubectl does."""
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)
