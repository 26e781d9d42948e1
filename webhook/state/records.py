"""Parsed, immutable views of ResourceSlices and their devices, as the allocator reads them.

Quantities are held twice: as `Quantity` (for canonical output) and as exact integers in nano-units
(every parsed quantity is a multiple of 1n, so the integers are exact and arithmetic is cheap; values
too large to expand, like 1e9999, are compact `Big`s that behave like ints).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from webhook.model.bignum import Big
from webhook.model.cache import ClearingCache
from webhook.model.quantity import Quantity, parse_quantity

DeviceID = tuple[str, str, str]  # (driver, pool, device)
PoolID = tuple[str, str]  # (driver, pool)


def qty(v: Any) -> Quantity:
    """A quantity from API data; unparsable values (never in validated input) count as zero."""
    if isinstance(v, Quantity):
        return v
    try:
        return parse_quantity(v if isinstance(v, str | int | float) else str(v))
    except (ValueError, OverflowError):
        return parse_quantity("0")


def nano(q: Quantity) -> int | Big:
    """The exact value of a parsed quantity in units of 1n: an int, or a compact `Big` for values
    like 1e9999 (see webhook.model.bignum; they compare exactly and are never expanded in memory)."""
    return q.nano()


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


@dataclass(frozen=True, slots=True)
class Consumption:
    """One `consumesCounters[j]` entry: counter set, counters in nano-units, compatibility groups."""

    counter_set: str
    counters: tuple[tuple[str, int | Big], ...]
    groups: frozenset[str]


@dataclass(frozen=True, slots=True)
class Capacity:
    """One device capacity: its value and (DRAConsumableCapacity) requestPolicy."""

    value: Quantity
    value_n: int | Big
    default: Quantity | None
    valid_values: tuple[Quantity, ...] | None
    range_min: Quantity | None
    range_max: Quantity | None
    range_step: Quantity | None


@dataclass(frozen=True, slots=True)
class SliceInfo:
    """What a device needs to know about its slice (shared by the slice's devices; no back reference
    to the SliceRec, so a replaced slice is freed by reference counting, not by the cyclic collector)."""

    name: str
    per_device: bool
    node_name: str | None
    node_selector: dict[str, Any] | None
    skip_node_operations: tuple[str, ...] | None


@dataclass(eq=False, slots=True)
class DeviceRec:
    """One device of a slice. `key` changes whenever the slice changes (CEL caches are keyed by it)."""

    slice: SliceInfo
    index: int
    name: str
    id: DeviceID
    key: tuple[str, int, int]
    raw: dict[str, Any]
    attributes: dict[str, Any]
    capacity: dict[str, Capacity]
    consumes: tuple[Consumption, ...]
    allow_multi: bool
    taints: tuple[dict[str, Any], ...]
    binding_conditions: tuple[str, ...]
    binding_failure_conditions: tuple[str, ...]
    binds_to_node: bool
    node_name: str | None
    all_nodes: bool
    node_selector: dict[str, Any] | None

    @property
    def has_groups(self) -> bool:
        return any(c.groups for c in self.consumes)


@dataclass(eq=False, slots=True)
class SliceRec:
    """One ResourceSlice. `serial` is unique per applied version of the slice in one ClusterState."""

    name: str
    serial: int
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: dict[str, Any] | None
    all_nodes: bool
    per_device: bool
    counter_sets: tuple[tuple[str, tuple[tuple[str, int | Big], ...]], ...]
    skip_node_operations: tuple[str, ...] | None
    devices: list[DeviceRec]
    has_binding: bool = False
    has_groups: bool = False
    has_counters: bool = False

    @property
    def pool_id(self) -> PoolID:
        return (self.driver, self.pool)

    @property
    def uses_partitionable(self) -> bool:
        return self.per_device or bool(self.counter_sets)


def _capacity(cap: dict[str, Any]) -> Capacity:
    value = qty(cap.get("value", 0))
    policy = _dict(cap.get("requestPolicy"))
    default = qty(policy["default"]) if "default" in policy else None
    values = policy.get("validValues")
    valid_values = tuple(qty(v) for v in values) if isinstance(values, list) else None
    rng = _dict(policy.get("validRange")) if "validRange" in policy else None
    rmin = rmax = rstep = None
    if rng is not None:
        rmin = qty(rng["min"]) if "min" in rng else None
        rmax = qty(rng["max"]) if "max" in rng else None
        rstep = qty(rng["step"]) if "step" in rng else None
    return Capacity(value, nano(value), default, valid_values, rmin, rmax, rstep)


def _counters(m: Any) -> tuple[tuple[str, int | Big], ...]:
    return tuple((str(k), nano(qty(_dict(v).get("value", 0)))) for k, v in _dict(m).items())


def _plain_key(v: Any) -> Hashable | None:
    """A hashable key for a small JSON value (None when it is not plain: not worth interning)."""
    if v is None or isinstance(v, str | int | float | bool):
        return (type(v).__name__, v)
    if isinstance(v, dict) and len(v) <= 8:
        items = []
        for k, x in v.items():
            kx = _plain_key(x)
            if kx is None:
                return None
            items.append((k, kx))
        return ("d", tuple(sorted(items, key=lambda i: str(i[0]))))
    if isinstance(v, list) and len(v) <= 16:
        out = []
        for x in v:
            kx = _plain_key(x)
            if kx is None:
                return None
            out.append(kx)
        return ("l", tuple(out))
    return None


def _capacities(raw: Any, intern: ClearingCache[Hashable, Any] | None) -> dict[str, Capacity]:
    """A device's capacities. Devices with the same capacities (the usual case: every GPU of a slice
    has 80Gi) share one read-only dict of shared Capacity records when `intern` is given, which keeps
    the state small for the cyclic garbage collector (it walks every tracked object of a full pass)."""
    caps = _dict(raw)
    if intern is None or not caps:
        return {str(k): _capacity(_dict(v)) for k, v in caps.items()}
    key = _plain_key(caps) if len(caps) <= 8 else None
    if key is None:
        return {str(k): _capacity(_dict(v)) for k, v in caps.items()}
    hit = intern.get(key)
    if hit is None:
        hit = {str(k): _capacity(_dict(v)) for k, v in caps.items()}
        intern.put(key, hit, 200 + 300 * len(hit) + sum(len(str(k)) for k in hit))
    return hit  # type: ignore[no-any-return]


_NO_GROUPS: frozenset[str] = frozenset()


def _consumption(c: dict[str, Any]) -> Consumption:
    groups = _list(c.get("compatibilityGroups"))
    return Consumption(
        str(c.get("counterSet") or ""),
        _counters(c.get("counters")),
        frozenset(str(g) for g in groups) if groups else _NO_GROUPS,
    )


def _consumptions(raw: Any, intern: ClearingCache[Hashable, Any] | None) -> tuple[Consumption, ...]:
    """A device's consumesCounters; identical ones (the same partition profile on every GPU of a
    cluster) share one tuple of shared records when `intern` is given (see `_capacities`)."""
    entries = _list(raw)
    if not entries:
        return ()
    key = ("consumes", _plain_key(entries)) if intern is not None and len(entries) <= 16 else None
    if key is None or key[1] is None:
        return tuple(_consumption(_dict(c)) for c in entries)
    hit = intern.get(key)  # type: ignore[union-attr]
    if hit is None:
        hit = tuple(_consumption(_dict(c)) for c in entries)
        intern.put(key, hit, 200 + 400 * len(hit))  # type: ignore[union-attr]
    return hit  # type: ignore[no-any-return]


def parse_slice(
    obj: dict[str, Any], serial: int, intern: ClearingCache[Hashable, Any] | None = None
) -> SliceRec:
    """A `SliceRec` from a (validated, stripped) ResourceSlice; robust against missing fields. `intern`
    (bounded, owned by the caller) lets devices with identical capacities share their records."""
    meta = _dict(obj.get("metadata"))
    spec = _dict(obj.get("spec"))
    pool = _dict(spec.get("pool"))
    name = str(meta.get("name") or "")
    driver = str(spec.get("driver") or "")
    pool_name = str(pool.get("name") or "")
    skip = spec.get("skipNodeOperations")
    rec = SliceRec(
        name=name,
        serial=serial,
        driver=driver,
        pool=pool_name,
        generation=int(pool.get("generation") or 0),
        slice_count=int(pool.get("resourceSliceCount") or 0),
        node_name=spec.get("nodeName") or None,
        node_selector=spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else None,
        all_nodes=spec.get("allNodes") is True,
        per_device=spec.get("perDeviceNodeSelection") is True,
        counter_sets=tuple(
            (str(_dict(cs).get("name") or ""), _counters(_dict(cs).get("counters")))
            for cs in _list(spec.get("sharedCounters"))
        ),
        skip_node_operations=tuple(skip) if isinstance(skip, list) and skip else None,
        devices=[],
    )
    info = SliceInfo(name, rec.per_device, rec.node_name, rec.node_selector, rec.skip_node_operations)
    for i, d in enumerate(_list(spec.get("devices"))):
        d = _dict(d)
        dname = str(d.get("name") or "")
        consumes = _consumptions(d.get("consumesCounters"), intern)
        dev = DeviceRec(
            slice=info,
            index=i,
            name=dname,
            id=(driver, pool_name, dname),
            key=(name, serial, i),
            raw=d,
            attributes=_dict(d.get("attributes")),
            capacity=_capacities(d.get("capacity"), intern),
            consumes=consumes,
            allow_multi=d.get("allowMultipleAllocations") is True,
            taints=tuple(_dict(t) for t in _list(d.get("taints"))),
            binding_conditions=tuple(str(c) for c in _list(d.get("bindingConditions"))),
            binding_failure_conditions=tuple(str(c) for c in _list(d.get("bindingFailureConditions"))),
            binds_to_node=d.get("bindsToNode") is True,
            node_name=d.get("nodeName") or None,
            all_nodes=d.get("allNodes") is True,
            node_selector=d.get("nodeSelector") if isinstance(d.get("nodeSelector"), dict) else None,
        )
        rec.devices.append(dev)
        rec.has_binding = rec.has_binding or bool(dev.binding_conditions)
        rec.has_groups = rec.has_groups or dev.has_groups
        rec.has_counters = rec.has_counters or bool(consumes)
    return rec
