"""Per-device counter consumption rules: `consumesCounters` shape and compatibility groups.

compatibilityGroups (KEP-5963, DRADeviceCompatibilityGroups) is validated declaratively upstream:
`+k8s:maxItems=2`, `+k8s:unique=set`, `+k8s:eachVal=+k8s:format=k8s-short-name` (a DNS label).
`null` and `[]` both mean "no groups".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model.violation import Finding
from webhook.rules import fielderr
from webhook.rules.registry import object_rule
from webhook.rules.slice_devices import (
    LABEL_OK,
    MAX_COMPATIBILITY_GROUPS,
    MAX_CONSUMPTIONS_PER_DEVICE,
    MAX_COUNTERS_PER_CONSUMPTION,
    checked_devices,
    dns_label_messages,
    label_ok,
)


@object_rule("device.consumes-counters")
def check_consumes_counters(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    ok = LABEL_OK
    for i, d in enumerate(checked_devices(obj)):
        consumptions = d.get("consumesCounters") if d else None
        if not consumptions:
            continue
        if len(consumptions) == 1 and consumptions[0]:  # fast path: one well-formed consumption
            c = consumptions[0]
            counters = c.get("counters")
            if c.get("counterSet") in ok and counters and len(counters) <= MAX_COUNTERS_PER_CONSUMPTION:
                for key in counters:
                    if key not in ok and not label_ok(key):
                        break
                else:
                    if label_ok(c["counterSet"]):
                        continue
        yield from _consumption_findings(i, consumptions)


def _consumption_findings(i: int, consumptions: list[Any]) -> Iterator[Finding]:
    base = f"spec.devices[{i}].consumesCounters"
    if len(consumptions) > MAX_CONSUMPTIONS_PER_DEVICE:
        yield Finding(base, fielderr.too_many(len(consumptions), MAX_CONSUMPTIONS_PER_DEVICE))
        return
    for j, c in enumerate(consumptions):
        c = c or {}
        counter_set = c.get("counterSet") or ""
        if not counter_set:
            yield Finding(f"{base}[{j}].counterSet", fielderr.required())
        elif not label_ok(counter_set):
            for m in dns_label_messages(counter_set):
                yield Finding(f"{base}[{j}].counterSet", m)
        counters = c.get("counters")
        if not counters:
            yield Finding(f"{base}[{j}].counters", fielderr.required())
        elif len(counters) > MAX_COUNTERS_PER_CONSUMPTION:
            yield Finding(
                f"{base}[{j}].counters", fielderr.too_many(len(counters), MAX_COUNTERS_PER_CONSUMPTION)
            )
        else:
            for key in counters:
                if not label_ok(key):
                    for m in dns_label_messages(key):
                        yield Finding(f"{base}[{j}].counters", m)
    seen: set[str] = set()
    for j, c in enumerate(consumptions):
        key = (c or {}).get("counterSet") or ""
        if key in seen:
            yield Finding(f"{base}[{j}]", fielderr.duplicate(key))
        else:
            seen.add(key)


@object_rule("device.compat-groups")
def check_compatibility_groups(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, d in enumerate(checked_devices(obj)):
        consumptions = d.get("consumesCounters") if d else None
        if not consumptions or len(consumptions) > MAX_CONSUMPTIONS_PER_DEVICE:
            continue  # too many consumptions: upstream stops checking the list
        for j, c in enumerate(consumptions):
            groups = c.get("compatibilityGroups") if c else None
            if not groups:
                continue
            path = f"spec.devices[{i}].consumesCounters[{j}].compatibilityGroups"
            if len(groups) > MAX_COMPATIBILITY_GROUPS:
                yield Finding(path, fielderr.too_many(len(groups), MAX_COMPATIBILITY_GROUPS))
                continue
            seen: set[str] = set()
            for k, g in enumerate(groups):
                if not isinstance(g, str):
                    continue
                if not label_ok(g):
                    for m in dns_label_messages(g):
                        yield Finding(f"{path}[{k}]", m)
                if g in seen:
                    yield Finding(f"{path}[{k}]", fielderr.duplicate(g))
                else:
                    seen.add(g)
