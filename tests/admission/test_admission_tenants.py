"""Tenant device policies in `review()`: which entries cover a request's namespace (labels from the
snapshot's Namespace, `kubernetes.io/metadata.name` always known, unknown labels never a denial),
ratcheting on UPDATE, device counts draguard cannot tell (a warning, never a denial), and
`--extended-resources translate` not translating what an entry forbids. The end-to-end answers per
restriction and mode are in tests/server/test_server_tenants.py (a real server)."""

from __future__ import annotations

import copy
from typing import Any

from admission_fixtures import causes, claim, cluster_objects, exactly, pod, respond, served, snapshot

from webhook.admission import AdmissionConfig
from webhook.config.policy import combine
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.simulate.tenants import TenantFinding, covering, not_worse

PROFILE = load_profile("1.37")
NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ml"}}},
]
SNAP = snapshot([*cluster_objects(), *NAMESPACES])


def _config(*entries: dict[str, Any], endpoint: str = "validate", **kw: Any) -> AdmissionConfig:
    obj = {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": "p"},
        "spec": {"tenants": [{"name": f"t{i}", "mode": "Enforce", **e} for i, e in enumerate(entries)]},
    }
    spec = check_policy_object(obj, RULES, PROFILE)
    assert not isinstance(spec, list), spec
    return AdmissionConfig(endpoint=endpoint, policy=combine([spec]), **kw)  # type: ignore[arg-type]


ONLY_GPU = {"namespaceSelector": {"matchLabels": {"team": "ml"}}, "allowedDeviceClasses": ["gpu.example.com"]}


def test_entries_cover_by_the_namespace_labels_in_the_snapshot() -> None:
    c = served(claim("c", [exactly("g", "a100.example.com")]))
    denied = respond(c, SNAP, _config(ONLY_GPU))
    assert denied["allowed"] is False
    assert [f for f, _, _ in causes(denied)] == ["spec.devices.requests[0].exactly.deviceClassName"]
    other = copy.deepcopy(c)
    other["metadata"]["namespace"] = "research"  # not in the snapshot: its labels are unknown
    assert respond(other, SNAP, _config(ONLY_GPU))["allowed"] is True
    by_name = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "research"}},
        "allowedDeviceClasses": [],
    }
    assert respond(other, SNAP, _config(by_name))["allowed"] is False  # the name label is always known
    excluded = {**ONLY_GPU, "exclude": {"namespaces": ["ml"]}}
    assert respond(c, SNAP, _config(excluded))["allowed"] is True


def test_covering_reads_only_known_labels() -> None:
    cfg = _config(
        {"namespaceSelector": {}},
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
        {"namespaceSelector": {}, "exclude": {"namespaceSelector": {"matchLabels": {"tier": "x"}}}},
    )
    tenants = cfg.policy.tenants
    assert [t.name for t in covering(tenants, "x", None)] == ["t0"]  # the others read an unknown label
    assert [t.name for t in covering(tenants, "x", {})] == ["t0", "t1", "t2"]
    assert [t.name for t in covering(tenants, "x", {"team": "a", "tier": "x"})] == ["t0"]


def test_an_update_that_keeps_a_violation_is_a_warning_not_a_denial() -> None:
    old = served(claim("c", [exactly("g", "a100.example.com")]))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"owner": "me"}  # a metadata change: the spec is immutable anyway
    response = respond(new, SNAP, _config(ONLY_GPU), operation="UPDATE", old=old)
    assert response["allowed"] is True
    assert any(
        "may not be used" in w and "not denied on update" in w and w.endswith("(tenant.device-class)")
        for w in response["warnings"]
    )
    assert respond(new, SNAP, _config(ONLY_GPU), operation="CREATE")["allowed"] is False


def test_ratcheting_a_count_allows_no_more_than_the_stored_object_had() -> None:
    t = _config(ONLY_GPU).policy.tenants[0]
    old = [TenantFinding(t, "tenant.max-devices-per-claim", "spec.devices.requests", "m", amount=6)]
    assert not_worse(
        TenantFinding(t, "tenant.max-devices-per-claim", "spec.devices.requests", "m", amount=5), old
    )
    assert not not_worse(
        TenantFinding(t, "tenant.max-devices-per-claim", "spec.devices.requests", "m", amount=7), old
    )


