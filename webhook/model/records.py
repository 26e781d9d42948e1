"""The one record model of the objects draguard keeps across requests: what the cross-object rules
(webhook.state.inventory) and the allocation engine (webhook.state, webhook.engine) read, parsed once per
object version. Records are immutable once built.

A ResourceSlice's record holds its pool facts (driver, pool, generation, counts, placement, counter sets,
device names and counter consumption) and, when parsed with `detail=True` (every record of a cluster
state), what the allocator reads per device (attributes, capacities, taints, binding conditions).
`draguard validate` parses with `detail=False` in its worker processes: the rules need only the pool
facts, and those records cross the process boundary cheaply.

Quantities are exact integers in nano-units (every parsed quantity is a multiple of 1n; values too large
to expand, like 1e9999, are compact `Big`s that behave like ints), with the text as written kept beside
counters for the rules' messages.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from webhook.model.bignum import Big, Nano
from webhook.model.cache import ClearingCache
from webhook.model.plain import as_dict, as_list
from webhook.model.quantity import Quantity, parse_quantity

DeviceID = tuple[str, str, str]  # (driver, pool, device)
PoolID = tuple[str, str]  # (driver, pool)
Intern = ClearingCache[Hashable, Any] | dict[Hashable, Any]


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


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _int(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _text(v: Any) -> str:
    """A counter's `value` as written (YAML may give an int or a float); "" when absent."""
    value = as_dict(v).get("value")
    if isinstance(value, bool) or value is None:
        return ""
    return str(value)


class Consumption(NamedTuple):
    """One `consumesCounters[j]` entry: counter set, counters in nano-units (the engine), compatibility
    groups, and the counters' quantities as written (the rules' messages)."""

    counter_set: str
    counters: tuple[tuple[str, Nano], ...]
    groups: frozenset[str]
    texts: tuple[tuple[str, str], ...]


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


_EMPTY: dict[str, Any] = {}  # the shared (never mutated) empty mapping of devices parsed without detail


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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # a plain tuple of the fields: pickles several times faster than the slots' default state
        return (_device, tuple(getattr(self, f) for f in _DEVICE_FIELDS))


_DEVICE_FIELDS = DeviceRec.__slots__


def _device(*values: Any) -> DeviceRec:
    return DeviceRec(*values)


@dataclass(eq=False, slots=True)
class SliceRec:
    """One ResourceSlice version. `serial` is unique per parsed version within one state (0 in a
    validate run); `detail` says whether the devices carry what the allocator reads."""

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
    counter_sets: tuple[tuple[str, tuple[tuple[str, Nano], ...]], ...]
    set_texts: tuple[tuple[tuple[str, str], ...], ...]  # counter_sets[j]'s quantities as written
    skip_node_operations: tuple[str, ...] | None
    devices: tuple[DeviceRec, ...]
    has_binding: bool = False
    has_groups: bool = False
    has_counters: bool = False
    detail: bool = True

    @property
    def pool_id(self) -> PoolID:
        return (self.driver, self.pool)

    @property
    def uses_partitionable(self) -> bool:
        return self.per_device or bool(self.counter_sets)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if self.detail:
            return (_slice, tuple(getattr(self, f) for f in _SLICE_FIELDS))
        # validate's records cross the process boundary per file: device names and consumption only
        # (the consumption tuples are shared, so pickle writes each distinct one once)
        head = tuple(getattr(self, f) for f in _SLICE_FIELDS if f != "devices")
        return (
            _lean_slice,
            (head, tuple(d.name for d in self.devices), tuple(d.consumes for d in self.devices)),
        )

    @property
    def placement(self) -> str:
        """The node this slice is for, or which node-independent field it uses ("" = none of them)."""
        if self.node_name:
            return self.node_name
        if self.all_nodes:
            return "allNodes"
        if self.node_selector is not None:
            return "nodeSelector"
        return "perDeviceNodeSelection" if self.per_device else ""


_SLICE_FIELDS = SliceRec.__slots__


def _slice(*values: Any) -> SliceRec:
    return SliceRec(*values)


def _lean_slice(head: tuple[Any, ...], names: tuple[str, ...], consumes: tuple[Any, ...]) -> SliceRec:
    fields = dict(zip((f for f in _SLICE_FIELDS if f != "devices"), head, strict=True))
    rec = SliceRec(devices=(), **fields)
    rec.devices = _lean_devices(rec, names, consumes)
    return rec


