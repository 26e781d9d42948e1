"""Bounded work per review: a DRA object with a list or map of more entries than any resource.k8s.io field
allows is answered at once (rule input.too-many-items) — denied by /validate, left unmutated with a warning
by /mutate — while lists the API bounds only by size (labels, opaque parameters, device status data, a
NodeSelector's terms) are checked as before."""

from __future__ import annotations

import time
from typing import Any

from admission_fixtures import admission_review, causes, claim, exactly, served, snapshot

from webhook.admission import AdmissionConfig, review
from webhook.admission.oversize import MAX_ENTRIES, RULE, oversized
from webhook.model.catalogue import RULES

SNAP = snapshot()


def _respond(obj: dict[str, Any], config: AdmissionConfig | None = None, **kw: Any) -> dict[str, Any]:
    ar = admission_review(obj, **kw)
    return review(ar, SNAP, config or AdmissionConfig())["response"]


def _many_requests(n: int) -> dict[str, Any]:
    return served(claim("big", [exactly(f"r{i}", "h100.example.com") for i in range(n)]))


def test_a_claim_with_2000_requests_is_denied_at_the_list_without_checking_each() -> None:
    response = _respond(_many_requests(2000))
    assert response["allowed"] is False
    assert causes(response) == [
        (
            "spec.devices.requests",
            "FieldValueTooMany",
            f"Too many: 2000: must have at most {MAX_ENTRIES} items (no list or map of a ResourceClaim allows "
            "more; draguard did not check the rest of this object)",
        )
    ]
    assert response["auditAnnotations"] == {"denied-by": RULE}


def test_two_million_empty_requests_cost_no_more_than_walking_them() -> None:
    obj = served(claim("huge", [{} for _ in range(2_000_000)]))
    t0 = time.monotonic()
    response = _respond(obj)
    elapsed = time.monotonic() - t0
    assert response["allowed"] is False
    assert [c[0] for c in causes(response)] == ["spec.devices.requests"]
    assert elapsed < 30  # a loose guard only: it was 21 s before the check, well under 1 s with it


def test_the_old_object_of_an_update_is_checked_too() -> None:
    old = _many_requests(1500)
    new = served(claim("big", [exactly("r0", "h100.example.com")]))
    response = _respond(new, operation="UPDATE", old=old)
    assert response["allowed"] is False
    assert causes(response)[0][0] == "spec.devices.requests"


def test_at_the_limit_the_rules_run_as_usual() -> None:
    obj = _many_requests(MAX_ENTRIES)
    assert oversized(obj, "ResourceClaim") is None
    response = _respond(obj)
    assert response["allowed"] is False  # the API's own limit (32 requests) is what the rules report
    fields = {c[0] for c in causes(response)}
    assert "spec.devices.requests" in fields
    assert RULE not in response["auditAnnotations"].get("denied-by", "")


def test_the_mutating_endpoint_leaves_such_an_object_alone_with_a_warning() -> None:
    response = _respond(_many_requests(2000), AdmissionConfig(endpoint="mutate"))
    assert response["allowed"] is True
    assert "patch" not in response
    assert response["warnings"] == [
        "draguard did not mutate this object: spec.devices.requests: Too many: 2000: must have at most "
        f"{MAX_ENTRIES} items (no list or map of a ResourceClaim allows more; draguard did not check the "
        "rest of this object)"
    ]


def test_subtrees_bounded_only_by_size_are_not_counted() -> None:
    params = {f"k{i}": i for i in range(5000)}
    obj = served(
        claim(
            "params",
            [exactly("gpu", "h100.example.com")],
            config=[{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": params}}],
        )
    )
    obj["metadata"]["labels"] = {f"l{i}": "v" for i in range(2000)}
    assert oversized(obj, "ResourceClaim") is None
    terms = [{"matchExpressions": [{"key": f"k{i}", "operator": "Exists"}]} for i in range(2000)]
    slice_ = {"spec": {"nodeSelector": {"nodeSelectorTerms": terms}}}
    assert oversized(slice_, "ResourceSlice") is None
    status = {"status": {"devices": [{"data": {"list": list(range(5000))}}]}}
    assert oversized(status, "ResourceClaim") is None


def test_a_big_map_is_reported_at_its_path_with_odd_keys_quoted() -> None:
    attrs = {f"a{i}": {"int": i} for i in range(MAX_ENTRIES + 1)}
    obj = {"spec": {"devices": [{"name": "d", "attributes": attrs}]}}
    v = oversized(obj, "ResourceSlice")
    assert v is not None and v.field == "spec.devices[0].attributes"
    nested = {"spec": {"weird key/with.dots": {"x": list(range(MAX_ENTRIES + 1))}}}
    v = oversized(nested, "ResourceSlice")
    assert v is not None and v.field == "spec['weird key/with.dots'].x"


def test_objects_outside_resource_k8s_io_are_not_counted() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "env": [{"name": f"E{i}", "value": "v"} for i in range(2000)]}
            ]
        },
    }
    response = _respond(pod)
    assert RULE not in str(response)


def test_the_rule_is_in_the_catalog() -> None:
    assert RULE in RULES
