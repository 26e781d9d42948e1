"""`string.format(list)` of the cel-go strings extension (versions 1-3: `%s %d %f %e %b %x %X %o`,
precision `%.3f`, locale en_US)."""

from __future__ import annotations

import math
from typing import Any

from webhook.cel.common.values import LIST_TYPES, MAP_TYPES, CelError, CelType, UInt, key_value, type_name
from webhook.cel.lib.functions import check_size
from webhook.cel.lib.printing import debug, to_string
from webhook.cel.lib.timelib import Duration, Timestamp
from webhook.model.names import go_quote

DEFAULT_PRECISION = 6


def _string_clause(v: Any) -> str:
    """FormatString: the %s clause."""
    t = type(v)
    if t in LIST_TYPES:
        return _format_list(v)
    if t in MAP_TYPES:
        return _format_map(v)
    if v is None:
        return "null"
    if t is CelType:
        return v.name
    if t in (int, UInt, float, bool, str, bytes, Timestamp, Duration):
        try:
            return to_string(v)
        except CelError:
            raise CelError(f'could not convert argument "{debug(v)}" to string') from None
    raise CelError(
        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
        f"durations, and timestamps, was given {type_name(v)}"
    )


def _clause_for_element(v: Any) -> str:
    """clauseForType: how list elements and map values are written."""
    t = type(v)
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return _fixed(v, DEFAULT_PRECISION, grouping=False)
    if t is Timestamp:
        return f"timestamp({go_quote(str(v))})"
    if t is Duration:
        return f"duration({go_quote(str(v))})"
    if t is CelType:
        return f"type({v.name})"
    if t in LIST_TYPES:
        return _format_list(v)
    if t in MAP_TYPES:
        return _format_map(v)
    if t in (str, bytes, bool) or v is None:
        return _string_clause(v)
    raise CelError(f"no formatting function for {type_name(v)}")


def _quote_for_cel(v: Any, s: str) -> str:
    t = type(v)
    if t is str:
        return go_quote(s)
    if t is bytes:
        return "b" + go_quote(s)
    if t is float and (math.isinf(v) or v != v):
        return go_quote(s)
    return s


def _format_list(xs: list[Any]) -> str:
    parts = [_quote_for_cel(x, _clause_for_element(x)) for x in xs]
    out = "[" + ", ".join(parts) + "]"
    check_size(len(out))
    return out


def _format_map(m: dict[Any, Any]) -> str:
    pairs = []
    for k, v in m.items():
        key = key_value(k)
        if type(key) in (str, bool):
            ks = _string_clause(key)
        elif type(key) in (int, UInt):
            ks = str(int(key))
        else:
            raise CelError(f"no formatting function for map key of type {type_name(key)}")
        pairs.append((_quote_for_cel(key, ks), _quote_for_cel(v, _clause_for_element(v))))
    pairs.sort(key=lambda p: p[0].encode("utf-8", "surrogatepass"))
    out = "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"
    check_size(len(out))
    return out


def _group(digits: str) -> str:
    head = len(digits) % 3 or 3
    return ",".join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])


def _fixed(f: float, precision: int, grouping: bool) -> str:
    if f != f:
        return "NaN"
    if math.isinf(f):
        if grouping:
            return "∞" if f > 0 else "-∞"
        return "+Inf" if f > 0 else "-Inf"
    check_size(precision + 400)
    s = f"{f:.{precision}f}"
    if not grouping:
        return s
    sign = "-" if s.startswith("-") else ""
    whole, _, frac = s.lstrip("-").partition(".")
    return sign + _group(whole) + ("." + frac if frac else "")


def _double_arg(v: Any, clause: str) -> float:
    if type(v) is float:
        return v  # type: ignore[no-any-return]
    if type(v) is str and v in ("NaN", "Infinity", "-Infinity"):
        return float(v.lower().replace("infinity", "inf"))
    raise CelError(f"{clause} clause can only be used on doubles, was given {type_name(v)}")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _scientific(f: float, width: int) -> str:
    """cel-go's %e: Go `%<n>e` (the "precision" is a width: 6 decimals always) through golang.org/x/text's
    en_US printer, which writes the exponent as `× 10` and superscript digits."""
    if f != f:
        text = "NaN"
    elif math.isinf(f):
        text = "∞" if f > 0 else "-∞"
    else:
        mant, _, exp = f"{f:.6e}".partition("e")
        e = int(exp)
        digits = ("-" if e < 0 else "") + f"{abs(e):02d}"
        text = f"{mant}\u202f×\u202f10{digits.translate(_SUPERSCRIPT)}"
    check_size(width)
    return text.rjust(width)


