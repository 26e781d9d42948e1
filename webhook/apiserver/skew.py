"""Version-skew field stripping: what the API server silently drops from DRA objects before validation
when a feature gate is off (or the field does not exist yet in the target version).

Pattern of upstream `dropDisabledFields` in every DRA registry strategy: on create a guarded field is
cleared when its gate is off; on update it is kept if the *old* object already uses the feature (judged
per feature over the whole old object). Pure functions: the validator and the mutating webhook share
them. Fields whose gate is on, and everything not guarded, are never touched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from webhook.config.context import Context
from webhook.model.path import Path
from webhook.model.plain import deep_copy
from webhook.model.violation import Finding


class Key(str):
    """A map key in a location (rendered `[key]`), as opposed to a field name (rendered `.name`)."""


Step = str | int  # field name, list index, or Key
Location = tuple[Step, ...]
LocationsFn = Callable[[dict[str, Any]], Iterator[Location]]
InUseFn = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class Feature:
    """One `dropDisabled…Fields` unit: the gates that must all be on, and the fields it guards."""

    name: str
    gates: tuple[str, ...]
    since: str  # first Kubernetes minor version whose API has these fields
    locations: LocationsFn  # where the guarded fields are present in an object
    in_use: InUseFn  # does an (old) object use the feature? (update ratcheting)
    confirmed: bool = True  # False: the drop is inferred from the other features, its strategy code unread
    until: str | None = None  # last Kubernetes minor version whose API has these fields (None: still there)


# -- small helpers over plain data ----------------------------------------------------------------


def _get(obj: Any, *steps: Step) -> Any:
    for s in steps:
        if isinstance(s, int):
            if not isinstance(obj, list) or s >= len(obj):
                return None
            obj = obj[s]
        else:
            if not isinstance(obj, dict):
                return None
            obj = obj.get(s)
    return obj


def _items(obj: Any, *steps: Step) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, entry) of the dict entries of the list at `steps`."""
    seq = _get(obj, *steps)
    if isinstance(seq, list):
        for i, item in enumerate(seq):
            if isinstance(item, dict):
                yield i, item


