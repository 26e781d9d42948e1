"""Shared plumbing for ResourceSlice rules: limits, the device list the API server checks, key checks.

Upstream validates `spec.devices` with a size check that short-circuits: when the slice has too
many devices only `Too many` is reported and no device is looked at. Every per-device rule iterates
`checked_devices(obj)` so they all agree with that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.cache import short_input_cache

KIND = ("ResourceSlice",)

MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64  # any device with taints, consumesCounters or list-type attributes
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_COMPATIBILITY_GROUPS = 2
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
MAX_ATTRIBUTE_VALUE_LENGTH = 64
MAX_TAINTS = 16
MAX_BINDING_CONDITIONS = 4
MAX_VALID_VALUES = 10
QUALIFIED_KEY_PATH_LEN = 63 + 1 + 32  # longer map keys are shortened in field paths (upstream)
COUNTER_KEY_PATH_LEN = 63

LIST_ATTRIBUTE_FIELDS = ("bools", "ints", "strings", "versions")
_NO_DEVICES: Sequence[dict[str, Any]] = ()


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def has_list_attribute(device: dict[str, Any]) -> bool:
    for attr in (device.get("attributes") or {}).values():
        if attr:
            for f in LIST_ATTRIBUTE_FIELDS:
                if attr.get(f) is not None:
                    return True
    return False


def device_limit(devices: Sequence[dict[str, Any]]) -> int:
    """128, or 64 when any device has taints, consumes counters or has a list-type attribute."""
    for d in devices:
        if d and (d.get("taints") or d.get("consumesCounters") or has_list_attribute(d)):
            return MAX_DEVICES_ADVANCED
    return MAX_DEVICES


def checked_devices(obj: dict[str, Any]) -> Sequence[dict[str, Any]]:
    """The devices upstream validates one by one: all of them, or none when there are too many."""
    devices = spec_of(obj).get("devices") or _NO_DEVICES
    n = len(devices)
    if n <= MAX_DEVICES_ADVANCED:
        return devices
    if n > MAX_DEVICES or n > device_limit(devices):
        return _NO_DEVICES
    return devices


def old_devices_by_name(ctx: Context) -> dict[str, dict[str, Any]]:
    """Devices of the stored object on UPDATE, by name (first wins, like upstream `lookupDevice`)."""
    old = ctx.old
    if not old:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for d in spec_of(old).get("devices") or ():
        if d:
            out.setdefault(d.get("name") or "", d)
    return out


def truncate_key(key: str, limit: int) -> str:
    """Map keys longer than `limit` are shortened in the middle in field paths (`truncateIfTooLong`)."""
    limit = max(limit, 16)
    if len(key) <= limit:
        return key
    remaining = limit - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2 :]


# Fast paths for the happy case (the messages always come from `webhook.model.names`).
_DNS_LABEL_MATCH = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?").fullmatch
_KNOWN_GOOD_MAX = 65536
QUALIFIED_OK: set[str] = set()  # attribute/capacity keys already found valid
LABEL_OK: set[str] = set()  # counter-set and counter names already found valid (they repeat)


def is_dns_label(v: str) -> bool:
    """Fast check; use `dns_label_messages` for the errors."""
    return len(v) <= 63 and _DNS_LABEL_MATCH(v) is not None


def label_ok(v: str) -> bool:
    """`is_dns_label` for names that repeat across devices (remembers valid ones)."""
    if v in LABEL_OK:
        return True
    if not is_dns_label(v):
        return False
    if len(LABEL_OK) >= _KNOWN_GOOD_MAX:
        LABEL_OK.clear()
    LABEL_OK.add(v)
    return True


def qualified_name_ok(key: str) -> bool:
    """True if `key` is a valid QualifiedName; remembers valid keys (devices repeat the same keys)."""
    if key in QUALIFIED_OK:
        return True
    if qualified_name_messages(key):
        return False
    if len(QUALIFIED_OK) >= _KNOWN_GOOD_MAX:
        QUALIFIED_OK.clear()
    QUALIFIED_OK.add(key)
    return True


@short_input_cache(8192)
def qualified_name_messages(key: str, fully_qualified: bool = False) -> tuple[str, ...]:
    """Rendered errors for a DRA QualifiedName (attribute/capacity key), empty when valid.

    Upstream (`validateQualifiedName`) accepts keys with more than one `/` (an upstream TODO says it
    should not); `device.qualified-name-slashes` warns about them."""
    return tuple(names.render(key, m) for m in names.attribute_key(key, fully_qualified))


@short_input_cache(4096)
def dns_label_messages(value: str) -> tuple[str, ...]:
    """Rendered `Invalid value` errors for a DNS label (counter names, device names), empty when valid."""
    return tuple(names.render(value, m) for m in names.dns_label(value))


@short_input_cache(4096)
def label_key_messages(value: str) -> tuple[str, ...]:
    return tuple(names.render(value, m) for m in names.label_key(value))


@short_input_cache(4096)
def label_value_messages(value: str) -> tuple[str, ...]:
    return tuple(names.render(value, m) for m in names.label_value(value))
