"""Extended resources backed by DRA at admission (KEP-5004), for `draguard serve --extended-resources`.

A Pod asking for `example.com/gpu: 2` in a container's requests or limits, where a DeviceClass maps that
name (`spec.extendedResourceName`, or the implicit `deviceclass.resource.kubernetes.io/<class>`):

- `native` (default when the profile's DRAExtendedResource gate is on: the scheduler serves them): the
  Pod is not changed; `native_violations` checks the mapping — the implicit name's class exists
  (`pod.extended-resource-class`), one class serves an explicit name that several declare
  (`pod.extended-resource-clash`), the scheduler's claim for the Pod can hold the devices
  (`pod.extended-resource-count`) — and the admission feasibility check places the Pod as the scheduler
  would (special claim included).
- `translate` (for clusters whose scheduler does not: DRAExtendedResource off, e.g. 1.35): `translate`
  rewrites the Pod to use claims, built from the scheduler's own special-claim requests
  (`webhook.simulate.extended.special_requests`): each request becomes a Pod claim from a
  ResourceClaimTemplate per (namespace, class, count) named `draguard-<class>-<count>`; a container
  refers to the claims of its requests (a plain init container shares the claims of the long-lived
  containers it reuses, as it shares their requests upstream); the translated names are removed from
  the container's limits and requests. Names no DeviceClass maps are left alone (device plugins).
- `off`: nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.admission.patch import pointer
from webhook.engine.requests import MAX_RESULTS
from webhook.model.catalogue import RULES
from webhook.model.names import dns_label
from webhook.model.plain import as_dict, as_list
from webhook.model.quantity import parse_quantity
from webhook.model.text import clip
from webhook.model.violation import Violation
from webhook.simulate import extended as ext

MODES = ("native", "translate", "off")
TEMPLATE_PREFIX = "draguard-"
TEMPLATE_REQUEST = "devices"  # the one request of a translated template
MANAGED_BY = ("app.kubernetes.io/managed-by", "draguard")
MAX_NAME = 253  # a ResourceClaimTemplate name is a DNS subdomain
LISTED = 5  # items named in one message

CLASS_RULE = RULES["pod.extended-resource-class"]
CLASH_RULE = RULES["pod.extended-resource-clash"]
COUNT_RULE = RULES["pod.extended-resource-count"]


def default_mode(profile: Any) -> str:
    """`native` where the scheduler serves extended resources through DRA, else `off`."""
    return "native" if profile.enabled("DRAExtendedResource") else "off"


def _names(items: list[str]) -> str:
    shown = ", ".join(f'"{clip(n)}"' for n in items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


# -- where a container asks for a resource -----------------------------------------------------------


@dataclass(frozen=True)
class Use:
    """One container's non-zero request for a DRA-extended resource name."""

    index: int  # in initContainers ++ containers
    resource: str
    path: str  # `...resources.requests[<resource>]`, or `limits` when only there


def _nonzero(qty: Any) -> bool:
    try:
        return not parse_quantity(qty).is_zero()
    except (ValueError, TypeError):
        return False


def resource_path(index: int, n_init: int, container: dict[str, Any], resource: str) -> str:
    """Where a container names `resource`: under requests (the API server defaults them from limits),
    else limits."""
    part = (
        "requests" if resource in as_dict(as_dict(container.get("resources")).get("requests")) else "limits"
    )
    return str(ext.container_path(index, n_init).child("resources").child(part).key(resource))


def uses(pod: dict[str, Any]) -> list[Use]:
    """Every container's non-zero requests for extended resource names (init containers first)."""
    containers, n_init = ext.all_containers(pod)
    out: list[Use] = []
    for i, c in enumerate(containers):
        for rname, qty in ext.container_requests(c).items():
            if isinstance(rname, str) and ext.is_dra_extended_resource_name(rname) and _nonzero(qty):
                out.append(Use(i, rname, resource_path(i, n_init, c, rname)))
    return out


