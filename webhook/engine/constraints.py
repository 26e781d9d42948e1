"""Claim constraints: matchAttribute and distinctAttribute, with add/remove for backtracking.

distinctAttribute compares every chosen device pairwise (upstream #140438 fixed: not only the last
device of each request). With DRAListTypeAttributes, values are sets: match keeps a running
intersection that must stay non-empty, distinct requires pairwise disjoint sets.
"""

from __future__ import annotations

from typing import Any

from webhook.engine.requests import ConstraintSpec
from webhook.model.records import DeviceRec

_SCALARS = ("int", "bool", "string", "version")
_LISTS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def lookup(dev: DeviceRec, name: str) -> dict[str, Any] | None:
    """Fully qualified key first, else the bare id when the domain is the device's driver."""
    attrs = dev.attributes
    if name in attrs:
        found: dict[str, Any] = attrs[name]
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != dev.id[0]:
        return None
    v = attrs.get(ident)
    return v if isinstance(v, dict) else None


def as_set(attr: dict[str, Any]) -> tuple[str, frozenset[Any]] | None:
    for key, typ in _LISTS.items():
        if attr.get(key):
            return typ, frozenset(attr[key])
    for typ in _SCALARS:
        if typ in attr:
            return typ, frozenset([attr[typ]])
    return None


def as_scalar(attr: dict[str, Any]) -> tuple[str, Any] | None:
    for typ in _SCALARS:
        if typ in attr:
            return typ, attr[typ]
    return None


class Constraint:
    """One constraint of one claim during a search."""

    def __init__(self, spec: ConstraintSpec, list_mode: bool) -> None:
        self.spec = spec
        self.list_mode = list_mode
        self.stack: list[Any] = []  # per added device: its value (distinct) or the running value (match)

    def applies(self, base: str, ref: str) -> bool:
        reqs = self.spec.requests
        return not reqs or base in reqs or ref in reqs

    def add(self, base: str, ref: str, dev: DeviceRec) -> bool:
        if not self.applies(base, ref):
            return True
        attr = lookup(dev, self.spec.attribute)
        if attr is None:
            return False
        value = as_set(attr) if self.list_mode else as_scalar(attr)
        if self.spec.kind == "match":
            if not self.stack:
                if self.list_mode and value is None:
                    return False
                self.stack.append(value)
                return True
            cur = self.stack[-1]
            if value is None or cur is None or value[0] != cur[0]:
                return False
            if self.list_mode:
                common = cur[1] & value[1]
                if not common:
                    return False
                self.stack.append((cur[0], common))
            else:
                if value[1] != cur[1]:
                    return False
                self.stack.append(cur)
            return True
        if value is None:
            return False
        for other in self.stack:
            if other[0] != value[0]:
                continue
            if self.list_mode:
                if other[1] & value[1]:
                    return False
            elif other[1] == value[1]:
                return False
        self.stack.append(value)
        return True

    def remove(self, base: str, ref: str) -> None:
        if self.applies(base, ref):
            self.stack.pop()
