"""Builders for allocation tests: YAML manifests in, ClusterState and allocate() outcomes out."""

from __future__ import annotations

from typing import Any

import yaml

from webhook.config.profile import load_profile
from webhook.engine import Budget, Outcome, allocate
from webhook.state import ClusterState

DRIVER = "gpu.example.com"


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def state_of(text: str, gates: dict[str, bool] | None = None) -> ClusterState:
    return ClusterState.from_objects(docs(text), load_profile("1.37", gates or {}))


def run(text: str, gates: dict[str, bool] | None = None, **kw: Any) -> Outcome:
    """Objects without status.allocation among the ResourceClaims are the claims to allocate."""
    objs = docs(text)
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


def gpu_class(name: str = "gpu", expr: str | None = None, extra: str = "") -> str:
    sel = f"\n  selectors:\n  - cel: {{expression: {expr!r}}}" if expr else ""
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:{sel or ("" if extra else " {}")}{extra}
"""


def claim(requests: str, name: str = "c", extra: str = "") -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: ns}}
spec:
  devices:
    requests:
{requests}{extra}
"""


def node_slice(
    node: str, devices: str, name: str | None = None, pool: str | None = None, extra: str = ""
) -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name or node + "-slice"}}}
spec:
  driver: {DRIVER}
  nodeName: {node}
  pool: {{name: {pool or node}, generation: 1, resourceSliceCount: 1}}{extra}
  devices:
{devices}
"""
