"""Pod fields that reference ResourceClaims (docs/rules.md: pod.*): spec.resourceClaims, container claims, claim statuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list
from webhook.model.text import clip
from webhook.model.violation import Finding
from webhook.rules import fielderr as fe
from webhook.rules.registry import object_rule

CONTAINER_LISTS = ("containers", "initContainers")


def pod_claim_names(pod: dict[str, Any]) -> set[str]:
    """Non-empty `spec.resourceClaims[].name` values."""
    out: set[str] = set()
    for claim in as_list(as_dict(pod.get("spec")).get("resourceClaims")):
        name = as_dict(claim).get("name")
        if isinstance(name, str) and name:
            out.add(name)
    return out


@object_rule("pod.resource-claims")
def resource_claims(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    path = Path("spec").child("resourceClaims")
    seen: set[str] = set()
    for i, claim in enumerate(as_list(as_dict(obj.get("spec")).get("resourceClaims"))):
        if not isinstance(claim, dict):
            continue
        p = path.index(i)
        name = claim.get("name", "")
        if not name:
            yield Finding(p.child("name"), fe.required())
        elif name in seen:
            yield Finding(p.child("name"), fe.duplicate(name))
        elif isinstance(name, str):
            for msg in fe.as_invalid(name, names.dns_label(name)):
                yield Finding(p.child("name"), msg)
            seen.add(name)
        claim_name = claim.get("resourceClaimName")
        template_name = claim.get("resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            yield Finding(
                p,
                fe.invalid(
                    claim,
                    "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
                ),
            )
        if claim_name is None and template_name is None:
            yield Finding(
                p, fe.invalid(claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
            )
        for field_name, value in (
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template_name),
        ):
            if isinstance(value, str):
                for msg in fe.as_invalid(value, names.resource_claim_name(value)):
                    yield Finding(p.child(field_name), msg)


LISTED_NAMES = 32  # claim names shown in a "must be one of" message (upstream lists them all)


def _listing(known: set[str]) -> str:
    """Upstream's list of the Pod's claim names, cut after LISTED_NAMES so that a Pod with thousands of
    bad references cannot produce a message per reference that lists thousands of names."""
    names = [clip(n) for n in sorted(known)]
    if len(names) <= LISTED_NAMES:
        return ", ".join(names)
    return ", ".join(names[:LISTED_NAMES]) + f", ... ({len(names) - LISTED_NAMES} more)"


def _claim_refs(claims: list[Any], path: Path, known: set[str]) -> Iterator[Finding]:
    """One `resources.claims` list (upstream validateResourceClaimNames): a name is required and must be
    a `spec.resourceClaims` entry; an entry may not repeat, and a whole claim may not be referenced next
    to one of its requests (in either order); a request is a DNS label. Linear in the list's length."""
    listing: str | None = None
    seen: set[str] = set()
    with_requests: dict[str, int] = {}  # text before the first '/' -> distinct keys with a '/' seen
    for j, claim in enumerate(claims):
        claim = as_dict(claim)
        p = path.index(j)
        name = claim.get("name", "")
        if not name or not isinstance(name, str):
            yield Finding(p, fe.required())
            continue
        request = claim.get("request", "")
        request = request if isinstance(request, str) else ""
        if name in seen:
            yield Finding(p, fe.duplicate(name))  # every request of that claim is already referenced
        else:
            key = name
            if request:
                for msg in fe.as_invalid(request, names.dns_label(request)):
                    yield Finding(p.child("request"), msg)
                key = f"{name}/{request}"
            if key in seen:
                yield Finding(p, fe.duplicate(key))
            else:
                if not request:
                    for _ in range(with_requests.get(name, 0)):
                        yield Finding(p, fe.duplicate(name))
                if "/" in key:
                    prefix = key.split("/", 1)[0]
                    with_requests[prefix] = with_requests.get(prefix, 0) + 1
                seen.add(key)
        if name not in known:
            if listing is None:
                listing = _listing(known)
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += f": {listing}" if known else " which is empty"
            yield Finding(p, fe.not_found(name, detail))


@object_rule("pod.container-claims")
def container_claims(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec = as_dict(obj.get("spec"))
    known = pod_claim_names(obj)
    for list_name in (*CONTAINER_LISTS, "ephemeralContainers"):
        for i, container in enumerate(as_list(spec.get(list_name))):
            claims = as_list(as_dict(as_dict(container).get("resources")).get("claims"))
            cpath = Path("spec").child(list_name).index(i)
            yield from _claim_refs(claims, cpath.child("resources", "claims"), known)
            if list_name == "ephemeralContainers" and claims:
                # Upstream forbids any `resources` of an ephemeral container.
                yield Finding(
                    cpath.child("resources"), fe.forbidden("cannot be set for an Ephemeral Container")
                )
    pod_resources = as_dict(spec.get("resources"))
    if pod_resources.get("claims") is not None:
        path = Path("spec").child("resources", "claims")
        yield Finding(path, fe.forbidden("claims cannot be set for Resources at pod-level"))
        # Upstream still checks the names, as for a container.
        yield from _claim_refs(as_list(pod_resources.get("claims")), path, known)


@object_rule("pod.claim-statuses")
def claim_statuses(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    known = pod_claim_names(obj)
    path = Path("status").child("resourceClaimStatuses")
    seen: set[str] = set()
    for i, status in enumerate(as_list(as_dict(obj.get("status")).get("resourceClaimStatuses"))):
        status = as_dict(status)
        p = path.index(i).child("name")
        name = status.get("name", "")
        if name not in known:
            yield Finding(p, fe.invalid(name, "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            yield Finding(p, fe.duplicate(name))
        seen.add(name)
        claim_name = status.get("resourceClaimName")
        if isinstance(claim_name, str):
            # Upstream reports a bad generated claim name at `.name`, not `.resourceClaimName`.
            for msg in fe.as_invalid(claim_name, names.resource_claim_name(claim_name)):
                yield Finding(p, msg)


@object_rule("pod.extended-resource-status")
def extended_resource_status(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    status = as_dict(obj.get("status")).get("extendedResourceClaimStatus")
    if not isinstance(status, dict):
        return
    path = Path("status").child("extendedResourceClaimStatus")
    claim_name = status.get("resourceClaimName")
    if isinstance(claim_name, str):
        if not claim_name:
            yield Finding(path.child("resourceClaimName"), fe.required())
        else:
            for msg in fe.as_invalid(claim_name, names.resource_claim_name(claim_name)):
                yield Finding(path.child("resourceClaimName"), msg)
    spec = as_dict(obj.get("spec"))
    containers = {
        as_dict(c).get("name")
        for list_name in CONTAINER_LISTS
        for c in as_list(spec.get(list_name))
        if isinstance(c, dict)
    }
    seen: set[tuple[Any, Any]] = set()
    for i, mapping in enumerate(as_list(status.get("requestMappings"))):
        mapping = as_dict(mapping)
        p = path.child("requestMappings").index(i)
        container = mapping.get("containerName")
        if isinstance(container, str) and container not in containers:
            yield Finding(
                p.child("containerName"),
                fe.invalid(
                    container, "must match the name of an entry in `spec.containers` or `spec.initContainers`"
                ),
            )
        request = mapping.get("requestName")
        if isinstance(request, str):
            for msg in fe.as_invalid(request, names.dns_label(request)):
                yield Finding(p.child("requestName"), msg)
        key = (container, mapping.get("resourceName"))
        if key in seen:
            yield Finding(p, fe.duplicate(f"{key[0]}/{key[1]}"))
        seen.add(key)
