"""UPDATE-only rules (docs/rules.md: update.*): immutable fields and the write-once claim allocation.

They run only when `ctx.old` (the stored object) is known. Gate ratcheting is done by the skew layer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list, deep_equal
from webhook.model.quantity import parse_quantity
from webhook.model.violation import Finding
from webhook.rules import fielderr as fe
from webhook.rules.registry import object_rule

IMMUTABLE = "field is immutable"
_POD_UPDATABLE = (
    "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
    "`spec.tolerations` (only additions to existing tolerations), `spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)
_QUANTITY_MAPS = ("consumedCapacity", "requests")  # `requests` only directly under `capacity`


def semantic(value: Any, key: str = "", parent: str = "") -> Any:
    """A comparable form with Go `Semantic.DeepEqual` leniency: null ≡ absent, empty list ≡ absent, and
    quantities in capacity maps compared by value (`1Gi` == `1024Mi`). Built level by level with an
    explicit stack: a claim's opaque parameters may nest thousands of levels."""
    top: dict[str, Any] = {}
    stack: list[tuple[Any, str, str, Any, Any]] = [(value, key, parent, top, "v")]  # value, key, parent, into
    while stack:
        v, k, p, into, slot = stack.pop()
        if isinstance(v, dict):
            quantities = k == "consumedCapacity" or (k == "requests" and p == "capacity")
            out: dict[str, Any] = {}
            into[slot] = out
            for kk, vv in v.items():
                if vv is None or vv == []:
                    continue
                if quantities:
                    try:
                        out[kk] = parse_quantity(vv)
                        continue
                    except (ValueError, TypeError):
                        pass  # not a quantity: compared as written, below
                out[kk] = None  # filled below, in this position
                stack.append((vv, kk, k, out, kk))
        elif isinstance(v, list):
            items: list[Any] = [None] * len(v)
            into[slot] = items
            stack.extend((vv, "", k, items, i) for i, vv in enumerate(v))
        else:
            into[slot] = v
    return top["v"]


def _changed(new: Any, old: Any) -> bool:
    return not deep_equal(semantic({"v": new}), semantic({"v": old}))


def _get(obj: dict[str, Any] | None, *keys: str) -> Any:
    cur: Any = obj
    for k in keys:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(k)
    return cur


def _immutable(path: Path, new: Any) -> Finding:
    return Finding(path, fe.invalid(new, IMMUTABLE))


def _pod_claims_changes(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    changed: list[str] = []
    if _changed(_get(new, "spec", "resourceClaims"), _get(old, "spec", "resourceClaims")):
        changed.append("spec.resourceClaims")
    for list_name in ("containers", "initContainers"):
        new_list = as_list(_get(new, "spec", list_name))
        old_list = as_list(_get(old, "spec", list_name))
        for i, (a, b) in enumerate(zip(new_list, old_list, strict=False)):
            if _changed(_get(as_dict(a), "resources", "claims"), _get(as_dict(b), "resources", "claims")):
                changed.append(f"spec.{list_name}[{i}].resources.claims")
    return changed


@object_rule("update.immutable")
def immutable(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    old = ctx.old
    if old is None:
        return
    kind = obj.get("kind")
    spec = Path("spec")
    if kind == "ResourceSlice":
        for keys, path in (
            (("spec", "pool", "name"), spec.child("pool", "name")),
            (("spec", "driver"), spec.child("driver")),
            (("spec", "nodeName"), spec.child("nodeName")),
        ):
            if _get(obj, *keys) != _get(old, *keys):
                yield _immutable(path, _get(obj, *keys))
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        if _changed(obj.get("spec"), old.get("spec")):
            yield _immutable(spec, obj.get("spec"))
    elif kind == "Pod":
        changed = _pod_claims_changes(obj, old)
        if changed:
            yield Finding(
                spec,
                fe.forbidden(
                    f"pod updates may not change fields other than {_POD_UPDATABLE}; "
                    f"{', '.join(changed)}: {IMMUTABLE}"
                ),
            )


@object_rule("update.allocation")
def allocation(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    old = ctx.old
    if old is None:
        return
    new_alloc = _get(obj, "status", "allocation")
    old_alloc = _get(old, "status", "allocation")
    if isinstance(new_alloc, dict) and isinstance(old_alloc, dict) and _changed(new_alloc, old_alloc):
        yield Finding(
            Path("status").child("allocation"),
            fe.invalid(new_alloc, IMMUTABLE)
            + " (an allocation is written once; clear it to deallocate, then allocate anew)",
        )
    reserved = as_list(_get(obj, "status", "reservedFor"))
    if reserved and new_alloc is not None and _get(obj, "metadata", "deletionTimestamp"):
        before = {repr(sorted(as_dict(r).items())) for r in as_list(_get(old, "status", "reservedFor"))}
        if any(repr(sorted(as_dict(r).items())) not in before for r in reserved):
            yield Finding(
                Path("status").child("reservedFor"),
                fe.forbidden(
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"
                ),
            )
