"""The validating endpoint on real-shaped AdmissionReview requests: every handled kind and operation, the
exact causes of denials, cross-object invariants against the snapshot, the status subresource,
ratcheting on UPDATE, and what is let through untouched."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from admission_fixtures import (
    admission_review,
    causes,
    claim,
    cluster_objects,
    exactly,
    find,
    pod,
    respond,
    served,
    snapshot,
)

from webhook.admission import AdmissionConfig, review
from webhook.admission.validating import RATCHETED

OBJS = cluster_objects()
SNAP = snapshot()
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _slice(name: str = "gpu-node-2-gpu.example.com-q9w4z") -> dict[str, Any]:
    return find(OBJS, "ResourceSlice", name)


def _class(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def _template(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": [exactly("gpu", "gpu.example.com")]}}, **spec},
    }


def _rule(name: str, effect: str = "NoSchedule") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "gpu-node-1"},
            "taint": {"key": "example.com/drain", "effect": effect},
        },
    }


def _renamed_device(obj: dict[str, Any], name: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["spec"]["devices"][0]["name"] = name
    return obj


# -- valid objects of every kind pass, on CREATE and UPDATE --------------------------------------

VALID_CREATE = [
    ("ResourceSlice", _slice()),
    (
        "DeviceClass",
        _class("tpu.example.com", selectors=[{"cel": {"expression": 'device.driver == "tpu.example.com"'}}]),
    ),
    ("ResourceClaim", claim("one-h100", [exactly("gpu", "h100.example.com")])),
    ("ResourceClaimTemplate", _template("another-gpu")),
    ("DeviceTaintRule", _rule("drain-node-1")),
    ("Pod", pod("trainer", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])),
]


@pytest.mark.parametrize(("kind", "obj"), VALID_CREATE, ids=[k for k, _ in VALID_CREATE])
def test_valid_create_is_allowed_without_warnings(kind: str, obj: dict[str, Any]) -> None:
    response = respond(served(obj), SNAP)
    if kind == "DeviceTaintRule":  # every one gets its blast radius (webhook/admission/taints.py)
        assert response.pop("warnings") == [
            "DeviceTaintRule drain-node-1 (NoSchedule): taints 4 device(s); effect NoSchedule: no Pod is "
            "evicted (admission.taint-blast-radius)"
        ]
        assert '"devices":4' in response.pop("auditAnnotations")["taint-blast-radius"]
    assert response == {"uid": response["uid"], "allowed": True}


VALID_UPDATE = [
    ("ResourceSlice", _slice(), lambda o: o["metadata"].setdefault("labels", {}).update(tier="gold")),
    (
        "DeviceClass",
        find(OBJS, "DeviceClass", "gpu.example.com"),
        lambda o: o["spec"]["selectors"].append(
            {"cel": {"expression": "device.attributes['gpu.example.com'].index >= 0"}}
        ),
    ),
    (
        "ResourceClaim",
        find(OBJS, "ResourceClaim", "shared-h100"),
        lambda o: o["metadata"].update(labels={"a": "b"}),
    ),
    (
        "ResourceClaimTemplate",
        find(OBJS, "ResourceClaimTemplate", "one-gpu"),
        lambda o: o["metadata"].update(labels={"a": "b"}),
    ),
    (
        "DeviceTaintRule",
        find(OBJS, "DeviceTaintRule", "h100-maintenance"),
        lambda o: o["spec"]["taint"].update(effect="NoSchedule"),
    ),
]


@pytest.mark.parametrize(("kind", "old", "change"), VALID_UPDATE, ids=[k for k, _, _ in VALID_UPDATE])
def test_valid_update_is_allowed(kind: str, old: dict[str, Any], change: Any) -> None:
    stored = served(old)
    new = copy.deepcopy(stored)
    change(new)
    response = respond(new, SNAP, operation="UPDATE", old=stored)
    assert response["allowed"] is True and "status" not in response
    if kind == "DeviceTaintRule":  # every one gets its blast radius (webhook/admission/taints.py)
        assert response.pop("warnings") == [
            "DeviceTaintRule h100-maintenance (NoSchedule): taints 1 device(s); effect NoSchedule: no Pod is "
            "evicted (admission.taint-blast-radius)"
        ]
    assert not response.get("warnings")


# -- denials: exact causes, shaped as the API server's Invalid errors ----------------------------

INVALID = [
    (
        "slice-device-name",
        _renamed_device(
            {
                **_slice(),
                "metadata": {"name": "gpu-node-4-slice"},
                "spec": {
                    **_slice()["spec"],
                    "nodeName": "gpu-node-4",
                    "pool": {"name": "gpu-node-4", "generation": 1, "resourceSliceCount": 1},
                },
            },
            "GPU_0",
        ),
        [("spec.devices[0].name", "FieldValueInvalid", f'Invalid value: "GPU_0": {LABEL_MSG}')],
        "device.name",
    ),
    (
        "class-selector-syntax",
        _class("bad", selectors=[{"cel": {"expression": "device.driver = 'x'"}}]),
        [
            (
                "spec.selectors[0].cel.expression",
                "FieldValueInvalid",
                "Invalid value: \"device.driver = 'x'\": compilation failed: ERROR: <input>:1:15: Syntax error: "
                "token recognition error at: '= '\\n | device.driver = 'x'\\n | ..............^\\nERROR: "
                "<input>:1:17: Syntax error: extraneous input ''x'' expecting <EOF>\\n | device.driver = 'x'\\n"
                " | ................^",
            )
        ],
        "class.selectors",
    ),
    (
        "claim-request-name",
        claim("c", [exactly("BAD_", "gpu.example.com")]),
        [("spec.devices.requests[0].name", "FieldValueInvalid", f'Invalid value: "BAD_": {LABEL_MSG}')],
        "claim.requests",
    ),
    (
        "template-metadata-name",
        _template("t", metadata={"name": "x"}),
        [
            (
                "spec.metadata.name",
                "FieldValueForbidden",
                "Forbidden: cannot be set for a resource claim template",
            )
        ],
        "claim.template-metadata",
    ),
    (
        "taint-rule-effect",
        _rule("r", effect="Sometimes"),
        [
            (
                "spec.taint.effect",
                "FieldValueNotSupported",
                'Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"',
            )
        ],
        "taint-rule.taint",
    ),
]


@pytest.mark.parametrize(("name", "obj", "want", "rule"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_create_is_denied_with_exact_causes(
    name: str, obj: dict[str, Any], want: list[tuple[str, str, str]], rule: str
) -> None:
    response = respond(served(obj), SNAP)
    assert response["allowed"] is False
    status = response["status"]
    assert status["code"] == 422 and status["reason"] == "Invalid" and status["status"] == "Failure"
    assert status["details"]["kind"] == obj["kind"] and status["details"]["group"] == "resource.k8s.io"
    assert status["details"]["name"] == obj["metadata"]["name"]
    assert causes(response) == want
    field, _, message = want[0]
    assert (
        status["message"]
        == f'{obj["kind"]}.resource.k8s.io "{obj["metadata"]["name"]}" is invalid: {field}: {message}'
    )
    assert response["auditAnnotations"] == {"denied-by": rule}
    # kubectl prints every warning above the error: none may repeat the denial
    assert not any(rule in w or "denied" in w for w in response.get("warnings", []))


def test_pod_denial_has_no_group_and_names_the_pod() -> None:
    p = pod("p-bad", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    p["spec"]["containers"][0]["resources"] = {"claims": [{"name": "other"}]}
    response = respond(served(p), SNAP)
    assert response["allowed"] is False
    assert response["status"]["details"] == {
        "kind": "Pod",
        "name": "p-bad",
        "causes": [
            {
                "reason": "FieldValueNotFound",
                "message": 'Not found: "other": must be one of the names in pod.spec.resourceClaims: gpu',
                "field": "spec.containers[0].resources.claims[0]",
            }
        ],
    }
    assert response["status"]["message"] == (
        'Pod "p-bad" is invalid: spec.containers[0].resources.claims[0]: Not found: "other": must be one of the '
        "names in pod.spec.resourceClaims: gpu"
    )


def test_several_errors_are_listed_like_an_aggregate() -> None:
    c = claim("c", [exactly("BAD_", "gpu.example.com"), exactly("Worse", "gpu.example.com")])
    response = respond(served(c), SNAP)
    fields = [f for f, _, _ in causes(response)]
    assert fields == ["spec.devices.requests[0].name", "spec.devices.requests[1].name"]
    message = response["status"]["message"]
    assert message.startswith(
        'ResourceClaim.resource.k8s.io "c" is invalid: [spec.devices.requests[0].name: '
    )
    assert message.endswith(f'spec.devices.requests[1].name: Invalid value: "Worse": {LABEL_MSG}]')


def test_updates_see_the_old_object() -> None:
    stored = served(_slice())
    moved = copy.deepcopy(stored)
    moved["spec"]["nodeName"] = "gpu-node-9"
    response = respond(moved, SNAP, operation="UPDATE", old=stored)
    assert causes(response) == [
        ("spec.nodeName", "FieldValueInvalid", 'Invalid value: "gpu-node-9": field is immutable')
    ]
    claim_old = served(find(OBJS, "ResourceClaim", "shared-h100"))
    claim_new = copy.deepcopy(claim_old)
    claim_new["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "gpu.example.com"
    response = respond(claim_new, SNAP, operation="UPDATE", old=claim_old)
    assert [(f, r) for f, r, _ in causes(response)] == [("spec", "FieldValueInvalid")]
    assert causes(response)[0][2].endswith("field is immutable")


# -- the ResourceClaim status subresource -------------------------------------------------------

ALLOCATION = {
    "devices": {
        "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-node-2", "device": "gpu-0"}]
    },
    "nodeSelector": {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-node-2"]}]}
        ]
    },
}


def _status_update(
    result_request: str = "gpu", device: str = "gpu-0", old_status: dict | None = None
) -> dict:
    old = served(find(OBJS, "ResourceClaim", "shared-h100"))
    if old_status is not None:
        old["status"] = copy.deepcopy(old_status)
    new = copy.deepcopy(old)
    allocation = copy.deepcopy(ALLOCATION)
    allocation["devices"]["results"][0].update(request=result_request, device=device)
    new["status"] = {
        "allocation": allocation,
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "e4b3"}],
    }
    return respond(new, SNAP, operation="UPDATE", old=old, sub_resource="status")


def test_status_update_writing_a_valid_allocation_is_allowed() -> None:
    response = _status_update()
    assert response == {"uid": response["uid"], "allowed": True}


def test_status_update_with_an_unknown_request_is_denied() -> None:
    response = _status_update(result_request="nope")
    assert causes(response) == [
        (
            "status.allocation.devices.results[0].request",
            "FieldValueInvalid",
            'Invalid value: "nope": must be the name of a request in the claim or the name of a request and a '
            "subrequest separated by '/'",
        )
    ]
    assert response["auditAnnotations"] == {"denied-by": "claim-status.results"}


def test_status_update_changing_an_allocation_is_denied() -> None:
    response = _status_update(device="gpu-1", old_status={"allocation": ALLOCATION})
    assert [(f, r) for f, r, _ in causes(response)] == [("status.allocation", "FieldValueInvalid")]
    assert "field is immutable (an allocation is written once" in causes(response)[0][2]


def test_main_resource_update_is_not_judged_on_the_stored_status() -> None:
    """Removing the finalizer of a claim whose stored status has a problem: the API server copies status
    from the stored object on a main-resource UPDATE, so the problem is not this request's doing."""
    stored = served(find(OBJS, "ResourceClaim", "training-a"))
    stored["status"]["allocation"]["devices"]["results"][0]["request"] = "nope"
    new = copy.deepcopy(stored)
    new["metadata"]["finalizers"] = []
    response = respond(new, SNAP, operation="UPDATE", old=stored)
    assert response["allowed"] is True


