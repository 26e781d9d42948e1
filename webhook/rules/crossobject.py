"""The cross-object rules for one object against an inventory: what an admission request asks.

`violations_for(inventory, obj, old)` runs the inventory rules for `obj` as if it replaced `old` (and any
object of its own name) in the inventory, and returns the findings on `obj` only, with the rules' default
severities (a policy applies on top). The work is a lookup of the names the object uses, or one pool's
slices for a ResourceSlice — never the whole inventory.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from webhook.model.keys import object_key
from webhook.model.records import ClaimRec, ClassRec, PodRec, SliceRec, parse_record
from webhook.model.violation import Violation
from webhook.rules import classes, pools
from webhook.rules.registry import InventoryFinding, inventory_rules
from webhook.state.inventory import Inventory, Key


def findings_for(
    inventory: Inventory, obj: dict[str, Any], old: dict[str, Any] | None = None, namespace: str | None = None
) -> dict[str, list[InventoryFinding]]:
    """The inventory rules' findings on `obj` (by rule id) as if it replaced `old` in `inventory`."""
    rec = parse_record(obj, 0, None, detail=False)
    if rec is None:
        return {}
    key: Key = object_key(obj)
    replaces: list[Key] = [object_key(old)] if isinstance(old, dict) else []
    if namespace and isinstance(rec, ClaimRec | PodRec) and rec.namespace is None:
        rec = dataclasses.replace(rec, namespace=namespace)
        key = (key[0], namespace, key[2])  # type: ignore[index]
    if isinstance(rec, SliceRec):
        if not rec.driver or not rec.pool:
            return {}
        return pools.slice_findings(inventory, key, rec, replaces)
    if isinstance(rec, ClassRec):
        found = classes.class_findings(inventory, key, rec, replaces)
        return {"class.extended-resource-name-clash": found} if found else {}
    if isinstance(rec, ClaimRec):
        found = classes.claim_findings(inventory, key, rec)
        return {"claim.unknown-device-class": found} if found else {}
    if isinstance(rec, PodRec):
        found = classes.pod_findings(inventory, key, rec)
        return {"pod.unknown-claim": found} if found else {}
    return {}


def violations_for(
    inventory: Inventory, obj: dict[str, Any], old: dict[str, Any] | None = None, namespace: str | None = None
) -> list[Violation]:
    """`findings_for` as violations, in the rules' registration order."""
    found = findings_for(inventory, obj, old, namespace)
    if not found:
        return []
    out: list[Violation] = []
    for rule, _ in inventory_rules():
        for f in found.get(rule.id, ()):
            out.append(Violation(rule.id, rule.severity, str(f.field), f.message))
    return out