def _lean_devices(
    rec: SliceRec, names: Iterable[str], consumes: Iterable[tuple[Consumption, ...]]
) -> tuple[DeviceRec, ...]:
    """Devices parsed without detail: name, identity and consumption."""
    info = SliceInfo(rec.name, rec.per_device, rec.node_name, rec.node_selector, rec.skip_node_operations)
    driver, pool, name, serial = rec.driver, rec.pool, rec.name, rec.serial
    return tuple(
        DeviceRec(
            info,
            i,
            n,
            (driver, pool, n),
            (name, serial, i),
            _EMPTY,
            _EMPTY,
            _EMPTY,
            c,
            False,
            (),
            (),
            (),
            False,
            None,
            False,
            None,
        )  # fmt: skip
        for i, (n, c) in enumerate(zip(names, consumes, strict=True))
    )


def _capacity(cap: dict[str, Any]) -> Capacity:
    value = qty(cap.get("value", 0))
    policy = as_dict(cap.get("requestPolicy"))
    default = qty(policy["default"]) if "default" in policy else None
    values = policy.get("validValues")
    valid_values = tuple(qty(v) for v in values) if isinstance(values, list) else None
    rng = as_dict(policy.get("validRange")) if "validRange" in policy else None
    rmin = rmax = rstep = None
    if rng is not None:
        rmin = qty(rng["min"]) if "min" in rng else None
        rmax = qty(rng["max"]) if "max" in rng else None
        rstep = qty(rng["step"]) if "step" in rng else None
    return Capacity(value, nano(value), default, valid_values, rmin, rmax, rstep)


def _counters(m: Any) -> tuple[tuple[tuple[str, Nano], ...], tuple[tuple[str, str], ...]]:
    """(counters in nano-units, counters as written) of a `counters` map."""
    items = as_dict(m).items()
    return (
        tuple((str(k), nano(qty(as_dict(v).get("value", 0)))) for k, v in items),
        tuple((str(k), _text(v)) for k, v in items),
    )


def _plain_key(v: Any, depth: int = 0) -> Hashable | None:
    """A hashable key for a small JSON value (None when it is not plain or nests more than 8 levels: not
    worth interning)."""
    if v is None or isinstance(v, str | int | float | bool):
        return (type(v).__name__, v)
    if depth >= 8:
        return None
    if isinstance(v, dict) and len(v) <= 8:
        items = []
        for k, x in v.items():
            kx = _plain_key(x, depth + 1)
            if kx is None:
                return None
            items.append((k, kx))
        return ("d", tuple(sorted(items, key=lambda i: str(i[0]))))
    if isinstance(v, list) and len(v) <= 16:
        out = []
        for x in v:
            kx = _plain_key(x, depth + 1)
            if kx is None:
                return None
            out.append(kx)
        return ("l", tuple(out))
    return None


def _capacity_key(caps: dict[str, Any]) -> Hashable | None:
    """The interning key of a device's capacities: the usual `{name: {value: q}}` shape is keyed by its
    (name, value) pairs (cheap); anything else by its plain form."""
    key: list[Any] = ["c"]
    for k, v in caps.items():
        if type(v) is not dict or len(v) != 1:
            return _plain_key(caps) if len(caps) <= 8 else None
        value = v.get("value")
        t = type(value)
        if t is not str and t is not int:
            return _plain_key(caps) if len(caps) <= 8 else None
        key.append(k)
        key.append(value if t is str else ("i", value))
    return tuple(key)


def _capacities(raw: Any, intern: Intern | None) -> dict[str, Capacity]:
    """A device's capacities. Devices with the same capacities (the usual case: every GPU of a slice
    has 80Gi) share one read-only dict of shared Capacity records when `intern` is given, which keeps
    the state small for the cyclic garbage collector (it walks every tracked object of a full pass)."""
    caps = as_dict(raw)
    if intern is None or not caps or len(caps) > 8:
        return {str(k): _capacity(as_dict(v)) for k, v in caps.items()}
    key = _capacity_key(caps)
    if key is None:
        return {str(k): _capacity(as_dict(v)) for k, v in caps.items()}
    hit = intern.get(key)
    if hit is None:
        hit = {str(k): _capacity(as_dict(v)) for k, v in caps.items()}
        _put(intern, key, hit, 200 + 300 * len(hit) + sum(len(str(k)) for k in hit))
    return hit  # type: ignore[no-any-return]


def _put(intern: Intern, key: Hashable, value: Any, nbytes: int) -> None:
    if isinstance(intern, ClearingCache):
        intern.put(key, value, nbytes)
    else:
        intern[key] = value


_NO_GROUPS: frozenset[str] = frozenset()


