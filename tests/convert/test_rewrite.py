"""The rewriting's safety nets, in process: a rewrite that would not read back as the conversion, a
document too large for the round trip, nesting too deep — each an error on the file, which stays as it was."""

from __future__ import annotations

import pytest

from webhook.convert import rewrite

CLAIM = (
    "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
    "spec:\n  devices:\n    requests:\n    - name: r   # keep me\n      deviceClassName: gpu\n"
)


def test_a_rewrite_that_does_not_read_back_as_the_conversion_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = rewrite.convert_text(CLAIM, "c.yaml")
    assert good.text is not None and "# keep me" in good.text and not good.problems
    monkeypatch.setattr(rewrite, "_roundtrip", lambda piece, planned: piece.replace("gpu", "cpu"))
    bad = rewrite.convert_text(CLAIM, "c.yaml")
    assert bad.text is None
    assert [(p.line, p.message.split(" (")[0]) for p in bad.problems] == [
        (1, "the converted text would not read back as the converted object")
    ]


def test_documents_too_large_for_the_round_trip_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rewrite, "MAX_DOCUMENT_BYTES", 64)
    out = rewrite.convert_text(CLAIM, "c.yaml")
    assert out.text is None
    assert out.problems[0].message.startswith(
        "this document has 175 bytes, more than the 64 draguard converts"
    )


def test_api_version_only_changes_never_touch_the_rest() -> None:
    text = (
        "apiVersion:   'resource.k8s.io/v1beta2'   # c\nkind: DeviceClass\nmetadata: {name: c}\nspec:   {}\n"
    )
    out = rewrite.convert_text(text, "c.yaml")
    assert (
        out.text
        == "apiVersion:   'resource.k8s.io/v1'   # c\nkind: DeviceClass\nmetadata: {name: c}\nspec:   {}\n"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a:\n  b:\n  - x: 1\n", (2, 2, 0)),
        ("a:\n    b:\n        -   x: 1\n", (4, 8, 4)),
        ("a:\n  b:\n    - x: 1\n", (2, 4, 2)),
        ("a: 1\n", (2, 2, 0)),
    ],
)
def test_indentation_is_guessed_per_document(body: str, expected: tuple[int, int, int]) -> None:
    assert rewrite.guess_indent(body) == expected
