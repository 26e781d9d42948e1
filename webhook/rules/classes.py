"""Cross-object references between DeviceClasses, claims, templates and Pods: clashing extended
resource names, claims naming a DeviceClass the input lacks, Pods naming claims the input lacks.

Reference rules apply a closed world only to kinds the input contains: without any DeviceClass in the
input, class references are not checked (the classes are assumed to be in the cluster).

The rules are queries on the cross-object index (webhook.state.inventory); `class_findings`,
`claim_findings` and `pod_findings` check one object as if it replaced its older version (an admission
request), looking up only the names it uses."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from datetime import datetime

from webhook.config.context import Context
from webhook.model.didyoumean import closest
from webhook.model.path import Path
from webhook.model.records import ClaimRec, ClassRec, PodRec
from webhook.model.text import clip
from webhook.model.violation import Severity
from webhook.rules.registry import InventoryFinding, inventory_rule
from webhook.state.inventory import Inventory, Key

MAX_LISTED = 5


def _when(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def _names(names: list[str]) -> str:
    shown = [f'"{clip(n)}"' for n in names[:MAX_LISTED]]
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


def _clash(members: list[tuple[Key, ClassRec]], where: str = "the input") -> Iterator[InventoryFinding]:
    """The findings on classes sharing one extendedResourceName (none unless two names share it)."""
    if len({rec.name for _, rec in members}) < 2:
        return
    ern = members[0][1].extended_resource_name
    best = winner([rec for _, rec in members])
    for key, rec in members:
        others = sorted({r.name for _, r in members if r.name != rec.name})
        if best is None:
            outcome = (
                "which one serves it depends on creation time (the newest creationTimestamp wins, ties go "
                f"to the lexicographically smaller name) and {where} does not say"
            )
        elif best.name == rec.name:
            outcome = "this class wins (newest creationTimestamp, then the smaller name)"
        else:
            outcome = (
                f'DeviceClass "{clip(str(best.name))}" wins (newest creationTimestamp, then the smaller name), so '
                "Pods requesting this resource never get devices of this class"
            )
        yield InventoryFinding(
            key,
            Path("spec").child("extendedResourceName"),
            (
                f'extendedResourceName "{clip(str(ern))}" is also declared by DeviceClass {_names(others)}: {outcome}; '
                "give each class its own name"
            ),
        )


@inventory_rule("class.extended-resource-name-clash")
def extended_resource_name_clash(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    groups = [inventory.classes_with_ern(ern) for ern in inventory.erns_in_use()]
    groups.sort(key=lambda members: members[0][0])  # type: ignore[arg-type,return-value]
    for members in groups:
        yield from _clash(members, inventory.where)


def class_findings(
    inventory: Inventory, key: Key, rec: ClassRec, replaces: Iterable[Key] = ()
) -> list[InventoryFinding]:
    """The clash of one DeviceClass stored under `key` (replacing `replaces`) with the others."""
    if not rec.extended_resource_name:
        return []
    drop = {key, *replaces}
    members = [(k, r) for k, r in inventory.classes_with_ern(rec.extended_resource_name) if k not in drop]
    members.append((key, rec))
    return [f for f in _clash(members, inventory.where) if f.index == key]


def _unknown_classes(inventory: Inventory, key: Key, rec: ClaimRec) -> Iterator[InventoryFinding]:
    if not any(inventory.classes):
        return  # no DeviceClass at all: the classes are assumed to be elsewhere
    classes = inventory.classes
    for path, cls in rec.class_refs:
        if cls not in classes:
            known = inventory.class_names()  # sorted once per version, only for a message
            yield InventoryFinding(
                key,
                path,
                (
                    f'DeviceClass "{clip(cls)}" is not in {inventory.where} (it has {_names(known)}); the claim cannot '
                    "be allocated until that class exists"
                ),
            )


@inventory_rule("claim.unknown-device-class")
def unknown_device_class(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    if not inventory.has_kind("DeviceClass"):
        return
    known = inventory.class_names()
    for kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for key, rec in inventory.of_kind(kind):
            for f in _unknown_classes(inventory, key, rec):
                name = _missing(f.message)
                yield _rejected(f, ctx, "DeviceClass", None, name) or _open_world(
                    f, name, known, ctx, "DeviceClass"
                )


def _rejected(
    f: InventoryFinding, ctx: Context, kind: str, namespace: str | None, name: str
) -> InventoryFinding | None:
    """The finding reworded when the object it misses is in the input but rejected by the API server (a
    version it does not serve, a field it cannot decode): that object's own error is the one to act on,
    so this is an info naming it."""
    facts = ctx.facts
    hit = facts.rejected_object(kind, namespace, name) if facts is not None else None
    if hit is None:
        return None
    source, line, rule = hit
    ns = f"{namespace}/" if namespace and kind != "DeviceClass" else ""
    message = (
        f"{kind} {ns}{name} is in the input ({source}:{line}), but the API server rejects it ({rule}); "
        f"{f.message.split('; ', 1)[1] if '; ' in f.message else 'fix it first'}"
    )
    return dataclasses.replace(f, message=message, severity=Severity.INFO)


def _missing(message: str) -> str:
    """The name a reference finding says is missing (its first quoted name)."""
    return message.split('"', 2)[1] if message.count('"') >= 2 else ""


def _open_world(
    f: InventoryFinding, name: str, known: list[str], ctx: Context, kind: str
) -> InventoryFinding:
    """Offline, unless the input is the whole cluster (`--cluster`), an object the input lacks may simply
    be elsewhere (another folder, the cluster): such a finding is info (text output sums them up in one
    line), except when a name of the input is so close that a typo is likely (a warning that names it)."""
    close = closest(name, known)
    if close:
        return dataclasses.replace(f, message=f'{f.message}; did you mean {kind} "{clip(close)}"?')
    if ctx.whole_cluster:
        return f
    return dataclasses.replace(
        f,
        message=f"{f.message} (if it is kept elsewhere, pass the cluster's objects with --cluster DIR to check "
        "every reference)",
        severity=Severity.INFO,
    )


def claim_findings(inventory: Inventory, key: Key, rec: ClaimRec) -> list[InventoryFinding]:
    """The unknown DeviceClasses of one claim or template (its own key does not matter: no class is
    a claim)."""
    return list(_unknown_classes(inventory, key, rec))


_KINDS = {"claim": "ResourceClaim", "template": "ResourceClaimTemplate"}


def _unknown_claims(
    inventory: Inventory, key: Key, pod: PodRec, replaces: Iterable[Key] = ()
) -> Iterator[InventoryFinding]:
    for path, what, name in pod.claim_refs:
        kind = _KINDS[what]
        if not inventory.has_kind(kind):
            continue  # no object of this kind in the input: nothing to compare against
        namespaces = inventory.claim_namespaces(kind, name)
        # a missing namespace on either side means "whatever namespace it is applied to"
        if any(ns is None or pod.namespace is None or ns == pod.namespace for ns in namespaces):
            continue
        where = f'namespace "{clip(pod.namespace)}"' if pod.namespace else inventory.where
        also = (
            f" (found in namespace {_names(sorted({ns for ns in namespaces if ns}))})" if namespaces else ""
        )
        yield InventoryFinding(
            key,
            path,
            (
                f'{kind} "{clip(name)}" is not in {where}{also}; the Pod cannot start until it exists '
                "(Pods can only use claims of their own namespace)"
            ),
        )


@inventory_rule("pod.unknown-claim")
def unknown_claim(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    names: dict[str, list[str]] = {}
    for kind in _KINDS.values():
        names[kind] = sorted({rec.name for _, rec in inventory.of_kind(kind)})
    for key, pod in inventory.of_kind("Pod"):
        for f in _unknown_claims(inventory, key, pod):
            kind = (
                "ResourceClaimTemplate" if f.message.startswith("ResourceClaimTemplate") else "ResourceClaim"
            )
            rejected = _rejected(f, ctx, kind, pod.namespace, _missing(f.message))
            if rejected is not None:
                yield rejected
            elif " (found in namespace " in f.message:
                yield f  # it exists, in another namespace: a real problem wherever the rest is
            else:
                yield _open_world(f, _missing(f.message), names[kind], ctx, kind)


def pod_findings(inventory: Inventory, key: Key, rec: PodRec) -> list[InventoryFinding]:
    """The unknown claims and templates of one Pod."""
    return list(_unknown_claims(inventory, key, rec))
