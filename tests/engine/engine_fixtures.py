"""Builders for allocation tests: objects (plain dicts, tests/builders.py) in, ClusterState and allocate()
outcomes out."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from tests import builders
from tests.builders import DRIVER, request
from webhook.config.profile import load_profile
from webhook.engine import Budget, Outcome, allocate
from webhook.state import ClusterState

__all__ = ["DRIVER", "claim", "devices", "gpu_class", "node_slice", "picked", "req", "run", "state_of"]


def state_of(objs: Iterable[dict[str, Any]], gates: dict[str, bool] | None = None) -> ClusterState:
    return ClusterState.from_objects(copy.deepcopy(list(objs)), load_profile("1.37", gates or {}))


def run(objs: Iterable[dict[str, Any]], gates: dict[str, bool] | None = None, **kw: Any) -> Outcome:
    """Objects without status.allocation among the ResourceClaims are the claims to allocate."""
    objs = copy.deepcopy(list(objs))  # a test's objects are its own: nothing the engine does reaches them
    pending = [
        o for o in objs if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation")
    ]
    rest = [o for o in objs if o not in pending]
    state = ClusterState.from_objects(rest, load_profile("1.37", gates or {}))
    kw.setdefault("budget", Budget(steps=100_000, seconds=20.0))
    return allocate(state, pending, **kw)


def picked(out: Outcome) -> list[list[tuple[str, str]]]:
    """Per claim: (request, device) pairs."""
    return [[(r.request, r.device) for r in c.results] for c in out.claims]


def devices(out: Outcome) -> list[str]:
    return [r.device for c in out.claims for r in c.results]


def gpu_class(name: str = "gpu", expr: str | None = None, **spec: Any) -> dict[str, Any]:
    """DeviceClass `name`, with one selector when `expr` is given (else no selectors) and more spec fields."""
    return builders.device_class(name, *([expr] if expr else []), **spec)


def req(name: str = "gpu", cls: str = "gpu", selectors: Sequence[str] = (), **exactly: Any) -> dict[str, Any]:
    """A request for exactly `cls`'s devices (count, allocationMode, adminAccess... as given)."""
    return request(name, cls, selectors, **exactly)


def claim(*requests: dict[str, Any], name: str = "c", ns: str = "ns", **devices: Any) -> dict[str, Any]:
    """ResourceClaim ns/c of `requests` (constraints, config, status as builders.claim takes them)."""
    return builders.claim(name, requests, ns=ns, **devices)


def node_slice(
    node: str,
    devices: Sequence[dict[str, Any]],
    name: str | None = None,
    pool: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """The slice `<node>-slice` of pool `<node>` (one slice, generation 1 unless `spec` says otherwise)."""
    return builders.resource_slice(name or node + "-slice", devices, pool=pool or node, node=node, **spec)
