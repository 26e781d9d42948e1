"""webhook/io/sharedjson.py: JSON decoded with equal small objects shared is equal to a plain decode, shares
what devices repeat, and never mixes values that are equal in Python but not in JSON."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.io.deepjson import loads
from webhook.io.sharedjson import SharedParts


def _device(name: str, model: str, uuid: str) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"model": {"string": model}, "uuid": {"string": uuid}, "index": {"int": 0}},
        "capacity": {"memory": {"value": "80Gi"}},
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
    }


def test_equal_small_objects_of_different_devices_and_pages_are_one_object() -> None:
    parts = SharedParts()
    page1 = json.dumps({"items": [_device("a", "A100", "u-1"), _device("b", "A100", "u-2")]})
    page2 = json.dumps({"items": [_device("c", "A100", "u-1")]})
    a, b = loads(page1, 100, parts.hook)["items"]
    (c,) = loads(page2, 100, parts.hook)["items"]
    assert [a, b, c] == json.loads(page1)["items"] + json.loads(page2)["items"]
    assert a["capacity"] is b["capacity"] is c["capacity"]
    assert a["attributes"]["model"] is b["attributes"]["model"]
    assert a["consumesCounters"][0] is c["consumesCounters"][0]
    assert a["attributes"] is c["attributes"]  # the same GPU (uuid): the whole map
    assert a["attributes"] is not b["attributes"]
    assert a is not c  # named items are never shared


def test_values_equal_in_python_but_not_in_json_stay_apart() -> None:
    parts = SharedParts()
    text = '[{"v": 1}, {"v": 1.0}, {"v": true}, {"v": "1"}, {"v": null}, {"v": 0}, {"v": false}, {"v": 1}]'
    out = loads(text, 100, parts.hook)
    assert [type(d["v"]) for d in out] == [int, float, bool, str, type(None), int, bool, int]
    assert out[0] is out[7]
    assert len({id(d) for d in out}) == 7


def test_a_full_memo_empties_and_keeps_decoding_correctly() -> None:
    parts = SharedParts(max_bytes=4096)
    docs = [{"items": [_device(f"d{i}", f"m{i % 50}", f"u{i}") for i in range(20)]} for _ in range(10)]
    for doc in docs:
        assert loads(json.dumps(doc), 100, parts.hook) == doc
    assert parts.clears > 0


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_json, max_size=4))
def test_any_json_decodes_equal_to_a_plain_decode(values: list[Any]) -> None:
    parts = SharedParts()
    for v in values:  # one memo across documents, as across a list's pages and a watch's events
        text = json.dumps(v)
        got = loads(text, 100, parts.hook)
        assert got == json.loads(text)
        assert json.dumps(got) == text  # types and key order kept
