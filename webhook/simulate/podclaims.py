"""The ResourceClaims a Pod uses: named claims, claims the resource claim controller generates from
templates (`<pod>-<claim>-xxxxx`, annotation `resource.kubernetes.io/pod-claim-name`), and node
constraints of claims that are already allocated."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list, deep_copy
from webhook.model.workloads import get_path, template_keys
from webhook.simulate.extended import controlled_by, owner_reference

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
CONTROLLER_BASE_MAX = 57  # the controller leaves room for "-" and 5 random characters
APISERVER_BASE_MAX = 58  # the API server truncates generateName to 63 - 5 characters
RANDOM_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def namespace_or_default(obj: dict[str, Any]) -> str:
    """metadata.namespace, `default` when unset (as kubectl applies it)."""
    ns = as_dict(obj.get("metadata")).get("namespace")
    return ns if isinstance(ns, str) and ns else "default"


def name_of(obj: dict[str, Any]) -> str:
    name = as_dict(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


def key_of(obj: dict[str, Any]) -> tuple[str, str]:
    return namespace_or_default(obj), name_of(obj)


def generated_name(base: str, seed: str) -> str:
    """What the API server makes of `generateName: base`: base (at most 58 characters) + 5 characters.
    The suffix is derived from `seed`, so simulations are reproducible."""
    digest = hashlib.sha256(seed.encode()).digest()
    suffix = "".join(RANDOM_ALPHABET[b % len(RANDOM_ALPHABET)] for b in digest[:5])
    return base[:APISERVER_BASE_MAX] + suffix


def template_generate_name(pod_name: str, claim_name: str) -> str:
    """The controller's generateName `<pod>-<claim>-`; when longer than 57, both parts are cut in
    proportion to their length (and the trailing hyphen is lost, as upstream)."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > CONTROLLER_BASE_MAX:
        n = len(base)
        base = (
            pod_name[: len(pod_name) * CONTROLLER_BASE_MAX // n]
            + "-"
            + claim_name[: len(claim_name) * CONTROLLER_BASE_MAX // n]
        )
    return base


def claim_from_template(pod: dict[str, Any], pod_claim: str, template: dict[str, Any]) -> dict[str, Any]:
    """The ResourceClaim the resource claim controller creates for `pod_claim` from `template`."""
    tspec = as_dict(template.get("spec"))
    tmeta = as_dict(tspec.get("metadata"))
    annotations = dict(as_dict(tmeta.get("annotations")))
    annotations[POD_CLAIM_ANNOTATION] = pod_claim
    ns, pod_name = namespace_or_default(pod), name_of(pod)
    base = template_generate_name(pod_name, pod_claim)
    meta: dict[str, Any] = {
        "name": generated_name(base, f"{ns}/{pod_name}/{pod_claim}"),
        "generateName": base,
        "namespace": ns,
        "ownerReferences": [owner_reference(pod, block=True)],
        "annotations": annotations,
    }
    if as_dict(tmeta.get("labels")):
        meta["labels"] = dict(tmeta["labels"])
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": deep_copy(as_dict(tspec.get("spec"))),
    }


GeneratedIndex = dict[tuple[str, str], list[dict[str, Any]]]  # (namespace, pod claim annotation) -> claims


def index_generated(claims: Iterable[dict[str, Any]]) -> GeneratedIndex:
    """Claims by (namespace, `resource.kubernetes.io/pod-claim-name` annotation), in input order."""
    out: GeneratedIndex = {}
    for claim in claims:
        add_generated(out, claim)
    return out


def add_generated(index: GeneratedIndex, claim: dict[str, Any]) -> None:
    """Add one claim to an index made by `index_generated` (claims without the annotation are skipped)."""
    annotation = as_dict(as_dict(claim.get("metadata")).get("annotations")).get(POD_CLAIM_ANNOTATION)
    if isinstance(annotation, str):
        index.setdefault((key_of(claim)[0], annotation), []).append(claim)


def find_generated_claim(
    pod: dict[str, Any],
    pod_claim: str,
    claims: Mapping[tuple[str, str], dict[str, Any]],
    index: GeneratedIndex | None = None,
) -> dict[str, Any] | None:
    """A claim the controller already created for this Pod claim (annotation + controller owner).
    `index` (from `index_generated(claims.values())`) avoids a scan of every claim."""
    ns, pod_meta = namespace_or_default(pod), as_dict(pod.get("metadata"))
    if index is None:
        index = index_generated(claims.values())
    for claim in index.get((ns, pod_claim), ()):
        if claims.get(key_of(claim)) is not claim:
            continue  # replaced since it was indexed
        if controlled_by(as_dict(claim.get("metadata")), pod_meta):
            return claim
    return None


@dataclass
class PodClaim:
    """One entry of `spec.resourceClaims`: where it is, and the claim it resolves to (or why not)."""

    index: int
    name: str
    path: Path
    claim: dict[str, Any] | None = None
    generated: bool = False
    problem: str = ""


def resolve_pod_claims(
    pod: dict[str, Any],
    claims: Mapping[tuple[str, str], dict[str, Any]],
    templates: Mapping[tuple[str, str], dict[str, Any]],
    invalid: Mapping[tuple[str, str], str],
    generated: GeneratedIndex | None = None,
) -> list[PodClaim]:
    """Resolve every `spec.resourceClaims[i]` to a claim: by name, by `status.resourceClaimStatuses`,
    by an earlier generated claim, or by generating one from its template. `generated` indexes
    `claims` by their pod-claim annotation (`index_generated`; built here when not given).

    `invalid` maps (kind/namespace, name) keys of objects left out for validation errors to a
    description, so a Pod naming one gets a precise reason."""
    ns, pod_name = namespace_or_default(pod), name_of(pod)
    statuses = {
        as_dict(s).get("name"): as_dict(s).get("resourceClaimName")
        for s in as_list(as_dict(pod.get("status")).get("resourceClaimStatuses"))
    }
    out: list[PodClaim] = []
    for i, entry in enumerate(as_list(as_dict(pod.get("spec")).get("resourceClaims"))):
        entry = as_dict(entry)
        pc = PodClaim(i, str(entry.get("name", "")), Path("spec").child("resourceClaims").index(i))
        claim_name, template_name = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
        if isinstance(claim_name, str):
            pc.claim = claims.get((ns, claim_name))
            if pc.claim is None:
                pc.problem = _missing("ResourceClaim", ns, claim_name, invalid)
        elif isinstance(template_name, str):
            status_name = statuses.get(pc.name)
            if isinstance(status_name, str) and (ns, status_name) in claims:
                pc.claim = claims[(ns, status_name)]
            else:
                if generated is None:
                    generated = index_generated(claims.values())
                pc.claim = find_generated_claim(pod, pc.name, claims, generated)
            if pc.claim is None:
                template = templates.get((ns, template_name))
                if template is None:
                    pc.problem = _missing("ResourceClaimTemplate", ns, template_name, invalid)
                else:
                    pc.claim = claim_from_template(pod, pc.name, template)
                    pc.generated = True
        else:
            pc.problem = f"pod {ns}/{pod_name}: spec.resourceClaims[{i}] names neither a claim nor a template"
        out.append(pc)
    return out


def _missing(kind: str, ns: str, name: str, invalid: Mapping[tuple[str, str], str]) -> str:
    why = invalid.get((f"{kind}/{ns}", name))
    if why:
        return f'{kind} "{ns}/{name}" was left out of the simulation: {why}'
    return f'{kind} "{ns}/{name}" not found in the input'


def merge_node_selector(pod: dict[str, Any], selector: dict[str, Any] | None) -> dict[str, Any]:
    """The Pod with a claim's allocation `nodeSelector` ANDed into its required node affinity
    (terms are ORed, so the result is every pod term combined with every claim term)."""
    terms = [as_dict(t) for t in as_list(as_dict(selector).get("nodeSelectorTerms"))]
    if not terms:
        return pod
    out = deep_copy(pod)
    spec = out.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    existing = [as_dict(t) for t in as_list(required.get("nodeSelectorTerms"))]
    if not existing:
        combined = [deep_copy(t) for t in terms]
    else:
        combined = []
        for a in existing:
            for b in terms:
                term: dict[str, Any] = {}
                for part in ("matchExpressions", "matchFields"):
                    items = as_list(a.get(part)) + as_list(b.get(part))
                    if items:
                        term[part] = deep_copy(items)
                combined.append(term)
    required["nodeSelectorTerms"] = combined
    return out


def claims_named(work: list[Any], claims: dict[tuple[str, str], Any]) -> set[tuple[str, str]]:
    """Claims the Pods and workloads in `work` (Loaded items) name (`resourceClaimName`, a Pod's
    `status.resourceClaimStatuses`), and claims a Pod of the input controls (its generated ones)."""
    out: set[tuple[str, str]] = set()
    pods: set[tuple[str, str]] = set()
    for item in work:
        obj = item.obj
        keys = template_keys(obj.get("apiVersion"), item.kind) if item.kind != "Pod" else ()
        if keys is None:
            continue
        ns = key_of(obj)[0]
        if item.kind == "Pod":
            pods.add(key_of(obj))
            for st in (obj.get("status") or {}).get("resourceClaimStatuses") or []:
                if isinstance(st, dict) and isinstance(st.get("resourceClaimName"), str):
                    out.add((ns, st["resourceClaimName"]))
        spec = get_path(obj, (*keys, "spec")) if keys else obj.get("spec")
        entries = spec.get("resourceClaims") if isinstance(spec, dict) else None
        for rc in entries if isinstance(entries, list) else []:
            if isinstance(rc, dict) and isinstance(rc.get("resourceClaimName"), str):
                out.add((ns, rc["resourceClaimName"]))
    for key, item in claims.items():
        for ref in (item.obj.get("metadata") or {}).get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("kind") == "Pod" and ref.get("controller"):
                if (key[0], ref.get("name")) in pods:
                    out.add(key)
    return out
