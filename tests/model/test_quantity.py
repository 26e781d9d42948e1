"""Quantities: vectors from apimachinery's quantity_test.go plus properties."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webhook.model.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    INT64_MAX,
    Quantity,
    parse_quantity,
)

F = Fraction

# (input, exact value, format) — from TestQuantityParse.
PARSE = [
    ("0", F(0), "DecimalSI"),
    ("0n", F(0), "DecimalSI"),
    ("0Ki", F(0), "BinarySI"),
    ("0Ti", F(0), "BinarySI"),
    ("1", F(1), "DecimalSI"),
    ("1Ki", F(1024), "BinarySI"),
    ("7Mi", F(7 * 2**20), "BinarySI"),
    ("3Ei", F(3 * 2**60), "BinarySI"),
    ("100Ti", F(100 * 2**40), "BinarySI"),
    ("5n", F(5, 10**9), "DecimalSI"),
    ("4u", F(4, 10**6), "DecimalSI"),
    ("3m", F(3, 1000), "DecimalSI"),
    ("50k", F(50000), "DecimalSI"),
    ("300T", F(300 * 10**12), "DecimalSI"),
    ("1E", F(10**18), "DecimalSI"),
    ("1E-3", F(1, 1000), "DecimalExponent"),
    ("1e3", F(1000), "DecimalExponent"),
    ("1E18", F(10**18), "DecimalExponent"),
    ("100.035k", F(100035), "DecimalSI"),
    ("0.0005k", F(1, 2), "DecimalSI"),
    ("0.00500", F(5, 1000), "DecimalSI"),
    ("0.5e-2", F(5, 1000), "DecimalExponent"),
    ("10.035M", F(10035000), "DecimalSI"),
    ("1.3E+6", F(1300000), "DecimalExponent"),
    ("1.7E18", F(17 * 10**17), "DecimalExponent"),
    ("6.987654321G", F(6987654321), "DecimalSI"),
    ("1.01E", F(101 * 10**16), "DecimalSI"),
    ("3.001n", F(4, 10**9), "DecimalSI"),
    ("1.1E-9", F(2, 10**9), "DecimalExponent"),
    ("0.0000000001", F(1, 10**9), "DecimalSI"),
    ("0.5e-9", F(1, 10**9), "DecimalExponent"),
    ("0.00000012345", F(124, 10**9), "DecimalSI"),
    ("9Ei", F(INT64_MAX), "BinarySI"),
    ("9223372036854775807Ki", F(INT64_MAX), "BinarySI"),
    ("12E", F(12 * 10**18), "DecimalSI"),
    ("100.035Ki", F(10243584, 100), "BinarySI"),
    ("0.5Mi", F(2**19), "BinarySI"),
    ("0.025Ti", F(274877906944, 10), "BinarySI"),
    ("0.000000000001Ki", F(2, 10**9), "DecimalSI"),
    (".001", F(1, 1000), "DecimalSI"),
    (".0001k", F(1, 10), "DecimalSI"),
    ("1.", F(1), "DecimalSI"),
    ("1.G", F(10**9), "DecimalSI"),
    ("9999999999999999999.1", F(99999999999999999991, 10), "DecimalSI"),
]


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE)
def test_parse(text: str, value: Fraction, fmt: str) -> None:
    for prefix, sign in (("", 1), ("+", 1), ("-", -1)):
        q = parse_quantity(prefix + text)
        assert q.value == sign * value
        assert q.format == fmt


@pytest.mark.parametrize(
    ("text", "err"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1.5.5", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        ("1Gb", ERR_FORMAT_WRONG),
        ("Gb", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("１", ERR_FORMAT_WRONG),  # full-width digit
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1ki", ERR_SUFFIX),
        ("1K", ERR_SUFFIX),
        ("1e99999999999999999999", ERR_SUFFIX),
        ("1e" + "9" * 5000, ERR_SUFFIX),  # ParseInt's range error, not Python's int-str limit
        ("1e-" + "9" * 5000, ERR_SUFFIX),
        ("1e9223372036854775808", ERR_SUFFIX),
        ("1e-9223372036854775809", ERR_SUFFIX),
        ("e-10", ERR_NUMERIC),
        (".e-10", ERR_NUMERIC),
    ],
)
def test_parse_errors(text: str, err: str) -> None:
    with pytest.raises(ValueError) as ei:
        parse_quantity(text)
    assert str(ei.value).startswith(err)


def test_whitespace_is_trimmed_like_unmarshal_json_but_not_by_parse_quantity() -> None:
    assert parse_quantity(" 1") == parse_quantity("1 ") == parse_quantity("1")
    for text in (" 1", "1 "):
        with pytest.raises(ValueError, match="regular expression"):
            parse_quantity(text, trim=False)


def test_exponents_with_thousands_of_leading_zeros_are_small() -> None:
    assert parse_quantity("1e" + "0" * 5000 + "3") == parse_quantity("1e3")
    assert parse_quantity("1e-" + "0" * 5000 + "1") == parse_quantity("100m")
    assert parse_quantity("1e-9223372036854775808") == parse_quantity("1e0")  # int32(-2**63) is 0


def test_upstream_scanner_oddities() -> None:
    # Inputs upstream's scanner maps to zero rather than rejecting.
    for text in ("+", "-", "-000", ".", "e5", "Ki"):
        assert parse_quantity(text).is_zero()


def test_yaml_numbers() -> None:
    assert parse_quantity(8) == parse_quantity("8")
    assert parse_quantity(1.5).canonical() == "1500m"
    assert parse_quantity(1e6).canonical() == "1M"  # encoding/json writes 1000000
    assert parse_quantity(1e21).canonical() == "1e21"  # ... and 1e+21
    assert parse_quantity(1e-7).value == Fraction(1, 10**7)
    with pytest.raises(ValueError):
        parse_quantity(True)
    with pytest.raises(ValueError):
        parse_quantity(float("nan"))


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # TestQuantityString alternates and TestQuantityParseEmit.
        ("1024Mi", "1Gi"),
        ("307200Ki", "300Mi"),
        ("1025024Mi", "1001Gi"),
        ("1000M", "1G"),
        ("0.001T", "1G"),
        ("1000u", "1m"),
        ("1.08", "1080m"),
        ("1080000000n", "1080m"),
        (".001e12", "1e9"),
        ("0.001e0", "1e-3"),
        ("1000e-12", "1e-9"),
        ("00", "0"),
        ("1Ki", "1Ki"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("1.5", "1500m"),
        ("1.5Gi", "1536Mi"),
        ("1025Ki", "1025Ki"),
        ("1023.5Ki", "1048064"),
        ("5000m", "5"),
        # TestParseQuantity canonical column.
        ("999999999999999999.1", "999999999999999999100m"),
        ("1000000000000000000", "1E"),
        ("1.0000000000000000001E", "1000000000000000000100m"),
        ("10000000000000000000000m", "10E"),
        ("9223372036854775808.0", "9223372036854775808"),
        ("9Ei", "9223372036854775807"),
    ],
)
def test_canonical(text: str, canonical: str) -> None:
    assert parse_quantity(text).canonical() == canonical
    assert parse_quantity("-" + text).canonical() == ("0" if canonical == "0" else "-" + canonical)


def test_str_keeps_canonical_looking_input_like_go() -> None:
    assert str(parse_quantity("1Ki")) == "1Ki"
    assert str(parse_quantity("+100")) == "+100"
    assert str(parse_quantity("1E3")) == "1E3"
    assert str(parse_quantity("1000")) == "1k"
    assert str(parse_quantity("8Ki")) == "8Ki"


def test_int_and_milli_value_round_up() -> None:
    q = parse_quantity("1.5")
    assert (q.int_value(), q.milli_value()) == (2, 1500)
    assert parse_quantity("1n").int_value() == 1
    assert parse_quantity("1n").milli_value() == 1
    assert parse_quantity("-1.5").int_value() == -2
    assert parse_quantity("80Gi").int_value() == 80 * 2**30
    assert parse_quantity("1e99999").fits_int64() is False
    assert parse_quantity("9223372036854775807").fits_int64()
    assert not parse_quantity("9223372036854775808").fits_int64()
    assert parse_quantity("1e-99999").int_value() == 1  # rounds up to 1n first


def test_compare_and_hash() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi") == parse_quantity("1073741824")
    assert hash(parse_quantity("1k")) == hash(parse_quantity("1000"))
    assert parse_quantity("1G") < parse_quantity("1Gi")
    assert parse_quantity("-1") < parse_quantity("0") < parse_quantity("1n")
    assert parse_quantity("1e99999") > parse_quantity("9Ei")
    assert parse_quantity("-1e99999") < parse_quantity("-9Ei")
    assert len({parse_quantity("1"), parse_quantity("1000m"), parse_quantity("1e0")}) == 1
    assert parse_quantity("1.5").is_integer is False and parse_quantity("1k").is_integer


def test_add_sub() -> None:
    a, b = parse_quantity("1Gi"), parse_quantity("512Mi")
    assert (a + b).canonical() == "1536Mi"
    assert (a - b - b).is_zero()
    assert (parse_quantity("0") + b).format == "BinarySI"
    assert (parse_quantity("1") + parse_quantity("500m")).canonical() == "1500m"
    assert (-a).canonical() == "-1Gi"


def test_immutable_value_type() -> None:
    q = parse_quantity("1Gi")
    assert isinstance(q, Quantity)
    with pytest.raises(AttributeError):
        q.foo = 1  # type: ignore[attr-defined]


_SUFFIX = st.sampled_from(
    ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "e3", "e-4", "E+2"]
)


@given(
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", min_size=1, max_size=12),
    st.one_of(st.none(), st.text("0123456789", max_size=6)),
    _SUFFIX,
)
def test_canonical_round_trip(sign: str, whole: str, frac: str | None, suffix: str) -> None:
    text = sign + whole + ("" if frac is None else "." + frac) + suffix
    q = parse_quantity(text)
    again = parse_quantity(q.canonical())
    assert again == q
    assert again.canonical() == q.canonical()
    # Parsed values are whole multiples of 1n.
    assert (abs(q.value) * 10**9).denominator == 1


@given(st.integers(min_value=-(10**30), max_value=10**30), st.integers(min_value=-12, max_value=20))
def test_order_matches_fractions(m: int, e: int) -> None:
    a = parse_quantity(f"{m}e{e}")
    b = parse_quantity(f"{m + 1}e{e - 1}")
    assert (a < b) == (a.value < b.value)
    assert (a == b) == (a.value == b.value)


def test_any_number_of_digits_parses_exactly_as_inf_dec_does() -> None:
    # ParseQuantity has no digit limit (inf.Dec); Python's int() refuses strings over 4,300 digits
    long = "1" + "0" * 5000 + "1"
    q = parse_quantity(long)
    assert q > parse_quantity("1e5001") and q < parse_quantity("2e5001")  # 10^5001 + 1
    assert q.canonical() == long
    assert parse_quantity("7" * 20_000 + "Ki").canonical() == "9223372036854775807"  # binary caps at int64
    assert parse_quantity("0." + "0" * 6000 + "1").canonical() == "1n"  # rounded up to 1n