# -- cross-object invariants against the snapshot ------------------------------------------------


def test_a_slice_duplicating_a_device_of_its_pool_is_denied() -> None:
    extra = _slice()
    extra["metadata"] = {"name": "gpu-node-2-extra"}
    extra["spec"]["devices"] = extra["spec"]["devices"][:1]
    response = respond(served(extra), SNAP)
    assert causes(response) == [
        (
            "spec.devices[0].name",
            "FieldValueDuplicate",
            'Duplicate value: "gpu-0": slice "gpu-node-2-gpu.example.com-q9w4z" of pool "gpu-node-2" of driver '
            "gpu.example.com at generation 1 already has a device of this name; the scheduler marks the whole "
            "pool invalid",
        )
    ]
    assert response["auditAnnotations"] == {"denied-by": "pool.duplicate-device"}


def test_a_slice_replacing_itself_is_not_its_own_duplicate() -> None:
    stored = served(_slice())
    new = copy.deepcopy(stored)
    new["spec"]["devices"][0]["attributes"]["index"] = {"int": 7}
    assert respond(new, SNAP, operation="UPDATE", old=stored)["allowed"] is True


def test_cross_object_warnings() -> None:
    clash = respond(served(_class("a100-too", extendedResourceName="example.com/a100")), SNAP)
    assert clash["allowed"] is True
    assert clash["warnings"] == [
        'spec.extendedResourceName: extendedResourceName "example.com/a100" is also declared by DeviceClass '
        '"a100.example.com": this class wins (newest creationTimestamp, then the smaller name); give each class '
        "its own name (class.extended-resource-name-clash)"
    ]
    unknown = respond(served(claim("c", [exactly("tpu", "tpu.example.com")])), SNAP)
    assert unknown["allowed"] is True
    assert unknown["warnings"][0] == (
        'spec.devices.requests[0].exactly.deviceClassName: DeviceClass "tpu.example.com" is not in the cluster state (it '
        'has "a100.example.com", "gpu.example.com", "h100.example.com"); the claim cannot be allocated until that '
        "class exists (claim.unknown-device-class)"
    )
    missing = respond(served(pod("p", [{"name": "gpu", "resourceClaimName": "nope"}])), SNAP)
    assert missing["allowed"] is True
    assert missing["warnings"] == [
        'spec.resourceClaims[0].resourceClaimName: ResourceClaim "nope" is not in namespace "ml"; the Pod cannot '
        "start until it exists (Pods can only use claims of their own namespace) (pod.unknown-claim)"
    ]