def _advertised(nodes: Iterable[dict[str, Any]], resources: Iterable[str]) -> dict[str, int]:
    """How many nodes list each resource in `status.allocatable` (> 0): served by a device plugin."""
    wanted = set(resources)
    out: dict[str, int] = {}
    for node in nodes:
        allocatable = as_dict(as_dict(node.get("status")).get("allocatable"))
        for r in wanted:
            if r in allocatable and _nonzero(allocatable[r]):
                out[r] = out.get(r, 0) + 1
    return out


# -- native: the mapping checks --------------------------------------------------------------------------


def native_violations(
    pod: dict[str, Any], classes: Iterable[dict[str, Any]], nodes: Iterable[dict[str, Any]] = ()
) -> list[Violation]:
    """The mapping checks of a Pod being created (rules' default severities; the caller applies the
    policy). Each resource is reported once, at the first container that asks for it."""
    found = uses(pod)
    if not found:
        return []
    candidates = ext.class_candidates(classes)
    out: list[Violation] = []
    first: dict[str, Use] = {}
    for use in found:
        first.setdefault(use.resource, use)
    for resource, use in first.items():
        serving = candidates.get(resource)
        if serving is None:
            if resource.startswith(ext.IMPLICIT_PREFIX):
                cls = resource[len(ext.IMPLICIT_PREFIX) :]
                out.append(
                    Violation(
                        CLASS_RULE.id,
                        CLASS_RULE.severity,
                        use.path,
                        f'DeviceClass "{clip(cls)}" does not exist, so nothing serves {clip(resource)}: the Pod stays '
                        "Pending until the class is created",
                    )
                )
            continue  # an explicit name no class maps: a device plugin's, left to the scheduler
        if len(serving) > 1:
            out.append(
                Violation(
                    CLASH_RULE.id,
                    CLASH_RULE.severity,
                    use.path,
                    f"{resource} is the extendedResourceName of DeviceClasses {_names(sorted(serving))}; "
                    f'"{serving[0]}" serves it (newest creationTimestamp, then the smaller name), the others '
                    "never do: give each class its own name",
                )
            )
    mapping = {r: names[0] for r, names in candidates.items()}
    mapped = frozenset(r for r in first if r in mapping)
    if mapped:
        out.extend(_count(pod, mapped, mapping, first, nodes))
    return out


def _count(
    pod: dict[str, Any],
    mapped: frozenset[str],
    mapping: dict[str, str],
    first: dict[str, Use],
    nodes: Iterable[dict[str, Any]],
) -> list[Violation]:
    requests, mappings = ext.special_requests(pod, mapped, mapping)
    total = sum(r["exactly"]["count"] for r in requests)
    if total <= MAX_RESULTS or _advertised(nodes, mapped):
        return []
    containers, _ = ext.all_containers(pod)
    parts: list[str] = []
    for r in requests:
        who = sorted({m.container_name for m in mappings if m.request == r["name"]})
        res = sorted({m.resource for m in mappings if m.request == r["name"]})
        parts.append(f"{r['exactly']['count']} for {', '.join(res)} of container {_names(who)}")
    listing = "; ".join(parts[:LISTED]) + (f"; and {len(parts) - LISTED} more" if len(parts) > LISTED else "")
    where = first[min(mapped, key=lambda r: (first[r].index, r))].path
    return [
        Violation(
            COUNT_RULE.id,
            COUNT_RULE.severity,
            where,
            f"the scheduler allocates the Pod's extended resources as one ResourceClaim of {total} devices "
            f"({listing}), but a claim holds at most {MAX_RESULTS}: no node can serve this Pod through DRA, "
            "and no node advertises the resources through a device plugin",
        )
    ]


# -- translate: the ResourceClaimTemplates -------------------------------------------------------------


def template_name(cls: str, count: int) -> str:
    """`draguard-<class>-<count>` (a DNS subdomain: the class name is one); a class name too long for
    that is cut and a hash of it added: `draguard-<cut>-<hash10>-<count>`."""
    name = f"{TEMPLATE_PREFIX}{cls}-{count}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(cls.encode()).hexdigest()[:10]
    room = MAX_NAME - len(TEMPLATE_PREFIX) - len(digest) - len(str(count)) - 2
    cut = cls[:room].rstrip(".-")
    return f"{TEMPLATE_PREFIX}{cut}-{digest}-{count}"


