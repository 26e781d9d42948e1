"""How a cluster state names an object: `ObjectKey(kind, namespace, name)`, the namespace "" for
cluster-scoped kinds whatever the metadata says."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["DRA_KINDS", "NAMESPACED", "ObjectKey", "object_key"]

# the resource.k8s.io kinds draguard validates
DRA_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate", "Pod"})  # of the kinds a state holds


class ObjectKey(NamedTuple):
    kind: str
    namespace: str  # "" for a cluster-scoped kind
    name: str


def object_key(obj: dict[str, Any]) -> ObjectKey:
    """The key of `obj` ("" for what is missing or not a string)."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name")
    return ObjectKey(
        kind if isinstance(kind, str) else "",
        ns if kind in NAMESPACED and isinstance(ns, str) else "",
        name if isinstance(name, str) else "",
    )
