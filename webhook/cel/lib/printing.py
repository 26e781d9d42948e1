"""Go-style printing of CEL values, shared by the standard library (`string()`), the strings extension's
`format()` and error messages: `%g` of a double, `string(x)` of a scalar, `%v` of any value."""

from __future__ import annotations

import math
from typing import Any

from webhook.cel.common.values import LIST_TYPES, MAP_TYPES, CelError, UInt, key_value, no_such_overload
from webhook.cel.lib.timelib import Duration, Timestamp


def format_double(f: float) -> str:
    """Go fmt %g of a float64 (shortest digits; exponent form below 1e-4 and from 1e6)."""
    if f != f:
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    r = repr(f)
    sign = "-" if r.startswith("-") else ""
    r = r.lstrip("-")
    mant, _, exp_s = r.partition("e")
    exp10 = int(exp_s) if exp_s else 0
    int_part, _, frac = mant.partition(".")
    if frac == "0":
        frac = ""
    digits = (int_part + frac).lstrip("0")
    point = len(int_part) + exp10  # position of the decimal point relative to `int_part + frac`
    if int_part == "0":
        lead = len(frac) - len(frac.lstrip("0"))
        point = exp10 - lead
    digits = digits.rstrip("0") or "0"
    exp = point - 1
    if exp < -4 or exp >= 6:  # strconv 'g' with the shortest precision decides at 6
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{m}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v  # type: ignore[no-any-return]
    if t is int or t is UInt:
        return str(int(v))
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_double(v)
    if t is bytes:
        try:
            return v.decode("utf-8")  # type: ignore[no-any-return]
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is Timestamp or t is Duration:
        return str(v)
    to_str = getattr(v, "cel_string", None)  # net.IP, net.CIDR
    if to_str is not None:
        return to_str()  # type: ignore[no-any-return]
    raise no_such_overload("string", v)


def debug(v: Any) -> str:
    """Go %v of a cel-go value (used inside some error messages)."""
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_double(v)
    if v is None:
        return "NULL_VALUE"
    if t in LIST_TYPES:
        return "[" + " ".join(debug(x) for x in v) + "]"
    if t in MAP_TYPES:
        return "map[" + " ".join(f"{debug(key_value(k))}:{debug(x)}" for k, x in v.items()) + "]"
    return str(v)