def test_ratcheting_an_error_the_stored_object_already_has() -> None:
    """A slice stored with a device its pool already has: an update that keeps the problem is admitted
    with a warning; one that adds a new duplicate is denied for the new one only."""
    extra = _slice()
    extra["metadata"] = {"name": "gpu-node-2-extra"}
    extra["spec"]["devices"] = extra["spec"]["devices"][:1]
    stored = served(extra)
    snap = snapshot(cluster_objects() + [stored])
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"owner": "team-a"}
    response = respond(relabelled, snap, operation="UPDATE", old=stored)
    assert response["allowed"] is True
    assert response["warnings"] == [
        'spec.devices[0].name: Duplicate value: "gpu-0": slice "gpu-node-2-gpu.example.com-q9w4z" of pool '
        '"gpu-node-2" of driver gpu.example.com at generation 1 already has a device of this name; the scheduler '
        f"marks the whole pool invalid{RATCHETED} (pool.duplicate-device)"
    ]
    worse = copy.deepcopy(stored)
    worse["spec"]["devices"].append(copy.deepcopy(_slice()["spec"]["devices"][1]))
    response = respond(worse, snap, operation="UPDATE", old=stored)
    assert response["allowed"] is False
    assert [f for f, _, _ in causes(response)] == ["spec.devices[1].name"]
    assert any(w.startswith("spec.devices[0].name: Duplicate value") for w in response["warnings"])


