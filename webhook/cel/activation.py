"""Turn a device into CEL input: API slice device -> normalised dict -> engine data (tagged values)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhook.cel.k8slib import TAG_PREFIX, quantity_tag, semver_tag
from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.semver import Semver, parse_semver

if TYPE_CHECKING:
    from webhook.cel.compiler import Compiled


class EvaluationError(Exception):
    """A selector failed at run time (the allocator treats this as an error for the whole claim)."""


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def normalise_device(device: dict[str, Any], driver: str) -> dict[str, Any]:
    """An API `Device` of a slice of `driver` as `{driver, attributes, capacity, allowMultipleAllocations}`:
    keys split into domain/id (bare ids belong to the driver), versions and quantities parsed."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = _attr_value(attr or {})
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = parse_quantity((cap or {}).get("value", 0))
    return {
        "driver": driver,
        "attributes": attrs,
        "capacity": caps,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
    }


def _attr_value(attr: dict[str, Any]) -> Any:
    for key in ("int", "bool", "string"):
        if key in attr:
            return attr[key]
    if "version" in attr:
        return parse_semver(attr["version"])
    for key in ("ints", "bools", "strings"):
        if key in attr:
            return list(attr[key])
    if "versions" in attr:
        return [parse_semver(v) for v in attr["versions"]]
    return None


def _value(v: Any, list_attributes: bool, where: str) -> Any:
    if isinstance(v, Semver):
        return semver_tag(v)
    if isinstance(v, Quantity):
        return quantity_tag(v)
    if isinstance(v, str) and v.startswith(TAG_PREFIX):
        raise EvaluationError(f"{where}: string values must not start with a \\x01 byte")
    if isinstance(v, list):
        if not list_attributes:
            raise EvaluationError(f"{where}: unsupported attribute value")
        return [_value(x, list_attributes, where) for x in v]
    if v is None:
        raise EvaluationError(f"{where}: unsupported attribute value")
    return v


def to_cel(device: dict[str, Any], compiled: Compiled) -> dict[str, Any]:
    """Engine input for one normalised device; a domain the expression names but the device lacks
    is an empty map (Kubernetes: unknown domains look up as empty)."""
    attrs: dict[str, dict[str, Any]] = {d: {} for d in compiled.attribute_domains}
    for domain, values in (device.get("attributes") or {}).items():
        attrs[domain] = {
            k: _value(v, compiled.list_attributes, f"attribute {domain}/{k}") for k, v in values.items()
        }
    caps: dict[str, dict[str, Any]] = {d: {} for d in compiled.capacity_domains}
    for domain, values in (device.get("capacity") or {}).items():
        caps[domain] = {k: _value(v, True, f"capacity {domain}/{k}") for k, v in values.items()}
    out: dict[str, Any] = {"driver": device.get("driver", ""), "attributes": attrs, "capacity": caps}
    if compiled.consumable_capacity:
        out["allowMultipleAllocations"] = bool(device.get("allowMultipleAllocations", False))
    return out
