"""The kinds the live state lists and watches, and the form an object is kept in.

Objects from the API server are stored objects: nothing is validated or dropped. What is left out is what
no part of draguard reads and what costs memory: `metadata.managedFields` of every object, the
`kubectl.kubernetes.io/last-applied-configuration` annotation (a second copy of the object), and for the
kinds draguard reads only a little of (Nodes, Namespaces) everything else. A list's items carry no
kind/apiVersion on the wire; they are set here.

DeviceTaintRules are served as `resource.k8s.io/v1` from 1.37 only: a 1.36 cluster serves them as v1beta2,
a 1.35 cluster as v1alpha3 (each when enabled). `watched_for(version)` watches the version that cluster
serves, and `kept` converts such objects to v1 as the API server would (`webhook.convert`), so the state
holds v1 objects only. `POLICIES` is draguard's own kind, watched beside them into its own store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from webhook.config import policyobject
from webhook.convert import convertible, to_v1

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NODE_STATUS_KEPT = ("allocatable", "capacity", "declaredFeatures")  # extended resources, node features
META_KEPT_SMALL = ("name", "uid", "labels", "creationTimestamp")  # Nodes and Namespaces


@dataclass(frozen=True)
class WatchedKind:
    kind: str  # "ResourceSlice"
    api_version: str  # "resource.k8s.io/v1"
    plural: str  # "resourceslices"
    namespaced: bool

    @property
    def path(self) -> str:
        """The collection across all namespaces."""
        group, _, version = self.api_version.rpartition("/")
        prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        return f"{prefix}/{self.plural}"


WATCHED = (
    WatchedKind("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
    WatchedKind("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
    WatchedKind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
    WatchedKind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True),
    WatchedKind("DeviceTaintRule", "resource.k8s.io/v1", "devicetaintrules", False),
    WatchedKind("Node", "v1", "nodes", False),
    WatchedKind("Namespace", "v1", "namespaces", False),
)
BY_NAME = {k.kind: k for k in WATCHED}
# draguard's own policies (`serve --state cluster`): watched beside the DRA kinds, into their own store
POLICIES = WatchedKind(policyobject.KIND, policyobject.API_VERSION, policyobject.PLURAL, False)
TAINT_RULES_SERVED_AS = {"1.35": "resource.k8s.io/v1alpha3", "1.36": "resource.k8s.io/v1beta2"}  # else v1


def watched_for(k8s_version: str) -> tuple[WatchedKind, ...]:
    """The kinds to list and watch on a cluster of that Kubernetes version (its DeviceTaintRule version)."""
    served_as = TAINT_RULES_SERVED_AS.get(k8s_version)
    if served_as is None:
        return WATCHED
    return tuple(replace(k, api_version=served_as) if k.kind == "DeviceTaintRule" else k for k in WATCHED)


def kept(kind: WatchedKind, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the state keeps it (a new top-level dict and metadata; the rest is shared with
    `obj`, which the caller hands over)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    if kind.kind in ("Node", "Namespace"):
        small = {k: meta[k] for k in META_KEPT_SMALL if k in meta}
        out: dict[str, Any] = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": small}
        if kind.kind == "Node":
            spec, status = obj.get("spec"), obj.get("status")
            if isinstance(spec, dict):
                out["spec"] = {k: v for k, v in spec.items() if k in ("taints", "unschedulable")}
            if isinstance(status, dict):
                out["status"] = {k: status[k] for k in NODE_STATUS_KEPT if k in status}
        return out
    new_meta = {k: v for k, v in meta.items() if k != "managedFields"}
    annotations = new_meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        rest = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        if rest:
            new_meta["annotations"] = rest
        else:
            del new_meta["annotations"]
    out = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    stored = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": new_meta, **out}
    if convertible(kind.api_version, kind.kind):
        return to_v1(stored).obj
    return stored


def key_of(kind: WatchedKind, obj: dict[str, Any]) -> tuple[str, str]:
    """(namespace or "", name) as the StateStore names the object within its kind."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace") if kind.namespaced else ""
    name = meta.get("name")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else "")
