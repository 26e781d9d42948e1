"""What the offline lint rules read across a run: per object a small, picklable summary made where the
object is validated (a worker process), and the run's `RunFacts` built from them once.

- a ResourceSlice: its driver, the attribute and capacity names every one of its devices publishes (with
  their types and the first MAX_VALUES distinct values), and the devices themselves (names, attributes, capacities) while a file holds at most
  MAX_DEVICES_PER_FILE of them (beyond, `complete` is False and no rule concludes "no device matches");
- a DeviceClass: its selectors; a ResourceClaim or ResourceClaimTemplate: per request and subrequest the
  class, the selectors and where adminAccess is set;
- a Namespace (a kind draguard does not validate): its name, labels and place in the input.

Nothing here is used by the webhook: its cluster state holds the objects themselves.
"""

from __future__ import annotations

import marshal
import pickle
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

from webhook.model.plain import as_dict, as_list

if TYPE_CHECKING:
    from webhook.cel.uses import Uses

MAX_DEVICES_PER_FILE = 2048  # devices kept for evaluating selectors (each a few hundred bytes)
MAX_VALUES = 16  # distinct values kept per attribute (for did-you-mean)

ATTRIBUTE_TYPES = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def qualify(name: str, driver: str) -> tuple[str, str]:
    """(domain, id) of an attribute or capacity name: a bare name is in the driver's domain."""
    domain, sep, ident = name.rpartition("/")
    return (domain, ident) if sep else (driver, name)


def attribute_type(value: Any) -> str:
    """The type of an attribute value (`{string: x}` -> "string"; "" when unknown)."""
    for t in ATTRIBUTE_TYPES:
        if t in as_dict(value):
            return t
    return ""


@dataclass(frozen=True, slots=True)
class SliceFacts:
    driver: str
    devices: int  # how many the slice has
    # (domain, id) -> (types, a few values as text) for attributes; capacity names as (domain, id)
    attributes: dict[tuple[str, str], tuple[frozenset[str], tuple[str, ...]]]
    capacities: frozenset[tuple[str, str]]
    # the devices (name, attributes, capacity, allowMultipleAllocations), packed (`pack_samples`): they
    # cross from a worker to the main process as one string of bytes, read only by a run with selectors
    packed: bytes = b""

    @property
    def samples(self) -> tuple[dict[str, Any], ...]:
        return unpack_samples(self.packed)


