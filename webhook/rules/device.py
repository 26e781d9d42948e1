"""Per-device ResourceSlice rules (port of upstream `validateDevice`): names, attributes, capacity keys,
size limits, per-device node selection, taints and binding conditions.

Counter consumption lives in `device_counters.py`, requestPolicy in `capacity_policy.py`, node
allocatable resources in `node_allocatable.py`. All rules here run on every device of every slice,
so the happy path avoids building paths, parsing or raising.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.cache import short_input_cache
from webhook.model.text import clip
from webhook.model.violation import Finding
from webhook.rules import fielderr
from webhook.rules.node_selector import node_selector_findings
from webhook.rules.registry import object_rule
from webhook.rules.slice_devices import (
    MAX_ATTRIBUTE_VALUE_LENGTH,
    MAX_ATTRIBUTE_VALUES,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_BINDING_CONDITIONS,
    MAX_TAINTS,
    QUALIFIED_KEY_PATH_LEN,
    QUALIFIED_OK,
    checked_devices,
    dns_label_messages,
    is_dns_label,
    label_key_messages,
    label_value_messages,
    old_devices_by_name,
    qualified_name_messages,
    qualified_name_ok,
    spec_of,
    truncate_key,
)

# Upstream checks attribute versions with its own semver 2.0.0 pattern (not a semver library).
_NUM = r"(0|[1-9][0-9]*)"
_PRE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER_RE = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")
_SEMVER_MSG = "must be a string compatible with semver.org spec 2.0.0"
_ONE_VALUE_MSG = "exactly one value must be specified"
_EMPTY_LIST_MSG = "must not be empty if specified"
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sorted, as upstream lists them


@short_input_cache(4096)
def _semver_ok(v: str) -> bool:
    return _SEMVER_RE.fullmatch(v) is not None


_GOOD_VERSIONS: set[str] = set()  # versions already found valid (drivers repeat them on every device)


def _good_version(v: Any) -> bool:
    if v.__class__ is not str or not _semver_ok(v) or _too_long_string(v):
        return False
    if len(_GOOD_VERSIONS) >= 65536:
        _GOOD_VERSIONS.clear()
    _GOOD_VERSIONS.add(v)
    return True


def _has_list(attrs: dict[str, Any]) -> bool:
    for a in attrs.values():
        if a and ("bools" in a or "ints" in a or "strings" in a or "versions" in a):
            return True
    return False


def _too_long_string(v: str) -> bool:
    return len(v) > 16 and fielderr.byte_len(v) > MAX_ATTRIBUTE_VALUE_LENGTH


def _version_problems(v: str, path: str, out: list[Finding]) -> None:
    if not _semver_ok(v):
        out.append(Finding(path, fielderr.invalid(v, _SEMVER_MSG)))
    if _too_long_string(v):
        out.append(Finding(path, fielderr.too_long(MAX_ATTRIBUTE_VALUE_LENGTH)))


def attribute_value_findings(attr: dict[str, Any], path: str) -> list[Finding]:
    """Findings for one DeviceAttribute at `path` (`spec.devices[i].attributes[key]`)."""
    out: list[Finding] = []
    n = 0
    if attr.get("bool") is not None:
        n += 1
    if attr.get("int") is not None:
        n += 1
    s = attr.get("string")
    if s is not None:
        n += 1
        if isinstance(s, str) and _too_long_string(s):
            out.append(Finding(path + ".string", fielderr.too_long(MAX_ATTRIBUTE_VALUE_LENGTH)))
    v = attr.get("version")
    if v is not None:
        n += 1
        if isinstance(v, str):
            _version_problems(v, path + ".version", out)
    for list_field in ("bools", "ints", "strings", "versions"):
        values = attr.get(list_field)
        if values is None:
            continue
        n += 1
        if len(values) == 0:
            out.append(Finding(f"{path}.{list_field}", fielderr.invalid(values, _EMPTY_LIST_MSG)))
        if list_field == "strings":
            for k, item in enumerate(values):
                if isinstance(item, str) and _too_long_string(item):
                    out.append(Finding(f"{path}.strings[{k}]", fielderr.too_long(MAX_ATTRIBUTE_VALUE_LENGTH)))
        elif list_field == "versions":
            for k, item in enumerate(values):
                if isinstance(item, str):
                    _version_problems(item, f"{path}.versions[{k}]", out)
    if n == 0:
        out.append(Finding(path, fielderr.invalid("", _ONE_VALUE_MSG)))
    elif n > 1:
        out.append(Finding(path, fielderr.invalid(attr, _ONE_VALUE_MSG)))
    return out


def _attribute_value_count(attrs: dict[str, Any]) -> int:
    """Scalars count 1, lists their length (upstream `numEntriesDeviceAttribute`)."""
    total = 0
    for a in attrs.values():
        if not a:
            total += 1
            continue
        n = 0
        for f in ("bools", "ints", "strings", "versions"):
            x = a.get(f)
            if x:
                n += len(x)
        total += n if n else 1
    return total


@object_rule("device.name")
def check_device_name(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, d in enumerate(checked_devices(obj)):
        name = d.get("name") if d else None
        if name.__class__ is not str or is_dns_label(name):
            continue
        for m in dns_label_messages(name):
            yield Finding(f"spec.devices[{i}].name", m)


@object_rule("device.size")
def check_device_size(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    # List-type attributes exist only with DRAListTypeAttributes or on updates of objects that had them
    # (stripping removes them otherwise), so the per-attribute value count is usually unnecessary.
    lists_possible = ctx.old is not None or ctx.enabled("DRAListTypeAttributes")
    for i, d in enumerate(checked_devices(obj)):
        if not d:
            continue
        attrs = d.get("attributes") or {}
        n = len(attrs) + len(d.get("capacity") or ())
        if n > MAX_ATTRIBUTES_AND_CAPACITIES:
            yield Finding(
                f"spec.devices[{i}]",
                fielderr.invalid(
                    n,
                    f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}",
                ),
            )
        if len(attrs) > MAX_ATTRIBUTE_VALUES or (lists_possible and _has_list(attrs)):
            values = _attribute_value_count(attrs)
            if values > MAX_ATTRIBUTE_VALUES:
                yield Finding(
                    f"spec.devices[{i}]",
                    fielderr.invalid(
                        values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"
                    ),
                )


@object_rule("device.attributes")
def check_attribute_keys(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    ok = QUALIFIED_OK
    for i, d in enumerate(checked_devices(obj)):
        attrs = d.get("attributes") if d else None
        if not attrs:
            continue
        for key in attrs:
            if key in ok or qualified_name_ok(key):
                continue
            for m in qualified_name_messages(key):
                yield Finding(f"spec.devices[{i}].attributes", m)


SLASHES_MSG = (
    "has more than one '/': the v1.37 API server accepts it, but a later release may reject it (it is "
    "not a valid <domain>/<name>): use a single '/'"
)


@object_rule("device.qualified-name-slashes")
def check_qualified_name_slashes(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, d in enumerate(checked_devices(obj)):
        if not d:
            continue
        for field_ in ("attributes", "capacity"):
            keys = d.get(field_)
            if keys:
                for key in keys:
                    if key.count("/") > 1:
                        yield Finding(
                            f"spec.devices[{i}].{field_}", f'Invalid value: "{clip(key)}": {SLASHES_MSG}'
                        )


@object_rule("device.attribute-value")
def check_attribute_values(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    good_versions = _GOOD_VERSIONS
    for i, d in enumerate(checked_devices(obj)):
        attrs = d.get("attributes") if d else None
        if not attrs:
            continue
        for key, a in attrs.items():
            if a and len(a) == 1:  # the usual case: one scalar value
                s = a.get("string")
                if s is not None:
                    if s.__class__ is str and (
                        len(s) <= 16 or fielderr.byte_len(s) <= MAX_ATTRIBUTE_VALUE_LENGTH
                    ):
                        continue
                elif a.get("int") is not None or a.get("bool") is not None:
                    continue
                else:
                    v = a.get("version")
                    if v is not None and (v in good_versions or _good_version(v)):
                        continue
            path = f"spec.devices[{i}].attributes[{truncate_key(key, QUALIFIED_KEY_PATH_LEN)}]"
            yield from attribute_value_findings(a or {}, path)


@object_rule("device.capacity")
def check_capacity_keys(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    old = old_devices_by_name(ctx) if ctx.old else None
    for i, d in enumerate(checked_devices(obj)):
        caps = d.get("capacity") if d else None
        if not caps:
            continue
        if old is not None:
            od = old.get(d.get("name") or "")
            if od is not None and od.get("capacity") == caps:
                continue
        for key in caps:
            if key in QUALIFIED_OK or qualified_name_ok(key):
                continue
            for m in qualified_name_messages(key):
                yield Finding(f"spec.devices[{i}].capacity", m)


_PER_DEVICE_FIELDS = ("nodeName", "nodeSelector", "allNodes")
_PER_DEVICE_REQUIRED = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)
_PER_DEVICE_FORBIDDEN = (
    "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` "
    "is set to true in the ResourceSlice spec"
)


@object_rule("device.node-selection")
def check_device_node_selection(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    per_device = spec_of(obj).get("perDeviceNodeSelection") is True
    for i, d in enumerate(checked_devices(obj)):
        if not d:
            continue
        node_name = d.get("nodeName")
        selector = d.get("nodeSelector")
        all_nodes = d.get("allNodes")
        if not per_device:
            if node_name is not None or selector is not None or all_nodes is not None:
                yield Finding(f"spec.devices[{i}]", fielderr.invalid(None, _PER_DEVICE_FORBIDDEN))
            continue
        base = f"spec.devices[{i}]"
        set_fields: list[str] = []
        if node_name is not None:
            if node_name != "":
                set_fields.append("`nodeName`")
                for m in names.node_name(node_name):
                    yield Finding(base + ".nodeName", names.render(node_name, m))
            else:
                yield Finding(base + ".nodeName", fielderr.invalid("", "must not be empty"))
        if selector is not None:
            set_fields.append("`nodeSelector`")
            yield from node_selector_findings(selector, base + ".nodeSelector")
        if all_nodes is not None:
            if all_nodes is True:
                set_fields.append("`allNodes`")
            else:
                yield Finding(
                    base + ".allNodes", fielderr.invalid(all_nodes, "must be either unset or set to true")
                )
        if not set_fields:
            yield Finding(base, fielderr.required(_PER_DEVICE_REQUIRED))
        elif len(set_fields) > 1:
            yield Finding(base, fielderr.invalid("{" + ", ".join(set_fields) + "}", _PER_DEVICE_REQUIRED))


@object_rule("device.taints")
def check_device_taints(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    old = old_devices_by_name(ctx) if ctx.old else None
    for i, d in enumerate(checked_devices(obj)):
        taints = d.get("taints") if d else None
        if not taints:
            continue
        if old is not None:
            od = old.get(d.get("name") or "")
            if od is not None and od.get("taints") == taints:
                continue  # unchanged taints are not re-validated (upstream)
        base = f"spec.devices[{i}].taints"
        if len(taints) > MAX_TAINTS:
            yield Finding(base, fielderr.too_many(len(taints), MAX_TAINTS))
            continue
        for k, t in enumerate(taints):
            t = t or {}
            key = t.get("key")
            key = key if isinstance(key, str) else ""
            for m in label_key_messages(key):
                yield Finding(f"{base}[{k}].key", m)
            value = t.get("value")
            if isinstance(value, str) and value != "":
                for m in label_value_messages(value):
                    yield Finding(f"{base}[{k}].value", m)
            effect = t.get("effect")
            if effect is None or effect == "":
                yield Finding(f"{base}[{k}].effect", fielderr.required())
            elif effect not in _TAINT_EFFECTS:
                yield Finding(f"{base}[{k}].effect", fielderr.not_supported(effect, _TAINT_EFFECTS))


def _condition_list(values: Any, path: str) -> Iterator[Finding]:
    if len(values) > MAX_BINDING_CONDITIONS:
        yield Finding(path, fielderr.too_many(len(values), MAX_BINDING_CONDITIONS))
        return
    for k, c in enumerate(values):
        if isinstance(c, str):
            for m in label_key_messages(c):
                yield Finding(f"{path}[{k}]", m)


@object_rule("device.binding-conditions")
def check_binding_conditions(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, d in enumerate(checked_devices(obj)):
        if not d:
            continue
        conds = d.get("bindingConditions") or ()
        fails = d.get("bindingFailureConditions") or ()
        if not conds and not fails:
            continue
        base = f"spec.devices[{i}]"
        yield from _condition_list(conds, base + ".bindingConditions")
        yield from _condition_list(fails, base + ".bindingFailureConditions")
        seen: set[Any] = set()
        for k, c in enumerate(conds):
            if c in seen:
                yield Finding(f"{base}.bindingConditions[{k}]", fielderr.duplicate(c))
            else:
                seen.add(c)
        seen_fail: set[Any] = set()
        for k, c in enumerate(fails):
            if c in seen_fail:
                yield Finding(f"{base}.bindingFailureConditions[{k}]", fielderr.duplicate(c))
            else:
                seen_fail.add(c)
            if c in seen:
                yield Finding(
                    f"{base}.bindingFailureConditions[{k}]",
                    fielderr.invalid(c, "bindingFailureConditions must not overlap with bindingConditions"),
                )
        if not conds and fails:
            yield Finding(
                base + ".bindingConditions",
                fielderr.invalid([], "bindingConditions are required to use bindingFailureConditions"),
            )
        if not fails and conds:
            yield Finding(
                base + ".bindingFailureConditions",
                fielderr.invalid([], "bindingFailureConditions are required to use bindingConditions"),
            )
