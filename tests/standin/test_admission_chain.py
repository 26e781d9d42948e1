"""The stand-in's admission chain against real HTTPS webhooks on 127.0.0.1 (tests/standin/webhook_double.py):
the AdmissionReview it sends, caBundle verification against the Service name, failurePolicy on every kind of
call failure, timeoutSeconds, denials in the API server's Status shape, JSON Patches in order, warnings,
matchPolicy Equivalent conversion, and what is never sent."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.standin.admission import Admission, Attributes, Warnings, denial
from tests.standin.admission_config import ConfigError
from tests.standin.webhook_double import WebhookDouble, allow, closed_port, patch_response

DRA = "resource.k8s.io"


def config(kind: str, name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(webhooks),
    }


def hook(name: str, double: WebhookDouble, /, path: str = "/validate", **more: Any) -> dict[str, Any]:
    w: dict[str, Any] = {
        "name": name,
        "clientConfig": double.client_config(path),
        "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*", "*/*"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 5,
    }
    w.update(more)
    return w


def slice_obj(name: str = "s1", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": f"{DRA}/v1",
        "kind": "ResourceSlice",
        "metadata": meta,
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    }


def create_slice(obj: dict[str, Any] | None = None, **kw: Any) -> Attributes:
    obj = obj or slice_obj()
    return Attributes(
        operation="CREATE",
        kind={"group": DRA, "version": "v1", "kind": "ResourceSlice"},
        resource={"group": DRA, "version": "v1", "resource": "resourceslices"},
        object=obj,
        name=obj["metadata"]["name"],
        user_info={
            "username": "jane",
            "uid": "u-1",
            "groups": ["system:authenticated"],
            "extra": {"scopes": ["a"]},
        },
        options={"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl"},
        **kw,
    )


@pytest.fixture
def double(tmp_path: Path) -> Any:
    with WebhookDouble(tmp_path, allow) as d:
        yield d


def validating(double: WebhookDouble, *webhooks: dict[str, Any], **kw: Any) -> Admission:
    return Admission([config("ValidatingWebhookConfiguration", "v", *webhooks)], double.services, **kw)


def test_the_review_sent_is_an_api_servers_v1_review_with_a_uid_per_call(double: WebhookDouble) -> None:
    chain = validating(double, hook("a.example.com", double), hook("b.example.com", double, timeoutSeconds=7))
    result = chain.admit(create_slice())
    assert result.allowed and result.object == slice_obj() and result.warnings == []
    assert sorted(c.outcome for c in result.calls) == ["allowed", "allowed"]
    received = sorted(double.received, key=lambda r: r["query"]["timeout"])
    assert [r["path"] for r in received] == ["/validate", "/validate"]
    assert [r["query"] for r in received] == [{"timeout": ["5s"]}, {"timeout": ["7s"]}]
    reviews = [r["review"] for r in received]
    assert reviews[0]["request"]["uid"] != reviews[1]["request"]["uid"]
    req = reviews[0]["request"]
    gvk = {"group": DRA, "version": "v1", "kind": "ResourceSlice"}
    gvr = {"group": DRA, "version": "v1", "resource": "resourceslices"}
    assert (reviews[0]["apiVersion"], reviews[0]["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    assert (req["kind"], req["resource"], req["requestKind"], req["requestResource"]) == (gvk, gvr, gvk, gvr)
    assert "namespace" not in req and "subResource" not in req  # cluster-scoped, main resource
    assert (req["name"], req["operation"], req["dryRun"]) == ("s1", "CREATE", False)
    assert req["userInfo"] == {
        "username": "jane",
        "uid": "u-1",
        "groups": ["system:authenticated"],
        "extra": {"scopes": ["a"]},
    }
    assert req["object"] == slice_obj() and req["oldObject"] is None
    assert req["options"] == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "kubectl",
    }


def test_a_status_update_names_its_subresource_and_a_namespace_write_its_own_namespace(
    double: WebhookDouble,
) -> None:
    chain = validating(double, hook("a.example.com", double))
    claim = {
        "apiVersion": f"{DRA}/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {},
    }
    result = chain.admit(
        Attributes(
            "UPDATE",
            {"group": DRA, "version": "v1", "kind": "ResourceClaim"},
            {"group": DRA, "version": "v1", "resource": "resourceclaims"},
            claim,
            old_object=claim,
            name="c",
            namespace="ml",
            sub_resource="status",
            dry_run=True,
        )
    )
    assert result.allowed
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}
    chain.admit(
        Attributes(
            "CREATE",
            {"group": "", "version": "v1", "kind": "Namespace"},
            {"group": "", "version": "v1", "resource": "namespaces"},
            ns,
            name="fresh",
        )
    )
    status_req, ns_req = (r["request"] for r in double.reviews())
    assert (status_req["subResource"], status_req["requestSubResource"], status_req["namespace"]) == (
        "status",
        "status",
        "ml",
    )
    assert status_req["oldObject"] == claim and status_req["dryRun"] is True
    assert ns_req["namespace"] == "fresh"  # the API server sets a Namespace's namespace to its name


def test_the_ca_bundle_is_verified_against_the_service_name(tmp_path: Path, double: WebhookDouble) -> None:
    with WebhookDouble(tmp_path, allow, name="other") as stranger:  # another CA
        w = hook("a.example.com", double)
        w["clientConfig"]["caBundle"] = stranger.ca_bundle
        result = validating(double, w).admit(create_slice())
    assert result.status is not None and result.status["code"] == 500
    assert "tls: failed to verify certificate" in result.status["message"]
    assert double.received == []
    # the right CA, but the Service is reached under a name its certificate lacks
    w = hook("a.example.com", double)
    w["clientConfig"]["service"]["name"] = "renamed"
    chain = Admission(
        [config("ValidatingWebhookConfiguration", "v", w)], {"test/renamed": f"127.0.0.1:{double.port}"}
    )
    result = chain.admit(create_slice())
    assert result.status is not None and "tls: failed to verify certificate" in result.status["message"]


def test_a_ca_bundle_wrapped_as_kustomize_writes_it_is_read_as_go_reads_it(double: WebhookDouble) -> None:
    w = hook("a.example.com", double)
    bundle = w["clientConfig"]["caBundle"]
    w["clientConfig"]["caBundle"] = "\n".join(bundle[i : i + 76] for i in range(0, len(bundle), 76)) + "\n"
    assert validating(double, w).admit(create_slice()).allowed and len(double.received) == 1
    w["clientConfig"]["caBundle"] = "not base64!"
    result = validating(double, w).admit(create_slice())
    assert result.status is not None and "invalid caBundle" in result.status["message"]


def test_a_url_client_config_is_called_directly(tmp_path: Path) -> None:
    with WebhookDouble(tmp_path, allow, name="localhost", namespace="x") as d:
        w = hook("u.example.com", d)
        w["clientConfig"] = {"url": f"https://127.0.0.1:{d.port}/v", "caBundle": d.ca_bundle}
        result = Admission([config("ValidatingWebhookConfiguration", "v", w)], {}).admit(create_slice())
    # the certificate names localhost.x.svc, not 127.0.0.1: verification fails as it would upstream
    assert result.status is not None and "failed to verify certificate" in result.status["message"]


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_an_unreachable_webhook_takes_the_failure_policy(double: WebhookDouble, policy: str) -> None:
    port = closed_port()
    w = hook("down.example.com", double, failurePolicy=policy)
    chain = Admission([config("ValidatingWebhookConfiguration", "v", w)], {"test/hook": f"127.0.0.1:{port}"})
    result = chain.admit(create_slice())
    (call,) = result.calls
    assert "connection refused" in call.error
    if policy == "Fail":
        assert result.status is not None and call.outcome == "failed"
        assert (result.status["code"], result.status["reason"]) == (500, "InternalError")
        assert result.status["message"] == f"Internal error occurred: {call.error}"
        assert result.status["message"].startswith(
            'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: '
            'Post "https://hook.test.svc:443/validate?timeout=5s": dial tcp 127.0.0.1:'
        )
        assert result.status["details"] == {"causes": [{"message": call.error}]}
    else:
        assert result.allowed and call.outcome == "failed-open"
        assert result.audit == {
            "failed-open.validating.webhook.admission.k8s.io/round_0_index_0": "down.example.com"
        }


def test_connections_are_kept_alive_and_a_closed_one_is_redialled(double: WebhookDouble) -> None:
    chain = validating(double, hook("a.example.com", double))
    for _ in range(3):
        assert chain.admit(create_slice()).allowed
    assert len({r["peer"] for r in double.received}) == 1  # one connection for three calls
    double.drop_connections()  # the webhook closed it meanwhile (restart, idle timeout)
    assert chain.admit(create_slice()).allowed
    double.keep_alive = False
    assert chain.admit(create_slice()).allowed and chain.admit(create_slice()).allowed
    peers = [r["peer"] for r in double.received]
    # A A A (kept alive), B (redialled after the drop), B (kept: its answer says close), C (a new one)
    assert peers[:3] == [peers[0]] * 3 and peers[3] == peers[4] and len(set(peers)) == 3


def test_a_service_without_an_address_is_a_call_failure(double: WebhookDouble) -> None:
    w = hook("a.example.com", double)
    result = Admission([config("ValidatingWebhookConfiguration", "v", w)], {}).admit(create_slice())
    assert result.status is not None and 'service "test/hook" has no address' in result.status["message"]


def test_a_slow_webhook_is_cut_at_timeout_seconds(tmp_path: Path) -> None:
    with WebhookDouble(tmp_path, allow, delay=3.0) as slow:
        chain = validating(slow, hook("slow.example.com", slow, timeoutSeconds=1, failurePolicy="Ignore"))
        result = chain.admit(create_slice())
        (call,) = result.calls
        assert result.allowed and call.outcome == "failed-open"
        assert call.error.endswith(
            'Post "https://hook.test.svc:443/validate?timeout=1s": context deadline exceeded'
        )
        assert slow.received[0]["query"] == {"timeout": ["1s"]}
        fail = validating(slow, hook("slow.example.com", slow, timeoutSeconds=1)).admit(create_slice())
        assert fail.status is not None and fail.status["code"] == 500
        assert "context deadline exceeded" in fail.status["message"]
        print(f"timeoutSeconds 1 against a 3 s webhook: the call ended after {call.seconds:.2f} s")


ANSWERS: list[tuple[str, Any, str]] = [
    ("not JSON", (200, b"<html>"), "json parse error"),
    (
        "no response",
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
        "webhook response was absent",
    ),
    (
        "wrong kind",
        {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {}},
        "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview",
    ),
    (
        "uid mismatch",
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "x", "allowed": True},
        },
        'expected response.uid="',
    ),
    (
        "500 with a Status",
        (500, json.dumps({"kind": "Status", "message": "boom"}).encode()),
        "failed to call webhook: boom",
    ),
    ("503 without a body", (503, b""), "status code 503"),
]


@pytest.mark.parametrize(("answer", "reason"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS])
def test_a_bad_answer_is_a_call_failure(double: WebhookDouble, answer: Any, reason: str) -> None:
    double.handler = lambda review: answer
    for policy in ("Fail", "Ignore"):
        result = validating(double, hook("bad.example.com", double, failurePolicy=policy)).admit(
            create_slice()
        )
        assert reason in result.calls[0].error
        assert result.allowed is (policy == "Ignore")


def test_a_validating_webhook_may_not_patch(double: WebhookDouble) -> None:
    double.handler = lambda review: patch_response(
        review, [{"op": "add", "path": "/metadata/labels", "value": {}}]
    )
    result = validating(double, hook("v.example.com", double, failurePolicy="Fail")).admit(create_slice())
    assert (
        result.status is not None
        and "validating webhook may not return response.patch" in result.status["message"]
    )


DENIALS: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = [
    (
        "no status at all",
        None,
        {
            "code": 400,
            "status": "Failure",
            "message": 'admission webhook "d.example.com" denied the request without explanation',
        },
    ),
    (
        "a reason only",
        {"reason": "Forbidden", "code": 403},
        {
            "code": 403,
            "reason": "Forbidden",
            "message": 'admission webhook "d.example.com" denied the request: Forbidden',
        },
    ),
    (
        "a code below 400 becomes 400",
        {"message": "no", "code": 200, "status": "Success"},
        {
            "code": 400,
            "status": "Failure",
            "message": 'admission webhook "d.example.com" denied the request: no',
        },
    ),
    (
        "draguard's Invalid shape passes through",
        {
            "status": "Failure",
            "message": 'ResourceSlice.resource.k8s.io "s1" is invalid: spec.devices[0].name: Invalid value',
            "reason": "Invalid",
            "code": 422,
            "details": {
                "group": DRA,
                "kind": "ResourceSlice",
                "name": "s1",
                "causes": [
                    {
                        "reason": "FieldValueInvalid",
                        "message": "Invalid value",
                        "field": "spec.devices[0].name",
                    }
                ],
            },
        },
        {
            "code": 422,
            "reason": "Invalid",
            "details": {
                "group": DRA,
                "kind": "ResourceSlice",
                "name": "s1",
                "causes": [
                    {
                        "reason": "FieldValueInvalid",
                        "message": "Invalid value",
                        "field": "spec.devices[0].name",
                    }
                ],
            },
            "message": 'admission webhook "d.example.com" denied the request: ResourceSlice.resource.k8s.io "s1" is invalid: spec.devices[0].name: Invalid value',
        },
    ),
]


@pytest.mark.parametrize(("given", "want"), [d[1:] for d in DENIALS], ids=[d[0] for d in DENIALS])
def test_a_denial_becomes_the_api_servers_status(
    double: WebhookDouble, given: dict[str, Any] | None, want: dict[str, Any]
) -> None:
    double.handler = lambda review: allow(
        review, allowed=False, **({"status": given} if given else {}), warnings=["careful"]
    )
    result = validating(double, hook("d.example.com", double)).admit(create_slice())
    assert result.status is not None and result.calls[0].outcome == "denied"
    assert {k: result.status[k] for k in want} == want
    assert "reason" in result.status or "reason" not in (given or {})  # none added when the webhook gave none
    assert result.warnings == ["careful"]  # warnings come back with a denial too
    assert denial("d.example.com", given) == result.status


def test_all_validating_webhooks_run_and_any_denial_rejects(tmp_path: Path) -> None:
    with (
        WebhookDouble(tmp_path, lambda r: allow(r, warnings=["from a"]), name="a") as a,
        WebhookDouble(
            tmp_path,
            lambda r: allow(r, allowed=False, status={"message": "b says no"}, warnings=["from b", "from a"]),
            name="b",
        ) as b,
    ):
        cfgs = [
            config("ValidatingWebhookConfiguration", "one", hook("a.example.com", a)),
            config("ValidatingWebhookConfiguration", "two", hook("b.example.com", b)),
        ]
        result = Admission(cfgs, {**a.services, **b.services}).admit(create_slice())
    assert (
        result.status is not None
        and result.status["message"] == 'admission webhook "b.example.com" denied the request: b says no'
    )
    assert sorted(c.webhook for c in result.calls) == ["a.example.com", "b.example.com"]
    assert sorted(result.warnings) == ["from a", "from b"]  # de-duplicated across webhooks


def test_mutating_webhooks_run_in_order_each_seeing_the_last_patch(tmp_path: Path) -> None:
    def first(review: dict[str, Any]) -> dict[str, Any]:
        return patch_response(
            review, [{"op": "add", "path": "/metadata/labels", "value": {"step": "1"}}], warnings=["first"]
        )

    def second(review: dict[str, Any]) -> dict[str, Any]:
        assert review["request"]["object"]["metadata"]["labels"] == {"step": "1"}
        return patch_response(review, [{"op": "replace", "path": "/metadata/labels/step", "value": "2"}])

    with (
        WebhookDouble(tmp_path, first, name="a") as a,
        WebhookDouble(tmp_path, second, name="b") as b,
        WebhookDouble(tmp_path, allow, name="v") as v,
    ):
        cfgs = [
            # sorted by configuration name: "m-1" runs before "m-2" whatever the list order
            config("MutatingWebhookConfiguration", "m-2", hook("b.example.com", b, path="/mutate")),
            config("MutatingWebhookConfiguration", "m-1", hook("a.example.com", a, path="/mutate")),
            config("ValidatingWebhookConfiguration", "v", hook("v.example.com", v)),
        ]
        result = Admission(cfgs, {**a.services, **b.services, **v.services}).admit(create_slice())
        validated = v.reviews()[0]["request"]["object"]
    assert result.allowed and [c.outcome for c in result.calls] == ["patched", "patched", "allowed"]
    assert result.object is not None and result.object["metadata"]["labels"] == {"step": "2"}
    assert validated == result.object  # validating webhooks see the final object
    assert result.warnings == ["first"]


def test_a_patch_that_does_not_apply_is_500_even_with_ignore_and_a_delete_may_not_be_patched(
    double: WebhookDouble,
) -> None:
    double.handler = lambda review: patch_response(review, [{"op": "remove", "path": "/spec/nothing"}])
    chain = Admission(
        [config("MutatingWebhookConfiguration", "m", hook("m.example.com", double, failurePolicy="Ignore"))],
        double.services,
    )
    result = chain.admit(create_slice())
    assert result.status is not None and (result.status["code"], result.status["reason"]) == (
        500,
        "InternalError",
    )
    old = slice_obj()
    delete = Attributes(
        "DELETE",
        {"group": DRA, "version": "v1", "kind": "ResourceSlice"},
        {"group": DRA, "version": "v1", "resource": "resourceslices"},
        None,
        old_object=old,
        name="s1",
    )
    result = chain.admit(delete)
    assert result.status is not None and result.status["message"] == (
        'Internal error occurred: admission webhook "m.example.com" attempted to modify the object, which is not supported for this operation'
    )


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ({"patch": base64.b64encode(b"[]").decode()}, "response.patch but not response.patchType"),
        ({"patchType": "JSONPatch"}, "response.patchType but not response.patch"),
        ({"patch": base64.b64encode(b"{not json").decode(), "patchType": "JSONPatch"}, "undecodable patch"),
        (
            {
                "patch": base64.b64encode(b'[{"op":"add","path":"/x","value":1}]').decode(),
                "patchType": "MergePatch",
            },
            'unsupported patch type "MergePatch"',
        ),
    ],
)
def test_malformed_patches_are_call_failures(
    double: WebhookDouble, response: dict[str, Any], reason: str
) -> None:
    double.handler = lambda review: allow(review, **response)
    chain = Admission(
        [config("MutatingWebhookConfiguration", "m", hook("m.example.com", double, failurePolicy="Ignore"))],
        double.services,
    )
    result = chain.admit(create_slice())
    assert result.allowed and result.calls[0].outcome == "failed-open" and reason in result.calls[0].error
    assert result.audit == {"failed-open.mutation.webhook.admission.k8s.io/round_0_index_0": "m.example.com"}


def test_selectors_rules_and_conditions_decide_who_is_called(double: WebhookDouble) -> None:
    cfg = config(
        "ValidatingWebhookConfiguration",
        "v",
        hook("by-label.example.com", double, objectSelector={"matchLabels": {"watch": "me"}}),
        hook(
            "claims-only.example.com",
            double,
            rules=[
                {
                    "apiGroups": [DRA],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["resourceclaims"],
                }
            ],
        ),
        hook(
            "not-robots.example.com",
            double,
            matchConditions=[
                {"name": "human", "expression": "!request.userInfo.username.startsWith('system:')"}
            ],
        ),
    )
    chain = Admission([cfg], double.services)
    result = chain.admit(create_slice(slice_obj(watch="me")))
    assert sorted(c.webhook for c in result.calls) == ["by-label.example.com", "not-robots.example.com"]
    assert result.skipped == {"claims-only.example.com": "rules"}
    robot = create_slice(slice_obj())
    robot.user_info = {"username": "system:serviceaccount:kube-system:driver"}
    result = chain.admit(robot)
    assert result.calls == [] and result.skipped == {
        "by-label.example.com": "objectSelector",
        "claims-only.example.com": "rules",
        "not-robots.example.com": "matchCondition human",
    }


def test_a_match_condition_error_with_fail_rejects_without_calling(double: WebhookDouble) -> None:
    w = hook(
        "c.example.com", double, matchConditions=[{"name": "odd", "expression": "object.spec.nope == 1"}]
    )
    result = validating(double, w).admit(create_slice())
    assert double.received == [] and result.status is not None
    assert (result.status["code"], result.status["reason"]) == (403, "Forbidden")
    assert result.status["message"] == (
        "resourceslices.resource.k8s.io \"s1\" is forbidden: expression 'object.spec.nope == 1' resulted in error: no such key: nope"
    )
    ignored = validating(double, {**w, "failurePolicy": "Ignore"}).admit(create_slice())
    assert ignored.allowed and ignored.calls == [] and double.received == []


def test_a_missing_namespace_is_not_found_before_any_call(double: WebhookDouble) -> None:
    w = hook("ns.example.com", double, namespaceSelector={"matchLabels": {"team": "ml"}})
    claim = {
        "apiVersion": f"{DRA}/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "gone"},
        "spec": {},
    }
    attrs = Attributes(
        "CREATE",
        {"group": DRA, "version": "v1", "kind": "ResourceClaim"},
        {"group": DRA, "version": "v1", "resource": "resourceclaims"},
        claim,
        name="c",
        namespace="gone",
    )
    result = validating(double, w).admit(attrs)
    assert result.status is not None and result.status["code"] == 404 and double.received == []
    # a webhook whose rules do not match never reports it
    other = {
        **w,
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods"]}],
    }
    assert validating(double, other).admit(attrs).allowed


def test_equivalent_requests_reach_a_v1_webhook_converted(double: WebhookDouble) -> None:
    w = hook(
        "v1.example.com",
        double,
        rules=[
            {
                "apiGroups": [DRA],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["resourceslices"],
            }
        ],
    )
    beta = {
        "apiVersion": f"{DRA}/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": "b"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "X"}}}}],
        },
    }
    attrs = Attributes(
        "CREATE",
        {"group": DRA, "version": "v1beta1", "kind": "ResourceSlice"},
        {"group": DRA, "version": "v1beta1", "resource": "resourceslices"},
        beta,
        name="b",
    )
    served = validating(double, w, served=lambda g, v: v in ("v1", "v1beta1"))
    result = served.admit(attrs)
    assert result.allowed and result.object == beta  # stored in the version it was written in
    req = double.reviews()[0]["request"]
    assert req["kind"]["version"] == "v1" and req["requestKind"]["version"] == "v1beta1"
    assert req["resource"]["version"] == "v1" and req["requestResource"]["version"] == "v1beta1"
    assert req["object"]["apiVersion"] == f"{DRA}/v1"
    assert req["object"]["spec"]["devices"] == [{"name": "gpu-0", "attributes": {"model": {"string": "X"}}}]
    exact = validating(double, {**w, "matchPolicy": "Exact"}, served=lambda g, v: True).admit(attrs)
    assert exact.calls == [] and exact.skipped == {"v1.example.com": "rules"}


def test_configurations_the_api_server_would_refuse_fail_loudly(double: WebhookDouble) -> None:
    refused: list[tuple[dict[str, Any], str]] = [
        ({"name": "two.parts"}, "at least three segments"),
        ({"sideEffects": "Some"}, "sideEffects"),
        ({"admissionReviewVersions": ["v2"]}, "admissionReviewVersions"),
        ({"admissionReviewVersions": ["v1beta1", "v1"]}, "v1 only"),
        ({"timeoutSeconds": 31}, "between 1 and 30"),
        (
            {"matchConditions": [{"name": "a", "expression": "authorizer.group('').check('x').allowed()"}]},
            "does not implement",
        ),
    ]
    for bad, message in refused:
        with pytest.raises(ConfigError, match=message):
            validating(double, hook("x.example.com", double, **bad))


def test_webhook_configurations_themselves_are_never_sent(double: WebhookDouble) -> None:
    chain = validating(double, hook("all.example.com", double))
    cfg = config("ValidatingWebhookConfiguration", "x")
    attrs = Attributes(
        "CREATE",
        {"group": "admissionregistration.k8s.io", "version": "v1", "kind": "ValidatingWebhookConfiguration"},
        {
            "group": "admissionregistration.k8s.io",
            "version": "v1",
            "resource": "validatingwebhookconfigurations",
        },
        cfg,
        name="x",
    )
    assert chain.admit(attrs).allowed and double.received == []


def test_warnings_are_bounded_as_the_api_servers_recorder_bounds_them() -> None:
    w = Warnings()
    for text in ["a", "a", "bad\nline", "b" * 300]:
        w.add(text)
    assert w.shown == ["a", "b" * 300]
    for i in range(20):
        w.add(f"{i}" + "c" * 300)
    # over 4096 runes: every warning (earlier ones replayed) cut to 256, added until the total is reached
    assert all(len(s) <= 256 for s in w.shown) and sum(map(len, w.shown)) <= 4096
    assert w.shown[:2] == ["a", "b" * 256]


def test_concurrent_writes_share_one_chain(double: WebhookDouble) -> None:
    chain = validating(double, hook("a.example.com", double))
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(chain.admit(create_slice()).allowed)) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 8 and len({r["request"]["uid"] for r in double.reviews()}) == 8