def pack_samples(samples: tuple[dict[str, Any], ...]) -> bytes:
    """The devices of a slice as bytes: `marshal` (plain data: several times faster than pickling them
    with the rest of a file's result, and nothing to unpickle in a run that never reads them); pickle
    for a value marshal does not take."""
    if not samples:
        return b""
    try:
        return b"m" + marshal.dumps(samples)
    except ValueError:
        return b"p" + pickle.dumps(samples, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_samples(packed: bytes) -> tuple[dict[str, Any], ...]:
    if not packed:
        return ()
    if packed[:1] == b"m":
        return marshal.loads(packed[1:])  # type: ignore[no-any-return]
    return pickle.loads(packed[1:])  # type: ignore[no-any-return]  # noqa: S301 - made by this process's worker


@dataclass(frozen=True, slots=True)
class SelectorFacts:
    path: str  # of the `cel.expression`
    expression: str


@dataclass(frozen=True, slots=True)
class ClassFacts:
    name: str
    selectors: tuple[SelectorFacts, ...]


@dataclass(frozen=True, slots=True)
class RequestFacts:
    path: str  # of the request or subrequest (`spec.devices.requests[0].firstAvailable[1]`)
    class_name: str
    class_path: str
    selectors: tuple[SelectorFacts, ...]
    admin_path: str  # where adminAccess: true is set ("" when it is not)


@dataclass(frozen=True, slots=True)
class ClaimFacts:
    kind: str
    namespace: str | None
    name: str
    requests: tuple[RequestFacts, ...]


@dataclass(frozen=True, slots=True)
class NamespaceFacts:
    name: str
    labels: dict[str, str]
    source: str
    line: int


Facts = SliceFacts | ClassFacts | ClaimFacts


def _selectors(v: Any, base: str) -> tuple[SelectorFacts, ...]:
    out = []
    for k, sel in enumerate(as_list(v)):
        expr = as_dict(as_dict(sel).get("cel")).get("expression")
        if isinstance(expr, str) and expr:
            out.append(SelectorFacts(f"{base}.selectors[{k}].cel.expression", expr))
    return tuple(out)


def _slice(spec: dict[str, Any], budget: list[int]) -> SliceFacts | None:
    """A slice's facts, on the hot path of a large inventory: every device is read, in C where it can be.
    Each attribute name is read as one column over the devices (`_column`): its types from every device,
    its values until MAX_VALUES distinct ones are known."""
    driver = _s(spec.get("driver"))
    if not driver:
        return None
    types_of: dict[str, set[str]] = {}
    values_of: dict[str, list[str]] = {}
    cap_names: set[str] = set()
    devices = [d for d in as_list(spec.get("devices")) if type(d) is dict]
    published = [a for d in devices if type(a := d.get("attributes")) is dict and a]
    for name in sorted(set().union(*published)):  # every name (sorted: the same facts on every run)
        _column(name, list(filter(None, map(dict.get, published, repeat(name)))), types_of, values_of)
    for d in devices:
        capacity = d.get("capacity")
        if type(capacity) is dict:
            cap_names.update(capacity)
    samples: tuple[dict[str, Any], ...] = ()
    if budget[0] >= len(devices):
        budget[0] -= len(devices)
        samples = tuple(
            {
                "name": _s(d.get("name")),
                "attributes": as_dict(d.get("attributes")),
                "capacity": as_dict(d.get("capacity")),
                "allowMultipleAllocations": d.get("allowMultipleAllocations") is True,
            }
            for d in devices
        )
    else:
        budget[0] = -1  # this file's devices are not all kept: no "matches nothing" conclusion
    return SliceFacts(
        driver,
        len(devices),
        {qualify(str(k), driver): (frozenset(t), tuple(values_of[k])) for k, t in types_of.items()},
        frozenset(qualify(str(k), driver) for k in cap_names),
        pack_samples(samples),
    )


_TYPES = frozenset(ATTRIBUTE_TYPES)


def _column(
    name: str, column: list[Any], types_of: dict[str, set[str]], values_of: dict[str, list[str]]
) -> None:
    """The types and the first MAX_VALUES distinct values of one attribute over the devices of a slice
    that publish it (its values as written, `{string: x}`; empty ones left out), in C where it can be: when every value is a
    mapping with the same one type key, values are read until MAX_VALUES distinct ones are known; else
    one value at a time (`_attribute`)."""
    try:
        keys = set().union(*column)
    except TypeError:  # a value that is not a mapping
        keys = set()
    if len(keys) != 1 or not _TYPES.issuperset(keys):
        for value in column:
            _attribute(name, value, types_of, values_of)
        return
    known = types_of.get(name)
    if known is None:
        known = types_of[name] = set()
        values_of[name] = []
    known.update(keys)
    values = values_of[name]
    for start in range(0, len(column), 4 * MAX_VALUES):
        if len(values) >= MAX_VALUES:
            return
        part = column[start : start + 4 * MAX_VALUES]
        try:
            raw = list(map(next, map(iter, map(dict.values, part))))
        except TypeError:  # not mappings after all
            raw = []
        if len(raw) != len(part):  # an empty mapping among them: one value at a time
            for value in part:
                _attribute(name, value, types_of, values_of)
            continue
        try:
            distinct = list(dict.fromkeys(raw))
        except TypeError:  # a list value (ints, strings, ...) is unhashable
            distinct = list(dict.fromkeys(map(str, raw)))
        for v in distinct:
            text = ("true" if v else "false") if isinstance(v, bool) else str(v)
            if text not in values:
                values.append(text)
                if len(values) >= MAX_VALUES:
                    break


def _attribute(name: str, value: Any, types_of: dict[str, set[str]], values_of: dict[str, list[str]]) -> None:
    types = types_of.get(name)
    if types is None:
        types = types_of[name] = set()
        values_of[name] = []
    if type(value) is not dict:
        return
    for t in value:
        if t in ATTRIBUTE_TYPES:
            break
    else:
        return
    types.add(t)
    values = values_of[name]
    if len(values) < MAX_VALUES:
        v = value[t]
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        if text not in values:
            values.append(text)


def without_samples(facts: list[Facts | None]) -> list[Facts | None]:
    """A file's facts once its devices are not all kept: the samples dropped (nothing would use them,
    and they would cross the process boundary for nothing)."""
    return [
        SliceFacts(f.driver, f.devices, f.attributes, f.capacities)
        if isinstance(f, SliceFacts) and f.packed
        else f
        for f in facts
    ]


def _requests(spec: dict[str, Any], prefix: str) -> tuple[RequestFacts, ...]:
    out = []
    for i, r in enumerate(as_list(as_dict(spec.get("devices")).get("requests"))):
        r = as_dict(r)
        base = f"{prefix}.devices.requests[{i}]"
        exact = r.get("exactly")
        if isinstance(exact, dict):
            admin = f"{base}.adminAccess" if exact.get("adminAccess") is True else ""
            out.append(
                RequestFacts(
                    f"{base}.exactly",
                    _s(exact.get("deviceClassName")),
                    f"{base}.exactly.deviceClassName",
                    _selectors(exact.get("selectors"), f"{base}.exactly"),
                    admin,
                )
            )
        for j, sub in enumerate(as_list(r.get("firstAvailable"))):
            sub = as_dict(sub)
            path = f"{base}.firstAvailable[{j}]"
            out.append(
                RequestFacts(
                    path,
                    _s(sub.get("deviceClassName")),
                    f"{path}.deviceClassName",
                    _selectors(sub.get("selectors"), path),
                    "",
                )
            )
    return tuple(out)


def facts_of(obj: Any, budget: list[int]) -> Facts | None:
    """The facts of one (defaulted, stripped) object; `budget` ([devices left to keep]) is shared by a
    file's slices."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("kind")
    spec = as_dict(obj.get("spec"))
    meta = as_dict(obj.get("metadata"))
    if kind == "ResourceSlice":
        return _slice(spec, budget)
    if kind == "DeviceClass":
        return ClassFacts(_s(meta.get("name")), _selectors(spec.get("selectors"), "spec"))
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        ns = _s(meta.get("namespace")) or None
        inner, prefix = (
            (spec, "spec") if kind == "ResourceClaim" else (as_dict(spec.get("spec")), "spec.spec")
        )
        return ClaimFacts(str(kind), ns, _s(meta.get("name")), _requests(inner, prefix))
    return None


def namespace_facts(obj: dict[str, Any], source: str, line: int) -> NamespaceFacts | None:
    """A v1 Namespace of the input (not validated by draguard, but its labels matter)."""
    if obj.get("kind") != "Namespace" or obj.get("apiVersion") != "v1":
        return None
    meta = as_dict(obj.get("metadata"))
    name = _s(meta.get("name"))
    if not name:
        return None
    labels = {str(k): str(v) for k, v in as_dict(meta.get("labels")).items()}
    return NamespaceFacts(name, labels, source, line)


@dataclass
class RunFacts:
    """The facts of a whole run, by object index (None: an object without facts), the Namespaces, and
    per object (source, kind, namespace)."""

    facts: list[Facts | None] = field(default_factory=list)
    namespaces: list[NamespaceFacts] = field(default_factory=list)
    objects: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    complete: bool = True  # every device of the run is in the slices' samples
    # objects of the input the API server rejects (no record: not decoded, a version it does not serve),
    # by (kind, namespace, name): where they are and the first error's rule
    rejected: dict[tuple[str, str | None, str], tuple[str, int, str]] = field(default_factory=dict)
    # the selector lint's analysis of selectors a worker process compiled, by (expression, the gates
    # DRAListTypeAttributes and DRAConsumableCapacity); None: it does not compile (webhook.rules.selectorlint)
    uses: dict[tuple[str, bool, bool], Uses | None] = field(default_factory=dict)

    def rejected_object(self, kind: str, namespace: str | None, name: str) -> tuple[str, int, str] | None:
        """Where a rejected object of the input with this kind and name is, and why (`namespace` None, or
        the object's missing namespace, matches any)."""
        hit = self.rejected.get((kind, namespace, name)) or self.rejected.get((kind, None, name))
        if hit is None and namespace is None:
            hit = next((v for (k, _ns, n), v in self.rejected.items() if k == kind and n == name), None)
        return hit

    def add(self, fr: Any, offset: int) -> None:
        """Take one file's facts (a `validate.FileResult` whose objects start at index `offset`)."""
        self.facts.extend([None] * (offset - len(self.facts)))
        self.facts.extend(fr.facts[: len(fr.objects)])
        self.facts.extend([None] * (offset + len(fr.objects) - len(self.facts)))
        self.namespaces.extend(fr.namespaces)
        self.complete = self.complete and fr.complete
        self.uses.update(fr.selector_uses)

    def slices(self) -> list[SliceFacts]:
        return [f for f in self.facts if isinstance(f, SliceFacts)]

    def classes(self) -> dict[str, ClassFacts]:
        out: dict[str, ClassFacts] = {}
        for f in self.facts:
            if isinstance(f, ClassFacts) and f.name not in out:
                out[f.name] = f
        return out
