"""The `device` variable of a DRA selector, read straight from an API device (`spec.devices[i]` of a
ResourceSlice of `driver`), as Kubernetes' `DeviceMatches` presents it:

- `device.attributes[domain][id]`: a name without a domain belongs to the driver's domain
  (`model` of a `gpu.example.com` slice is `device.attributes["gpu.example.com"].model`); the value is
  the int / bool / string / version (`kubernetes.Semver`) or, for list attributes, the list of them
  (whatever DRAListTypeAttributes says: upstream's allocator evaluates stored expressions that do not
  read list attributes normally);
- `device.capacity[domain][id]`: the `kubernetes.Quantity` of `value`;
- looking up an unknown domain yields an empty map; `in`, `size`, iteration and equality see only the
  device's real domains (Kubernetes' mapper with a default);
- `device.allowMultipleAllocations`: false when absent.

Upstream converts every attribute before evaluating, so one value it cannot convert (a version blang
rejects, an attribute with no value) fails every selector on that device: `DeviceInput.failure`.
Lookups by literal (domain, id) go to the API dict directly; whole maps are built only when an
expression asks for one, and are not kept.
"""

from __future__ import annotations

from typing import Any

from webhook.cel.common.values import INT64_MAX, INT64_MIN, CelError, DefaultMap
from webhook.model.errors import DraguardError
from webhook.model.quantity import Quantity, known_quantity, parse_quantity
from webhook.model.semver import Semver, parse_semver

MAX_LIST_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice

_LISTS = ("ints", "bools", "strings")
_SCALARS = ("int", "bool", "string")
_SCALAR_TYPES = {"int": int, "bool": bool, "string": str, "ints": int, "bools": bool, "strings": str}


class EvaluationError(DraguardError):
    """A device value upstream refuses before evaluating (the whole claim fails, as upstream)."""


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _version(text: Any, name: str) -> Semver:
    if type(text) is not str:
        raise EvaluationError(f"attribute {name}: parse semantic version: not a string")
    try:
        return parse_semver(text)
    except ValueError as e:
        raise EvaluationError(f"attribute {name}: parse semantic version: {e}") from None


def _checked(v: Any, want: type, name: str) -> Any:
    n: Any = v
    if type(v) is not want:
        raise EvaluationError(f"attribute {name}: unsupported attribute value")
    if want is int and not INT64_MIN <= n <= INT64_MAX:
        raise EvaluationError(f"attribute {name}: value out of the int64 range")
    return v


def attribute_value(name: str, attr: Any) -> Any:
    """Upstream getAttributeValue: list values first, then scalars; raises EvaluationError."""
    if type(attr) is dict and len(attr) == 1:  # the API's shape: exactly one value
        for key, value in attr.items():
            t = type(value)
            if key == "string" and t is str or key == "bool" and t is bool:
                return value
            if key == "int" and t is int and INT64_MIN <= value <= INT64_MAX:
                return value
    return _attribute_value(name, attr)


def _attribute_value(name: str, attr: Any) -> Any:
    if type(attr) is not dict:
        raise EvaluationError(f"attribute {name}: unsupported attribute value")
    for key in _LISTS:
        values = attr.get(key)
        if values is not None:
            if type(values) is not list:
                raise EvaluationError(f"attribute {name}: unsupported attribute value")
            want = _SCALAR_TYPES[key]
            return [_checked(v, want, name) for v in values]
    versions = attr.get("versions")
    if versions is not None:
        if type(versions) is not list:
            raise EvaluationError(f"attribute {name}: unsupported attribute value")
        return [_version(v, name) for v in versions]
    for key in _SCALARS:
        value = attr.get(key)
        if value is not None:
            return _checked(value, _SCALAR_TYPES[key], name)
    version = attr.get("version")
    if version is not None:
        return _version(version, name)
    raise EvaluationError(f"attribute {name}: unsupported attribute value")


def capacity_value(name: str, cap: Any) -> Quantity:
    raw = (cap or {}).get("value", 0) if type(cap) is dict or cap is None else cap
    if isinstance(raw, Quantity):
        return raw
    try:
        return parse_quantity(raw)
    except (ValueError, TypeError) as e:
        raise EvaluationError(f"capacity {name}: {e}") from None


