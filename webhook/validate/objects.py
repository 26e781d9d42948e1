"""One object through the API server's steps and the object rules:

    structural schema → v1 defaulting → version-skew stripping → object rules

`checked_object` gives the object as a v1.37 API server would store it and its findings."""

from __future__ import annotations

from typing import Any

from webhook.apiserver.defaults import apply_defaults
from webhook.apiserver.skew import strip_disabled_fields
from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.model.budget import DeadlinePassed
from webhook.model.catalogue import RULES
from webhook.model.violation import Severity, Violation
from webhook.rules.registry import object_rules
from webhook.schema.structural import KINDS as SCHEMA_KINDS
from webhook.schema.structural import decode, served

# Kinds whose registry strategy resets `status` on CREATE (PrepareForCreate): the API server stores the
# object without the status a manifest carries; status is written through the /status subresource.
STATUS_RESET_ON_CREATE = ("ResourceClaim", "DeviceTaintRule", "Pod")


def violation(rule_id: str, field_: str, message: str, severity: Severity | None = None) -> Violation:
    return Violation(rule_id, severity or RULES[rule_id].severity, field_, message)


def status_reset(obj: dict[str, Any], ctx: Context) -> bool:
    """Whether the API server would reset this object's status: a CREATE of a kind whose strategy does
    (offline validation is a CREATE), unless the input is the cluster's stored state."""
    return ctx.operation == "CREATE" and not ctx.as_stored and obj.get("kind") in STATUS_RESET_ON_CREATE


_STATUS_DROPPED = (
    "status is reset by the API server on CREATE (it is written through the /status subresource by the "
    "scheduler, drivers or kubelet): it is not stored and was not validated; remove it from the manifest, "
    "or validate a status update with the stored object"
)


def prepare(obj: dict[str, Any], ctx: Context) -> tuple[dict[str, Any] | None, list[Violation]]:
    """Structural check, defaulting and stripping: the object the API server of `ctx.profile.version`
    would validate and store (on CREATE without the `status` it resets).

    Returns (None, violations) when the object cannot be decoded (wrong types, unknown fields)."""
    kind = obj.get("kind", "")
    violations: list[Violation] = []
    if status_reset(obj, ctx) and "status" in obj:
        status = obj.get("status")
        obj = {k: v for k, v in obj.items() if k != "status"}
        if status not in (None, {}):
            violations.append(violation("status.dropped-on-create", "status", _STATUS_DROPPED))
    if kind in SCHEMA_KINDS and served(kind, ctx.profile.version):
        found, fatal, obj = decode(obj, kind, ctx.profile.version, ctx.field_validation_of(obj))
        violations.extend(found)
        if fatal:
            return None, violations
    apply_defaults(obj)
    stripped, dropped = strip_disabled_fields(obj, ctx)
    violations.extend(violation("skew.dropped-field", str(f.field), f.message) for f in dropped)
    return stripped, violations


def run_object_rules(obj: dict[str, Any], ctx: Context, policy: Policy | None = None) -> list[Violation]:
    """Every registered object rule for the object's kind (disabled rules are not run)."""
    out: list[Violation] = []
    for rule, fn in object_rules(obj.get("kind", "")):
        if policy is not None and not policy.enabled(rule.id):
            continue
        try:
            for f in fn(obj, ctx):
                out.append(Violation(rule.id, rule.severity, str(f.field), f.message))
        except DeadlinePassed:
            raise  # not a rule failure: the object is reported as not checked
        except Exception as e:  # a rule bug must never become a traceback or a dropped object
            out.append(
                violation("internal.rule-crash", "", f"rule {rule.id} failed: {type(e).__name__}: {e}")
            )
    return out


def _dedup_required(violations: list[Violation]) -> list[Violation]:
    """The schema layer reports missing required fields; drop a rule's repeat of the same fact."""
    required = {v.field for v in violations if v.rule == "schema.required"}
    if not required:
        return violations
    return [
        v
        for v in violations
        if v.rule == "schema.required" or not (v.field in required and v.message.startswith("Required value"))
    ]


def object_violations(
    obj: dict[str, Any], ctx: Context | None = None, policy: Policy | None = None
) -> list[Violation]:
    """All single-object violations for one object (it is defaulted in place)."""
    return checked_object(obj, ctx or Context(), policy)[1]


def checked_object(
    obj: dict[str, Any], ctx: Context, policy: Policy | None
) -> tuple[dict[str, Any] | None, list[Violation]]:
    """The object as stored (None when it cannot be decoded) and its single-object violations."""
    stripped, violations = prepare(obj, ctx)
    if stripped is not None:
        violations.extend(run_object_rules(stripped, ctx, policy))
    violations = _dedup_required(violations)
    return stripped, policy.apply(violations) if policy else violations


def apply_policy(policy: Policy | None, violations: list[Violation]) -> list[Violation]:
    return policy.apply(violations) if policy else violations
