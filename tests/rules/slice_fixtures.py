"""Shared helpers for the ResourceSlice rule tests: a valid slice, a profile with every DRA gate on,
and `run()` which validates a slice and returns `[(rule_id, field, message)]` for slice/device rules."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.rules import capacity_policy, device, device_counters, node_allocatable, slice  # noqa: F401
from webhook.rules.registry import object_rules

ALPHA_GATES = (
    "DRAListTypeAttributes",
    "DRANodeAllocatableResources",
    "DRAOptionalNodeOperations",
    "DRADeviceCompatibilityGroups",
    "DRAPartitionableDevicesType",
    "DRAResourcePoolStatus",
)
MINE = ("slice.", "device.")

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.example.com}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
      driverVersion: {version: 1.2.3}
      numa: {int: 0}
      gpu.example.com/mig: {bool: true}
    capacity:
      memory: {value: 80Gi}
"""


def ctx(**gates: bool) -> Context:
    """A context with every DRA gate on (so nothing is stripped), overridable per gate."""
    values = dict.fromkeys(ALPHA_GATES, True)
    values.update(gates)
    return Context(profile=load_profile("1.37", values))


def load(text: str = SLICE) -> dict[str, Any]:
    return yaml.safe_load(text)


def device_slice(*devices: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The base slice with its devices replaced (and spec fields set/removed: value None removes)."""
    obj = load()
    obj["spec"]["devices"] = [copy.deepcopy(d) for d in devices]
    for k, v in spec.items():
        if v is None:
            obj["spec"].pop(k, None)
        else:
            obj["spec"][k] = v
    return obj


def _pipeline():
    try:
        from webhook.validate import object_violations
    except Exception:  # the orchestrator or a sibling module is not importable yet
        return None
    return object_violations


def run(
    obj: dict[str, Any], context: Context | None = None, *, direct: bool = False
) -> list[tuple[str, str, str]]:
    """Validate `obj`; return (rule id, field, message) of every slice./device. finding."""
    context = context or ctx()
    object_violations = None if direct else _pipeline()
    if object_violations is not None:
        out = [(v.rule, v.field, v.message) for v in object_violations(copy.deepcopy(obj), context)]
    else:
        out = []
        for rule, fn in object_rules("ResourceSlice"):
            out.extend((rule.id, str(f.field), f.message) for f in fn(obj, context))
    return [t for t in out if t[0].startswith(MINE)]


def only(found: list[tuple[str, str, str]], rule_id: str) -> list[tuple[str, str]]:
    return [(f, m) for r, f, m in found if r == rule_id]