# -- what is let through untouched --------------------------------------------------------------

UNTOUCHED = [
    ("delete-slice", dict(obj=None, operation="DELETE", old=served(_slice()))),
    (
        "delete-claim",
        dict(obj=None, operation="DELETE", old=served(find(OBJS, "ResourceClaim", "training-a"))),
    ),
    (
        "pod-update",
        dict(
            obj=served(pod("p", [{"name": "c", "resourceClaimName": "nope"}])),
            operation="UPDATE",
            old=served(pod("p", [{"name": "c", "resourceClaimName": "other"}])),
        ),
    ),
    (
        "configmap",
        dict(
            obj={
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "ml"},
                "data": {"a": "b"},
            }
        ),
    ),
    (
        "pod-binding-subresource",
        dict(
            obj=served(pod("p")), sub_resource="ephemeralcontainers", operation="UPDATE", old=served(pod("p"))
        ),
    ),
    (
        "slice-unknown-subresource",
        dict(obj=served(_slice()), sub_resource="scale", operation="UPDATE", old=served(_slice())),
    ),
]


@pytest.mark.parametrize(("name", "kw"), UNTOUCHED, ids=[c[0] for c in UNTOUCHED])
def test_operations_and_kinds_not_handled_are_allowed_untouched(name: str, kw: dict[str, Any]) -> None:
    obj = kw.pop("obj")
    response = respond(obj, SNAP, **kw)
    assert response == {"uid": response["uid"], "allowed": True}


def test_connect_is_allowed_untouched() -> None:
    ar = admission_review(
        {"apiVersion": "v1", "kind": "PodExecOptions", "command": ["sh"]},
        operation="CONNECT",
        kind=("", "v1", "Pod"),
    )
    ar["request"]["subResource"] = "exec"
    out = review(ar, SNAP, AdmissionConfig())
    assert out["response"] == {"uid": ar["request"]["uid"], "allowed": True}


