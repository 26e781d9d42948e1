"""What the server's background audit reads: the cluster's objects as one watch keeps them (a
`webhook.state.live.applier.WatchedStore`), each published version numbered, so an audit runs only when
something changed since the last one. Pods bound to a node are kept in short (what a report says of
them: name, node, phase); the others whole (the Pods an audit explains)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from webhook.state.live.listing import pod_summary

Key = tuple[str, str]  # (namespace or "", name) within a kind


class ObjectsSnapshot:
    def __init__(self, version: int, objects: Mapping[str, Mapping[Key, dict[str, Any]]]) -> None:
        self.version = version
        self._objects = objects

    def objects(self, kind: str) -> Mapping[Key, dict[str, Any]]:
        return self._objects.get(kind, {})

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._objects.items()}

    def everything(self, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        """The objects of `kinds`, kind by kind in that order."""
        return [obj for kind in kinds for obj in self.objects(kind).values()]


class AuditObjects:
    """One writer (the applier thread), readers through `snapshot()` (a copy per published version)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[Key, dict[str, Any]]] = {}
        self._dirty = False
        self._lock = threading.Lock()
        self._current = ObjectsSnapshot(0, {})

    def apply(self, obj: dict[str, Any]) -> None:
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        spec = obj.get("spec")
        if kind == "Pod" and isinstance(spec, dict) and spec.get("nodeName"):
            obj = pod_summary(obj)
        if self._objects.get(kind, {}).get(key) != obj:
            self._objects.setdefault(kind, {})[key] = obj
            self._dirty = True

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        if self._objects.get(kind, {}).pop((namespace or "", name), None) is not None:
            self._dirty = True

    def publish(self) -> ObjectsSnapshot:
        if self._dirty:
            copy = {kind: dict(objs) for kind, objs in self._objects.items()}
            with self._lock:
                self._current = ObjectsSnapshot(self._current.version + 1, copy)
            self._dirty = False
        return self._current

    def snapshot(self) -> ObjectsSnapshot:
        with self._lock:
            return self._current
