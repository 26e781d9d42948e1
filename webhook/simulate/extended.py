"""Extended resources backed by DRA (KEP-5004): which DeviceClass serves a resource name, and the
scheduler's special per-Pod ResourceClaim with its `container-<i>-request-<j>` requests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from webhook.model import names
from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list, deep_copy
from webhook.model.quantity import parse_quantity

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
SPECIAL_CLAIM_NAME = "<extended-resources>"  # the scheduler's in-memory name, deliberately invalid
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
INT64_MAX = 2**63 - 1


def is_dra_extended_resource_name(name: str) -> bool:
    """An extended resource name, or an implicit `deviceclass.resource.kubernetes.io/<class>` name."""
    return name.startswith(IMPLICIT_PREFIX) or not names.extended_resource_name(name)


def _created(cls: dict[str, Any]) -> datetime | None:
    ts = as_dict(cls.get("metadata")).get("creationTimestamp")
    if not isinstance(ts, str):
        return None
    try:
        t = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def class_candidates(classes: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Extended resource name → every DeviceClass that declares it, the one that serves it first.

    Every class serves its implicit name; an explicit `extendedResourceName` declared by several
    classes goes to the newest `creationTimestamp`, ties (and classes without a timestamp, which
    count as oldest) to the smaller name; the others follow in that order."""
    out: dict[str, list[str]] = {}
    explicit: dict[str, list[tuple[datetime, str]]] = {}
    oldest = datetime.min.replace(tzinfo=UTC)
    for cls in classes:
        name = as_dict(cls.get("metadata")).get("name")
        if not isinstance(name, str) or not name:
            continue
        out[IMPLICIT_PREFIX + name] = [name]
        ern = as_dict(cls.get("spec")).get("extendedResourceName")
        if isinstance(ern, str) and ern:
            explicit.setdefault(ern, []).append((_created(cls) or oldest, name))
    for ern, group in explicit.items():
        ranked = sorted(group, key=lambda tn: (oldest - tn[0], tn[1]))  # newest first, then the name
        out[ern] = list(dict.fromkeys(n for _, n in ranked))
    return out


def class_mapping(classes: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Extended resource name → the DeviceClass that serves it (see `class_candidates`)."""
    return {resource: names[0] for resource, names in class_candidates(classes).items()}


def container_requests(container: dict[str, Any]) -> dict[str, Any]:
    """`resources.requests` as the API server stores them: limits fill in missing requests."""
    res = as_dict(container.get("resources"))
    out = dict(as_dict(res.get("limits")))
    out.update(as_dict(res.get("requests")))
    return out


def _as_int64(value: Any) -> int | None:
    """Go `Quantity.AsInt64`: None unless the quantity is a whole number within int64."""
    try:
        q = parse_quantity(value)
    except (ValueError, TypeError):
        return None
    if not q.is_integer or not q.fits_int64():
        return None
    return q.int_value()


def _whole(value: Any) -> int:
    """A node's scalar resource as the scheduler reads it (Go `Value()`: whole units, rounded up)."""
    try:
        return parse_quantity(value).int_value()
    except (ValueError, TypeError, OverflowError):
        return 0


def all_containers(pod: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """`initContainers ++ containers` and the number of init containers."""
    spec = as_dict(pod.get("spec"))
    init = [as_dict(c) for c in as_list(spec.get("initContainers"))]
    return init + [as_dict(c) for c in as_list(spec.get("containers"))], len(init)


def container_path(index: int, n_init: int) -> Path:
    """Field path of container `index` of `initContainers ++ containers`."""
    if index < n_init:
        return Path("spec").child("initContainers").index(index)
    return Path("spec").child("containers").index(index - n_init)


def requested_resources(pod: dict[str, Any]) -> set[str]:
    """DRA-extended resource names with a non-zero request in any container (init or regular)."""
    out: set[str] = set()
    containers, _ = all_containers(pod)
    for c in containers:
        for rname, qty in container_requests(c).items():
            if not isinstance(rname, str) or not is_dra_extended_resource_name(rname):
                continue
            try:
                if not parse_quantity(qty).is_zero():
                    out.add(rname)
            except (ValueError, TypeError):
                continue
    return out


def needs_special_claim(pod: dict[str, Any], mapping: dict[str, str]) -> bool:
    """PreFilter trigger: a non-zero request for a resource that some DeviceClass serves."""
    return any(r in mapping for r in requested_resources(pod))


@dataclass
class NodeVariant:
    """How one node serves the Pod's extended resources: by DRA (`dra`), or not at all (`unfit`)."""

    dra: frozenset[str] = frozenset()
    unfit: str | None = None  # the first resource neither the node nor a DeviceClass provides


def node_variant(
    pod_resources: set[str], mapping: dict[str, str], node: dict[str, Any] | None
) -> NodeVariant:
    """Filter's per-node split: allocatable > 0 ⇒ device plugin; mapped and allocatable 0/absent ⇒
    DRA; neither ⇒ the Pod does not fit. Without a Node object every mapped resource goes to DRA."""
    if node is None:
        return NodeVariant(frozenset(r for r in pod_resources if r in mapping))
    allocatable = as_dict(as_dict(node.get("status")).get("allocatable"))
    dra: set[str] = set()
    for r in sorted(pod_resources):
        present = r in allocatable
        amount = _whole(allocatable[r]) if present else 0
        if r in mapping and not amount:
            dra.add(r)
        elif not present:
            return NodeVariant(frozenset(dra), unfit=r)
    return NodeVariant(frozenset(dra))


@dataclass
class RequestMapping:
    container_index: int
    container_name: str
    resource: str
    request: str


@dataclass
class _Request:
    name: str
    count: int
    cls: str


def _request_for(
    index: int, container: dict[str, Any], resource: str, cls: str, reusable: list[_Request | None]
) -> tuple[_Request | None, list[RequestMapping]]:
    """One container's request for one resource, after reusing `reusable` requests (may be None)."""
    creqs = container_requests(container)
    if resource not in creqs:
        return None, []
    wanted = _as_int64(creqs[resource])
    if not wanted:
        return None, []
    cname = str(container.get("name", ""))
    mappings: list[RequestMapping] = []
    covered = 0
    for r in reusable:
        if r is None:
            continue
        covered += r.count
        mappings.append(RequestMapping(index, cname, resource, r.name))
        if covered >= wanted:
            return None, mappings
    # upstream's index: among *every* request of the container sorted by name (cpu and memory count too),
    # so a single GPU after a memory request is `request-1`; translate names its claims the same way
    position = sorted(str(k) for k in creqs).index(resource)
    name = f"container-{index}-request-{position}"
    mappings.append(RequestMapping(index, cname, resource, name))
    return _Request(name, wanted - covered, cls), mappings


def special_requests(
    pod: dict[str, Any], dra_resources: frozenset[str], mapping: dict[str, str]
) -> tuple[list[dict[str, Any]], list[RequestMapping]]:
    """The special claim's `spec.devices.requests` (sorted by name) and the container mappings.

    Long-lived containers (regular ones and init containers with `restartPolicy: Always`) each get
    their own request; a plain init container first reuses the requests of long-lived containers at
    the same or a later index, requests only the remainder, and of all plain init-container requests
    for a resource only the largest is kept (their mappings are renamed to it)."""
    containers, n_init = all_containers(pod)
    long_lived = [
        i for i, c in enumerate(containers) if not (i < n_init and c.get("restartPolicy") != "Always")
    ]
    short_lived = [i for i in range(n_init) if i not in long_lived]
    requests: list[_Request] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(dra_resources):
        cls = mapping.get(resource)
        if cls is None:
            continue
        long_reqs: list[_Request | None] = [None] * len(containers)
        long_maps: list[RequestMapping] = []
        for i in long_lived:
            req, maps = _request_for(i, containers[i], resource, cls, [])
            long_reqs[i] = req
            long_maps.extend(maps)
        biggest: _Request | None = None
        short_names: set[str] = set()
        short_maps: list[RequestMapping] = []
        for i in short_lived:
            req, maps = _request_for(i, containers[i], resource, cls, long_reqs[i:])
            if req is not None:
                short_names.add(req.name)
                if biggest is None or biggest.count < req.count:
                    biggest = req
            short_maps.extend(maps)
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest.name)
            for m in short_maps:
                if m.request in short_names:
                    m.request = biggest.name
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_reqs if r is not None)
        mappings.extend(long_maps)
        mappings.extend(short_maps)
    requests.sort(key=lambda r: r.name)
    out = [
        {
            "name": r.name,
            "exactly": {"deviceClassName": r.cls, "allocationMode": "ExactCount", "count": r.count},
        }
        for r in requests
    ]
    return out, mappings


