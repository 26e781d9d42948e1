"""The mutating endpoint: version-skew stripping (`webhook.apiserver.skew`) as a JSON Patch.

A mutating webhook sees the object before the API server's registry strategy, so it removes what that
strategy would silently drop for the target version and gates (fields of disabled features, kept on
UPDATE when the stored object already uses them) and tells the user with one warning per removed field.
Scope per subresource, as the strategies reset the rest anyway: the main resource's `status` is ignored
(emptied on CREATE, copied from the stored object on UPDATE), a `status` UPDATE only touches `status`;
other subresources are not changed. Nothing else in the object is touched.
"""

from __future__ import annotations

from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.patch import pointer, remove_ops
from webhook.admission.request import Request
from webhook.apiserver.defaults import apply_defaults
from webhook.apiserver.skew import FEATURES, Key, plan_drops, to_path
from webhook.model.plain import deep_copy

EMPTY_DROPPED = (
    "dropped an empty value: the field's feature is off in the target version, the API server drops it too"
)


def _in_scope(loc: tuple[Any, ...], sub_resource: str) -> bool:
    under_status = bool(loc) and loc[0] == "status"
    return under_status if sub_resource == "status" else not under_status


def skew_patch(req: Request, config: AdmissionConfig) -> tuple[list[dict[str, str]], list[str]]:
    """(JSON Patch ops, warnings) for a CREATE/UPDATE of a kind the skew layer knows; ([], []) else."""
    obj = req.object
    if obj is None or req.operation not in ("CREATE", "UPDATE") or req.sub_resource not in ("", "status"):
        return [], []
    if obj.get("kind") not in FEATURES:
        return [], []
    old = None
    if req.operation == "UPDATE" and req.old_object is not None:
        old = deep_copy(req.old_object)
        apply_defaults(old)  # as stored: ratcheting asks whether the stored object uses a feature
    ctx = config.context(old=old, operation=req.operation)
    drops = [(loc, msg) for loc, msg in plan_drops(obj, ctx) if _in_scope(loc, req.sub_resource)]
    if not drops:
        return [], []
    locations = [tuple(str(s) if isinstance(s, Key) else s for s in loc) for loc, _ in drops]
    ops = remove_ops(obj, locations)
    removed = {op["path"] for op in ops}
    warnings: list[str] = []
    for (loc, message), plain in zip(drops, locations, strict=True):
        if pointer(plain) in removed:
            warnings.append(f"{to_path(loc)}: {message or EMPTY_DROPPED}")
    return ops, warnings
