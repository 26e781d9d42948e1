"""YAML is read as kubectl reads it (go-yaml v2 scalars) with document and item lines."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.io.scalars import plain_scalar, tagged_scalar
from webhook.io.yamlload import RawDocument, YamlError, load_documents


def docs(text: str) -> list[RawDocument | YamlError]:
    return list(load_documents(text))


def test_yaml11_scalars_like_go_yaml_v2() -> None:
    (d,) = docs(
        "a: y\nb: n\nc: 'y'\nd: off\ne: 0777\nf: 0x1F\ng: 1.5\nh: 2026-01-01\ni: ~\nj: 10Gi\nk: 1e3\n"
    )
    assert isinstance(d, RawDocument)
    assert d.data == {
        "a": True,
        "b": False,
        "c": "y",
        "d": False,
        "e": 511,
        "f": 31,
        "g": 1.5,
        "h": "2026-01-01",
        "i": None,
        "j": "10Gi",
        "k": 1000.0,
    }


# go-yaml v2 resolve.go, for a plain scalar starting with a digit or a sign: strconv.ParseInt(s, 0, 64), then
# ParseUint(s, 0, 64) (base from a `0b`/`0o`/`0x` prefix in either case, or a leading 0: octal), then a
# float if it matches yamlStyleFloat, then ParseInt(s[2:], 2, 64) for `0b...`; all on the text without
# `_`. Anything else stays the string (a hex, octal or binary number beyond 64 bits among them).
INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
GO_YAML_NUMBERS = {
    "0x1F": 31,
    "0X1f": 31,
    "-0x1F": -31,
    "+0x1F": 31,
    "0x_1_F": 31,
    "0_x1F": 31,  # the underscores go first: 0x1F
    "0o17": 15,
    "0O17": 15,
    "0777": 511,
    "-0777": -511,
    "0b101": 5,
    "0B101": 5,
    "-0b101": -5,
    "0b-101": -5,  # go-yaml's second try: ParseInt("-101", 2)
    "0b+101": 5,
    "00": 0,
    "0_": 0,
    "-0": 0,
    "1__": 1,
    "08": 8,  # not octal: the float 8, the same JSON number
    "0999": 999,
    "0x7FFFFFFFFFFFFFFF": INT64_MAX,
    "-0x8000000000000000": INT64_MIN,
    "0xFFFFFFFFFFFFFFFF": UINT64_MAX,  # uint64: no sign allowed
    "0x" + "0" * 5000 + "1": 1,  # leading zeros are not digits that count
    "0b" + "1" * 64: UINT64_MAX,
    "01777777777777777777777": UINT64_MAX,
    "0o1777777777777777777777": UINT64_MAX,
    "9223372036854775807": INT64_MAX,
    "-9223372036854775808": INT64_MIN,
    "18446744073709551615": UINT64_MAX,
    "0" + "7" * 30: float("7" * 30),  # octal beyond 64 bits: ParseFloat of the digits, as go-yaml
    "-0x8000000000000001": "-0x8000000000000001",
    "+0xFFFFFFFFFFFFFFFF": "+0xFFFFFFFFFFFFFFFF",  # beyond int64 with a sign: ParseUint refuses signs
    "0x10000000000000000": "0x10000000000000000",
    "0o2000000000000000000000": "0o2000000000000000000000",
    "0b1" + "0" * 64: "0b1" + "0" * 64,
    "0x" + "f" * 20000: "0x" + "f" * 20000,
    "-0x" + "f" * 20000: "-0x" + "f" * 20000,
    "0x" + "f_" * 3600: "0x" + "f_" * 3600,  # ~4,335 decimal digits: past Python's int-str limit
    "0o" + "7" * 30000: "0o" + "7" * 30000,
    "0b" + "1" * 100000: "0b" + "1" * 100000,
    "0b-" + "1" * 64: "0b-" + "1" * 64,
    "0x": "0x",
    "0x_": "0x_",
    "0o": "0o",
    "0b2": "0b2",
    "0xg": "0xg",
    "+": "+",
    "-_": "-_",
    "1:30": "1:30",  # base 60: not supported by go-yaml
    "-1:30:00": "-1:30:00",
    "1" + ":59" * 3000: "1" + ":59" * 3000,
    "1_000": 1000,
    "1_0.5": 10.5,
    ".5_0": ".5_0",  # a leading dot: ParseFloat of the text as written
    "1e400": "1e400",
    "0x1p3": "0x1p3",
}


def test_integers_of_every_form_as_go_yaml_v2_reads_them() -> None:
    for text, want in GO_YAML_NUMBERS.items():
        got = plain_scalar(text)
        assert type(got) is type(want) and got == want, (
            text[:40],
            got if not isinstance(got, str) else got[:40],
        )
        if isinstance(got, int):
            assert INT64_MIN <= got <= UINT64_MAX
    # decimal integers beyond 64 bits: go-yaml's float64, kept exact here up to Python's int-str limit
    # (a documented difference, PARSERS.md), and a string beyond it: never an int that str() refuses
    assert plain_scalar("9" * 30) == int("9" * 30)
    assert plain_scalar("9" * 4301) == "9" * 4301
    assert tagged_scalar("tag:yaml.org,2002:float", "9" * 400) == "9" * 400  # was an OverflowError
    assert tagged_scalar("tag:yaml.org,2002:int", "0x" + "f" * 100) == "0x" + "f" * 100
    (d,) = docs("".join(f"k{i}: {t}\n" for i, t in enumerate(GO_YAML_NUMBERS)))
    assert isinstance(d, RawDocument)
    assert list(d.data.values()) == list(GO_YAML_NUMBERS.values())


def test_document_lines_skip_comments_and_separators() -> None:
    text = "# header\na: 1\n---\n# comment\n\nb: 2\n---\nc: 3\n"
    assert [d.line for d in docs(text)] == [2, 6, 8]


def test_list_item_lines() -> None:
    (d,) = docs("kind: List\nitems:\n- a: 1\n  b: 2\n- c: 3\n")
    assert isinstance(d, RawDocument)
    assert d.item_lines == [3, 5]


def test_syntax_error_reports_line_and_resumes_at_next_document() -> None:
    out = docs("a: 1\n---\nb: [1, 2\nc: 3\n---\nd: 4\n")
    assert isinstance(out[0], RawDocument) and out[0].data == {"a": 1}
    assert isinstance(out[1], YamlError) and out[1].line == 4 and "syntax error" in out[1].message
    assert isinstance(out[2], RawDocument) and out[2].data == {"d": 4} and out[2].line == 6


def test_duplicate_keys_are_reported_with_path_and_line() -> None:
    (d,) = docs("spec:\n  driver: a\n  driver: b\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"spec": {"driver": "b"}}
    assert [(i.line, i.path) for i in d.issues] == [(3, "spec.driver")]


def test_anchors_and_merge_keys() -> None:
    (d,) = docs("base: &b {x: 1, z: 2}\nother:\n  <<: *b\n  z: 3\n")
    assert isinstance(d, RawDocument)
    assert d.data["other"] == {"x": 1, "z": 3}


def test_y_and_n_keys_are_booleans_as_in_kubectl() -> None:
    (d,) = docs("y: 1\nn: 2\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"true": 1, "false": 2}


def test_explicit_tags() -> None:
    (d,) = docs("a: !!str 123\nb: !!int '7'\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"a": "123", "b": 7}


# PyYAML does not quote y/n, 0E0 or 0X1F (a bool, a float and an int for go-yaml, plain strings for
# PyYAML): this property is about structure, so leave out strings that go-yaml does not read as strings.
text = st.text(max_size=12).filter(lambda s: isinstance(plain_scalar(s), str))
plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(text.filter(bool), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(plain)
def test_round_trip_of_safe_dump(value: object) -> None:
    # PyYAML quotes every string that YAML 1.1 would read as something else, so the values survive.
    text = yaml.safe_dump({"v": value})
    (d,) = docs(text)
    assert isinstance(d, RawDocument)
    expected = yaml.safe_load(text)["v"]
    assert d.data == {"v": _json_keys(expected)}


def _json_keys(v: object) -> object:
    if isinstance(v, dict):
        return {(k if isinstance(k, str) else str(k)): _json_keys(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_keys(x) for x in v]
    return v


def test_too_deep_nesting_is_an_error_not_a_recursion_crash() -> None:
    from webhook.io.documents import DocumentError, parse

    flow = "kind: Pod\nspec: " + "[" * 10_000 + "]" * 10_000 + "\n---\nkind: After\n"
    block = "kind: Pod\nspec:\n  " + "- " * 10_000 + "x\n---\nkind: After\n"
    for text in (flow, block):
        out = list(parse(text, "deep.yaml"))
        # newer PyYAML releases stop flow nesting themselves ("exceeded maximum nesting depth")
        assert isinstance(out[0], DocumentError) and "nest" in out[0].message
        assert out[-1].obj == {"kind": "After"}  # type: ignore[union-attr]
