"""Plain data at any depth (webhook.model.plain): the same results as copy.deepcopy, == and json.dumps
on ordinary values (property tests), and results at 20,000 levels where those raise RecursionError."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings

from tests.model.plain_values import values
from webhook.model.plain import deep_copy, deep_equal, json_dumps, nested_deeper


@settings(max_examples=200, deadline=None)
@given(values, values)
def test_the_same_as_the_standard_library(a: Any, b: Any) -> None:
    copied = deep_copy(a)
    assert copied == a and json.dumps(copied) == json.dumps(a)
    assert not isinstance(a, dict | list) or copied is not a
    assert deep_equal(a, b) == (a == b) and deep_equal(a, copied)
    for kw in ({}, {"indent": 2}, {"separators": (",", ":"), "sort_keys": True}, {"ensure_ascii": False}):
        assert json_dumps(a, **kw) == json.dumps(a, **kw)  # type: ignore[arg-type]


def chain(levels: int) -> list[Any]:
    top: list[Any] = []
    cur = top
    for _ in range(levels - 1):
        cur.append([])
        cur = cur[0]
    cur.append({"leaf": 1})
    return top


def test_deep_values_where_the_standard_library_recurses() -> None:
    deep = chain(20_000)
    with pytest.raises(RecursionError):
        copy.deepcopy(deep)
    copied = deep_copy(deep)
    assert deep_equal(copied, deep) and not deep_equal(copied, chain(19_999))
    text = json_dumps(deep, separators=(",", ":"))
    assert text == "[" * 20_000 + '{"leaf":1}' + "]" * 20_000
    assert json_dumps(deep, indent=1).count("\n") == 2 * 20_000 + 2  # and the lines of {"leaf": 1}
    assert nested_deeper(deep, 20_000) and not nested_deeper(deep, 20_001)
    with pytest.raises(ValueError, match="Out of range float"):
        json_dumps([deep, float("nan")], allow_nan=False)
    assert sys.getrecursionlimit() < 20_000  # none of it needed a higher limit
