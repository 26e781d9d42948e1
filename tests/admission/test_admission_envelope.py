"""Bad input and limits: bodies that are no AdmissionReview (BadReview), malformed request fields, an
object of a kind the request does not name, DRA versions draguard does not check, internal errors under
both failure modes, the request deadline, and the warnings caps."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from admission_fixtures import admission_review, claim, cluster_objects, exactly, find, served, snapshot

from webhook.admission import AdmissionConfig, BadReview, review, review_with_info
from webhook.admission.response import cap_warnings
from webhook.model.budget import Deadline
from webhook.state.store import Snapshot

SNAP = snapshot()
OBJS = cluster_objects()


def _valid() -> dict[str, Any]:
    return admission_review(served(claim("c", [exactly("gpu", "h100.example.com")])))


# -- bodies that are no AdmissionReview ----------------------------------------------------------


def _without(path: tuple[str, ...]) -> dict[str, Any]:
    ar = _valid()
    cur = ar
    for key in path[:-1]:
        cur = cur[key]
    del cur[path[-1]]
    return ar


BAD_REVIEWS = [
    ("list", [], "expected an AdmissionReview object, got list"),
    ("string", "AdmissionReview", "expected an AdmissionReview object, got str"),
    ("wrong-kind", {**_valid(), "kind": "TokenReview"}, "expected kind AdmissionReview, got 'TokenReview'"),
    ("no-kind", _without(("kind",)), "expected kind AdmissionReview, got None"),
    (
        "v1beta1",
        {**_valid(), "apiVersion": "admission.k8s.io/v1beta1"},
        "expected apiVersion admission.k8s.io/v1, got 'admission.k8s.io/v1beta1' (set admissionReviewVersions: "
        "[v1] in the webhook configuration)",
    ),
    ("no-request", _without(("request",)), "the AdmissionReview has no request object"),
    ("request-null", {**_valid(), "request": None}, "the AdmissionReview has no request object"),
    (
        "no-uid",
        _without(("request", "uid")),
        "request.uid is missing or not a string: the answer must repeat it",
    ),
    (
        "uid-number",
        {**_valid(), "request": {**_valid()["request"], "uid": 42}},
        "request.uid is missing or not a string: the answer must repeat it",
    ),
    (
        "uid-huge",
        {**_valid(), "request": {**_valid()["request"], "uid": "u" * 300}},
        "request.uid is not a UID: '" + "u" * 76 + "...",
    ),
    (
        "uid-newline",
        {**_valid(), "request": {**_valid()["request"], "uid": "a\nb"}},
        r"request.uid is not a UID: 'a\nb'",
    ),
]


@pytest.mark.parametrize(("name", "body", "message"), BAD_REVIEWS, ids=[c[0] for c in BAD_REVIEWS])
def test_a_body_that_is_no_admission_review_raises_bad_review(name: str, body: Any, message: str) -> None:
    with pytest.raises(BadReview) as e:
        review(body, SNAP, AdmissionConfig())
    assert str(e.value) == message


# -- answerable requests with malformed fields: 400 BadRequest ------------------------------------


def _malformed(**fields: Any) -> dict[str, Any]:
    ar = _valid()
    ar["request"].update(fields)
    return ar


MALFORMED = [
    (
        "operation",
        _malformed(operation="PATCH"),
        "request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got 'PATCH'",
    ),
    (
        "kind-missing",
        _malformed(kind=None),
        "request.kind must be an object {group, version, kind}, got None",
    ),
    (
        "kind-no-version",
        _malformed(kind={"group": "resource.k8s.io", "kind": "ResourceClaim"}),
        "request.kind must name a version and a kind, got {'group': 'resource.k8s.io', 'kind': 'ResourceClaim'}",
    ),
    ("object-list", _malformed(object=[1, 2]), "request.object must be an object or null, got list"),
    ("dry-run-string", _malformed(dryRun="yes"), "request.dryRun must be true or false, got 'yes'"),
    ("namespace-number", _malformed(namespace=7), "request.namespace must be a string, got 7"),
    (
        "sub-resource-list",
        _malformed(subResource=["status"]),
        "request.subResource must be a string, got ['status']",
    ),
]


@pytest.mark.parametrize(("name", "ar", "message"), MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_fields_are_denied_with_bad_request(name: str, ar: dict[str, Any], message: str) -> None:
    out, info = review_with_info(ar, SNAP, AdmissionConfig())
    assert out["response"] == {
        "uid": ar["request"]["uid"],
        "allowed": False,
        "status": {
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "BadRequest",
            "code": 400,
        },
    }
    assert info.decision == "denied"


def test_an_object_of_another_kind_than_the_request_names_is_denied() -> None:
    """The API server never sends that (it converts the object to the kind it names): whatever sent it
    is not to be trusted with an answer about an object we did not check."""
    ar = admission_review(
        served(claim("c", [exactly("gpu", "h100.example.com")])),
        kind=("resource.k8s.io", "v1", "DeviceClass"),
    )
    response = review(ar, SNAP, AdmissionConfig())["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 400 and response["status"]["reason"] == "BadRequest"
    assert response["status"]["message"] == (
        "request.object is resource.k8s.io/v1 ResourceClaim but request.kind is resource.k8s.io/v1 DeviceClass: the "
        "object must be of the kind the request names (with matchPolicy Equivalent the API server converts it)"
    )
    old = served(find(OBJS, "DeviceClass", "gpu.example.com"))
    ar = admission_review(old, operation="UPDATE", old=None)
    response = review(ar, SNAP, AdmissionConfig())["response"]
    assert response["status"]["message"] == "request.oldObject is missing for a UPDATE of DeviceClass"


def test_a_dra_version_draguard_does_not_check_is_allowed_with_a_warning() -> None:
    obj = served(find(OBJS, "DeviceClass", "gpu.example.com"))
    obj["apiVersion"] = "resource.k8s.io/v1beta2"
    response = review(admission_review(obj), SNAP, AdmissionConfig())["response"]
    assert response["allowed"] is True
    assert response["warnings"] == [
        "draguard checks resource.k8s.io/v1 objects only, this request is resource.k8s.io/v1beta2: register the "
        "webhook for apiVersions [v1] with matchPolicy Equivalent (the API server then sends every version as v1)"
    ]


# -- internal errors: the failure mode ------------------------------------------------------------


class _BrokenIndex:
    """An inventory every lookup of which fails."""

    def __getattr__(self, name: str) -> Any:
        raise KeyError("pool index out of sync")


class _BrokenSnapshot(Snapshot):
    """The real snapshot of the test cluster, whose cross-object index fails (a draguard bug, as far as
    review() can tell)."""

    def __init__(self) -> None:
        real = snapshot()
        state = copy.copy(real.state)
        state.inventory = _BrokenIndex()  # type: ignore[assignment]
        super().__init__(real.version, real.published_at, state, real._objects)


def test_internal_error_fails_open_with_a_warning() -> None:
    ar = _valid()
    out, info = review_with_info(ar, _BrokenSnapshot(), AdmissionConfig(failure_mode="open"))
    assert out["response"] == {
        "uid": ar["request"]["uid"],
        "allowed": True,
        "warnings": [
            "draguard could not check this request (KeyError: 'pool index out of sync'); admitted (failure mode: open)"
        ],
    }
    assert info.decision == "error"


def test_internal_error_fails_closed_with_500() -> None:
    ar = _valid()
    out, info = review_with_info(ar, _BrokenSnapshot(), AdmissionConfig(failure_mode="closed"))
    assert out["response"] == {
        "uid": ar["request"]["uid"],
        "allowed": False,
        "status": {
            "metadata": {},
            "status": "Failure",
            "message": "draguard could not check this request (KeyError: 'pool index out of sync'); denied (failure mode: closed)",
            "reason": "InternalError",
            "code": 500,
        },
    }
    assert info.decision == "error"


def test_config_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError, match="failure_mode must be one of open, closed"):
        AdmissionConfig(failure_mode="ignore")
    with pytest.raises(ValueError, match="endpoint must be one of validate, mutate"):
        AdmissionConfig(endpoint="audit")
    with pytest.raises(ValueError, match="deadline seconds must be a finite number"):
        AdmissionConfig(deadline_seconds=math.inf)


# -- deadlines ---------------------------------------------------------------------------------------


def test_a_passed_deadline_leaves_feasibility_undecided_and_admits() -> None:
    ar = admission_review(served(claim("c", [exactly("gpu", "a100.example.com")])))
    out, info = review_with_info(ar, SNAP, AdmissionConfig(), deadline=Deadline.after(0))
    assert out["response"]["allowed"] is True
    assert info.verdict == "undecided"
    assert out["response"]["warnings"] == [
        'ResourceClaim "ml/c": feasibility undecided (the deadline of the run passed before this Pod was tried); '
        "admitted (admission.feasibility: undecided, mode warn)"
    ]


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_rules_cut_short_by_the_deadline_answer_by_the_failure_mode(mode: str) -> None:
    """A class whose selectors are still being compiled when the request's deadline passes: not checked,
    so never a verdict about it; the failure mode decides, as failurePolicy would on a timeout."""
    selectors = [
        {"cel": {"expression": f'device.attributes["gpu.example.com"].idx == {i}'}} for i in range(32)
    ]
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "many.example.com"},
        "spec": {"selectors": selectors},
    }
    ar = admission_review(served(cls))
    assert review(ar, SNAP, AdmissionConfig())["response"]["allowed"] is True  # with time: valid
    out, info = review_with_info(ar, SNAP, AdmissionConfig(failure_mode=mode), deadline=Deadline.after(0))
    what = "draguard could not finish checking this request within its deadline (2 s or the API server's timeout)"
    assert info.decision == "error"
    if mode == "open":
        assert out["response"]["allowed"] is True
        assert out["response"]["warnings"] == [f"{what}; admitted (failure mode: open)"]
    else:
        assert out["response"]["allowed"] is False
        assert out["response"]["status"] == {
            "metadata": {},
            "status": "Failure",
            "message": f"{what}; denied (failure mode: closed)",
            "reason": "InternalError",
            "code": 500,
        }


# -- warnings caps ---------------------------------------------------------------------------------


def test_many_warnings_are_capped_with_a_count_of_the_rest() -> None:
    """A slice whose 10 devices each have 20 attribute names with two slashes: 200 lint warnings."""
    s = served(find(OBJS, "ResourceSlice", "gpu-node-2-gpu.example.com-q9w4z"))
    s["metadata"]["name"] = "gpu-node-5"
    s["spec"].update(
        nodeName="gpu-node-5", pool={"name": "gpu-node-5", "generation": 1, "resourceSliceCount": 1}
    )
    s["spec"]["devices"] = [
        {"name": f"gpu-{i}", "attributes": {f"example.com/a/b{j}": {"int": j} for j in range(20)}}
        for i in range(10)
    ]
    response = review(admission_review(s), SNAP, AdmissionConfig())["response"]
    assert response["allowed"] is True
    warnings = response["warnings"]
    # 16 warnings of 238 or 239 characters fill the 4,096 (less room for the last line): 184 of 200 left out
    assert len(warnings) == 17
    assert warnings[-1] == "184 more warnings not shown"
    assert all(len(w) <= 256 for w in warnings) and sum(len(w) for w in warnings) <= 4096
    assert warnings[0].startswith('spec.devices[0].attributes: Invalid value: "example.com/a/b0": ')


def test_cap_warnings() -> None:
    assert cap_warnings(["a", "b", "a"]) == ["a", "b"]
    assert cap_warnings(["line\nbreak\tand\x07bell"]) == ["line\\nbreak\\tand\\x07bell"]
    few_long = ["x" * 1000, "y" * 1000, "z" * 1000]
    assert cap_warnings(few_long) == few_long  # 3,000 characters: the API server passes them uncut
    ten = [f"{i:04d}" + "w" * 500 for i in range(10)]  # 5,040 characters: each is cut, all fit
    assert cap_warnings(ten) == [f"{i:04d}" + "w" * 249 + "..." for i in range(10)]
    twenty = [f"{i:04d}" + "w" * 500 for i in range(20)]
    capped = cap_warnings(twenty)
    assert capped == [f"{i:04d}" + "w" * 249 + "..." for i in range(15)] + ["5 more warnings not shown"]
    assert sum(len(w) for w in capped) <= 4096
    assert cap_warnings([f"w{i}" for i in range(30)], max_count=5) == [
        "w0",
        "w1",
        "w2",
        "w3",
        "26 more warnings not shown",
    ]
    assert cap_warnings([f"w{i}" for i in range(6)], max_count=5)[-1] == "2 more warnings not shown"


def test_a_denial_carries_its_warnings_too() -> None:
    c = served(claim("c", [exactly("BAD_", "tpu.example.com")]))
    response = review(admission_review(copy.deepcopy(c)), SNAP, AdmissionConfig())["response"]
    assert response["allowed"] is False
    assert response["auditAnnotations"] == {"denied-by": "claim.requests"}
    # the request's other findings, and nothing that repeats the denial the Status already carries
    assert [w for w in response["warnings"] if w.endswith("(claim.unknown-device-class)")]
    assert not [w for w in response["warnings"] if "claim.requests" in w or "denied" in w]


def test_a_denial_lists_at_most_100_causes_and_counts_the_rest() -> None:
    s = served(find(OBJS, "ResourceSlice", "gpu-node-2-gpu.example.com-q9w4z"))
    s["metadata"]["name"] = "gpu-node-6"
    s["spec"].update(
        nodeName="gpu-node-6", pool={"name": "gpu-node-6", "generation": 1, "resourceSliceCount": 1}
    )
    s["spec"]["devices"] = [{"name": f"GPU_{i}"} for i in range(120)]
    response = review(admission_review(s), SNAP, AdmissionConfig())["response"]
    assert response["allowed"] is False
    assert len(response["status"]["details"]["causes"]) == 100
    assert response["status"]["message"].endswith(", and 20 more errors not listed]")
