"""The TypedDicts of webhook.admission.wire describe what the admission core really answers: every key of
an allowed, a denied (422 with causes), a malformed (400) and a failed (500, failure mode closed) answer is
declared, with the declared type, and every required key is present."""

from __future__ import annotations

import typing
from typing import Any

from admission_fixtures import admission_review, claim, exactly, served, snapshot

from webhook.admission import AdmissionConfig, review
from webhook.admission.wire import (
    AdmissionResponse,
    AdmissionReviewResponse,
    Status,
    StatusCause,
    StatusDetails,
)
from webhook.server.wire import failure_answer

SNAP = snapshot()


def _conforms(value: Any, td: Any, where: str) -> None:
    hints = typing.get_type_hints(td)
    assert isinstance(value, dict), where
    assert set(value) <= set(hints), f"{where}: undeclared keys {set(value) - set(hints)}"
    assert td.__required_keys__ <= set(value), f"{where}: missing {td.__required_keys__ - set(value)}"
    nested = {"response": AdmissionResponse, "status": Status, "details": StatusDetails}
    for key, v in value.items():
        if key in nested and isinstance(v, dict) and td is not StatusDetails:
            _conforms(v, nested[key], f"{where}.{key}")
        elif key == "causes":
            for i, cause in enumerate(v):
                _conforms(cause, StatusCause, f"{where}.causes[{i}]")
        else:
            hint = hints[key]
            origin = typing.get_origin(hint) or hint
            if origin is typing.Literal:
                assert v in typing.get_args(hint), f"{where}.{key}: {v!r}"
            elif isinstance(origin, type):
                assert isinstance(v, origin), f"{where}.{key}: {type(v).__name__}, not {origin.__name__}"


def test_an_allowed_answer() -> None:
    out = review(
        admission_review(served(claim("c", [exactly("gpu", "h100.example.com")]))), SNAP, AdmissionConfig()
    )
    assert out["response"]["allowed"] is True
    _conforms(out, AdmissionReviewResponse, "review")


def test_a_denial_with_its_causes() -> None:
    bad = served(claim("c", [exactly("Not A Name", "h100.example.com", count=-1)]))
    out = review(admission_review(bad), SNAP, AdmissionConfig())
    assert out["response"]["allowed"] is False and out["response"]["status"]["code"] == 422
    assert out["response"]["status"]["details"]["causes"]
    _conforms(out, AdmissionReviewResponse, "review")


def test_a_malformed_request() -> None:
    ar = admission_review(served(claim("c", [exactly("gpu", "h100.example.com")])))
    ar["request"]["operation"] = "PATCH"
    out = review(ar, SNAP, AdmissionConfig())
    assert out["response"]["status"]["code"] == 400
    _conforms(out, AdmissionReviewResponse, "review")


def test_the_failure_modes_answers() -> None:
    ar = admission_review(served(claim("c", [exactly("gpu", "h100.example.com")])))
    for mode in ("open", "closed"):
        _conforms(failure_answer(ar, mode, "KeyError"), AdmissionReviewResponse, mode)