def test_a_status_update_is_not_judged_by_tenant_rules() -> None:
    c = served(claim("c", [exactly("g", "a100.example.com")]))
    response = respond(c, SNAP, _config(ONLY_GPU), operation="UPDATE", old=c, sub_resource="status")
    assert response["allowed"] is True and not any("tenant" in w for w in response.get("warnings", []))


def test_a_count_draguard_cannot_tell_is_a_warning() -> None:
    limit = {"namespaceSelector": {}, "maxDevicesPerClaim": 1}
    unknown = served(claim("c", [exactly("g", "missing.example.com", allocationMode="All")]))
    del unknown["spec"]["devices"]["requests"][0]["exactly"]["count"]
    response = respond(unknown, SNAP, _config(limit))
    assert response["allowed"] is True
    assert any(
        w.startswith("spec.devices.requests: cannot tell how many devices g ") for w in response["warnings"]
    )
    known = served(claim("c", [exactly("g", "gpu.example.com", allocationMode="All")]))
    del known["spec"]["devices"]["requests"][0]["exactly"]["count"]
    denied = respond(known, SNAP, _config(limit))
    assert denied["allowed"] is False  # All takes every GPU of a node: at least 4
    assert "asks for 5 devices (g=5)" in causes(denied)[0][2]  # gpu-node-3: 4 partitions and the full GPU


def test_a_pods_claims_are_counted_from_the_snapshot() -> None:
    cfg = _config({"namespaceSelector": {}, "maxDevicesPerPod": 4})
    p = served(pod("p", [{"name": "five", "resourceClaimTemplateName": "five-gpus-one-node"}]))
    denied = respond(p, SNAP, cfg)
    assert denied["allowed"] is False
    assert causes(denied)[0][0] == "spec.resourceClaims"
    ok = served(
        pod(
            "p",
            [
                {"name": "one", "resourceClaimTemplateName": "one-gpu"},
                {"name": "h", "resourceClaimName": "shared-h100"},
            ],
        )
    )
    assert respond(ok, SNAP, cfg)["allowed"] is True


def test_a_pod_naming_a_claim_of_a_disallowed_class_is_denied_at_the_reference() -> None:
    claims = [
        {"name": "one", "resourceClaimTemplateName": "one-gpu"},
        {"name": "h", "resourceClaimName": "shared-h100"},
    ]
    denied = respond(served(pod("p", claims)), SNAP, _config(ONLY_GPU))
    assert denied["allowed"] is False
    assert causes(denied) == [
        (
            "spec.resourceClaims[1].resourceClaimName",
            "FieldValueForbidden",
            'Forbidden: ResourceClaim "shared-h100" uses DeviceClass "h100.example.com", which may not be used in '
            'namespace "ml" (allowed: "gpu.example.com") (tenant p/t0, mode Enforce)',
        )
    ]


def test_translate_leaves_a_forbidden_extended_resource_for_the_validating_endpoint_to_deny() -> None:
    from webhook.admission.templates_writer import TemplateWriter

    class Writer(TemplateWriter):
        def __init__(self) -> None:
            self.applied: list[Any] = []

        def apply(self, template: dict[str, Any], seconds: float) -> None:
            self.applied.append(template)

    p = served(pod("p"))
    p["spec"]["containers"][0]["resources"] = {"limits": {"example.com/a100": "1"}}
    writer = Writer()
    allow = _config(
        {"namespaceSelector": {}}, endpoint="mutate", extended_resources="translate", templates=writer
    )
    assert "patch" in respond(p, SNAP, allow) and writer.applied  # translated where nothing forbids it
    writer.applied.clear()
    forbid = {"namespaceSelector": {}, "extendedResources": False}
    mutate = _config(forbid, endpoint="mutate", extended_resources="translate", templates=writer)
    response = respond(p, SNAP, mutate)
    assert response["allowed"] is True and "patch" not in response and not writer.applied
    validate = _config(forbid, extended_resources="translate")
    denied = respond(p, SNAP, validate)
    assert denied["allowed"] is False
    assert [f for f, _, _ in causes(denied)] == ["spec.containers[0].resources.limits[example.com/a100]"]
