"""Slice-level ResourceSlice rules (port of upstream `validateResourceSliceSpec`): driver, pool, node
selection, device list limits, shared counter sets, partitionTypeAttribute and skipNodeOperations.

Per-device rules are in `device.py`, `device_counters.py`, `capacity_policy.py` and `node_allocatable.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.violation import Finding
from webhook.rules import fielderr
from webhook.rules.node_selector import node_selector_findings
from webhook.rules.registry import object_rule
from webhook.rules.slice_devices import (
    MAX_COUNTER_SETS,
    MAX_COUNTERS_PER_SET,
    MAX_DEVICES,
    device_limit,
    dns_label_messages,
    qualified_name_messages,
    spec_of,
)

__all__ = ["SKIP_NODE_OPERATIONS", "skip_node_operations_findings", "skip_node_operations_star_findings"]

SKIP_NODE_OPERATIONS = (
    "*",
    "NodePrepareResources",
    "NodeUnprepareResources",
)  # sorted, as upstream lists them


def skip_node_operations_findings(values: Sequence[Any] | None, path: str) -> list[Finding]:
    """Errors for a `skipNodeOperations` list at `path` (slice spec or allocation result).

    Declarative upstream checks: enum values, set semantics (no duplicates). Handwritten:
    `NodePrepareResources` only together with `NodeUnprepareResources` or `*`."""
    out: list[Finding] = []
    if not values:
        return out
    seen: set[Any] = set()
    for i, v in enumerate(values):
        if v not in SKIP_NODE_OPERATIONS:
            out.append(Finding(f"{path}[{i}]", fielderr.not_supported(v, SKIP_NODE_OPERATIONS)))
        if v in seen:
            out.append(Finding(f"{path}[{i}]", fielderr.duplicate(v)))
        else:
            seen.add(v)
    if "NodePrepareResources" in seen and "NodeUnprepareResources" not in seen and "*" not in seen:
        out.append(
            Finding(
                path,
                fielderr.invalid(
                    list(values),
                    "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
                ),
            )
        )
    return out


def skip_node_operations_star_findings(values: Sequence[Any] | None, path: str) -> list[Finding]:
    """Lint: `*` already skips every operation, so other values next to it are redundant."""
    if not values or "*" not in values or all(v == "*" for v in values):
        return []
    return [
        Finding(
            path,
            '"*" is combined with other values: `*` already skips every node operation, '
            "so list it alone (the API server accepts the combination)",
        )
    ]


@object_rule("slice.driver")
def check_driver(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    driver = spec_of(obj).get("driver")
    if isinstance(driver, str):
        for m in names.driver_name(driver):
            yield Finding("spec.driver", names.render(driver, m))


@object_rule("slice.driver.uppercase")
def check_driver_uppercase(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    driver = spec_of(obj).get("driver")
    if isinstance(driver, str) and names.driver_name_has_upper(driver):
        yield Finding(
            "spec.driver",
            f"driver name {names.quote(driver)} contains upper-case characters: accepted, but driver names "
            f"should be lower case (use {names.quote(driver.lower())})",
        )


@object_rule("slice.pool")
def check_pool(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    pool = spec_of(obj).get("pool")
    if not isinstance(pool, dict):
        return
    name = pool.get("name")
    if isinstance(name, str):
        for m in names.pool_name(name):
            yield Finding("spec.pool.name", names.render(name, m))
    count = pool.get("resourceSliceCount")
    if isinstance(count, int) and count <= 0:
        yield Finding("spec.pool.resourceSliceCount", fielderr.invalid(count, "must be greater than zero"))
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        yield Finding(
            "spec.pool.generation", fielderr.invalid(generation, "must be greater than or equal to zero")
        )


_NODE_SELECTION = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)


@object_rule("slice.node-selection")
def check_node_selection(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec = spec_of(obj)
    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name != "":
            set_fields.append("`nodeName`")
            for m in names.node_name(node_name):
                yield Finding("spec.nodeName", names.render(node_name, m))
        else:
            yield Finding(
                "spec.nodeName", fielderr.invalid("", "must be either unset or set to a non-empty string")
            )
    selector = spec.get("nodeSelector")
    if selector is not None:
        set_fields.append("`nodeSelector`")
        yield from node_selector_findings(selector, "spec.nodeSelector")
        terms = selector.get("nodeSelectorTerms") or []
        if len(terms) != 1:
            yield Finding(
                "spec.nodeSelector.nodeSelectorTerms",
                fielderr.invalid(terms, "must have exactly one node selector term"),
            )
    for name in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(name)
        if value is None:
            continue
        if value is True:
            set_fields.append(f"`{name}`")
        else:
            yield Finding(f"spec.{name}", fielderr.invalid(value, "must be either unset or set to true"))
    if not set_fields:
        yield Finding("spec", fielderr.required(_NODE_SELECTION))
    elif len(set_fields) > 1:
        yield Finding(
            "spec",
            fielderr.invalid(
                "{" + ", ".join(set_fields) + "}", _NODE_SELECTION + ", but multiple fields are set"
            ),
        )


@object_rule("slice.devices-and-counters")
def check_devices_and_counters(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec = spec_of(obj)
    if spec.get("devices") is not None and spec.get("sharedCounters") is not None:
        yield Finding("spec", fielderr.invalid("", "only one of `sharedCounters` or `devices` is allowed"))


@object_rule("slice.devices.max")
def check_devices_max(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    devices = spec_of(obj).get("devices") or ()
    n = len(devices)
    if n <= 64:
        return
    limit = device_limit(devices)
    if n > limit:
        yield Finding("spec.devices", fielderr.too_many(n, limit))


@object_rule("slice.devices.unique")
def check_devices_unique(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    devices = spec_of(obj).get("devices") or ()
    n = len(devices)
    if n < 2 or n > MAX_DEVICES or (n > 64 and n > device_limit(devices)):
        return
    seen: set[Any] = set()
    for i, d in enumerate(devices):
        name = (d or {}).get("name") or ""
        if name in seen:
            yield Finding(f"spec.devices[{i}]", fielderr.duplicate(name))
        else:
            seen.add(name)


@object_rule("slice.shared-counters")
def check_shared_counters(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    sets = spec_of(obj).get("sharedCounters")
    if not sets:
        return
    if len(sets) > MAX_COUNTER_SETS:
        yield Finding("spec.sharedCounters", fielderr.too_many(len(sets), MAX_COUNTER_SETS))
        return
    for i, cs in enumerate(sets):
        cs = cs or {}
        base = f"spec.sharedCounters[{i}]"
        name = cs.get("name") or ""
        if not name:
            yield Finding(base + ".name", fielderr.required())
        else:
            for m in dns_label_messages(name):
                yield Finding(base + ".name", m)
        counters = cs.get("counters")
        if not counters:
            yield Finding(base + ".counters", fielderr.required())
        elif len(counters) > MAX_COUNTERS_PER_SET:
            yield Finding(base + ".counters", fielderr.too_many(len(counters), MAX_COUNTERS_PER_SET))
        else:
            for key in counters:
                for m in dns_label_messages(key):
                    yield Finding(base + ".counters", m)
    seen: set[str] = set()
    for i, cs in enumerate(sets):
        name = (cs or {}).get("name") or ""
        if name in seen:
            yield Finding(f"spec.sharedCounters[{i}]", fielderr.duplicate(name))
        else:
            seen.add(name)


@object_rule("slice.partition-type-attribute")
def check_partition_type_attribute(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec = spec_of(obj)
    name = spec.get("partitionTypeAttribute")
    if not isinstance(name, str):
        return
    format_errors = qualified_name_messages(name, True)
    for m in format_errors:
        yield Finding("spec.partitionTypeAttribute", m)
    devices = spec.get("devices") or ()
    if not any(d and d.get("consumesCounters") for d in devices):
        yield Finding(
            "spec.partitionTypeAttribute",
            fielderr.invalid(name, "may only be set on a slice which declares devices that consume counters"),
        )
        return
    if format_errors:
        return
    prefix = f"{spec.get('driver') or ''}/"
    bare = name[len(prefix) :] if name.startswith(prefix) else name
    for i, d in enumerate(devices):
        if not d or not d.get("consumesCounters"):
            continue
        attrs = d.get("attributes") or {}
        path = f"spec.devices[{i}].attributes[{name}]"
        if name in attrs:
            attr = attrs[name]
        elif bare and bare in attrs:
            attr = attrs[bare]
        else:
            yield Finding(
                path,
                fielderr.required(
                    "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"
                ),
            )
            continue
        if (attr or {}).get("string") is None:
            yield Finding(
                path,
                fielderr.invalid(
                    attr, "must be a string value because `partitionTypeAttribute` names this attribute"
                ),
            )


@object_rule("slice.skip-node-operations")
def check_skip_node_operations(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    yield from skip_node_operations_findings(
        spec_of(obj).get("skipNodeOperations"), "spec.skipNodeOperations"
    )


@object_rule("slice.skip-node-operations.star-alone")
def check_skip_node_operations_star(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    yield from skip_node_operations_star_findings(
        spec_of(obj).get("skipNodeOperations"), "spec.skipNodeOperations"
    )