def parse_template_name(name: str) -> tuple[str, int] | None:
    """(class, count) of a name `template_name` made without cutting; None for any other name."""
    if not name.startswith(TEMPLATE_PREFIX):
        return None
    cls, _, count = name[len(TEMPLATE_PREFIX) :].rpartition("-")
    if not cls or not count.isdigit() or count.startswith("0") or not count.isascii():
        return None
    return cls, int(count)


def template_object(namespace: str, cls: str, count: int) -> dict[str, Any]:
    """The ResourceClaimTemplate for `count` devices of DeviceClass `cls` in `namespace`."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": template_name(cls, count),
            "namespace": namespace,
            "labels": {MANAGED_BY[0]: MANAGED_BY[1]},
        },
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": TEMPLATE_REQUEST,
                            "exactly": {
                                "deviceClassName": cls,
                                "allocationMode": "ExactCount",
                                "count": count,
                            },
                        }
                    ]
                }
            }
        },
    }


def _exactly(template: Mapping[str, Any]) -> tuple[Any, ...] | None:
    devices = as_dict(as_dict(as_dict(template.get("spec")).get("spec")).get("devices"))
    requests = as_list(devices.get("requests"))
    if len(requests) != 1 or set(devices) - {"requests"}:
        return None
    r = as_dict(requests[0])
    e = as_dict(r.get("exactly"))
    return (r.get("name"), e.get("deviceClassName"), e.get("allocationMode", "ExactCount"), e.get("count", 1))


def same_template(stored: Mapping[str, Any] | None, wanted: dict[str, Any]) -> bool:
    """Whether a stored template already asks for what `wanted` does (then it is not applied again)."""
    return stored is not None and _exactly(stored) is not None and _exactly(stored) == _exactly(wanted)


def managed_templates(
    pod: dict[str, Any],
    namespace: str,
    templates: Mapping[tuple[str, str], dict[str, Any]],
    classes: Mapping[tuple[str, str], dict[str, Any]],
) -> dict[tuple[str, str], dict[str, Any]]:
    """The templates a translated Pod refers to that the state does not hold yet (created by the mutating
    webhook a moment ago), rebuilt from their names: (namespace, name) → template."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in as_list(as_dict(pod.get("spec")).get("resourceClaims")):
        name = as_dict(entry).get("resourceClaimTemplateName")
        parsed = parse_template_name(name) if isinstance(name, str) else None
        if parsed is None or (namespace, name) in templates or ("", parsed[0]) not in classes:
            continue
        out[(namespace, str(name))] = template_object(namespace, *parsed)
    return out


# -- translate: the Pod --------------------------------------------------------------------------------


