"""`clip`: how a message quotes a long value from the input (exact up to the limit, then a count)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from webhook.model.names import quote
from webhook.model.path import Path
from webhook.model.text import CLIP, clip


def test_clip_keeps_short_text_and_counts_what_it_cuts() -> None:
    assert clip("") == ""
    assert clip("a" * CLIP) == "a" * CLIP
    assert clip("a" * (CLIP + 1)) == "a" * CLIP + "…[+1 character]"
    assert clip("é" * 1_000_000, 10) == "é" * 10 + "…[+999,990 characters]"
    assert clip("\U0001f600" * 300, 3) == "\U0001f600" * 3 + "…[+297 characters]"  # characters, not bytes


def test_quoted_values_and_map_keys_are_clipped() -> None:
    assert quote('a"b') == '"a\\"b"'
    assert quote("é" * 1000) == '"' + "é" * CLIP + '…[+744 characters]"'
    key = "k" * 1000
    assert str(Path("spec").child("parameters").key(key).child("x")) == (
        f"spec.parameters[{'k' * CLIP}…[+744 characters]].x"
    )


@given(st.text(), st.integers(0, 50))
def test_clip_is_a_prefix_and_a_count(text: str, limit: int) -> None:
    clipped = clip(text, limit)
    if len(text) <= limit:
        assert clipped == text
    else:
        cut = len(text) - limit
        assert clipped == text[:limit] + f"…[+{cut:,} character{'' if cut == 1 else 's'}]"
