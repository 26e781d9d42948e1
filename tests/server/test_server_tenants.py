"""Tenant device policies through the real webhook: `draguard serve --state DIR --policy FILE` over HTTPS
on 127.0.0.1 (tests/fixtures/tenants/: the cluster's Namespaces, classes and devices in the state
directory, DraguardPolicies with tenant entries in the policy file), real AdmissionReviews of the
fixture manifests: denied (Enforce) with the field path and the entry's id, warned (Warn), annotated
(Audit), and the required selector added by the mutating endpoint — its patch applied, the result
admitted by the validating endpoint."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from typing import Any

import jsonpatch
import pytest
import yaml
from server_proc import ROOT, Server, StateServer, review_of, served, wait_for

FIXTURES = ROOT / "tests" / "fixtures" / "tenants"
MANIFESTS = FIXTURES / "manifests"
SHARED = {"cel": {"expression": 'device.attributes["gpu.example.com"].tier == "shared"'}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StateServer]:
    tmp = tmp_path_factory.mktemp("tenants")
    yield from served(tmp, FIXTURES / "cluster", "--policy", str(FIXTURES / "policy.yaml"))


def _manifest(file: str, kind: str, namespace: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all((MANIFESTS / file).read_text()) if d]
    return copy.deepcopy(
        next(d for d in docs if d["kind"] == kind and d["metadata"]["namespace"] == namespace)
    )


def _review(server: Server, obj: dict[str, Any], path: str = "/validate", **kw: Any) -> dict[str, Any]:
    status, answer = server.review(review_of(obj, **kw), path)
    assert status == 200, answer
    response: dict[str, Any] = answer["response"]
    return response


def _causes(response: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in response["status"]["details"]["causes"]]


def _patched(server: Server, obj: dict[str, Any]) -> dict[str, Any]:
    response = _review(server, obj, "/mutate")
    assert response["allowed"] is True, response
    if "patch" not in response:
        return obj
    ops = json.loads(base64.b64decode(response["patch"]))
    return jsonpatch.apply_patch(obj, ops)


def test_a_compliant_claim_is_admitted_without_a_patch(server: Server) -> None:
    claim = _manifest("compliant.yaml", "ResourceClaim", "team-a")
    assert "patch" not in _review(server, claim, "/mutate")
    response = _review(server, claim)
    assert response["allowed"] is True and not response.get("warnings")


def test_a_disallowed_class_is_denied_in_enforce_warned_in_warn_annotated_in_audit(server: Server) -> None:
    enforce = _review(server, _patched(server, _manifest("device-class.yaml", "ResourceClaim", "team-a")))
    assert enforce["allowed"] is False and enforce["status"]["code"] == 422
    assert _causes(enforce) == [
        (
            "spec.devices.requests[0].firstAvailable[1].deviceClassName",
            'Forbidden: DeviceClass "dedicated.example.com" may not be used in namespace "team-a" (allowed: '
            '"gpu.example.com") (tenant gpu-tenants/shared, mode Enforce)',
        )
    ]
    assert enforce["auditAnnotations"]["denied-by"] == "tenant.device-class"

    warn = _review(server, _manifest("device-class.yaml", "ResourceClaim", "team-c"))
    assert warn["allowed"] is True
    assert any(
        w.startswith("spec.devices.requests[0].exactly.deviceClassName: Forbidden: DeviceClass")
        and w.endswith("(tenant gpu-tenants/trial, mode Warn) (tenant.device-class)")
        for w in warn["warnings"]
    ), warn

    audit = _review(server, _manifest("device-class.yaml", "ResourceClaim", "team-d"))
    assert audit["allowed"] is True and not audit.get("warnings")
    assert audit["auditAnnotations"]["tenant-audit"] == (
        "audit-only/watch tenant.device-class spec.devices.requests[0].exactly.deviceClassName"
    )

    excluded = _review(server, _manifest("device-class.yaml", "ResourceClaim", "team-a-sandbox"))
    assert excluded["allowed"] is True and "tenant-audit" not in excluded.get("auditAnnotations", {})


def test_the_mutating_endpoint_adds_the_required_selector_and_the_result_is_admitted(server: Server) -> None:
    template = _manifest("required-selector.yaml", "ResourceClaimTemplate", "team-a")
    denied = _review(server, template)  # as if the mutating webhook had been skipped: never admitted
    assert denied["allowed"] is False
    assert [f for f, _ in _causes(denied)] == ["spec.spec.devices.requests[0].exactly.selectors"]
    response = _review(server, template, "/mutate")
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"])) == [
        {"op": "add", "path": "/spec/spec/devices/requests/0/exactly/selectors", "value": [SHARED]}
    ]
    assert response["auditAnnotations"]["tenant-selectors"] == "gpu-tenants/shared"
    patched = _patched(server, template)
    assert "patch" not in _review(server, patched, "/mutate")  # idempotent
    assert _review(server, patched)["allowed"] is True


def test_a_missing_selector_is_denied_where_the_entry_says_deny(server: Server) -> None:
    claim = _manifest("required-selector.yaml", "ResourceClaim", "team-b")
    assert "patch" not in _review(server, claim, "/mutate")
    response = _review(server, claim)
    assert response["allowed"] is False
    ((field, message),) = _causes(response)
    assert field == "spec.devices.requests[0].exactly.selectors"
    assert message.startswith('Required value: in namespace "team-b" every request and subrequest must carry')
    assert message.endswith("(tenant gpu-tenants/strict-selector, mode Enforce)")
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"].append(SHARED)
    assert _review(server, claim)["allowed"] is True


def test_too_many_selectors_to_add_one_is_denied_by_the_mutating_endpoint(server: Server) -> None:
    claim = _manifest("compliant.yaml", "ResourceClaim", "team-a")
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": "true"}}] * 32
    response = _review(server, claim, "/mutate")
    assert response["allowed"] is False and "patch" not in response
    ((field, message),) = _causes(response)
    assert field == "spec.devices.requests[0].exactly.selectors"
    assert message.startswith("Too many: 33: must have at most 32 items") and "gpu-tenants/shared" in message


def test_device_limits_per_claim_with_all_and_per_pod(server: Server) -> None:
    five = _review(server, _patched(server, _manifest("max-per-claim.yaml", "ResourceClaim", "team-a")))
    assert five["allowed"] is False
    assert _causes(five)[0][0] == "spec.devices.requests"
    assert (
        "asks for 5 devices" in _causes(five)[0][1]
        and "allows at most 4 (maxDevicesPerClaim)" in _causes(five)[0][1]
    )

    docs = [d for d in yaml.safe_load_all((MANIFESTS / "max-per-claim.yaml").read_text()) if d]
    all_and_one = _patched(server, docs[1])
    response = _review(server, all_and_one)  # All: the 4 shared GPUs of node-1, plus one
    assert response["allowed"] is False
    assert [m for f, m in _causes(response) if f == "spec.devices.requests"] == [
        'Forbidden: this claim asks for 5 devices (all=4, one=1): namespace "team-a" allows at most 4 '
        "(maxDevicesPerClaim) (tenant gpu-tenants/shared, mode Enforce)"
    ]


def test_a_pod_over_its_device_limit_is_denied(server: StateServer) -> None:
    pod = _manifest("max-per-pod.yaml", "Pod", "team-a")
    # its template is not in the state: nothing to count, admitted (pod.unknown-claim warns)
    assert _review(server, pod)["allowed"] is True
    template = _manifest("max-per-pod.yaml", "ResourceClaimTemplate", "team-a")
    state = server.state
    (state / "template.yaml.tmp").write_text(yaml.safe_dump(template))
    (state / "template.yaml.tmp").rename(state / "template.yaml")  # atomically, as the loader wants

    def denied() -> dict[str, Any] | None:
        r = _review(server, pod)
        return r if not r["allowed"] else None

    response = wait_for("the template in the state", denied, timeout=30)
    assert _causes(response) == [
        (
            "spec.resourceClaims",
            'Forbidden: this Pod asks for 8 devices (first=4, second=4): namespace "team-a" allows at most 6 '
            "(maxDevicesPerPod) (tenant gpu-tenants/shared, mode Enforce)",
        )
    ]


def test_admin_access_and_extended_resources_are_denied(server: Server) -> None:
    admin = _review(server, _manifest("admin-access.yaml", "ResourceClaim", "team-a"))
    assert admin["allowed"] is False
    fields = dict(_causes(admin))
    assert fields["spec.devices.requests[0].exactly.adminAccess"] == (
        'Forbidden: admin access to devices is not allowed in namespace "team-a" (tenant gpu-tenants/shared, '
        "mode Enforce)"
    )
    assert "spec.devices.requests[0].adminAccess" in fields  # upstream's namespace label check, beside it

    pod = _review(server, _manifest("extended-resources.yaml", "Pod", "team-a"))
    assert pod["allowed"] is False
    assert [f for f, _ in _causes(pod)] == ["spec.containers[0].resources.limits[example.com/gpu]"]


def test_a_status_update_is_never_denied_by_tenant_rules(server: Server) -> None:
    claim = _manifest("device-class.yaml", "ResourceClaim", "team-a")
    claim["metadata"]["uid"] = "5f0c1a9e-0000-4000-8000-0000000000c1"
    ar = review_of(claim, operation="UPDATE")
    ar["request"]["oldObject"] = claim
    ar["request"]["subResource"] = ar["request"]["requestSubResource"] = "status"
    status, answer = server.review(ar)
    assert status == 200 and answer["response"]["allowed"] is True, answer
