"""`devices[].nodeAllocatableResources` (DRANodeAllocatableResources, alpha): node resources a
device's allocation adds to or takes from the node (`cpu`, `memory`, `hugepages-*`; not `ephemeral-storage`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.violation import Finding
from webhook.rules import fielderr
from webhook.rules.registry import object_rule
from webhook.rules.slice_devices import checked_devices

_NODE_ALLOCATABLE = ("cpu", "memory")  # upstream rejects ephemeral-storage here
_UNION = "`capacityKey`, `deviceMultiplier`"


def is_node_allocatable_resource(name: str) -> bool:
    """cpu, memory or a hugepages-<size> resource (upstream `IsNodeAllocatableResourceName`: never
    ephemeral-storage, never an extended resource)."""
    return name in _NODE_ALLOCATABLE or name.startswith("hugepages-")


def _parse(raw: str | int | float) -> Quantity | None:
    try:
        return parse_quantity(raw)  # memoised in webhook.model.quantity
    except (ValueError, OverflowError):
        return None


def _q(raw: Any) -> Quantity | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    return _parse(raw)


def _mapping(mapping: dict[str, Any], capacities: dict[str, Any], path: str) -> Iterator[Finding]:
    key = mapping.get("capacityKey")
    cap_mult = mapping.get("capacityMultiplier")
    dev_mult = mapping.get("deviceMultiplier")
    if key is not None:
        if key == "":
            yield Finding(
                path + ".capacityKey", fielderr.invalid("", "capacityKey must not be an empty string")
            )
        elif key not in capacities:
            yield Finding(path + ".capacityKey", fielderr.not_found(key))
        if cap_mult is None:
            yield Finding(
                path + ".capacityMultiplier",
                fielderr.required("capacityMultiplier is required when capacityKey is set"),
            )
        else:
            q = _q(cap_mult)
            if q is not None and q.sign() <= 0:
                yield Finding(path + ".capacityMultiplier", fielderr.invalid(str(q), "must be positive"))
    if dev_mult is not None:
        q = _q(dev_mult)
        if q is not None and q.sign() <= 0:
            yield Finding(path + ".deviceMultiplier", fielderr.invalid(str(q), "must be positive"))
    if cap_mult is not None and key is None:
        yield Finding(
            path + ".capacityKey", fielderr.required("capacityKey is required when capacityMultiplier is set")
        )
    # capacityKey and deviceMultiplier are `+k8s:unionMember`s: exactly one of them.
    if key is None and dev_mult is None:
        yield Finding(path, fielderr.invalid("", f"must specify one of: {_UNION}"))
    elif key is not None and dev_mult is not None:
        yield Finding(
            path,
            fielderr.invalid("{`capacityKey`, `deviceMultiplier`}", f"must specify exactly one of: {_UNION}"),
        )


def _overhead(overhead: dict[str, Any], path: str) -> Iterator[Finding]:
    per_pod = overhead.get("perPod")
    per_container = overhead.get("perContainer")
    if per_pod is None and per_container is None:
        yield Finding(path, fielderr.invalid("", "at least one of perPod or perContainer must be set"))
        return
    for name, raw in (("perPod", per_pod), ("perContainer", per_container)):
        if raw is None:
            continue
        q = _q(raw)
        if q is not None and q.sign() < 0:
            yield Finding(f"{path}.{name}", fielderr.invalid(str(q), "must be non-negative"))


@object_rule("device.node-allocatable-resources")
def check_node_allocatable_resources(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, d in enumerate(checked_devices(obj)):
        resources = d.get("nodeAllocatableResources") if d else None
        if not resources:
            continue
        capacities = d.get("capacity") or {}
        for name, entry in resources.items():
            path = f"spec.devices[{i}].nodeAllocatableResources[{name}]"
            if not is_node_allocatable_resource(name):
                yield Finding(path, fielderr.invalid(name, "must be a node allocatable resource name"))
            entry = entry or {}
            mapping = entry.get("mapping")
            overhead = entry.get("overhead")
            if mapping is None and overhead is None:
                yield Finding(path, fielderr.required("at least one of mapping or overhead must be set"))
            if mapping is not None:
                yield from _mapping(mapping, capacities, path + ".mapping")
            if overhead is not None:
                yield from _overhead(overhead, path + ".overhead")
