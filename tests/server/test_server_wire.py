"""The URL's Go duration, the body's bounded decoding and the failure-mode answer (no server needed)."""

from __future__ import annotations

import json

import pytest

from webhook.server.wire import BadBody, decode_review_body, failure_answer, parse_go_duration, status_body


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10s", 10.0),
        ("30s", 30.0),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("500ms", 0.5),
        ("250us", 0.00025),
        ("250µs", 0.00025),
        ("100ns", 1e-7),
        ("0", 0.0),
        ("0s", 0.0),
        (".5s", 0.5),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10", "-1s", "s", "1x", "1.2.3s", "10 s", "1e3s", "9" * 80 + "s", ".s"])
def test_not_go_durations(text: str) -> None:
    assert parse_go_duration(text) is None


def test_a_review_decodes_to_its_object() -> None:
    ar = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u"}}
    assert decode_review_body(json.dumps(ar).encode()) == ar
    assert decode_review_body(b"\xef\xbb\xbf" + json.dumps(ar).encode()) == ar  # a BOM is dropped
    # a lone surrogate becomes U+FFFD, as Go decodes it (not an error: the API server can send it)
    assert decode_review_body(b'{"a": "\\ud800"}') == {"a": "\ufffd"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty"),
        (b"null", "not a JSON object"),
        (b'"x"', "not a JSON object"),
        (b"{", "not valid JSON: line 1"),
        (b'{"a": 1}\n{"a": 2}', "2 JSON values"),
        (b'{"a": 1}\n{', "not valid JSON: line 2"),
        (b'{"x": {"y": 1, "y": 2}}', "repeats a key (x.y)"),
        (b'{"a": Infinity}', "not valid JSON"),
        (b'{"a": ' + b"[" * 10_002 + b"]" * 10_002 + b"}", "nested deeper than 10002 levels at a"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_bodies(body: bytes, message: str) -> None:
    with pytest.raises(BadBody, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_review_body(body)


def test_a_body_holding_an_object_nested_to_go_s_limit_is_read() -> None:
    # an object of 10,000 levels (the most the API server decodes) at request.object: 10,002 in all
    deep = b"[" * 9_999 + b"]" * 9_999
    body = decode_review_body(b'{"request": {"object": {"x": ' + deep + b"}}}")
    assert isinstance(body["request"]["object"]["x"], list)


def test_messages_stay_one_short_line() -> None:
    with pytest.raises(BadBody) as e:
        decode_review_body(b"{" + b'"k\\n' + b"x" * 5000 + b'": 1, ' + b'"k\\n' + b"x" * 5000 + b'": 2}')
    assert len(str(e.value)) <= 1024 and "\n" not in str(e.value)
    status = json.loads(status_body(413, "too large"))
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "too large",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }


def test_failure_answers_follow_the_mode() -> None:
    ar = {"request": {"uid": "abc"}}
    open_ = failure_answer(ar, "open", "RecursionError")["response"]
    assert open_["uid"] == "abc" and open_["allowed"] is True
    assert "RecursionError" in open_["warnings"][0] and open_["auditAnnotations"]["internal-error"]
    closed = failure_answer(ar, "closed", "RecursionError")["response"]
    assert closed["allowed"] is False and closed["status"]["code"] == 500


def test_a_body_of_more_json_objects_than_the_bound_is_too_large() -> None:
    from webhook.server.wire import MAX_REVIEW_OBJECTS, TooManyValues

    many = b'{"request":{"object":{"spec":[' + b",".join([b"{}"] * MAX_REVIEW_OBJECTS) + b"]}}}"
    with pytest.raises(TooManyValues, match=f"more than {MAX_REVIEW_OBJECTS} JSON objects"):
        decode_review_body(many)
    fewer = b'{"request":{"object":{"spec":[' + b",".join([b"{}"] * (MAX_REVIEW_OBJECTS - 3)) + b"]}}}"
    assert len(decode_review_body(fewer)["request"]["object"]["spec"]) == MAX_REVIEW_OBJECTS - 3
