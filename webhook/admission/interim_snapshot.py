"""TEMPORARY adapter: a read-only cluster snapshot over today's `ClusterState` and batch `Inventory`, with
the interface DESIGN-7 §1 gives `webhook.state.store.Snapshot` (state, version, counts, objects,
cross_object_violations). It lets the admission core and its tests run until branch `state` lands the
real store; it is deleted then. Its cross-object check builds a small Inventory of the stored objects
the rules compare the object with (the slices of its pool, the classes, the claims of its namespace).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from typing import Any

from webhook.context import Context
from webhook.defaults import apply_defaults
from webhook.model.violation import Violation
from webhook.profile import Profile
from webhook.rules import catalog  # noqa: F401  (registers every rule)
from webhook.rules.inventory import Inventory, extract_record
from webhook.rules.registry import INVENTORY_RULES
from webhook.state import ClusterState

KINDS = (
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceTaintRule",
    "Node",
    "Pod",
)
_NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate", "Pod")


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = _dict(obj.get("metadata"))
    name = meta.get("name")
    name = name if isinstance(name, str) else ""
    if obj.get("kind") not in _NAMESPACED:
        return "", name
    ns = meta.get("namespace")
    return (ns if isinstance(ns, str) and ns else "default"), name


def _pool_of(obj: dict[str, Any]) -> tuple[str, str]:
    spec = _dict(obj.get("spec"))
    return str(spec.get("driver") or ""), str(_dict(spec.get("pool")).get("name") or "")


class InterimSnapshot:
    """An immutable view of a set of objects (see the module docstring)."""

    def __init__(self, objs: Iterable[dict[str, Any]], profile: Profile, version: int = 1) -> None:
        self.version = version
        self.published_at = time.monotonic()
        self.profile = profile
        stored: list[dict[str, Any]] = []
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in KINDS}
        for obj in objs:
            kind = obj.get("kind")
            if kind not in self._objects:
                continue
            obj = copy.deepcopy(obj)
            if kind != "Node":
                apply_defaults(obj)
            self._objects[str(kind)][_key(obj)] = obj
            stored.append(obj)
        self.state = ClusterState.from_objects(stored, profile)
        self._pools: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for s in self._objects["ResourceSlice"].values():
            self._pools.setdefault(_pool_of(s), []).append(s)
        self._by_namespace: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for kind in ("ResourceClaim", "ResourceClaimTemplate"):
            for (ns, _), o in self._objects[kind].items():
                self._by_namespace.setdefault((kind, ns), []).append(o)

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._objects.items()}

    def objects(self, kind: str) -> Mapping[tuple[str, str], dict[str, Any]]:
        return self._objects.get(kind, {})

    def _related(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        kind = obj.get("kind")
        _, name = _key(obj)
        if kind == "ResourceSlice":
            return [s for s in self._pools.get(_pool_of(obj), []) if _key(s)[1] != name]
        if kind == "DeviceClass":
            return [c for (_, n), c in self._objects["DeviceClass"].items() if n != name]
        if kind in ("ResourceClaim", "ResourceClaimTemplate"):
            return list(self._objects["DeviceClass"].values())
        if kind == "Pod":
            ns = _key(obj)[0]
            return self._by_namespace.get(("ResourceClaim", ns), []) + self._by_namespace.get(
                ("ResourceClaimTemplate", ns), []
            )
        return []

    def cross_object_violations(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[Violation]:
        """The inventory rules' findings on `obj` as if it replaced `old` (same name) in this snapshot."""
        related = self._related(obj)
        records: list[Any] = [extract_record(o, i) for i, o in enumerate(related)]
        me = len(records)
        records.append(extract_record(obj, me))
        if records[me] is None:
            return []
        inventory = Inventory(records)
        ctx = Context(profile=self.profile, old=old, lint=False)
        out: list[Violation] = []
        for rule, fn in INVENTORY_RULES:
            for f in fn(inventory, ctx):
                if f.index == me:
                    out.append(Violation(rule.id, rule.severity, str(f.field), f.message))
        return out