def _entries(obj: Any, *steps: Step) -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, value) of the dict values of the map at `steps`."""
    m = _get(obj, *steps)
    if isinstance(m, dict):
        for k, v in m.items():
            if isinstance(v, dict):
                yield str(k), v


def _has(d: dict[str, Any], name: str) -> bool:
    return name in d


def _nonempty(v: Any) -> bool:
    return v is not None and v != [] and v != {}


# -- ResourceSlice --------------------------------------------------------------------------------

SPEC: Location = ("spec",)


def _device_fields(*names: str) -> LocationsFn:
    wanted = frozenset(names)

    def locations(obj: dict[str, Any]) -> Iterator[Location]:
        for i, d in _items(obj, "spec", "devices"):
            if wanted.isdisjoint(d):  # the usual case: one cheap set test per device
                continue
            for n in names:
                if _has(d, n):
                    yield ("spec", "devices", i, n)

    return locations


def _any_device(pred: Callable[[dict[str, Any]], bool]) -> InUseFn:
    return lambda obj: any(pred(d) for _, d in _items(obj, "spec", "devices"))


def _spec_fields(*names: str) -> LocationsFn:
    def locations(obj: dict[str, Any]) -> Iterator[Location]:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for n in names:
                if _has(spec, n):
                    yield ("spec", n)

    return locations


def _chain(*fns: LocationsFn) -> LocationsFn:
    def locations(obj: dict[str, Any]) -> Iterator[Location]:
        for fn in fns:
            yield from fn(obj)

    return locations


_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes")
_LIST_ATTRS = ("bools", "ints", "strings", "versions")


def _partitionable_in_use(obj: dict[str, Any]) -> bool:
    raw = obj.get("spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if _nonempty(spec.get("sharedCounters")) or spec.get("perDeviceNodeSelection") is not None:
        return True
    return _any_device(
        lambda d: _nonempty(d.get("consumesCounters")) or any(d.get(n) is not None for n in _NODE_FIELDS)
    )(obj)


def _request_policies(obj: dict[str, Any]) -> Iterator[Location]:
    for i, d in _items(obj, "spec", "devices"):
        caps = d.get("capacity")
        if not caps or not isinstance(caps, dict):
            continue
        for k, cap in caps.items():
            if type(cap) is dict and "requestPolicy" in cap:
                yield ("spec", "devices", i, "capacity", Key(str(k)), "requestPolicy")


_LIST_ATTR_SET = frozenset(_LIST_ATTRS)


def _list_attributes(obj: dict[str, Any]) -> Iterator[Location]:
    for i, d in _items(obj, "spec", "devices"):
        attrs = d.get("attributes")
        if not isinstance(attrs, dict):
            continue
        for k, attr in attrs.items():
            if type(attr) is not dict or _LIST_ATTR_SET.isdisjoint(attr):  # scalars: one set test
                continue
            for n in _LIST_ATTRS:
                if _has(attr, n):
                    yield ("spec", "devices", i, "attributes", Key(str(k)), n)


def _compat_groups(obj: dict[str, Any]) -> Iterator[Location]:
    for i, d in _items(obj, "spec", "devices"):
        for j, c in _items(d, "consumesCounters"):
            if _has(c, "compatibilityGroups"):
                yield ("spec", "devices", i, "consumesCounters", j, "compatibilityGroups")


SLICE_FEATURES: tuple[Feature, ...] = (
    Feature(
        "DRADeviceTaints",
        ("DRADeviceTaints",),
        "1.33",
        _device_fields("taints"),
        _any_device(lambda d: _nonempty(d.get("taints"))),
    ),
    Feature(
        "DRAPartitionableDevices",
        ("DRAPartitionableDevices",),
        "1.33",
        _chain(
            _spec_fields("sharedCounters", "perDeviceNodeSelection"),
            _device_fields("consumesCounters", *_NODE_FIELDS),
        ),
        _partitionable_in_use,
    ),
    Feature(
        "DRADeviceBindingConditions",
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        "1.34",
        _device_fields("bindingConditions", "bindingFailureConditions", "bindsToNode"),
        _any_device(
            lambda d: (
                _nonempty(d.get("bindingConditions"))
                or _nonempty(d.get("bindingFailureConditions"))
                or d.get("bindsToNode") is not None
            )
        ),
    ),
    Feature(
        "DRAConsumableCapacity",
        ("DRAConsumableCapacity",),
        "1.34",
        _chain(_device_fields("allowMultipleAllocations"), _request_policies),
        lambda obj: (
            any(_get(obj, *loc) is not None for loc in _request_policies(obj))
            or _any_device(lambda d: d.get("allowMultipleAllocations") is not None)(obj)
        ),
    ),
    Feature(
        "DRANodeAllocatableResources",
        ("DRANodeAllocatableResources",),
        "1.37",  # 1.36 had the older `nodeAllocatableResourceMappings` (tombstoned)
        _device_fields("nodeAllocatableResources"),
        _any_device(lambda d: _nonempty(d.get("nodeAllocatableResources"))),
    ),
    Feature(
        "DRANodeAllocatableResources",
        ("DRANodeAllocatableResources",),
        "1.36",  # the 1.36 form, replaced by `nodeAllocatableResources` in 1.37
        _device_fields("nodeAllocatableResourceMappings"),
        _any_device(lambda d: _nonempty(d.get("nodeAllocatableResourceMappings"))),
        until="1.36",
    ),
    Feature(
        "DRAListTypeAttributes",
        ("DRAListTypeAttributes",),
        "1.36",
        _list_attributes,
        lambda obj: any(_get(obj, *loc) is not None for loc in _list_attributes(obj)),
    ),
    Feature(
        "DRAPartitionableDevicesType",
        ("DRAPartitionableDevicesType", "DRAResourcePoolStatus"),
        "1.37",
        _spec_fields("partitionTypeAttribute"),
        lambda obj: _get(obj, "spec", "partitionTypeAttribute") is not None,
    ),
    Feature(
        "DRAOptionalNodeOperations",
        ("DRAOptionalNodeOperations",),
        "1.37",
        _spec_fields("skipNodeOperations"),
        lambda obj: _nonempty(_get(obj, "spec", "skipNodeOperations")),
        confirmed=False,
    ),
    Feature(
        "DRADeviceCompatibilityGroups",
        ("DRADeviceCompatibilityGroups", "DRAPartitionableDevices"),
        "1.37",
        _compat_groups,
        # only a non-empty list counts as "set" (null and [] are the same as absent)
        lambda obj: any(_nonempty(_get(obj, *loc)) for loc in _compat_groups(obj)),
    ),
)


# -- ResourceClaim / ResourceClaimTemplate spec ---------------------------------------------------


def _claim_spec_features(prefix: Location) -> tuple[Feature, ...]:
    """Features of a ResourceClaimSpec found at `prefix` (claims: spec, templates: spec.spec)."""
    req_path = (*prefix, "devices", "requests")

    def exactly(*names: str) -> Callable[[dict[str, Any]], Iterator[Location]]:
        def locations(obj: dict[str, Any]) -> Iterator[Location]:
            for i, r in _items(obj, *req_path):
                ex = r.get("exactly")
                if isinstance(ex, dict):
                    for n in names:
                        if _has(ex, n):
                            yield (*req_path, i, "exactly", n)

        return locations

    def subrequests(*names: str) -> Callable[[dict[str, Any]], Iterator[Location]]:
        def locations(obj: dict[str, Any]) -> Iterator[Location]:
            for i, r in _items(obj, *req_path):
                for j, s in _items(r, "firstAvailable"):
                    for n in names:
                        if _has(s, n):
                            yield (*req_path, i, "firstAvailable", j, n)

        return locations

    def first_available(obj: dict[str, Any]) -> Iterator[Location]:
        for i, r in _items(obj, *req_path):
            if _has(r, "firstAvailable"):
                yield (*req_path, i, "firstAvailable")

    def distinct(obj: dict[str, Any]) -> Iterator[Location]:
        for i, c in _items(obj, *prefix, "devices", "constraints"):
            if _has(c, "distinctAttribute"):
                yield (*prefix, "devices", "constraints", i, "distinctAttribute")

    def used(fn: LocationsFn, nonempty: bool = False) -> InUseFn:
        def in_use(obj: dict[str, Any]) -> bool:
            for loc in fn(obj):
                v = _get(obj, *loc)
                if (nonempty and _nonempty(v)) or (not nonempty and v is not None):
                    return True
            return False

        return in_use

    tolerations = _chain(exactly("tolerations"), subrequests("tolerations"))
    capacity = _chain(distinct, exactly("capacity"), subrequests("capacity"))
    derived = _chain(exactly("derivedAttributes"), subrequests("derivedAttributes"))
    return (
        Feature(
            "DRAPrioritizedList",
            ("DRAPrioritizedList",),
            "1.33",
            first_available,
            used(first_available, True),
        ),
        Feature("DRADeviceTaints", ("DRADeviceTaints",), "1.33", tolerations, used(tolerations, True)),
        Feature(
            "DRAAdminAccess",
            ("DRAAdminAccess",),
            "1.32",
            exactly("adminAccess"),
            used(exactly("adminAccess")),
        ),
        Feature("DRAConsumableCapacity", ("DRAConsumableCapacity",), "1.34", capacity, used(capacity)),
        Feature(
            "DRADerivedAttributes", ("DRADerivedAttributes",), "1.37", derived, used(derived, True), False
        ),
    )


CLAIM_SPEC_FEATURES = _claim_spec_features(("spec",))
TEMPLATE_FEATURES = _claim_spec_features(("spec", "spec"))
_RESULTS = ("status", "allocation", "devices", "results")


def _result_fields(*names: str) -> LocationsFn:
    def locations(obj: dict[str, Any]) -> Iterator[Location]:
        for i, r in _items(obj, *_RESULTS):
            for n in names:
                if _has(r, n):
                    yield (*_RESULTS, i, n)

    return locations


def _status_fields(*names: str) -> LocationsFn:
    def locations(obj: dict[str, Any]) -> Iterator[Location]:
        status = obj.get("status")
        if isinstance(status, dict):
            for n in names:
                if _has(status, n):
                    yield ("status", n)

    return locations


def _status_device_share_ids(obj: dict[str, Any]) -> Iterator[Location]:
    for i, d in _items(obj, "status", "devices"):
        if _has(d, "shareID"):
            yield ("status", "devices", i, "shareID")


def _set_somewhere(fn: LocationsFn) -> InUseFn:
    return lambda obj: any(_get(obj, *loc) is not None for loc in fn(obj))


_spec_admin = CLAIM_SPEC_FEATURES[2].in_use
_spec_capacity = CLAIM_SPEC_FEATURES[3].in_use
_status_capacity = _chain(_result_fields("shareID", "consumedCapacity"), _status_device_share_ids)

CLAIM_STATUS_FEATURES: tuple[Feature, ...] = (
    Feature(
        "DRAResourceClaimDeviceStatus",
        ("DRAResourceClaimDeviceStatus",),
        "1.32",
        _status_fields("devices"),
        lambda obj: _nonempty(_get(obj, "status", "devices")),
    ),
    Feature(
        "DRAAdminAccess",
        ("DRAAdminAccess",),
        "1.32",
        _result_fields("adminAccess"),
        lambda obj: _spec_admin(obj) or _set_somewhere(_result_fields("adminAccess"))(obj),
    ),
    Feature(
        "DRAConsumableCapacity",
        ("DRAConsumableCapacity",),
        "1.34",
        _status_capacity,
        lambda obj: _spec_capacity(obj) or _set_somewhere(_status_capacity)(obj),
    ),
    Feature(
        "DRADeviceBindingConditions",
        ("DRADeviceBindingConditions",),
        "1.34",
        _result_fields("bindingConditions", "bindingFailureConditions"),
        _set_somewhere(_result_fields("bindingConditions", "bindingFailureConditions")),
    ),
    Feature(
        "DRAOptionalNodeOperations",
        ("DRAOptionalNodeOperations",),
        "1.37",
        _result_fields("skipNodeOperations"),
        lambda obj: any(_nonempty(_get(obj, *loc)) for loc in _result_fields("skipNodeOperations")(obj)),
        confirmed=False,
    ),
)

CLASS_FEATURES: tuple[Feature, ...] = (
    Feature(
        "DRAExtendedResource",
        ("DRAExtendedResource",),
        "1.34",
        _spec_fields("extendedResourceName"),
        lambda obj: _get(obj, "spec", "extendedResourceName") is not None,
    ),
)


POD_FEATURES: tuple[Feature, ...] = (
    Feature(
        "DRAExtendedResource",
        ("DRAExtendedResource",),
        "1.34",
        _status_fields("extendedResourceClaimStatus"),
        lambda obj: _get(obj, "status", "extendedResourceClaimStatus") is not None,
    ),
    Feature(
        "DRANodeAllocatableResources",
        ("DRANodeAllocatableResources",),
        "1.37",
        _status_fields("nodeAllocatableResourceClaimStatuses"),
        lambda obj: _nonempty(_get(obj, "status", "nodeAllocatableResourceClaimStatuses")),
        confirmed=False,
    ),
)

FEATURES: dict[str, tuple[Feature, ...]] = {
    "ResourceSlice": SLICE_FEATURES,
    "ResourceClaim": CLAIM_SPEC_FEATURES + CLAIM_STATUS_FEATURES,
    "ResourceClaimTemplate": TEMPLATE_FEATURES,
    "DeviceClass": CLASS_FEATURES,
    "Pod": POD_FEATURES,
}

# -- the stripping itself -------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)  # bounded: version strings come from profiles and the feature table
def _version(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".")[:2])


def _blocking_gates(feature: Feature, ctx: Context) -> tuple[bool, list[str]]:
    """(field unknown in this version, gates that are off). A gate this version no longer lists
    (graduated and removed) counts as on."""
    profile = ctx.profile
    if _version(profile.version) < _version(feature.since):
        return True, list(feature.gates)
    if feature.until is not None and _version(profile.version) > _version(feature.until):
        return True, list(feature.gates)
    return False, [g for g in feature.gates if profile.known(g) and not profile.enabled(g)]


def gate_text(gate: str, ctx: Context) -> str:
    g = ctx.profile.gates.get(gate)
    if g is None:
        return gate
    default = "on by default, turned off by --feature-gates" if g.default else "off by default"
    return f"{gate} is disabled in Kubernetes {ctx.profile.version} ({g.stage}, {default})"


def _message(feature: Feature, unknown: bool, off: list[str], ctx: Context) -> str:
    v = ctx.profile.version
    if unknown:
        return (
            f"dropped: this field does not exist in Kubernetes {v} (added in {feature.since} with feature gate "
            f"{feature.gates[0]}); the API server ignores unknown fields, or rejects them with "
            "fieldValidation=Strict (kubectl's default)"
        )
    gates = "; ".join(gate_text(g, ctx) for g in off)
    when = (
        "on update because the stored object does not use this feature"
        if ctx.old is not None
        else "on create"
    )
    if not feature.confirmed:  # inferred from the other features (its strategy code unread): an expectation
        return (
            f"dropped: feature gate {gates}; the API server is expected to remove this field {when}, as it "
            "removes the fields of other disabled features"
        )
    return f"dropped: feature gate {gates}; the API server silently removes this field {when}"


def plan_drops(obj: dict[str, Any], ctx: Context) -> list[tuple[Location, str | None]]:
    """Locations the API server would clear, in upstream order, each with its finding message
    (None for a silent drop of an empty value: `null`, `[]`, `{}`)."""
    kind = obj.get("kind")
    features = FEATURES.get(kind) if isinstance(kind, str) else None
    if not features:
        return []
    old = ctx.old if isinstance(ctx.old, dict) else None
    out: list[tuple[Location, str | None]] = []
    dropped: list[Location] = []
    for feature in features:
        unknown, off = _blocking_gates(feature, ctx)
        if not unknown and not off:
            continue
        locations = [loc for loc in feature.locations(obj) if not any(loc[: len(d)] == d for d in dropped)]
        if not locations:
            continue
        if not unknown and old is not None and feature.in_use(old):
            continue  # ratcheting: the stored object already uses the feature
        message = _message(feature, unknown, off, ctx)
        for loc in locations:
            out.append((loc, message if _nonempty(_get(obj, *loc)) else None))
            dropped.append(loc)
    return out


def to_path(loc: Location) -> Path:
    """A location as a field path: `("spec", "devices", 3, "capacity", Key("mem"))` → spec.devices[3].capacity[mem]."""
    p = Path()
    for step in loc:
        if isinstance(step, Key):
            p = p.key(step)
        elif isinstance(step, int):
            p = p.index(step)
        else:
            p = p.child(step)
    return p


def strip_disabled_fields(obj: dict[str, Any], ctx: Context) -> tuple[dict[str, Any], list[Finding]]:
    """The object as the API server would validate it, and one finding per dropped non-empty field.

    Pure: `obj` is never modified; the result is `obj` itself when nothing is dropped, else a deep copy."""
    drops = plan_drops(obj, ctx)
    if not drops:
        return obj, []
    out = deep_copy(obj)
    findings: list[Finding] = []
    for loc, message in drops:
        parent = _get(out, *loc[:-1])
        if isinstance(parent, dict):
            parent.pop(loc[-1], None)
        if message is not None:
            findings.append(Finding(to_path(loc), message))
    return out, findings


def strip_object(obj: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """`strip_disabled_fields` without the findings."""
    return strip_disabled_fields(obj, ctx)[0]
