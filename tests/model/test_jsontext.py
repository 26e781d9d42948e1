"""JSON measured and cut short without writing it out: the same text as json.dumps up to the limit, and work
bounded by the limit when aliases make a small input stand for a huge text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.model.jsontext import json_head, json_size

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)  # control characters, quotes, non-ASCII, surrogates: json.dumps escapes them
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


def _dumps(v: object, sort_keys: bool = False, separators: tuple[str, str] = (",", ":")) -> str:
    return json.dumps(v, separators=separators, ensure_ascii=False, default=str, sort_keys=sort_keys)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(0, 400))
def test_same_as_json_dumps_up_to_the_limit(value: object, limit: int) -> None:
    text = _dumps(value)
    size = len(text.encode("utf-8", "surrogatepass"))
    got = json_size(value, limit)
    assert got == size if size <= limit else got > limit
    for sort_keys, seps in ((False, (",", ":")), (True, (",", ":")), (True, (", ", ": "))):
        full = _dumps(value, sort_keys, seps)
        head = json_head(value, limit, sort_keys=sort_keys, separators=seps)
        assert head == (full if len(full) <= limit else full[: limit + 1])


def test_shared_values_are_never_written_out() -> None:
    """A million references to one 1 MB string (what aliases give: 1 TB as JSON): the answer comes from
    the first few, in memory and time of the limit."""
    big = "x" * 1_000_000
    bomb = {"l": [big] * 1_000_000, "m": [[big] * 1000] * 1000}
    assert json_size(bomb, 10240) > 10240
    head = json_head(bomb, 120, sort_keys=True)
    assert len(head) == 121 and head.startswith('{"l":["xxxx')
    nested: object = "lol"
    for _ in range(40):  # 2**40 strings
        nested = [nested, nested]
    assert json_size(nested, 1 << 20) > 1 << 20
    assert json_head(nested, 30) == "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["


def test_integers_of_any_size() -> None:
    n = 10**20000 - 1  # 20,000 nines: json.dumps refuses it (Python's int-str limit)
    assert json_size([n], 1 << 20) == 20_000 + 2
    assert json_size([n], 100) > 100
    assert json_head({"a": -n}, 10) == '{"a":-99999'
