"""Bounded answers: whatever a request holds, its answer stays under 64 KiB as the server encodes it, long
names and values are quoted clipped with `…[+N characters]`, and a normal-size denial keeps its exact
text. The requests are real AdmissionReviews through `review_with_info`, the function the server calls."""

from __future__ import annotations

import json
from typing import Any

from admission_fixtures import (
    admission_review,
    causes,
    claim,
    cluster_objects,
    exactly,
    find,
    pod,
    served,
    snapshot,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.admission import AdmissionConfig, review_with_info
from webhook.admission.response import fit, invalid_status, json_size
from webhook.model.violation import Severity, Violation

SNAP = snapshot()
OBJS = cluster_objects()
LIMIT = 64 << 10  # bytes of an answer
MILLION = "é" * 1_000_000
CLIPPED = "é" * 256 + "…[+999,744 characters]"  # how a message quotes MILLION
EMOJI = "\U0001f600"  # 12 bytes of JSON (a surrogate pair of \u escapes)
NAME_TOO_LONG = f'Invalid value: "{CLIPPED}": must be no more than 253 characters'


def _answer(obj: dict[str, Any], endpoint: str = "validate") -> tuple[dict[str, Any], int]:
    """The response to creating `obj`, and the bytes of the whole answer as the server writes them."""
    ar = admission_review(obj)
    out, _ = review_with_info(ar, SNAP, AdmissionConfig(endpoint=endpoint))
    data = json.dumps(out, separators=(",", ":"), allow_nan=False).encode()  # as webhook.server.app
    assert out["response"]["uid"] == ar["request"]["uid"]
    return out["response"], len(data)


def test_a_claim_named_a_million_characters_is_denied_in_a_small_answer() -> None:
    c = served(claim(MILLION, [exactly(MILLION, MILLION)]))
    c["metadata"]["labels"] = {"example.com/" + MILLION: MILLION}
    response, size = _answer(c)
    assert size <= LIMIT  # 36,001,359 bytes before answers were bounded (the name alone)
    assert response["allowed"] is False
    status = response["status"]
    assert status["code"] == 422 and status["details"]["name"] == CLIPPED
    assert status["message"].startswith(f'ResourceClaim.resource.k8s.io "{CLIPPED}" is invalid: [')
    found = causes(response)
    assert ("metadata.name", "FieldValueInvalid", NAME_TOO_LONG) in found
    assert (
        "spec.devices.requests[0].name",
        "FieldValueInvalid",
        f'Invalid value: "{CLIPPED}": must be no more than 63 characters',
    ) in found
    assert (
        "metadata.labels",
        "FieldValueInvalid",
        f'Invalid value: "example.com/{"é" * 244}…[+999,756 characters]": name part must be no more than 63 bytes',
    ) in found
    rules = response["auditAnnotations"]["denied-by"].split(",")
    assert {"meta.name", "meta.labels", "claim.requests"} <= set(rules)
    assert not any("denied" in w for w in response.get("warnings", []))


def test_a_pod_named_a_million_characters_is_denied_in_a_small_answer() -> None:
    p = served(pod(MILLION, [{"name": "gpu", "resourceClaimName": MILLION}]))
    p["metadata"]["labels"] = {MILLION: MILLION}
    response, size = _answer(p)
    assert size <= LIMIT
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(f'Pod "{CLIPPED}" is invalid: [')
    found = causes(response)
    assert ("metadata.name", "FieldValueInvalid", NAME_TOO_LONG) in found
    assert (
        "spec.resourceClaims[0].resourceClaimName",
        "FieldValueInvalid",
        f'Invalid value: "{CLIPPED}": must be no more than 253 characters',
    ) in found
    assert f'ResourceClaim "{CLIPPED}" is not in namespace "ml"' in " ".join(response["warnings"])
    mutated, size = _answer(p, "mutate")
    assert size <= LIMIT and mutated["allowed"] is True


def test_a_slice_with_a_million_character_key_names_the_field_clipped() -> None:
    s = served(find(OBJS, "ResourceSlice", "gpu-node-1-gpu.example.com-7x2kp"))
    s["metadata"]["name"] = MILLION
    s["spec"]["devices"][0]["capacity"] = {MILLION: {"value": MILLION}}
    response, size = _answer(s)
    assert size <= LIMIT
    assert response["allowed"] is False
    assert response["auditAnnotations"] == {"denied-by": "schema.quantity"}
    [(field, reason, message)] = causes(response)  # the object cannot be decoded: nothing else is checked
    assert field == f"spec.devices[0].capacity[{CLIPPED}].value"
    assert reason == "FieldValueInvalid" and message.startswith('Invalid value: "ééé')
    assert response["status"]["details"]["name"] == CLIPPED


def test_a_normal_size_denial_keeps_its_exact_text() -> None:
    long = "a" * 254  # one over the limit: quoted whole (values up to 256 characters are)
    response, _ = _answer(served(claim(long, [exactly("gpu", "h100.example.com")])))
    assert response["status"]["message"] == (
        f'ResourceClaim.resource.k8s.io "{long}" is invalid: metadata.name: Invalid value: "{long}": must be '
        "no more than 253 characters"
    )
    assert causes(response) == [
        (
            "metadata.name",
            "FieldValueInvalid",
            f'Invalid value: "{long}": must be no more than 253 characters',
        )
    ]
    longer = "a" * 300
    response, _ = _answer(served(claim(longer, [exactly("gpu", "h100.example.com")])))
    assert causes(response) == [
        (
            "metadata.name",
            "FieldValueInvalid",
            f'Invalid value: "{"a" * 256}…[+44 characters]": must be no more than 253 characters',
        )
    ]


def test_causes_past_the_budget_are_counted_not_listed() -> None:
    """128 devices named 3,000 emoji each (12 bytes of JSON apiece): the first causes fill the answer."""
    s = served(find(OBJS, "ResourceSlice", "gpu-node-1-gpu.example.com-7x2kp"))
    s["spec"]["devices"] = [{"name": EMOJI * 3000 + str(i)} for i in range(128)]
    response, size = _answer(s)
    assert size <= LIMIT
    listed = response["status"]["details"]["causes"]
    assert 1 <= len(listed) < 100
    assert listed[0]["field"] == "spec.devices[0].name"
    assert listed[0]["message"].startswith(f'Invalid value: "{EMOJI * 256}…[+2,745 characters]": ')
    total = 2 * 128  # too long, and not a DNS label
    assert response["status"]["message"].endswith(f", and {total - len(listed)} more errors not listed]")


def test_the_first_cause_is_listed_even_when_the_budget_is_spent() -> None:
    v = Violation("r", Severity.ERROR, "spec." + EMOJI * 5000, "Invalid value: " + "\x07" * 50_000)
    status = invalid_status("resource.k8s.io", "ResourceClaim", "c", [v, v], budget=1000)
    [cause] = status["details"]["causes"]
    assert json_size(cause["message"]) <= 8 << 10 and json_size(cause["field"]) <= 4 << 10
    assert cause["message"].endswith(" characters]") and cause["field"].endswith(" characters]")
    assert status["message"].endswith(", and 1 more errors not listed]")


def test_fit_clips_to_bytes_of_json() -> None:
    assert fit("abc", 5) == "abc"
    assert fit("a" * 100, 100) == "a" * 75 + "…[+25 characters]"  # 75 + 6 (…) + 16 + 2 quotes: 99 bytes
    for text in ("é" * 10_000, "\U0001f600" * 10_000, '"\\\n\x07' * 10_000, "x" * 10_000):
        clipped = fit(text, 1000)
        assert json_size(clipped) <= 1000
        kept = clipped.rsplit("…[+", 1)[0]
        assert text.startswith(kept)
        assert clipped == kept + f"…[+{len(text) - len(kept):,} characters]"


def test_a_bad_uid_is_no_review_and_a_good_one_is_echoed_exactly() -> None:
    ar = admission_review(served(claim("c", [exactly("gpu", "h100.example.com")])), uid="u" * 256)
    out, _ = review_with_info(ar, SNAP, AdmissionConfig())
    assert out["response"]["uid"] == "u" * 256


_WORDS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)
_LONG = st.tuples(_WORDS, st.integers(1, 60_000)).map(lambda t: (t[0] * t[1])[:300_000])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=_LONG, key=_LONG, value=_LONG, request=_LONG, kind=st.sampled_from(["claim", "pod"]))
def test_any_long_names_and_labels_get_a_small_answer(
    name: str, key: str, value: str, request: str, kind: str
) -> None:
    if kind == "claim":
        obj = served(claim(name, [exactly(request, value)]))
    else:
        obj = served(pod(name, [{"name": request, "resourceClaimName": value}]))
    obj["metadata"]["labels"] = {key: value, "app": value}
    obj["metadata"]["annotations"] = {value: key}
    for endpoint in ("validate", "mutate"):
        _, size = _answer(obj, endpoint)
        assert size <= LIMIT
