"""DraguardPolicy cases shared by the validator's tests (tests/config) and the CRD's (tests/deploy): the
shipped examples, and mistakes with the path and reason draguard reports and whether the API server's
own check of the CRD schema (tests/deploy/test_policy_crd.py) rejects them first."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "examples" / "draguard-policy.yaml"


def example(name: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    return copy.deepcopy(next(d for d in docs if d["metadata"]["name"] == name))


def _set(obj: dict[str, Any], where: tuple[str | int, ...], value: Any) -> None:
    """Set (or, with value ..., delete) the field at `where`."""
    *head, last = where
    cur: Any = obj
    for part in head:
        cur = cur[part]
    if value is ...:
        del cur[last]
    else:
        cur[last] = value


T0, T1 = ("spec", "tenants", 0), ("spec", "tenants", 1)
NS = ("spec", "feasibility", "namespaces")
RULES_ = ("spec", "rules")
P, G = "platform-defaults", "gpu-tenants"
# (which example, where, the new value (... deletes), the expected error's path, its reason, whether the
# API server rejects it by the CRD's schema; False: only draguard can tell, the status says Invalid)
# fmt: off
BROKEN: list[tuple[str, tuple[str | int, ...], Any, str, str, bool]] = [
    (P, (*RULES_, "no-such-rule"), "error", "spec.rules[no-such-rule]", "UnknownRule", False),
    (P, (*RULES_, "admission.feasibility"), "off", "spec.rules[admission.feasibility]", "UnknownRule", False),
    (P, (*RULES_, "pool.completeness"), False, "spec.rules[pool.completeness]", "InvalidValue", True),
    (P, (*RULES_, "pool.completeness"), "Warning", "spec.rules[pool.completeness]", "InvalidValue", True),
    (P, ("spec", "feasibility", "default"), "enforced", "spec.feasibility.default", "InvalidValue", True),
    (P, ("spec", "feasibility", "kinds", "Deployment"), "warn", "spec.feasibility.kinds.Deployment", "UnknownField", True),
    (P, (*NS, 0, "name"), "ML", "spec.feasibility.namespaces[0].name", "InvalidValue", True),
    (P, (*NS, 1, "name"), "ml-prod", "spec.feasibility.namespaces[1].name", "Duplicate", True),
    (P, (*NS, 1, "kinds"), ..., "spec.feasibility.namespaces[1].default", "Required", True),
    (P, NS, {"ml-prod": "enforce"}, "spec.feasibility.namespaces", "InvalidType", True),
    (P, ("spec", "feasability"), {}, "spec.feasability", "UnknownField", True),
    (P, ("spec", "taints", "maxPods"), -1, "spec.taints.maxPods", "InvalidValue", True),
    (P, ("spec", "taints", "maxDevices"), "10", "spec.taints.maxDevices", "InvalidType", True),
    (P, ("spec", "taints", "maxEvictions"), 3, "spec.taints.maxEvictions", "UnknownField", True),
    (P, ("spec", "taints", "acknowledgeAnnotation"), "not an annotation!", "spec.taints.acknowledgeAnnotation",
     "InvalidValue", False),
    (P, ("spec", "rbac"), {"enforceNodeBoundStatus": "yes"}, "spec.rbac.enforceNodeBoundStatus", "InvalidType", True),
    (P, ("spec", "rbac"), {"enforceNodeBound": True}, "spec.rbac.enforceNodeBound", "UnknownField", True),
    (P, ("metadata", "name"), "Not_A_Name", "metadata.name", "InvalidValue", True),
    (P, ("metadata", "name"), ..., "metadata.name", "Required", True),
    (G, (*T0, "mode"), "Enforced", "spec.tenants[0].mode", "InvalidValue", True),
    (G, (*T0, "name"), "Shared GPUs", "spec.tenants[0].name", "InvalidValue", True),
    (G, (*T1, "name"), "shared-gpus", "spec.tenants[1].name", "Duplicate", True),
    (G, (*T0, "namespaceSelector"), ..., "spec.tenants[0].namespaceSelector", "Required", True),
    (G, (*T1, "namespaceSelector", "matchExpressions", 0, "operator"), "Gt",
     "spec.tenants[1].namespaceSelector.matchExpressions[0].operator", "InvalidSelector", True),
    (G, (*T1, "namespaceSelector", "matchExpressions", 0, "values"), ...,
     "spec.tenants[1].namespaceSelector.matchExpressions[0].values", "Required", True),
    (G, (*T0, "namespaceSelector", "matchLabels"), {"gpu.example.com/tier!": "shared"},
     "spec.tenants[0].namespaceSelector.matchLabels", "InvalidSelector", False),
    (G, (*T0, "exclude"), {}, "spec.tenants[0].exclude", "Required", True),
    (G, (*T0, "exclude", "namespaces"), ["Kube_System"], "spec.tenants[0].exclude.namespaces[0]", "InvalidValue", True),
    (G, (*T0, "allowedDeviceClasses"), ["gpu.example.com", "gpu.example.com"],
     "spec.tenants[0].allowedDeviceClasses[1]", "Duplicate", True),
    (G, (*T0, "requiredSelector", "expression"), 'device.attributes["gpu.example.com"].model ==',
     "spec.tenants[0].requiredSelector.expression", "InvalidExpression", False),
    (G, (*T0, "requiredSelector", "expression"), "device.driver",  # not a bool
     "spec.tenants[0].requiredSelector.expression", "InvalidExpression", False),
    (G, (*T0, "requiredSelector", "enforcement"), "Patch", "spec.tenants[0].requiredSelector.enforcement", "InvalidValue", True),
    (G, (*T0, "maxDevicesPerClaim"), 0, "spec.tenants[0].maxDevicesPerClaim", "InvalidValue", True),
    (G, (*T0, "maxDevicesPerPod"), "4", "spec.tenants[0].maxDevicesPerPod", "InvalidType", True),
    (G, (*T0, "adminAccess"), "no", "spec.tenants[0].adminAccess", "InvalidType", True),
    (G, (*T0, "extendedResource"), True, "spec.tenants[0].extendedResource", "UnknownField", True),
    (P, ("spec", "driverSchemas"), [{"driver": "gpu.acme.com", "apiVersion": "acme.com/v1", "kind": "AcmeConfig"}],
     "spec.driverSchemas[0].schema", "Required", True),
    (P, ("spec", "driverSchemas"), [{"driver": "gpu.acme.com", "apiVersion": "acme.com/v1", "kind": "AcmeConfig",
                                     "schema": {"type": "object", "format": "uuid"}}],
     "spec.driverSchemas[0].schema", "InvalidValue", False),
    (P, ("spec", "driverSchemas"), {"driver": "gpu.acme.com"}, "spec.driverSchemas", "InvalidType", True),
]
# fmt: on


def broken(name: str, where: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    obj = example(name)
    _set(obj, where, value)
    return obj
