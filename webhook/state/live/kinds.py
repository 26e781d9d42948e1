"""The kinds the live state lists and watches, and the form an object is kept in.

Objects from the API server are stored objects: nothing is validated or dropped. What is left out is what
no part of draguard reads and what costs memory: `metadata.managedFields` of every object, the
`kubectl.kubernetes.io/last-applied-configuration` annotation (a second copy of the object), and for the
kinds draguard reads only a little of (Nodes, Namespaces) everything else. A list's items carry no
kind/apiVersion on the wire; they are set here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": new_meta, **out}


def key_of(kind: WatchedKind, obj: dict[str, Any]) -> tuple[str, str]:
    """(namespace or "", name) as the StateStore names the object within its kind."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace") if kind.namespaced else ""
    name = meta.get("name")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else "")
