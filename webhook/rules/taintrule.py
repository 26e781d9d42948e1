"""DeviceTaintRule rules (docs/rules.md: taint-rule.*), plus the device-taint and metav1.Condition checks other kinds reuse."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model.path import Path
from webhook.model.violation import Finding
from webhook.rules import fielderr as fe
from webhook.rules.registry import object_rule

TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sorted, as the API server lists them
MAX_TAINT_RULE_CONDITIONS = 8

_CONDITION_STATUSES = ("False", "True", "Unknown")
_CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_CONDITION_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)
_MAX_REASON = 1024
_MAX_MESSAGE = 32 * 1024


def taint_findings(taint: dict[str, Any], path: Path, old: dict[str, Any] | None = None) -> Iterator[Finding]:
    """One DeviceTaint: `key` label name, `value` label value, `effect` required and known.

    Reusable for `spec.devices[i].taints[k]` in slices. With `old` (the stored taint) an unchanged effect
    is not re-checked, as upstream does on update."""
    key = taint.get("key")
    if isinstance(key, str):  # a missing key is the schema layer's `schema.required`
        for msg in fe.label_name_errors(key):
            yield Finding(path.child("key"), msg)
    value = taint.get("value", "")
    if isinstance(value, str) and value:
        for msg in fe.label_value_errors(value):
            yield Finding(path.child("value"), msg)
    effect = taint.get("effect", "")
    if old is not None and old.get("effect", "") == effect:
        return
    if effect == "" or effect is None:
        yield Finding(path.child("effect"), fe.required())
    elif effect not in TAINT_EFFECTS:
        hint = " (PreferNoSchedule exists for node taints only)" if effect == "PreferNoSchedule" else ""
        yield Finding(path.child("effect"), fe.not_supported(effect, TAINT_EFFECTS) + hint)


def conditions_findings(conditions: list[Any], path: Path) -> Iterator[Finding]:
    """metav1 `ValidateConditions`: unique `type` (a label name), known `status`, `reason` format, sizes."""
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            continue
        p = path.index(i)
        ctype = cond.get("type", "")
        if ctype in seen:
            yield Finding(p.child("type"), fe.duplicate(ctype))
        else:
            seen.add(ctype)
        if isinstance(ctype, str):
            for msg in fe.label_name_errors(ctype):
                yield Finding(p.child("type"), msg)
        status = cond.get("status", "")
        if status not in _CONDITION_STATUSES:
            yield Finding(p.child("status"), fe.not_supported(status, _CONDITION_STATUSES))
        generation = cond.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            yield Finding(
                p.child("observedGeneration"), fe.invalid(generation, "must be greater than or equal to zero")
            )
        if not cond.get("lastTransitionTime"):
            yield Finding(p.child("lastTransitionTime"), fe.required("must be set"))
        reason = cond.get("reason", "")
        if not reason:
            yield Finding(p.child("reason"), fe.required("must be set"))
        elif isinstance(reason, str):
            if not _CONDITION_REASON.match(reason):
                yield Finding(p.child("reason"), fe.invalid(reason, _CONDITION_REASON_MSG))
            if fe.byte_len(reason) > _MAX_REASON:
                yield Finding(p.child("reason"), fe.too_long(_MAX_REASON))
        message = cond.get("message", "")
        if isinstance(message, str) and fe.byte_len(message) > _MAX_MESSAGE:
            yield Finding(p.child("message"), fe.too_long(_MAX_MESSAGE))


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _old_spec(ctx: Context) -> dict[str, Any] | None:
    return _spec(ctx.old) if ctx.old is not None else None


@object_rule("taint-rule.selector")
def selector(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    sel = _spec(obj).get("deviceSelector")
    if not isinstance(sel, dict):
        return
    path = Path("spec").child("deviceSelector")
    checks = (
        ("driver", fe.driver_name_errors),
        ("pool", fe.pool_name_errors),
        ("device", fe.device_name_errors),
    )
    for name, check in checks:
        value = sel.get(name)
        if isinstance(value, str):
            for msg in check(value):
                yield Finding(path.child(name), msg)


@object_rule("taint-rule.taint")
def taint(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    value = _spec(obj).get("taint")
    if not isinstance(value, dict):
        return
    old_spec = _old_spec(ctx)
    old = old_spec.get("taint") if old_spec is not None else None
    yield from taint_findings(value, Path("spec").child("taint"), old if isinstance(old, dict) else None)


@object_rule("taint-rule.conditions")
def conditions(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    status = obj.get("status")
    conds = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conds, list):
        return
    path = Path("status").child("conditions")
    yield from conditions_findings(conds, path)
    if len(conds) > MAX_TAINT_RULE_CONDITIONS:
        yield Finding(path, fe.too_many(len(conds), MAX_TAINT_RULE_CONDITIONS))


@object_rule("taint-rule.everything")
def everything(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec = _spec(obj)
    sel = spec.get("deviceSelector")
    taint_value = spec.get("taint")
    if not isinstance(sel, dict) or not isinstance(taint_value, dict):
        return
    if any(sel.get(k) not in (None, "") for k in ("driver", "pool", "device")):
        return
    if taint_value.get("effect") != "NoExecute":
        return
    yield Finding(
        Path("spec").child("deviceSelector"),
        "an empty deviceSelector matches every device in the cluster: with effect NoExecute every pod using "
        "any DRA device is evicted; set driver, pool and/or device (omit deviceSelector to taint nothing)",
    )
