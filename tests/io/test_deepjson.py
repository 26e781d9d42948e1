"""The explicit-stack JSON decoder reads what the standard library's reads, with the same errors, and
goes where it cannot (a RecursionError past ~1,000 levels) up to its limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.model.plain_values import values
from webhook.io import deepjson
from webhook.model.plain import deep_equal


@settings(max_examples=200, deadline=None)
@given(values, st.sampled_from([None, 1, "\t"]))
def test_the_same_values_as_the_standard_decoder(value: Any, indent: Any) -> None:
    text = json.dumps(value, indent=indent)
    assert deepjson.decode(text, 0, dict, 100) == (json.loads(text), len(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,}',
        "[1,]",
        '{"a" 1}',
        '{"a":1 "b":2}',
        "[1 2]",
        "{1:2}",
        "[",
        '{"a":',
        '"abc',
        "[tru]",
        "-",
        '["\x01"]',
    ],
)
def test_the_same_errors_as_the_standard_decoder(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        deepjson.decode(text, 0, dict, 100)
    assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)


def test_deep_values_and_the_limit() -> None:
    text = '{"a": ' + "[" * 9_999 + "]" * 9_999 + "}"
    with pytest.raises(RecursionError):
        json.loads(text)
    value, end = deepjson.decode(text, 0, dict, 10_000)
    assert end == len(text) and deep_equal(deepjson.loads(text, 10_000), value)
    with pytest.raises(deepjson.TooDeep) as e:
        deepjson.decode(text, 0, dict, 9_999)
    assert e.value.path == "a[0][0][0][0][0][0][0]..." and e.value.pos == 6 + 9_998
    with pytest.raises(deepjson.Constant, match="NaN"):
        deepjson.decode("[NaN]", 0, dict, 10)
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        deepjson.loads("[" * 2_000 + "]" * 2_000 + "x", 10_000)