class DeviceInput:
    """One API device as the `device` variable (see the module docstring). Cheap to build; the
    constructor checks every value once (`failure`), lookups convert on demand."""

    __slots__ = ("driver", "allow_multiple", "_attrs", "_caps", "failure")

    def __init__(self, device: dict[str, Any], driver: str) -> None:
        self.driver = driver
        self.allow_multiple = bool(device.get("allowMultipleAllocations") or False)
        attrs = device.get("attributes") or {}
        caps = device.get("capacity") or {}
        self._attrs: dict[str, Any] = attrs if type(attrs) is dict else {}
        self._caps: dict[str, Any] = caps if type(caps) is dict else {}
        self.failure: str | None = None
        try:
            for name, attr in self._attrs.items():
                if type(name) is not str:
                    raise EvaluationError(f"attribute {name!r}: the name is not a string")
                if type(attr) is dict and len(attr) == 1:  # the API's shapes, as attribute_value's first test
                    v = attr.get("string")
                    if type(v) is str:
                        continue
                    v = attr.get("int")
                    if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                        continue
                    if type(attr.get("bool")) is bool:
                        continue
                attribute_value(name, attr)
            for name, cap in self._caps.items():
                if type(name) is not str:
                    raise EvaluationError(f"capacity {name!r}: the name is not a string")
                if type(cap) is dict and known_quantity(cap.get("value")):
                    continue  # a quantity seen to parse
                capacity_value(name, cap)
        except EvaluationError as e:
            self.failure = str(e)
        except (TypeError, ValueError, OverflowError, RecursionError) as e:  # input no API server accepts
            self.failure = f"invalid device: {type(e).__name__}: {e}"

    # -- lookups by literal keys (the evaluator's fast paths) ---------------------------------------

    def _raw(self, table: dict[str, Any], domain: str, ident: str) -> tuple[str, Any] | None:
        if "/" in domain:
            return None
        if domain == self.driver and "/" not in ident:
            v = table.get(ident)
            if v is not None:
                return ident, v
        name = domain + "/" + ident
        v = table.get(name)
        return (name, v) if v is not None else None

    def attribute(self, domain: str, ident: str) -> Any:
        hit = self._raw(self._attrs, domain, ident)
        if hit is None:
            raise CelError(f"no such key: {ident}")
        try:
            return attribute_value(hit[0], hit[1])
        except EvaluationError as e:
            raise CelError(str(e)) from None

    def capacity_value(self, domain: str, ident: str) -> Quantity:
        hit = self._raw(self._caps, domain, ident)
        if hit is None:
            raise CelError(f"no such key: {ident}")
        try:
            return capacity_value(hit[0], hit[1])
        except EvaluationError as e:
            raise CelError(str(e)) from None

    def attribute_domain(self, domain: str) -> dict[str, Any]:
        return self._domain(self._attrs, domain, attribute_value)

    def capacity_domain(self, domain: str) -> dict[str, Any]:
        return self._domain(self._caps, domain, capacity_value)

    def _domain(self, table: dict[str, Any], domain: str, convert: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, raw in table.items():
            d, ident = _split(name, self.driver)
            if d == domain:
                try:
                    out[ident] = convert(name, raw)
                except EvaluationError as e:
                    raise CelError(str(e)) from None
        return out

    # -- whole maps ------------------------------------------------------------------------------------

    def attributes_map(self) -> DefaultMap:
        return self._map(self._attrs, attribute_value)

    def capacity_map(self) -> DefaultMap:
        return self._map(self._caps, capacity_value)

    def _map(self, table: dict[str, Any], convert: Any) -> DefaultMap:
        out = DefaultMap()
        for name, raw in table.items():
            d, ident = _split(name, self.driver)
            try:
                out.setdefault(d, {})[ident] = convert(name, raw)
            except EvaluationError as e:
                raise CelError(str(e)) from None
        return out

    def as_map(self) -> dict[str, Any]:
        return {
            "driver": self.driver,
            "attributes": self.attributes_map(),
            "capacity": self.capacity_map(),
            "allowMultipleAllocations": self.allow_multiple,
        }

    # -- what the result cache keys on ---------------------------------------------------------------

    def read(self, read: tuple[str, ...]) -> Any:
        """The value of one read of `webhook.cel.interpreter.reads` as a hashable key (for projections), or MISSING."""
        first = read[0]
        if first == "driver":
            return self.driver
        if first == "allowMultipleAllocations":
            return self.allow_multiple
        is_attr = first == "attributes"
        table = self._attrs if is_attr else self._caps
        if len(read) == 3:
            hit = self._raw(table, read[1], read[2])
            if hit is None:
                return MISSING
            try:
                value = attribute_value(*hit) if is_attr else capacity_value(*hit)
            except EvaluationError:
                return MISSING
            return _value_key(value)
        return tuple(
            sorted(
                (ident, _value_key(attribute_value(name, raw) if is_attr else capacity_value(name, raw)))
                for name, raw in table.items()
                for d, ident in (_split(name, self.driver),)
                if d == read[1]
            )
        )


def normalise_device(device: dict[str, Any], driver: str) -> DeviceInput:
    """The `device` variable for an API device of a slice of `driver` (see `DeviceInput`)."""
    return DeviceInput(device, driver)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def _value_key(v: Any) -> Any:
    """A hashable key equal exactly for values no CEL function tells apart: the type is part of it
    (1, true and 1.0 differ); quantities compare by value (40Gi == 40960Mi), versions without build
    metadata (which no function reads)."""
    if type(v) is list:
        return ("l", tuple(_value_key(x) for x in v))
    return (type(v), v)
