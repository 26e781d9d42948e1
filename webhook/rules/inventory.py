"""Compact per-object records for the cross-object (inventory) rules, and the `Inventory` holding them.

`extract_record` runs per object (in worker processes): it keeps only what the cross-object rules need,
as small picklable values. `Inventory(records)` is built once per run from the records in input order;
a record's position in that list is the index an `InventoryFinding` names (None entries are objects
without a record).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")


class Consumption(NamedTuple):
    """One `consumesCounters[j]` entry of a device: the set, its counters (quantity strings), groups.

    Device and consumption records are tuples: a slice holds many, and they cross the process
    boundary (tuples pickle several times faster than slotted dataclasses)."""

    counter_set: str
    counters: tuple[tuple[str, str], ...]
    groups: tuple[str, ...]


class DeviceRec(NamedTuple):
    name: str
    consumes: tuple[Consumption, ...]


@dataclass(frozen=True, slots=True)
class SliceRec:
    index: int
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node: str  # nodeName, "allNodes", "nodeSelector", "perDevice" or ""
    counter_sets: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (set name, ((counter, qty), ...))
    devices: tuple[DeviceRec, ...]
    kind: str = "ResourceSlice"


@dataclass(frozen=True, slots=True)
class ClassRec:
    index: int
    name: str
    extended_resource_name: str | None
    created: str | None  # metadata.creationTimestamp (RFC 3339) when present
    kind: str = "DeviceClass"


@dataclass(frozen=True, slots=True)
class ClaimRec:
    """A ResourceClaim or ResourceClaimTemplate: the DeviceClass names it uses, with their paths."""

    index: int
    kind: str
    namespace: str | None
    name: str
    class_refs: tuple[tuple[str, str], ...]  # (path, deviceClassName)


@dataclass(frozen=True, slots=True)
class PodRec:
    index: int
    namespace: str | None
    name: str
    claim_refs: tuple[tuple[str, str, str], ...]  # (path, "claim" | "template", name)
    kind: str = "Pod"


Record = SliceRec | ClassRec | ClaimRec | PodRec


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _int(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _qty(v: Any) -> str:
    """A counter's `value` as a string (YAML may give int/float)."""
    value = _dict(v).get("value")
    if isinstance(value, bool) or value is None:
        return ""
    return str(value)


def _counters(m: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), _qty(v)) for k, v in _dict(m).items())


def _slice_record(obj: dict[str, Any], index: int) -> SliceRec | None:
    spec = _dict(obj.get("spec"))
    pool = _dict(spec.get("pool"))
    driver, pool_name = _s(spec.get("driver")), _s(pool.get("name"))
    if not driver or not pool_name:
        return None
    if isinstance(spec.get("nodeName"), str):
        node = spec["nodeName"]
    else:
        node = next((k for k in ("allNodes", "nodeSelector", "perDeviceNodeSelection") if spec.get(k)), "")
    sets = tuple(
        (_s(cs.get("name")), _counters(cs.get("counters")))
        for cs in map(_dict, _list(spec.get("sharedCounters")))
    )
    devices = []
    seen: dict[Any, Any] = {}  # equal consumption lists of the slice's devices: one shared tuple
    for d in map(_dict, _list(spec.get("devices"))):
        consumes = tuple(
            Consumption(
                _s(c.get("counterSet")),
                _counters(c.get("counters")),
                tuple(g for g in _list(c.get("compatibilityGroups")) if isinstance(g, str)),
            )
            for c in map(_dict, _list(d.get("consumesCounters")))
        )
        devices.append(DeviceRec(_s(d.get("name")), seen.setdefault(consumes, consumes)))
    return SliceRec(
        index,
        _s(_dict(obj.get("metadata")).get("name")),
        driver,
        pool_name,
        _int(pool.get("generation")),
        _int(pool.get("resourceSliceCount"), 1),
        node,
        sets,
        tuple(devices),
    )


def _class_refs(spec: Any, prefix: str) -> tuple[tuple[str, str], ...]:
    refs: list[tuple[str, str]] = []
    for i, r in enumerate(_list(_dict(_dict(spec).get("devices")).get("requests"))):
        r = _dict(r)
        base = f"{prefix}.devices.requests[{i}]"
        name = _s(_dict(r.get("exactly")).get("deviceClassName"))
        if name:
            refs.append((f"{base}.exactly.deviceClassName", name))
        for j, sub in enumerate(_list(r.get("firstAvailable"))):
            name = _s(_dict(sub).get("deviceClassName"))
            if name:
                refs.append((f"{base}.firstAvailable[{j}].deviceClassName", name))
    return tuple(refs)


def extract_record(obj: dict[str, Any], index: int) -> Record | None:
    """The compact record of one (defaulted, stripped) object; None for kinds no inventory rule uses."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("kind")
    meta = _dict(obj.get("metadata"))
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) and meta.get("namespace") else None
    name = _s(meta.get("name"))
    if kind == "ResourceSlice":
        return _slice_record(obj, index)
    if kind == "DeviceClass":
        ern = _dict(obj.get("spec")).get("extendedResourceName")
        created = meta.get("creationTimestamp")
        return ClassRec(index, name, ern if isinstance(ern, str) else None, str(created) if created else None)
    if kind == "ResourceClaim":
        return ClaimRec(index, kind, ns, name, _class_refs(obj.get("spec"), "spec"))
    if kind == "ResourceClaimTemplate":
        return ClaimRec(index, kind, ns, name, _class_refs(_dict(obj.get("spec")).get("spec"), "spec.spec"))
    if kind == "Pod":
        refs: list[tuple[str, str, str]] = []
        for i, rc in enumerate(_list(_dict(obj.get("spec")).get("resourceClaims"))):
            rc = _dict(rc)
            for key, what in (("resourceClaimName", "claim"), ("resourceClaimTemplateName", "template")):
                if _s(rc.get(key)):
                    refs.append((f"spec.resourceClaims[{i}].{key}", what, rc[key]))
        return PodRec(index, ns, name, tuple(refs))
    return None


@dataclass
class Inventory:
    """The records of one run, in input order (None = object without a record)."""

    records: list[Any]
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def of_kind(self, kind: str) -> Iterator[tuple[int, Any]]:
        """(index, record) of every record of `kind`; index is the position in the run."""
        for i, r in enumerate(self.records):
            if r is not None and getattr(r, "kind", None) == kind:
                yield i, r

    def has_kind(self, kind: str) -> bool:
        return any(True for _ in self.of_kind(kind))

    def memo(self, key: str, compute: Callable[[Inventory], T]) -> T:
        """Compute a derived view once per inventory (shared by several rules)."""
        if key not in self._memo:
            self._memo[key] = compute(self)
        return self._memo[key]  # type: ignore[no-any-return]