def find_extended_claim(pod: dict[str, Any], claims: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A claim from an earlier scheduling attempt: annotated and controlled by this Pod."""
    meta = as_dict(pod.get("metadata"))
    for claim in claims:
        cmeta = as_dict(claim.get("metadata"))
        if as_dict(cmeta.get("annotations")).get(EXTENDED_CLAIM_ANNOTATION) != "true":
            continue
        if controlled_by(cmeta, meta):
            return claim
    return None


def controlled_by(meta: dict[str, Any], pod_meta: dict[str, Any]) -> bool:
    """An ownerReference with controller: true naming the Pod (the UID must match when both have one)."""
    for ref in as_list(meta.get("ownerReferences")):
        ref = as_dict(ref)
        if ref.get("kind", "Pod") != "Pod" or ref.get("name") != pod_meta.get("name"):
            continue
        if not ref.get("controller"):
            continue
        uid, pod_uid = ref.get("uid"), pod_meta.get("uid")
        if uid and pod_uid and uid != pod_uid:
            continue
        return True
    return False


def owner_reference(pod: dict[str, Any], block: bool = False) -> dict[str, Any]:
    meta = as_dict(pod.get("metadata"))
    ref: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": meta.get("name", ""),
        "controller": True,
    }
    if meta.get("uid"):
        ref["uid"] = meta["uid"]
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


@dataclass
class SpecialClaim:
    claim: dict[str, Any]
    mappings: list[RequestMapping] = field(default_factory=list)


def special_claim(
    pod: dict[str, Any],
    namespace: str,
    name: str,
    dra_resources: frozenset[str],
    mapping: dict[str, str],
    existing: dict[str, Any] | None = None,
) -> SpecialClaim:
    """The node-specific special claim: the existing (request-less) claim or a new in-memory one,
    with the requests for the resources this node serves through DRA."""
    reqs, maps = special_requests(pod, dra_resources, mapping)
    if existing is not None:
        claim = deep_copy(existing)
    else:
        pod_name = str(as_dict(pod.get("metadata")).get("name", ""))
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": name,
                "generateName": pod_name + "-extended-resources-",
                "namespace": namespace,
                "ownerReferences": [owner_reference(pod)],
                "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            },
            "spec": {},
        }
    claim.setdefault("spec", {})["devices"] = {"requests": reqs}
    return SpecialClaim(claim, maps)