def test_dry_run_gets_the_same_answer_and_changes_nothing() -> None:
    snap = snapshot()
    before = (snap.version, snap.state.version, snap.counts())
    bad = served(claim("c", [exactly("BAD_", "gpu.example.com")]))
    busy = served(claim("busy", [exactly("gpu", "a100.example.com")]))
    for obj in (bad, busy):
        wet = respond(obj, snap)
        dry = respond(obj, snap, dry_run=True)
        assert {**dry, "uid": ""} == {**wet, "uid": ""}
    assert (snap.version, snap.state.version, snap.counts()) == before


# -- admin access: the namespace label, when the state holds the Namespace ------------------------

ADMIN_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_MSG = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the "
    "containing namespace"
)


def _namespace(labels: dict[str, str] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "ml"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _admin_claim() -> dict[str, Any]:
    return claim(
        "debug", [exactly("plain", "gpu.example.com"), exactly("all", "gpu.example.com", adminAccess=True)]
    )


@pytest.mark.parametrize(
    ("namespace", "denied"),
    [
        (_namespace({"team": "ml"}), True),
        (_namespace(None), True),
        (_namespace({ADMIN_LABEL: "false"}), True),
        (_namespace({ADMIN_LABEL: "true"}), False),
        (None, False),  # the state does not know the namespace: unknown is never a denial
    ],
    ids=["other-label", "no-labels", "label-false", "label-true", "namespace-not-in-state"],
)
def test_admin_access_needs_the_namespace_label(namespace: dict[str, Any] | None, denied: bool) -> None:
    snap = snapshot(OBJS + ([namespace] if namespace is not None else []))
    assert (("", "ml") in snap.objects("Namespace")) is (namespace is not None)
    for obj in (_admin_claim(), _template("debug-t", spec={"devices": _admin_claim()["spec"]["devices"]})):
        response = respond(served(obj), snap)
        if not denied:
            assert response["allowed"] is True, response
            continue
        # upstream's AuthorizedForAdmin: the first such request, at spec.devices.requests[i].adminAccess
        # (for a template too)
        assert causes(response) == [
            ("spec.devices.requests[1].adminAccess", "FieldValueForbidden", ADMIN_MSG)
        ]
        assert response["status"]["details"]["kind"] == obj["kind"]


def test_a_new_allocation_with_admin_access_needs_the_namespace_label() -> None:
    old = served(find(OBJS, "ResourceClaim", "shared-h100"))
    new = copy.deepcopy(old)
    allocation = copy.deepcopy(ALLOCATION)
    allocation["devices"]["results"][0]["adminAccess"] = True
    new["status"] = {
        "allocation": allocation,
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "e4b3"}],
    }
    unlabelled = snapshot(OBJS + [_namespace({"team": "ml"})])
    response = respond(new, unlabelled, operation="UPDATE", old=old, sub_resource="status")
    assert causes(response) == [
        ("status.allocation.devices.results[0].adminAccess", "FieldValueForbidden", ADMIN_MSG)
    ]
    labelled = snapshot(OBJS + [_namespace({ADMIN_LABEL: "true"})])
    assert respond(new, labelled, operation="UPDATE", old=old, sub_resource="status")["allowed"] is True


def _examples_snapshot() -> Any:
    """The embedded default's state: `examples/` loaded as `draguard serve`'s state loader loads it."""
    from webhook.config.context import Context
    from webhook.config.profile import load_profile
    from webhook.server.loader import ManifestDirectory
    from webhook.state.store import StateStore

    profile = load_profile("1.37", {})
    directory = ManifestDirectory(str(EXAMPLES), Context(profile, lint=False))
    directory.scan()
    store = StateStore(profile)
    store.replace_all(directory.objects())
    return store.publish()


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_quick_starts_invalid_slice_is_denied_without_a_warning_repeating_it() -> None:
    """The README's denial (`examples/admission/slice-create-invalid.json`, against the embedded default's
    state): kubectl prints every warning above the error, so the Status and the audit annotation carry
    the denial and no warning repeats it."""
    body = json.loads((EXAMPLES / "admission" / "slice-create-invalid.json").read_text())
    response = review(body, _examples_snapshot(), AdmissionConfig())["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 422
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["spec.devices[0].name"]
    assert response["status"]["message"].startswith(
        'ResourceSlice.resource.k8s.io "node-3-gpu.example.com" is invalid: spec.devices[0].name: '
    )
    assert response["auditAnnotations"] == {"denied-by": "device.name"}
    assert "warnings" not in response
