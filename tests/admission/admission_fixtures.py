"""AdmissionReview requests as a v1.37 API server sends them, and the test cluster snapshot.

`served(obj)` adds what the API server has set before a validating webhook sees the object (uid,
creationTimestamp, resourceVersion, generation, managedFields); `admission_review(...)` wraps it with
every request field (uid, kind, resource, subResource, requestKind, requestResource,
requestSubResource, name, namespace, operation, userInfo, object, oldObject, dryRun, options)."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import yaml

from webhook.admission import AdmissionConfig, review
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.simulate.load import stored_objects
from webhook.state.store import Snapshot, StateStore

HERE = Path(__file__).resolve().parent
CLUSTER = HERE / "manifests" / "cluster.yaml"

RESOURCES = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
    "ConfigMap": "configmaps",
}
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")
USER = {
    "username": "kubernetes-admin",
    "groups": ["kubeadm:cluster-admins", "system:authenticated"],
    "extra": {"authentication.kubernetes.io/credential-id": ["X509SHA256=8e1b"]},
}
OPTIONS = {
    "CREATE": {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "kubectl-client-side-apply",
        "fieldValidation": "Strict",
    },
    "UPDATE": {
        "kind": "UpdateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "kubectl-edit",
        "fieldValidation": "Strict",
    },
    "DELETE": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"},
    "CONNECT": None,
}


def load(path: Path | str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d]


def cluster_objects() -> list[dict[str, Any]]:
    return load(CLUSTER)


def snapshot(objs: list[dict[str, Any]] | None = None, gates: dict[str, bool] | None = None) -> Snapshot:
    """The real store's snapshot of `objs` (default: the test cluster), stored as `draguard serve`'s
    state loader stores them (validated, defaulted; invalid ones left out)."""
    profile = load_profile("1.37", gates or {})
    store = StateStore(profile)
    store.replace_all(
        stored_objects(cluster_objects() if objs is None else objs, Context(profile, lint=False))
    )
    return store.publish()


def find(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name))


def served(obj: dict[str, Any], generation: int = 1) -> dict[str, Any]:
    """The object with the metadata the API server has set when a validating webhook sees it."""
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    meta.setdefault(
        "uid",
        str(uuid.uuid5(uuid.NAMESPACE_URL, f"{obj['kind']}/{meta.get('namespace')}/{meta.get('name')}")),
    )
    meta.setdefault("resourceVersion", "4711")
    meta.setdefault("creationTimestamp", "2026-12-01T10:00:00Z")
    if obj["kind"] != "Pod":
        meta.setdefault("generation", generation)
    meta.setdefault(
        "managedFields",
        [
            {
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "apiVersion": obj["apiVersion"],
                "time": "2026-12-01T10:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {}},
            }
        ],
    )
    return obj


def admission_review(
    obj: dict[str, Any] | None,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    sub_resource: str = "",
    dry_run: bool = False,
    uid: str | None = None,
    kind: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """The AdmissionReview the API server sends for this write (kind from the object unless given)."""
    subject = obj if obj is not None else old
    assert subject is not None
    if kind is None:
        group, _, version = subject["apiVersion"].rpartition("/")
        kind = (group, version, subject["kind"])
    group, version, k = kind
    meta = subject.get("metadata") or {}
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": k},
        "resource": {"group": group, "version": version, "resource": RESOURCES[k]},
        "requestKind": {"group": group, "version": version, "kind": k},
        "requestResource": {"group": group, "version": version, "resource": RESOURCES[k]},
        "name": meta.get("name", ""),
        "operation": operation,
        "userInfo": USER,
        "object": obj,
        "oldObject": old,
        "dryRun": dry_run,
        "options": OPTIONS[operation],
    }
    if sub_resource:
        request["subResource"] = sub_resource
        request["requestSubResource"] = sub_resource
    if k not in CLUSTER_SCOPED:
        request["namespace"] = meta.get("namespace", "default")
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request}


def respond(
    obj: dict[str, Any] | None,
    snap: Any = None,
    config: AdmissionConfig | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """`review()` of the request for `obj`; the response, after checking the envelope."""
    ar = admission_review(obj, **kw)
    out = review(ar, snap if snap is not None else snapshot(), config or AdmissionConfig())
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == ar["request"]["uid"]
    return out["response"]


def causes(response: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(field, reason, message) of every cause of a denial."""
    return [(c.get("field", ""), c["reason"], c["message"]) for c in response["status"]["details"]["causes"]]


def claim(name: str, requests: list[dict[str, Any]], namespace: str = "ml", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": requests, **spec}},
    }


def exactly(name: str, cls: str, count: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count, **extra},
    }


def pod(
    name: str, claims: list[dict[str, Any]] | None = None, namespace: str = "ml", **spec: Any
) -> dict[str, Any]:
    """A Pod as the API server holds it after defaulting (the fields a webhook sees)."""
    container: dict[str, Any] = {
        "name": "main",
        "image": "registry.example.com/ml/trainer:1.0",
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }
    if claims:
        container["resources"] = {"claims": [{"name": c["name"]} for c in claims]}
    body: dict[str, Any] = {
        "containers": [container],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        **spec,
    }
    if claims:
        body["resourceClaims"] = claims
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }
