"""Workloads that hold a Pod template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
ReplicationController, PodTemplate): where the template is, and the template seen as a Pod."""

from __future__ import annotations

from typing import Any

from webhook.model import names
from webhook.model.plain import as_dict, as_list

# (apiVersion, kind) -> keys from the object's root to its PodTemplateSpec
WORKLOADS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps/v1", "Deployment"): ("spec", "template"),
    ("apps/v1", "ReplicaSet"): ("spec", "template"),
    ("apps/v1", "StatefulSet"): ("spec", "template"),
    ("apps/v1", "DaemonSet"): ("spec", "template"),
    ("batch/v1", "Job"): ("spec", "template"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
    ("v1", "ReplicationController"): ("spec", "template"),
    ("v1", "PodTemplate"): ("template",),
}
WORKLOAD_KINDS: tuple[str, ...] = tuple(kind for _, kind in WORKLOADS)
IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _extended(name: Any) -> bool:
    return isinstance(name, str) and (
        name.startswith(IMPLICIT_EXTENDED_PREFIX) or not names.extended_resource_name(name)
    )


def uses_dra(template: Any) -> bool:
    """Whether a Pod template (as written) uses DRA: `resourceClaims`, claims in any container's (or the
    Pod's) `resources`, or an extended resource, which a DeviceClass may serve. Workloads that do not
    are not DRA objects: draguard leaves them alone."""
    spec = as_dict(as_dict(template).get("spec"))
    if spec.get("resourceClaims") is not None or as_dict(spec.get("resources")).get("claims") is not None:
        return True
    for list_name in CONTAINER_LISTS:
        for c in as_list(spec.get(list_name)):
            res = as_dict(as_dict(c).get("resources"))
            if res.get("claims") is not None:
                return True
            if any(_extended(k) for part in ("requests", "limits") for k in as_dict(res.get(part))):
                return True
    return False


def template_keys(api_version: Any, kind: Any) -> tuple[str, ...] | None:
    """The keys leading to the Pod template of a workload kind; None for any other kind."""
    return (
        WORKLOADS.get((api_version, kind)) if isinstance(api_version, str) and isinstance(kind, str) else None
    )


def template_prefix(keys: tuple[str, ...]) -> str:
    """`("spec", "template")` -> `spec.template` (the template's field path in the workload)."""
    return ".".join(keys)


def get_path(obj: Any, keys: tuple[str, ...]) -> Any:
    """The value at `keys` (None when a step is missing or not an object)."""
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def template_of(obj: dict[str, Any]) -> tuple[tuple[str, ...], Any] | None:
    """(keys, template value) of a workload object; None for other kinds."""
    keys = template_keys(obj.get("apiVersion"), obj.get("kind"))
    if keys is None:
        return None
    return keys, get_path(obj, keys)


def pod_view(template: Any) -> dict[str, Any]:
    """The template as a Pod the checks of a Pod apply to: its metadata and spec (a missing spec is an
    empty one, as the API server decodes a missing PodTemplateSpec: its containers are then required)."""
    t = as_dict(template)
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    if "metadata" in t:
        pod["metadata"] = t["metadata"]
    pod["spec"] = t["spec"] if t.get("spec") is not None else {}
    return pod


def with_template(obj: dict[str, Any], keys: tuple[str, ...], pod: dict[str, Any]) -> dict[str, Any]:
    """A copy of `obj` whose template is the Pod view's metadata and spec (the rest shared)."""
    out = dict(obj)
    parent = out
    for k in keys[:-1]:
        child = dict(as_dict(parent.get(k)))
        parent[k] = child
        parent = child
    template = dict(as_dict(parent.get(keys[-1])))
    if "metadata" in pod:
        template["metadata"] = pod["metadata"]
    template["spec"] = pod.get("spec", {})
    parent[keys[-1]] = template
    return out


def prefixed(prefix: str, field: str) -> str:
    """A field path of the Pod view as a path in the workload: `spec.x` -> `spec.template.spec.x`."""
    return f"{prefix}.{field}" if field else prefix