@dataclass
class Translation:
    """What translating a Pod's extended resources needs: the JSON Patch, the templates it refers to
    (to be applied unless the state has them), warnings, an audit line, and the metrics result
    (`translated`, `unmapped`: only names no class maps; None: no extended resources at all)."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    audit: str = ""
    result: str | None = None


def _free_name(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name in taken or dns_label(name):
        k += 1
        name = f"{base}-{k}"
    taken.add(name)
    return name


def _container_pointer(index: int, n_init: int) -> str:
    if index < n_init:
        return pointer(("spec", "initContainers", index))
    return pointer(("spec", "containers", index - n_init))


def _append_ops(base: str, current: Any, items: list[Any]) -> list[dict[str, Any]]:
    """Adds `items` to the list at `base` (creating it unless it is a list already)."""
    if isinstance(current, list):
        return [{"op": "add", "path": base + "/-", "value": item} for item in items]
    return [{"op": "add", "path": base, "value": items}]


def translate(
    pod: dict[str, Any],
    namespace: str,
    classes: Iterable[dict[str, Any]],
    nodes: Iterable[dict[str, Any]] = (),
) -> Translation:
    """The rewrite of a Pod being created (see the module docstring); pure."""
    found = uses(pod)
    if not found:
        return Translation()
    mapping = ext.class_mapping(classes)
    mapped = frozenset(u.resource for u in found if u.resource in mapping)
    if not mapped:
        return Translation(result="unmapped")
    requests, mappings = ext.special_requests(pod, mapped, mapping)
    if not requests:  # only non-integral quantities: the API server rejects them, upstream ignores them
        return Translation(result="unmapped")
    containers, n_init = ext.all_containers(pod)
    spec = as_dict(pod.get("spec"))
    existing = as_list(spec.get("resourceClaims"))
    taken = {str(as_dict(e).get("name")) for e in existing if isinstance(as_dict(e).get("name"), str)}
    for c in containers:  # a name a container already refers to is not free either
        taken.update(str(as_dict(r).get("name")) for r in as_list(as_dict(c.get("resources")).get("claims")))
    out = Translation(result="translated")
    claim_of: dict[str, str] = {}  # special request name → Pod claim name
    entries: list[dict[str, Any]] = []
    seen_templates: set[str] = set()
    for r in requests:
        cls, count = r["exactly"]["deviceClassName"], r["exactly"]["count"]
        template = template_object(namespace, cls, count)
        tname = template["metadata"]["name"]
        claim_of[r["name"]] = _free_name(r["name"], taken)
        entries.append({"name": claim_of[r["name"]], "resourceClaimTemplateName": tname})
        if tname not in seen_templates:
            seen_templates.add(tname)
            out.templates.append(template)
        if count > MAX_RESULTS:
            out.warnings.append(
                f'Pod claim "{claim_of[r["name"]]}" asks for {count} devices of DeviceClass "{cls}" but a claim '
                f"holds at most {MAX_RESULTS}: the Pod stays Pending"
            )
    refs: dict[int, list[str]] = {}
    removed: dict[int, list[str]] = {}
    for m in mappings:
        names = refs.setdefault(m.container_index, [])
        if claim_of[m.request] not in names:
            names.append(claim_of[m.request])
        gone = removed.setdefault(m.container_index, [])
        if m.resource not in gone:
            gone.append(m.resource)
    for index in sorted(refs):
        container = containers[index]
        res = as_dict(container.get("resources"))
        base = _container_pointer(index, n_init) + "/resources"
        for resource in removed[index]:
            for part in ("requests", "limits"):
                if resource in as_dict(res.get(part)):
                    out.ops.append({"op": "remove", "path": f"{base}/{part}{pointer((resource,))}"})
        claims = [{"name": n} for n in refs[index]]
        out.ops.extend(_append_ops(base + "/claims", res.get("claims"), claims))
    out.ops.extend(_append_ops("/spec/resourceClaims", spec.get("resourceClaims"), entries))
    out.warnings.insert(0, _summary(requests, mappings, claim_of, entries))
    advertised = _advertised(nodes, mapped)
    for resource, n in sorted(advertised.items()):
        out.warnings.append(
            f"{n} node(s) advertise {resource} through a device plugin; this Pod now asks for DRA devices only"
        )
    out.audit = ",".join(f"{e['name']}={e['resourceClaimTemplateName']}" for e in entries)[:1000]
    return out


def _summary(
    requests: list[dict[str, Any]],
    mappings: list[ext.RequestMapping],
    claim_of: dict[str, str],
    entries: list[dict[str, Any]],
) -> str:
    """One line: which containers' resources now come from which claim and template."""
    template = {e["name"]: e["resourceClaimTemplateName"] for e in entries}
    parts: list[str] = []
    for r in requests:
        pc = claim_of[r["name"]]
        who = [m for m in mappings if m.request == r["name"]]
        resources = ", ".join(dict.fromkeys(m.resource for m in who))
        names = list(dict.fromkeys(m.container_name for m in who))
        containers = ("container " if len(names) == 1 else "containers ") + _names(names)
        exactly = r["exactly"]
        parts.append(
            f'{resources} of {containers} → claim "{pc}" ({exactly["count"]} × DeviceClass '
            f'"{exactly["deviceClassName"]}", template "{template[pc]}")'
        )
    more = f"; and {len(parts) - LISTED} more" if len(parts) > LISTED else ""
    return (
        "draguard moved extended resources into ResourceClaims (--extended-resources translate): "
        + "; ".join(parts[:LISTED])
        + more
    )
