"""Cross-object references between DeviceClasses, claims, templates and Pods: clashing extended
resource names, claims naming a DeviceClass the input lacks, Pods naming claims the input lacks.

Reference rules apply a closed world only to kinds the input contains: without any DeviceClass in the
input, class references are not checked (the classes are assumed to be in the cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from webhook.model.path import Path
from webhook.model.violation import Severity
from webhook.rules.inventory import ClaimRec, ClassRec, Inventory, PodRec
from webhook.rules.registry import InventoryFinding, inventory_rule

MAX_LISTED = 5


def _when(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def _names(names: list[str]) -> str:
    shown = [f'"{n}"' for n in names[:MAX_LISTED]]
    more = len(names) - MAX_LISTED
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def winner(classes: list[ClassRec]) -> ClassRec | None:
    """The class that serves a shared extended resource name: newest creationTimestamp, then the
    lexicographically smaller name. None when a timestamp is missing or unparsable (undecidable)."""
    stamped = [(c, _when(c.created) if c.created else None) for c in classes]
    if any(t is None for _, t in stamped):
        return None
    newest = max(t for _, t in stamped if t is not None)
    return min((c for c, t in stamped if t == newest), key=lambda c: c.name)


@inventory_rule(
    "class.extended-resource-name-clash",
    kinds=("DeviceClass",),
    summary="several DeviceClasses declare the same extendedResourceName; only one serves it (newest "
    "creationTimestamp, then the smaller name)",
    field="spec.extendedResourceName",
    severity=Severity.WARNING,
)
def extended_resource_name_clash(inventory: Inventory, ctx: Any) -> Iterator[InventoryFinding]:
    groups: dict[str, list[tuple[int, ClassRec]]] = {}
    for pos, rec in inventory.of_kind("DeviceClass"):
        if rec.extended_resource_name:
            groups.setdefault(rec.extended_resource_name, []).append((pos, rec))
    for ern, members in groups.items():
        if len({rec.name for _, rec in members}) < 2:
            continue
        best = winner([rec for _, rec in members])
        for pos, rec in members:
            others = sorted({r.name for _, r in members if r.name != rec.name})
            if best is None:
                outcome = (
                    "which one serves it depends on creation time (the newest creationTimestamp wins, ties go "
                    "to the lexicographically smaller name) and the input does not say"
                )
            elif best.name == rec.name:
                outcome = "this class wins (newest creationTimestamp, then the smaller name)"
            else:
                outcome = (
                    f'DeviceClass "{best.name}" wins (newest creationTimestamp, then the smaller name), so '
                    "Pods requesting this resource never get devices of this class"
                )
            yield InventoryFinding(
                pos,
                Path("spec").child("extendedResourceName"),
                (
                    f'extendedResourceName "{ern}" is also declared by DeviceClass {_names(others)}: {outcome}; '
                    "give each class its own name"
                ),
            )


@inventory_rule(
    "claim.unknown-device-class",
    kinds=("ResourceClaim", "ResourceClaimTemplate"),
    summary="a claim or template requests a DeviceClass that is not in the input (checked only when the "
    "input contains DeviceClasses)",
    field="spec.devices.requests[i].exactly.deviceClassName | ...firstAvailable[j].deviceClassName",
    severity=Severity.WARNING,
)
def unknown_device_class(inventory: Inventory, ctx: Any) -> Iterator[InventoryFinding]:
    known = sorted({rec.name for _, rec in inventory.of_kind("DeviceClass") if rec.name})
    if not known:
        return
    names = set(known)
    for kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for pos, rec in inventory.of_kind(kind):
            for path, cls in rec.class_refs:
                if cls not in names:
                    yield InventoryFinding(
                        pos,
                        path,
                        (
                            f'DeviceClass "{cls}" is not in the input (it has {_names(known)}); the claim cannot '
                            "be allocated until that class exists"
                        ),
                    )


def _claims_by_name(inventory: Inventory, kind: str) -> dict[str, list[str | None]]:
    out: dict[str, list[str | None]] = {}
    for _, rec in inventory.of_kind(kind):
        assert isinstance(rec, ClaimRec)
        out.setdefault(rec.name, []).append(rec.namespace)
    return out


@inventory_rule(
    "pod.unknown-claim",
    kinds=("Pod",),
    summary="a Pod references a ResourceClaim or ResourceClaimTemplate that is not in the input in its "
    "namespace (checked only when the input contains objects of that kind)",
    field="spec.resourceClaims[i].resourceClaimName | spec.resourceClaims[i].resourceClaimTemplateName",
    severity=Severity.WARNING,
)
def unknown_claim(inventory: Inventory, ctx: Any) -> Iterator[InventoryFinding]:
    lookup = {
        "claim": ("ResourceClaim", _claims_by_name(inventory, "ResourceClaim")),
        "template": ("ResourceClaimTemplate", _claims_by_name(inventory, "ResourceClaimTemplate")),
    }
    for pos, pod in inventory.of_kind("Pod"):
        assert isinstance(pod, PodRec)
        for path, what, name in pod.claim_refs:
            kind, index = lookup[what]
            if not index:
                continue  # no object of this kind in the input: nothing to compare against
            namespaces = index.get(name, [])
            # a missing namespace on either side means "whatever namespace it is applied to"
            if any(ns is None or pod.namespace is None or ns == pod.namespace for ns in namespaces):
                continue
            where = f'namespace "{pod.namespace}"' if pod.namespace else "the input"
            also = (
                f" (found in namespace {_names(sorted({ns for ns in namespaces if ns}))})"
                if namespaces
                else ""
            )
            yield InventoryFinding(
                pos,
                path,
                (
                    f'{kind} "{name}" is not in {where}{also}; the Pod cannot start until it exists '
                    "(Pods can only use claims of their own namespace)"
                ),
            )
