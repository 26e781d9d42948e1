"""Semantic versions: blang/semver v4 Parse vectors, semver.org precedence, DRA version attributes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webhook.model.names import render
from webhook.model.semver import Semver, is_semver, parse_semver, version_attribute

VALID = [
    ("1.2.3", (1, 2, 3, (), ())),
    ("0.0.0", (0, 0, 0, (), ())),
    ("1.2.3-alpha.1", (1, 2, 3, ("alpha", 1), ())),
    ("1.2.3-alpha.b-eta", (1, 2, 3, ("alpha", "b-eta"), ())),
    ("1.2.3-alpha-1", (1, 2, 3, ("alpha-1",), ())),
    ("1.2.3+build.1", (1, 2, 3, (), ("build", "1"))),
    ("1.2.3+build.01-x", (1, 2, 3, (), ("build", "01-x"))),
    ("1.2.3-beta.1+b.sha-5114f85", (1, 2, 3, ("beta", 1), ("b", "sha-5114f85"))),
    ("1.2.3-0a.-", (1, 2, 3, ("0a", "-"), ())),
    ("18446744073709551615.0.0", (2**64 - 1, 0, 0, (), ())),
]


@pytest.mark.parametrize(("text", "parts"), VALID)
def test_parse_valid(text: str, parts: tuple) -> None:  # type: ignore[type-arg]
    v = parse_semver(text)
    assert (v.major, v.minor, v.patch, v.pre, v.build) == parts
    assert str(v) == text
    assert is_semver(text)


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("", "Version string empty"),
        ("1", "No Major.Minor.Patch elements found"),
        ("1.2", "No Major.Minor.Patch elements found"),
        ("v1.2.3", 'Invalid character(s) found in major number "v1"'),
        ("1.a.3", 'Invalid character(s) found in minor number "a"'),
        ("1.2.a", 'Invalid character(s) found in patch number "a"'),
        ("-1.2.3", 'Invalid character(s) found in major number "-1"'),
        ("01.2.3", 'Major number must not contain leading zeroes "01"'),
        ("1.02.3", 'Minor number must not contain leading zeroes "02"'),
        ("1.2.03", 'Patch number must not contain leading zeroes "03"'),
        ("1.2.3.4", 'Invalid character(s) found in patch number "3.4"'),
        ("1..3", 'strconv.ParseUint: parsing "": invalid syntax'),
        ("1.2.", 'strconv.ParseUint: parsing "": invalid syntax'),
        ("1.2.-beta", 'strconv.ParseUint: parsing "": invalid syntax'),
        ("1.2.3-", "Prerelease is empty"),
        ("1.2.3-a..b", "Prerelease is empty"),
        ("1.2.3-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
        ("1.2.3-beta.!", 'Invalid character(s) found in prerelease "!"'),
        ("1.2.3+", "Build meta data is empty"),
        ("1.2.3+a..b", "Build meta data is empty"),
        ("1.2.3+a_b", 'Invalid character(s) found in build meta data "a_b"'),
        ("18446744073709551616.0.0", "value out of range"),
        ("1." + "9" * 5000 + ".0", "value out of range"),  # not Python's int-str limit
        ("1.2.3-" + "9" * 5000, "value out of range"),
        (" 1.2.3", 'Invalid character(s) found in major number " 1"'),
    ],
)
def test_parse_invalid(text: str, msg: str) -> None:
    with pytest.raises(ValueError) as ei:
        parse_semver(text)
    assert msg in str(ei.value)
    assert not is_semver(text)


def test_precedence_from_semver_org() -> None:
    order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
        "10.0.0",
    ]
    parsed = [parse_semver(s) for s in order]
    assert sorted(reversed(parsed)) == parsed
    for a, b in zip(parsed, parsed[1:], strict=False):
        assert a < b and a.compare(b) == -1 and b.compare(a) == 1


def test_build_metadata_is_ignored_for_equality() -> None:
    a, b = parse_semver("1.2.3+a"), parse_semver("1.2.3+b")
    assert a == b and hash(a) == hash(b) and a.compare(b) == 0
    assert parse_semver("1.2.3-A") < parse_semver("1.2.3-a")  # byte order


@pytest.mark.parametrize(
    "text", ["1.2.3", "1.2.3-beta.1+build", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "99999999999999999999.0.0"]
)
def test_version_attribute_valid(text: str) -> None:
    assert version_attribute(text) == []


@pytest.mark.parametrize(
    "text", ["v1.2.3", "1.2", "1.2.3-01", "01.2.3", "1.2.3+", "1.2.3-a..b", "1.2.3 ", "1.2.3\n", "١.2.3"]
)
def test_version_attribute_invalid(text: str) -> None:
    msgs = version_attribute(text)
    assert [render(text, m) for m in msgs] == [
        f"Invalid value: {render(text, 'x').split(': ')[1]}: must be a string compatible with semver.org spec 2.0.0"
    ]


def test_version_attribute_too_long() -> None:
    text = "1.2.3-" + "a" * 59
    assert [render(text, m) for m in version_attribute(text)] == ["Too long: may not be more than 64 bytes"]
    assert version_attribute("1.2.3-" + "a" * 58) == []


def test_semver_constructor_and_repr() -> None:
    v = Semver(1, 2, 3, ("rc", 1))
    assert repr(v) == "Semver('1.2.3-rc.1')" and v == parse_semver("1.2.3-rc.1")


_ID = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.from_regex(r"[0-9]*[a-zA-Z-][0-9a-zA-Z-]{0,4}", fullmatch=True),
)


@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.lists(_ID, max_size=3),
    st.lists(st.from_regex(r"[0-9a-zA-Z-]{1,5}", fullmatch=True), max_size=2),
)
def test_round_trip_and_regex_agree(
    major: int, minor: int, patch: int, pre: list[str], build: list[str]
) -> None:
    text = (
        f"{major}.{minor}.{patch}"
        + ("-" + ".".join(pre) if pre else "")
        + ("+" + ".".join(build) if build else "")
    )
    v = parse_semver(text)
    assert str(v) == text
    assert parse_semver(str(v)) == v
    # Within uint64, blang's parser and the API server's regular expression agree.
    assert version_attribute(text) == [] or len(text) > 64
