"""Exact integers that may be astronomically large (`1e9999` of a quantity in nano units), kept compact.

The allocation engine counts capacities and counters in exact nano-units. The API server accepts
quantities like `1e9999` (or far larger exponents) and compares them exactly (inf.Dec), so the engine
must too, without expanding 10**10008 for every device that publishes such a value:

    n = nano_int(mantissa, exponent)   # an int when small, else Big(m, e) = m * 10**e (compact)
    n + m, n - m, n < m, n == m, n % m  # exact, with ints or Bigs; ints stay ints

Comparisons never expand. Sums and remainders expand only the difference of the two exponents, up to
ALIGN_DIGITS digits; beyond that they raise `TooLarge` (an ArithmeticError): the caller's answer is
then "undecided", never a wrong one (the API server itself could not store such a pair of values in
reasonable time: it rounds every quantity to nano units, expanding it).
"""

from __future__ import annotations

import sys
from typing import Any

from webhook.model.errors import DraguardError

__all__ = [
    "ALIGN_DIGITS",
    "Big",
    "Nano",
    "decimal_int",
    "decimal_str",
    "TooLarge",
    "ndigits",
    "nano_int",
    "parts",
    "strip_zeros",
]

SMALL_EXPONENT = 40  # values m * 10**e with e up to this are plain ints
ALIGN_DIGITS = 100_000  # the largest exponent difference expanded exactly (a 41 KB integer)

_NDIGITS_EXACT = 10**4000
_P = sys.hash_info.modulus


class TooLarge(DraguardError, ArithmeticError):
    """Two values too far apart in magnitude to combine exactly within ALIGN_DIGITS digits."""


def ndigits(n: int) -> int:
    """Decimal digits of |n| (exact below 10**4000, then a bound good to one digit)."""
    n = abs(n)
    if n < _NDIGITS_EXACT:
        return len(str(n)) if n else 1
    return n.bit_length() * 30103 // 100000 + 1


def strip_zeros(m: int) -> tuple[int, int]:
    """(m', k) with m = m' * 10**k and m' not a multiple of 10 (m != 0), in O(log k) big divisions."""
    if m == 0 or m % 10:
        return m, 0
    lo, hi = 1, 2  # 10**lo divides m; find the first 10**hi that does not
    while m % 10**hi == 0:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if m % 10**mid == 0:
            lo = mid
        else:
            hi = mid
    return m // 10**lo, lo


_STR_BITS = 12_000  # below this (about 3,600 digits) str() is allowed and fast


def decimal_str(n: int) -> str:
    """str(n) for any size (Python refuses str() of ints over 4,300 digits, a guard against quadratic
    conversions): above that, divide and conquer. Callers bound the sizes (ALIGN_DIGITS)."""
    if n < 0:
        return "-" + decimal_str(-n)
    if n.bit_length() < _STR_BITS:
        return str(n)
    k = ndigits(n) // 2
    high, low = divmod(n, 10**k)
    return decimal_str(high) + decimal_str(low).zfill(k)


def decimal_int(digits: str) -> int:
    """int(digits) for a string of decimal digits of any length (Python refuses int() of strings over
    4,300 digits): above 3,000 digits, divide and conquer (subquadratic: 1,000,000 digits in ~1 s)."""
    if len(digits) <= 3000:
        return int(digits)
    k = len(digits) // 2
    return decimal_int(digits[:-k]) * 10**k + decimal_int(digits[-k:])


def _normalize(m: int, e: int) -> tuple[int, int]:
    if m == 0:
        return 0, 0
    m, k = strip_zeros(m)
    return m, e + k


def nano_int(m: int, e: int) -> int | Big:
    """The exact integer m * 10**e (e >= 0): an int when it is small, else a compact Big."""
    if e < 0:
        raise ValueError("nano_int needs a non-negative exponent")
    if m == 0:
        return 0
    if e <= SMALL_EXPONENT:
        return m * 10**e
    m, e = _normalize(m, e)
    return Big(m, e)


def parts(x: int | Big) -> tuple[int, int]:
    """(m, e) with x == m * 10**e."""
    p = _parts(x)
    if p is None:
        raise TypeError(f"not an exact integer: {x!r}")
    return p


def _parts(x: Any) -> tuple[int, int] | None:
    if type(x) is int:
        return x, 0
    if isinstance(x, Big):
        return x.m, x.e
    if isinstance(x, int):  # bool and int subclasses
        return int(x), 0
    return None


