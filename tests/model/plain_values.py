"""Hypothesis strategy of plain JSON-like values (what a decoded manifest holds), shared by the tests of the
stack-based helpers (webhook.model.plain) and of the deep JSON decoder (webhook.io.deepjson)."""

from __future__ import annotations

from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)
