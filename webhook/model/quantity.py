"""Kubernetes resource quantities (``1Gi``, ``500m``, ``1e3``): exact parsing, comparison, canonical form.

A port of the behaviour of apimachinery's ``resource.ParseQuantity`` and ``Quantity.String``:

* grammar ``[+-]digits[.digits]suffix`` with suffix one of ``Ki Mi Gi Ti Pi Ei``, ``n u m "" k M G T P E``
  or ``e``/``E`` plus a signed integer; errors carry the upstream messages;
* non-zero values are rounded away from zero to a multiple of 1n (``0.1n`` -> ``1n``);
* binary-suffixed values are capped at 2^63-1 in magnitude (decimal ones are not capped);
* strings are trimmed first, as ``Quantity.UnmarshalJSON`` does for API requests (``" 1Gi"`` is
  accepted by an API server); pass ``trim=False`` for the bare ``ParseQuantity`` behaviour.

Values are held exactly as ``mantissa * 10**exponent``; ``value`` gives a ``fractions.Fraction``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from functools import total_ordering

from webhook.model.bignum import ALIGN_DIGITS, Big, decimal_int, decimal_str, nano_int, strip_zeros
from webhook.model.cache import short_input_cache

__all__ = [
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
    "INT64_MAX",
    "Quantity",
    "parse_quantity",
]

ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

INT64_MAX = (1 << 63) - 1
_EXACT_LIMIT = 10_000  # |decimal exponent| beyond which `value` and arithmetic refuse to expand

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_BY_POW = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

# The shapes upstream's scanner accepts before it looks at the suffix's meaning.
_SHAPE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_SIGNED_INT = re.compile(r"[+-]?[0-9]+")


def _normalize(mant: int, exp: int) -> tuple[int, int]:
    if mant == 0:
        return 0, 0
    mant, zeros = strip_zeros(mant)
    return mant, exp + zeros


_NDIGITS_EXACT = 10**4000  # below this, count digits exactly (computed once: it is a 13,000-bit number)


def _ndigits(n: int) -> int:
    n = abs(n)
    return len(str(n)) if n < _NDIGITS_EXACT else n.bit_length() * 30103 // 100000 + 1


@total_ordering
class Quantity:
    """An immutable, exact quantity. Equality and ordering compare values (like Go ``Cmp``)."""

    __slots__ = ("_mant", "_exp", "format", "_s")

    def __init__(self, mant: int, exp: int, fmt: str = DECIMAL_SI, s: str | None = None) -> None:
        self._mant, self._exp = _normalize(mant, exp)
        self.format = fmt
        self._s = s

    # --- exact value -------------------------------------------------------------------------
    @property
    def value(self) -> Fraction:
        """The exact value (raises OverflowError for absurd decimal exponents like ``1e99999``)."""
        if abs(self._exp) > _EXACT_LIMIT:
            raise OverflowError(f"quantity {self} is too large or too small to expand exactly")
        if self._exp >= 0:
            return Fraction(self._mant * 10**self._exp)
        return Fraction(self._mant, 10**-self._exp)

    @property
    def is_integer(self) -> bool:
        return self._exp >= 0 or self._mant == 0

    def sign(self) -> int:
        return (self._mant > 0) - (self._mant < 0)

    def is_zero(self) -> bool:
        return self._mant == 0

    def scaled_value(self, scale: int) -> int:
        """The value in units of 10**scale, rounded away from zero (Go ``ScaledValue`` on parsed values).

        Unlike Go, the result is not truncated to int64.
        """
        d = self._exp - scale
        if d >= 0:
            if d > _EXACT_LIMIT:
                raise OverflowError(f"quantity {self} is too large to expand exactly")
            return self._mant * 10**d
        m = abs(self._mant)
        if -d > _ndigits(m):
            r = 1 if m else 0
        else:
            q, rem = divmod(m, 10**-d)
            r = q + (1 if rem else 0)
        return r if self._mant >= 0 else -r

    def nano(self) -> int | Big:
        """The exact value in units of 1n, compact when huge (`webhook.model.bignum`); rounded away
        from zero for computed values finer than 1n (parsed values never are)."""
        if self._exp >= -9:
            return nano_int(self._mant, self._exp + 9)
        return self.scaled_value(-9)

    @classmethod
    def from_nano(cls, n: int | Big, fmt: str = DECIMAL_SI) -> Quantity:
        """The quantity of `n` units of 1n (the inverse of `nano`)."""
        if isinstance(n, Big):
            return cls(n.m, n.e - 9, fmt)
        return cls(n, -9, fmt)

    def int_value(self) -> int:
        """Go ``Value()``: whole units, fractions rounded up (away from zero)."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """Go ``MilliValue()``: thousandths, rounded up (away from zero)."""
        return self.scaled_value(-3)

    def fits_int64(self) -> bool:
        """True if ``int_value()`` is within Go's int64 range."""
        if self._exp > 19:
            return self._mant == 0
        return -INT64_MAX - 1 <= self.int_value() <= INT64_MAX

    # --- arithmetic and comparison -------------------------------------------------------------
    def _aligned(self, other: Quantity) -> tuple[int, int, int]:
        e = min(self._exp, other._exp)
        if max(self._exp, other._exp) - e > ALIGN_DIGITS:
            raise OverflowError("quantities too far apart in magnitude to combine exactly")
        return self._mant * 10 ** (self._exp - e), other._mant * 10 ** (other._exp - e), e

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        a, b, e = self._aligned(other)
        return Quantity(a + b, e, other.format if self._mant == 0 else self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        a, b, e = self._aligned(other)
        return Quantity(a - b, e, other.format if self._mant == 0 else self.format)

    def __neg__(self) -> Quantity:
        return Quantity(-self._mant, self._exp, self.format)

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1, like Go ``Cmp``."""
        sa, sb = self.sign(), other.sign()
        if sa != sb:
            return -1 if sa < sb else 1
        if sa == 0:
            return 0
        ea, eb = self._exp, other._exp
        if -64 < ea < 64 and -64 < eb < 64:  # the usual case: align exactly and compare integers
            e = min(ea, eb)
            a, b = self._mant * 10 ** (ea - e), other._mant * 10 ** (eb - e)
            return (a > b) - (a < b)
        # Same sign, both non-zero: compare magnitudes by order of magnitude, then digits.
        ma, mb = abs(self._mant), abs(other._mant)
        la, lb = _ndigits(ma), _ndigits(mb)
        oa, ob = la + self._exp, lb + other._exp
        if oa != ob:
            r = 1 if oa > ob else -1
        else:
            # Same order of magnitude: pad mantissas to the same number of digits.
            if la < lb:
                ma *= 10 ** (lb - la)
            else:
                mb *= 10 ** (la - lb)
            r = (ma > mb) - (ma < mb)
        return r if sa > 0 else -r

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._mant == other._mant and self._exp == other._exp

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) < 0

    def __hash__(self) -> int:
        return hash((self._mant, self._exp))

    # --- text ----------------------------------------------------------------------------------
    def canonical(self) -> str:
        """The canonical form, like Go ``Quantity.String()`` on a computed value (``1.5`` -> ``1500m``)."""
        if self._mant == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if self._small_for_binary() or not self.is_integer or self._exp > _EXACT_LIMIT:
                fmt = DECIMAL_SI
            else:
                n = self._mant * 10**self._exp
                m, k = abs(n), 0
                while m >= 1024 and m % 1024 == 0 and k < 6:
                    m //= 1024
                    k += 1
                return ("-" if n < 0 else "") + decimal_str(m) + _BIN_BY_POW[k]
        mant, exp = self._mant, self._exp
        e3 = exp - (exp % 3)
        mant *= 10 ** (exp - e3)
        if fmt == DECIMAL_EXPONENT:
            suffix = "" if e3 == 0 else f"e{e3}"
        else:
            # Upstream emits no suffix when the exponent is past the SI table (E = 10^18).
            suffix = _DEC_BY_EXP.get(e3, "")
        return decimal_str(mant) + suffix

    def cmp_int(self, n: int) -> int:
        return self.cmp(Quantity(n, 0))

    def _small_for_binary(self) -> bool:
        return self.cmp_int(-1024) > 0 and self.cmp_int(1024) < 0

    def __str__(self) -> str:
        """Like Go ``String()``: the parsed text when upstream keeps it, else :meth:`canonical`."""
        return self._s if self._s is not None else self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _go_json_float(f: float) -> str:
    """How Go's encoding/json writes a float64 (what the API server sees for YAML ``value: 1.5``)."""
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError(ERR_FORMAT_WRONG)
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        s = repr(f)
        return s.replace("e-0", "e-").replace("e+0", "e+")
    s = format(Decimal(repr(f)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


# Short strings `parse_quantity` has accepted: a caller that only needs to know that a value parses (the
# structural check, the `device` variable's check) asks `known_quantity` (one set lookup). Bounded by
# _KNOWN_MAX strings of at most _KNOWN_LEN characters (emptied when full); set operations are atomic, so
# request threads share it.
_KNOWN: set[str] = set()
_KNOWN_MAX = 4096
_KNOWN_LEN = 32


def known_quantity(v: object) -> bool:
    """Whether `v` is a string `parse_quantity` has accepted (False says nothing: parse it)."""
    return type(v) is str and v in _KNOWN


def parse_quantity(v: str | int | float, *, trim: bool = True) -> Quantity:
    """Parse a quantity as the API server does; raise ``ValueError`` with upstream's message."""
    if isinstance(v, bool):
        raise ValueError(ERR_FORMAT_WRONG)
    if isinstance(v, int):
        return _parse(str(v))
    if isinstance(v, float):
        return _parse(_go_json_float(v))
    if not isinstance(v, str):
        raise ValueError(ERR_FORMAT_WRONG)
    q = _parse(v.strip() if trim else v)
    if trim and len(v) <= _KNOWN_LEN and v not in _KNOWN:
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.clear()
        _KNOWN.add(v)
    return q


@short_input_cache(8192, max_len=64)
def _parse(s: str) -> Quantity:
    if not s:
        raise ValueError(ERR_FORMAT_WRONG)
    if s == "0":
        return Quantity(0, 0, DECIMAL_SI, s)
    m = _SHAPE.fullmatch(s)
    if m is None or not s.isascii():
        raise ValueError(ERR_FORMAT_WRONG)
    sign_s, int_raw, denom, suf = m.group(1), m.group(2), m.group(3), m.group(4)
    negative = sign_s == "-"
    denom = denom or ""
    if m.group(3) is None and not suf and int_raw.strip("0") == "":
        # Upstream returns 0 as soon as the string ends while stripping leading zeros ("-", "+00").
        return Quantity(0, 0, DECIMAL_SI)
    num = int_raw.lstrip("0") or "0"

    # Interpret the suffix.
    if suf in _DEC_SUFFIXES:
        base, exponent, fmt = 10, _DEC_SUFFIXES[suf], DECIMAL_SI
    elif suf in _BIN_SUFFIXES:
        base, exponent, fmt = 2, _BIN_SUFFIXES[suf], BINARY_SI
    elif len(suf) > 1 and suf[0] in "eE" and _SIGNED_INT.fullmatch(suf[1:]):
        # strconv.ParseInt(e, 10, 64): past 19 significant digits it is out of range (and Python's int()
        # refuses more than 4,300 digits)
        e_digits = suf[1:].lstrip("+-").lstrip("0") or "0"
        e64 = int(e_digits) if len(e_digits) <= 19 else 1 << 64  # out of range, either sign
        e64 = -e64 if suf[1] == "-" else e64
        if not -(1 << 63) <= e64 < (1 << 63):
            raise ValueError(ERR_SUFFIX)
        exponent = ((e64 + (1 << 31)) % (1 << 32)) - (1 << 31)  # Go's int32(parsed)
        base, fmt = 10, DECIMAL_EXPONENT
    else:
        raise ValueError(ERR_SUFFIX)

    digits = num + denom
    # Decide between upstream's int64 fast path and its arbitrary-precision path.
    if fmt == BINARY_SI:
        scale = -len(denom)
        if len(denom) == 0:
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale = exponent - len(denom)
        precision = 18 - len(digits)
    fast = precision >= 0 and scale >= -9
    if fast:
        raw = int(digits)
        mant_total = raw << exponent if fmt == BINARY_SI else raw
        if fmt == BINARY_SI and mant_total > INT64_MAX:
            fast = False
    if fast:
        if fmt == BINARY_SI:
            q = Quantity(-mant_total if negative else mant_total, scale, fmt)
            if exponent % 10 == 0 and raw & 0x07:
                q._s = s
            return q
        q = Quantity(-raw if negative else raw, scale, fmt)
        if scale % 3 == 0 and not digits.endswith("000") and digits[0] != "0":
            q._s = s
        return q

    # Arbitrary-precision path: needs at least one digit in the numeric part.
    if not (int_raw or denom):
        raise ValueError(ERR_NUMERIC)
    mant = decimal_int(digits)  # any length, as inf.Dec parses it (int() refuses over 4,300 digits)
    if base == 2:
        mant <<= exponent
        exp = -len(denom)
    else:
        exp = exponent - len(denom)
    mant, exp = _normalize(mant, exp)
    if mant != 0 and exp < -9:
        # Round up (away from zero) to a whole number of nano units.
        shift = -9 - exp
        if shift > _ndigits(mant):
            mant, exp = 1, -9
        else:
            q_, r_ = divmod(mant, 10**shift)
            mant, exp = q_ + (1 if r_ else 0), -9
    if fmt == BINARY_SI:
        capped = Quantity(mant, exp)
        if capped.cmp_int(INT64_MAX) > 0:
            mant, exp = INT64_MAX, 0
        elif mant != 0 and capped.cmp_int(1) < 0:
            fmt = DECIMAL_SI
    return Quantity(-mant if negative else mant, exp, fmt)
