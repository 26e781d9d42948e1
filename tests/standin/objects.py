"""Objects as the API server stores them (defaulted), to seed the stand-in with."""

from __future__ import annotations

from typing import Any

DRA = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "spec": {"podCIDR": "10.0.0.0/24"},
        "status": {
            "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"},
            "images": [
                {"names": [f"registry.example.com/image-{i}:1.0"], "sizeBytes": 1 << 20} for i in range(3)
            ],
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def device_class(name: str = "gpu.example.com", driver: str = DRIVER) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def resource_slice(
    node_name: str, devices: int = 2, generation: int = 1, name: str | None = None, model: str = "H100"
) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"model": {"string": model}, "index": {"int": i}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def claim(
    name: str, count: int = 1, namespace: str = "default", cls: str = "gpu.example.com"
) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": cls,
                            "allocationMode": "ExactCount",
                            "count": count,
                            "adminAccess": False,
                            "tolerations": [],
                        },
                    }
                ]
            }
        },
    }


def allocation(node_name: str, devices: list[int]) -> dict[str, Any]:
    """A claim status as the scheduler writes it: the devices of `node_name` at these indexes."""
    return {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": f"gpu-{i}"}
                    for i in devices
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            },
        }
    }


def pod(name: str, claims: list[str], namespace: str = "default") -> dict[str, Any]:
    """A defaulted Pod using these ResourceClaims (by name) in its one container."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-12-01T10:00:00Z",
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/ml/trainer:1.0",
                    "resources": {"claims": [{"name": c} for c in claims]},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "schedulerName": "default-scheduler",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "securityContext": {},
            "tolerations": [],
        },
    }


def ref(obj: dict[str, Any]) -> dict[str, Any]:
    """What the stand-in's /_control/delete takes."""
    meta = obj["metadata"]
    out = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    if "namespace" in meta:
        out["namespace"] = meta["namespace"]
    return out