def _consumption_key(c: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies a consumesCounters entry: set name, counters as written, groups (the hot path
    of parsing a partitioned slice: one per device, so written out rather than with helpers)."""
    name = c.get("counterSet")
    counters = c.get("counters")
    items: list[tuple[str, str]] = []
    if type(counters) is dict:
        for k, v in counters.items():
            value = v.get("value") if type(v) is dict else None
            t = type(value)
            text: str = value if t is str else ("" if value is None or t is bool else str(value))  # type: ignore[assignment]
            items.append((k if type(k) is str else str(k), text))
    groups = c.get("compatibilityGroups")
    return (
        name if type(name) is str else "",
        tuple(items),
        tuple(g for g in groups if type(g) is str) if type(groups) is list else (),
    )


def _consumption(key: tuple[Any, ...], c: dict[str, Any]) -> Consumption:
    counters, texts = _counters(c.get("counters"))
    return Consumption(key[0], counters, frozenset(key[2]) if key[2] else _NO_GROUPS, texts)


def _consumptions(raw: Any, intern: Intern) -> tuple[Consumption, ...]:
    """A device's consumesCounters; identical ones (the same partition profile on every GPU of a
    cluster) share one tuple of shared records (see `_capacities`)."""
    entries = as_list(raw)
    if not entries:
        return ()
    keys = tuple([_consumption_key(c if type(c) is dict else {}) for c in entries])
    hit = intern.get(keys)
    if hit is None:
        hit = tuple(_consumption(k, as_dict(c)) for k, c in zip(keys, entries, strict=True))
        _put(intern, keys, hit, 200 + 400 * len(hit))
    return hit  # type: ignore[no-any-return]


def parse_slice(
    obj: dict[str, Any], serial: int, intern: Intern | None = None, *, detail: bool = True
) -> SliceRec:
    """The record of a (validated, stripped) ResourceSlice; robust against missing or mistyped fields.
    `intern` (bounded, owned by the caller) lets devices with identical capacities and consumption share
    their records; `detail=False` leaves out what only the allocator reads."""
    meta = as_dict(obj.get("metadata"))
    spec = as_dict(obj.get("spec"))
    pool = as_dict(spec.get("pool"))
    name = _s(meta.get("name"))
    driver = _s(spec.get("driver"))
    pool_name = _s(pool.get("name"))
    skip = spec.get("skipNodeOperations")
    node_selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else None
    node_name = _s(spec.get("nodeName")) or None
    per_device = spec.get("perDeviceNodeSelection") is True
    skip_ops = tuple(skip) if isinstance(skip, list) and skip else None
    sets = []
    set_texts = []
    for cs in map(as_dict, as_list(spec.get("sharedCounters"))):
        counters, texts = _counters(cs.get("counters"))
        sets.append((_s(cs.get("name")), counters))
        set_texts.append(texts)
    info = SliceInfo(name, per_device, node_name, node_selector, skip_ops)
    local: Intern = intern if intern is not None else {}
    devices = []
    has_binding = has_groups = has_counters = False
    for i, d in enumerate(as_list(spec.get("devices"))):
        d = as_dict(d)
        dname = _s(d.get("name"))
        consumes = _consumptions(d.get("consumesCounters"), local)
        if consumes:
            has_counters = True
            if not has_groups and any(c.groups for c in consumes):
                has_groups = True
        if detail:
            binding = tuple(str(c) for c in as_list(d.get("bindingConditions")))
            has_binding = has_binding or bool(binding)
            dev = DeviceRec(
                info,
                i,
                dname,
                (driver, pool_name, dname),
                (name, serial, i),
                d,
                as_dict(d.get("attributes")),
                _capacities(d.get("capacity"), intern),
                consumes,
                d.get("allowMultipleAllocations") is True,
                tuple(as_dict(t) for t in as_list(d.get("taints"))),
                binding,
                tuple(str(c) for c in as_list(d.get("bindingFailureConditions"))),
                d.get("bindsToNode") is True,
                _s(d.get("nodeName")) or None,
                d.get("allNodes") is True,
                d.get("nodeSelector") if isinstance(d.get("nodeSelector"), dict) else None,
            )
        else:
            dev = DeviceRec(
                info, i, dname, (driver, pool_name, dname), (name, serial, i), _EMPTY, _EMPTY, _EMPTY,
                consumes, False, (), (), (), False, None, False, None,
            )  # fmt: skip
        devices.append(dev)
    return SliceRec(
        name=name,
        serial=serial,
        driver=driver,
        pool=pool_name,
        generation=_int(pool.get("generation")),
        slice_count=_int(pool.get("resourceSliceCount"), 1),
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=spec.get("allNodes") is True,
        per_device=per_device,
        counter_sets=tuple(sets),
        set_texts=tuple(set_texts),
        skip_node_operations=skip_ops,
        devices=tuple(devices),
        has_binding=has_binding,
        has_groups=has_groups,
        has_counters=has_counters,
        detail=detail,
    )


# --- the other kinds -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassRec:
    """A DeviceClass: its name, extended resource name, creation time (RFC 3339) and the object."""

    name: str
    extended_resource_name: str | None
    created: str | None = None
    obj: dict[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Allocation:
    """What an allocated ResourceClaim holds, as the scheduler counts it (`allocateddevices.go`): a
    result with `adminAccess: true` holds nothing; one with a `shareID` is one share of a device (with its
    consumed capacity); any other result holds its device exclusively."""

    exclusive: tuple[DeviceID, ...]
    shared: tuple[tuple[DeviceID, str], ...]
    capacity: tuple[tuple[DeviceID, tuple[tuple[str, Nano], ...]], ...]

    def pools(self) -> set[PoolID]:
        """The pools whose devices this allocation holds."""
        out = {(d[0], d[1]) for d in self.exclusive}
        out.update((d[0], d[1]) for d, _ in self.shared)
        out.update((d[0], d[1]) for d, _ in self.capacity)
        return out


@dataclass(frozen=True, slots=True)
class ClaimRec:
    """A ResourceClaim or ResourceClaimTemplate: the DeviceClass names it uses with their paths, and
    (an allocated ResourceClaim) what its allocation holds."""

    kind: str
    namespace: str | None
    name: str
    class_refs: tuple[tuple[str, str], ...]  # (path, deviceClassName)
    allocation: Allocation | None = None


@dataclass(frozen=True, slots=True)
class PodRec:
    namespace: str | None
    name: str
    claim_refs: tuple[tuple[str, str, str], ...]  # (path, "claim" | "template", name)
    kind: str = "Pod"


Record = SliceRec | ClassRec | ClaimRec | PodRec


def _class_refs(spec: Any, prefix: str) -> tuple[tuple[str, str], ...]:
    refs: list[tuple[str, str]] = []
    for i, r in enumerate(as_list(as_dict(as_dict(spec).get("devices")).get("requests"))):
        r = as_dict(r)
        base = f"{prefix}.devices.requests[{i}]"
        name = _s(as_dict(r.get("exactly")).get("deviceClassName"))
        if name:
            refs.append((f"{base}.exactly.deviceClassName", name))
        for j, sub in enumerate(as_list(r.get("firstAvailable"))):
            name = _s(as_dict(sub).get("deviceClassName"))
            if name:
                refs.append((f"{base}.firstAvailable[{j}].deviceClassName", name))
    return tuple(refs)


def parse_allocation(alloc: Any) -> Allocation | None:
    """The devices a claim's `status.allocation` holds (None when there is no allocation)."""
    if not isinstance(alloc, dict):
        return None
    exclusive: list[DeviceID] = []
    shared: list[tuple[DeviceID, str]] = []
    capacity: list[tuple[DeviceID, tuple[tuple[str, Nano], ...]]] = []
    for r in as_list(as_dict(alloc.get("devices")).get("results")):
        if not isinstance(r, dict) or r.get("adminAccess") is True:
            continue
        dev: DeviceID = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
        share = r.get("shareID")
        if share:
            shared.append((dev, str(share)))
            cc = r.get("consumedCapacity")
            if isinstance(cc, dict):
                capacity.append((dev, tuple((str(k), nano(qty(v))) for k, v in cc.items())))
        else:
            exclusive.append(dev)
    return Allocation(tuple(exclusive), tuple(shared), tuple(capacity))


