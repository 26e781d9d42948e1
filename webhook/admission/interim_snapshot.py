"""TEMPORARY adapter: a `webhook.state.store.Snapshot` plus the `objects(kind)` accessor DESIGN-7 §1 asks
of it for admission-time feasibility (a Pod's named claims and templates, the Nodes' allocatable, the
classes). Everything else — the engine's state, counts, the cross-object invariants — is the real
store's. Removed once the store's Snapshot offers `objects()` itself; until then the tests and the bench
build their snapshot here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from webhook.defaults import apply_defaults
from webhook.model.violation import Violation
from webhook.profile import Profile
from webhook.state.store import StateStore

OBJECT_KINDS = (
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceTaintRule",
    "Node",
)
_NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate")


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    raw = obj.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = meta.get("name")
    name = name if isinstance(name, str) else ""
    if obj.get("kind") not in _NAMESPACED:
        return "", name
    ns = meta.get("namespace")
    return (ns if isinstance(ns, str) and ns else "default"), name


class InterimSnapshot:
    """The store's snapshot of `objs` (defaulted as the API server stores them) with `objects(kind)`."""

    def __init__(self, objs: Iterable[dict[str, Any]], profile: Profile, version: int | None = None) -> None:
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in OBJECT_KINDS}
        stored: list[dict[str, Any]] = []
        for obj in objs:
            kind = obj.get("kind")
            if kind not in self._objects:
                continue
            obj = copy.deepcopy(obj)
            if kind != "Node":
                apply_defaults(obj)
            if kind in _NAMESPACED:
                obj["metadata"].setdefault("namespace", "default")
            self._objects[str(kind)][_key(obj)] = obj
            stored.append(obj)
        store = StateStore(profile)
        store.replace_all(stored)
        self._snapshot = store.publish()
        self.state = self._snapshot.state
        self.version = self._snapshot.version if version is None else version
        self.published_at = self._snapshot.published_at

    def counts(self) -> dict[str, int]:
        return self._snapshot.counts()

    def cross_object_violations(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[Violation]:
        return self._snapshot.cross_object_violations(obj, old)

    def objects(self, kind: str) -> Mapping[tuple[str, str], dict[str, Any]]:
        return self._objects.get(kind, {})