def _integer_clause(v: Any, clause: str, what: str) -> int:
    if type(v) in (int, UInt):
        return int(v)
    raise CelError(f"{clause} clause can only be used on integers, was given {type_name(v)}")


def _binary(v: Any) -> str:
    if type(v) is bool:
        return "1" if v else "0"
    if type(v) in (int, UInt):
        return format(int(v), "b")
    raise CelError(f"only integers and bools can be formatted as binary, was given {type_name(v)}")


def _hex(v: Any, upper: bool) -> str:
    t = type(v)
    if t is str:
        s = v.encode("utf-8", "surrogatepass").hex()
    elif t is bytes:
        s = v.hex()
    elif t in (int, UInt):
        s = format(int(v), "x")
    else:
        raise CelError(
            f"only integers, byte buffers, and strings can be formatted as hex, was given {type_name(v)}"
        )
    return s.upper() if upper else s


def format_string(fmt: str, args: list[Any]) -> str:
    """cel-go parseFormatString with the runtime formatter; errors in cel-go's wording."""
    out: list[str] = []
    size = 0
    i = 0
    arg_index = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            size += 1
            i += 1
            continue
        if i + 1 < n and fmt[i + 1] == "%":
            out.append("%")
            size += 1
            i += 2
            continue
        if arg_index >= len(args):
            raise CelError(f"index {arg_index} out of range")
        if i + 1 >= n:
            raise CelError("unexpected end of string")
        arg = args[arg_index]
        j = i + 1
        precision: int | None = None
        if fmt[j] == ".":
            j += 1
            start = j
            while True:
                if j >= n:
                    raise CelError(
                        "could not parse formatting clause: error while parsing precision: "
                        "could not find end of precision specifier"
                    )
                if not ("0" <= fmt[j] <= "9"):
                    break
                j += 1
            digits = fmt[start:j]
            if not digits or len(digits) > 18:
                raise CelError(
                    "could not parse formatting clause: error while parsing precision: error while converting "
                    f'precision to integer: strconv.Atoi: parsing "{digits}": '
                    + ("invalid syntax" if not digits else "value out of range")
                )
            precision = int(digits)
        if j >= n:
            raise CelError("could not parse formatting clause: unrecognized formatting clause")
        verb = fmt[j]
        j += 1
        try:
            text = _clause(verb, arg, precision)
        except CelError as e:
            if e.message.startswith("unrecognized formatting clause"):
                raise CelError(f"could not parse formatting clause: {e.message}") from None
            raise CelError(f"error during formatting: {e.message}") from None
        out.append(text)
        size += len(text)
        check_size(size)
        i = j
        arg_index += 1
    return "".join(out)


def _clause(verb: str, arg: Any, precision: int | None) -> str:
    if verb == "s":
        return _string_clause(arg)
    if verb == "d":
        if type(arg) not in (int, UInt):
            raise CelError(f"decimal clause can only be used on integers, was given {type_name(arg)}")
        return str(int(arg))
    if verb == "f":
        return _fixed(
            _double_arg(arg, "fixed-point"), DEFAULT_PRECISION if precision is None else precision, True
        )
    if verb == "e":
        return _scientific(
            _double_arg(arg, "scientific"), DEFAULT_PRECISION if precision is None else precision
        )
    if verb == "b":
        return _binary(arg)
    if verb in ("x", "X"):
        return _hex(arg, verb == "X")
    if verb == "o":
        if type(arg) not in (int, UInt):
            raise CelError(f"octal clause can only be used on integers, was given {type_name(arg)}")
        return format(int(arg), "o")
    raise CelError(f'unrecognized formatting clause "{verb}"')