def namespace_of(obj: dict[str, Any]) -> str | None:
    ns = as_dict(obj.get("metadata")).get("namespace")
    return ns if isinstance(ns, str) and ns else None


def parse_record(
    obj: Any, serial: int = 0, intern: Intern | None = None, *, detail: bool = True
) -> Record | None:
    """The record of one (defaulted, stripped) object; None for kinds without one."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("kind")
    meta = as_dict(obj.get("metadata"))
    name = _s(meta.get("name"))
    if kind == "ResourceSlice":
        return parse_slice(obj, serial, intern, detail=detail)
    if kind == "DeviceClass":
        ern = as_dict(obj.get("spec")).get("extendedResourceName")
        created = meta.get("creationTimestamp")
        return ClassRec(
            name,
            ern if isinstance(ern, str) else None,
            str(created) if created else None,
            obj if detail else None,
        )
    if kind == "ResourceClaim":
        alloc = parse_allocation(as_dict(obj.get("status")).get("allocation"))
        return ClaimRec(kind, namespace_of(obj), name, _class_refs(obj.get("spec"), "spec"), alloc)
    if kind == "ResourceClaimTemplate":
        class_refs = _class_refs(as_dict(obj.get("spec")).get("spec"), "spec.spec")
        return ClaimRec(kind, namespace_of(obj), name, class_refs)
    if kind == "Pod":
        refs: list[tuple[str, str, str]] = []
        for i, rc in enumerate(as_list(as_dict(obj.get("spec")).get("resourceClaims"))):
            rc = as_dict(rc)
            for key, what in (("resourceClaimName", "claim"), ("resourceClaimTemplateName", "template")):
                if _s(rc.get(key)):
                    refs.append((f"spec.resourceClaims[{i}].{key}", what, rc[key]))
        return PodRec(namespace_of(obj), name, tuple(refs))
    return None
