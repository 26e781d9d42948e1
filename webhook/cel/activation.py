"""Turn a device into CEL input: API slice device -> engine data (semver/quantity as one-entry maps)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from webhook.cel.k8slib import quantity_tag, semver_tag
from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.semver import Semver, parse_semver

if TYPE_CHECKING:
    from webhook.cel.legacy_compiler import Compiled

MAX_LIST_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice


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


# ---- the runtime's one-pass conversion (API device -> engine data) ---------------------------------


@lru_cache(maxsize=8192)
def _version(text: str) -> dict[str, str]:
    try:
        return semver_tag(parse_semver(text))
    except ValueError as e:
        raise EvaluationError(f"parse semantic version: {e}") from None


@lru_cache(maxsize=8192)
def _capacity(raw: str | int | float) -> dict[str, str]:
    return quantity_tag(parse_quantity(raw))


_SCALARS = ("int", "bool", "string")
_LISTS = ("ints", "bools", "strings")


def _api_attr_value(name: str, attr: dict[str, Any], list_attributes: bool) -> Any:
    """Like upstream getAttributeValue. List values are converted whatever DRAListTypeAttributes says
    (upstream's allocator tests `list-attributes-disabled-*` expect an expression that does not read
    them to evaluate normally); the gate only declares `includes()` and list semantics in constraints."""
    del list_attributes  # kept in the signature: callers pass the gate
    try:
        for key in (*_LISTS, "versions"):
            values = attr.get(key)
            if values is None:
                continue
            return [_version(v) for v in values] if key == "versions" else list(values)
        for key in _SCALARS:
            value = attr.get(key)
            if value is not None:
                return value
        version = attr.get("version")
        if version is not None:
            return _version(version)
    except EvaluationError as e:
        raise EvaluationError(f"attribute {name}: {e}") from None
    raise EvaluationError(f"attribute {name}: unsupported attribute value")


def device_input(
    device: dict[str, Any], driver: str, *, list_attributes: bool, consumable_capacity: bool
) -> dict[str, Any]:
    """The `device` variable for one API device of a slice of `driver` (upstream `DeviceMatches` input):
    attribute/capacity names split into domain and id, bare ids under the driver's domain. Raises
    EvaluationError for values upstream refuses (list attributes without DRAListTypeAttributes)."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = _api_attr_value(name, attr or {}, list_attributes)
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split(name, driver)
        try:
            caps.setdefault(domain, {})[ident] = _capacity((cap or {}).get("value", 0))
        except ValueError as e:
            raise EvaluationError(f"capacity {name}: {e}") from None
    out: dict[str, Any] = {"driver": driver, "attributes": attrs, "capacity": caps}
    if consumable_capacity:
        out["allowMultipleAllocations"] = bool(device.get("allowMultipleAllocations") or False)
    return out
