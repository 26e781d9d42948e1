"""Big (compact exact integers m·10^e): every operation agrees with Python ints, nothing expands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webhook.model.bignum import ALIGN_DIGITS, Big, TooLarge, nano_int

mantissas = st.integers(min_value=-(10**30), max_value=10**30)
exponents = st.integers(min_value=0, max_value=120)


def value(m: int, e: int) -> int:
    return m * 10**e


@given(mantissas, exponents, mantissas, exponents)
def test_operations_agree_with_ints(ma: int, ea: int, mb: int, eb: int) -> None:
    a, b = nano_int(ma, ea), nano_int(mb, eb)
    x, y = value(ma, ea), value(mb, eb)
    assert a == x and b == y and hash(a) == hash(x)
    assert a + b == x + y and a - b == x - y
    if isinstance(a, Big):
        assert -a == -x
    assert (a < b) == (x < y) and (a <= b) == (x <= y) and (a > b) == (x > y) and (a >= b) == (x >= y)
    assert (a == b) == (x == y)
    assert a + 0 == x and 0 + a == x and y - a == y - x
    if y:
        assert a % b == x % y


@given(mantissas, exponents)
def test_mixed_with_plain_ints(m: int, e: int) -> None:
    a = nano_int(m, e)
    for n in (0, 1, -1, 10**45, -(10**45), 123456789):
        x = value(m, e)
        assert (a + n) == x + n and (n + a) == n + x and (n - a) == n - x
        assert (n < a) == (n < x) and (n >= a) == (n >= x)


def test_huge_values_compare_without_expanding() -> None:
    # 10**(2**31) cannot be expanded at all (it would not fit in memory): finishing is the proof
    huge = nano_int(1, 2**31)  # 1e2147483638 in some unit: never expanded
    bigger = nano_int(2, 2**31)
    assert huge < bigger and bigger > huge and huge != bigger and huge > 10**100
    assert huge + 0 is huge and 0 + huge == huge and huge - 0 == huge
    assert nano_int(15, 2**31) > nano_int(1, 2**31 + 1) - nano_int(1, 2**31)
    assert nano_int(3, 2**31) % nano_int(1, 2**31) == 0  # 3e.. is a multiple of 1e..
    assert nano_int(10**40 + 7, 50) % 7 == (10**40 + 7) * pow(10, 50, 7) % 7


def test_too_far_apart_to_add_is_an_arithmetic_error() -> None:
    with pytest.raises(TooLarge):
        _ = nano_int(1, ALIGN_DIGITS + 10) + 1
    with pytest.raises(ArithmeticError):
        _ = nano_int(1, 2**31) - nano_int(1, 100)


def test_one_e_9999_in_nano_units_is_exact() -> None:
    cap = nano_int(1, 9999 + 9)
    used = nano_int(1, 9990 + 9) + 5 * 10**9
    left = cap - used
    assert left > 0 and left + used == cap and left == 10**10008 - 10**9999 - 5 * 10**9