def _align(ma: int, ea: int, mb: int, eb: int) -> tuple[int, int, int]:
    e = min(ea, eb)
    if max(ea, eb) - e > ALIGN_DIGITS:
        raise TooLarge(
            f"quantities of magnitudes 10^{ea - 9} and 10^{eb - 9} are more than {ALIGN_DIGITS} digits "
            "apart: draguard cannot add or subtract them exactly"
        )
    return ma * 10 ** (ea - e), mb * 10 ** (eb - e), e


def _cmp(ma: int, ea: int, mb: int, eb: int) -> int:
    """Compare ma * 10**ea with mb * 10**eb without expanding more than the smaller side's digits."""
    sa, sb = (ma > 0) - (ma < 0), (mb > 0) - (mb < 0)
    if sa != sb:
        return -1 if sa < sb else 1
    if sa == 0:
        return 0
    x, y = abs(ma), abs(mb)
    d = ea - eb
    if d >= 0:
        r = 1 if d > ndigits(y) + 1 else (x * 10**d > y) - (x * 10**d < y)
    else:
        r = -1 if -d > ndigits(x) + 1 else (x > y * 10**-d) - (x < y * 10**-d)
    return r if sa > 0 else -r


def _combine(x: Any, y: Any, sign: int) -> int | Big:
    px, py = _parts(x), _parts(y)
    assert px is not None and py is not None
    if py[0] == 0:
        return x if isinstance(x, Big) else px[0]
    if px[0] == 0:
        return y if sign > 0 and isinstance(y, Big) else _make(sign * py[0], py[1])
    a, b, e = _align(px[0], px[1], py[0], py[1])
    return _make(a + sign * b, e)


def _make(m: int, e: int) -> int | Big:
    if m == 0:
        return 0
    if e <= SMALL_EXPONENT:
        return m * 10**e
    m, e = _normalize(m, e)
    return Big(m, e) if e > SMALL_EXPONENT else m * 10**e


class Big:
    """The exact integer m * 10**e for an exponent too large to expand (see the module docstring).
    Immutable; equal values are equal (and hash equal) whatever their form, ints included."""

    __slots__ = ("m", "e")

    def __init__(self, m: int, e: int) -> None:
        self.m, self.e = _normalize(m, e)

    # arithmetic
    def __add__(self, other: Any) -> int | Big:
        return _combine(self, other, 1) if _parts(other) is not None else NotImplemented

    __radd__ = __add__

    def __sub__(self, other: Any) -> int | Big:
        return _combine(self, other, -1) if _parts(other) is not None else NotImplemented

    def __rsub__(self, other: Any) -> int | Big:
        return _combine(other, self, -1) if _parts(other) is not None else NotImplemented

    def __neg__(self) -> Big:
        return Big(-self.m, self.e)

    def __mod__(self, other: Any) -> int | Big:
        po = _parts(other)
        if po is None:
            return NotImplemented
        return _mod(self.m, self.e, po[0], po[1])

    def __rmod__(self, other: Any) -> int | Big:
        po = _parts(other)
        if po is None:
            return NotImplemented
        return _mod(po[0], po[1], self.m, self.e)

    def __bool__(self) -> bool:
        return self.m != 0

    # comparison
    def _cmp(self, other: Any) -> int | None:
        po = _parts(other)
        if po is None:
            return None
        return _cmp(self.m, self.e, po[0], po[1])

    def __eq__(self, other: object) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c == 0  # type: ignore[return-value]

    def __lt__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c < 0  # type: ignore[return-value]

    def __le__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c <= 0  # type: ignore[return-value]

    def __gt__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c > 0  # type: ignore[return-value]

    def __ge__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c >= 0  # type: ignore[return-value]

    def __hash__(self) -> int:
        """The hash of the equal int (Python hashes ints modulo a prime), without expanding it."""
        h = (abs(self.m) % _P) * pow(10, self.e, _P) % _P
        h = -h if self.m < 0 else h
        return -2 if h == -1 else h

    def __repr__(self) -> str:
        return f"Big({self.m}e{self.e})"

    def __str__(self) -> str:
        return f"{self.m}e{self.e}"


def _mod(ma: int, ea: int, mb: int, eb: int) -> int | Big:
    """(ma * 10**ea) mod (mb * 10**eb), Python's sign convention (the sign of the divisor)."""
    if mb == 0:
        raise ZeroDivisionError("modulo by zero")
    if ea >= eb:
        # a = 10**eb * (ma * 10**(ea-eb)); the remainder is 10**eb * ((ma * 10**(ea-eb)) mod mb)
        r = (ma % mb) * pow(10, ea - eb, abs(mb)) % mb
        return _make(r, eb)
    a, b, e = _align(ma, ea, mb, eb)
    return _make(a % b, e)


Nano = int | Big  # an exact amount in units of 1n (see nano_int)
