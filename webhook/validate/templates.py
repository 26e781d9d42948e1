"""Validation of workloads (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
ReplicationController, PodTemplate): their Pod template is checked as a Pod is — structure, claim
references, container claims — with findings at the workload's paths (`spec.template.spec...`), and the
counts their controller reads (replicas, parallelism, completions) are checked as the API server does.

Only what applies to a template runs: it has no name, namespace, node or status yet (the Pod's name comes
from its controller, its claims from ResourceClaimTemplates per Pod), so metadata name/namespace and
status rules are checked on the workload itself or not at all."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from webhook.apiserver.defaults import apply_defaults
from webhook.apiserver.skew import strip_disabled_fields
from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.model.budget import DeadlinePassed
from webhook.model.catalogue import RULES
from webhook.model.jsontext import json_head
from webhook.model.records import PodRec
from webhook.model.violation import Finding, Violation
from webhook.model.workloads import get_path, pod_view, prefixed, template_prefix, with_template
from webhook.rules import fielderr as fe
from webhook.rules.registry import object_rules
from webhook.schema.structural import check_nulls, strip_nulls
from webhook.state.inventory import extract_record

# Pod rules that apply to a template (seen as a Pod), and those that apply to the workload's own metadata.
TEMPLATE_RULES = ("pod.resource-claims", "pod.container-claims", "meta.labels", "meta.annotations")
OWN_RULES = (
    "meta.name",
    "meta.namespace",
    "meta.namespace-missing",
    "meta.labels",
    "meta.annotations",
    "meta.immutable",
)
# ValidatePodTemplateSpec reports labels and annotations at `<template>.labels` (no `metadata`).
TEMPLATE_META_PATHS = {"meta.labels": "labels", "meta.annotations": "annotations"}

EPHEMERAL = "workload.ephemeral-containers"
COUNTS = "workload.counts"
INT32_MAX = 2**31 - 1
MAX_INDEXED_PARALLELISM = 100_000  # batch validation's maxParallelismForIndexedJob


REPLICATED = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


def _v(rule: str, field: str, message: str) -> Violation:
    return Violation(rule, RULES[rule].severity, field, message)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number" if isinstance(value, float) else "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _type_error(path: str, expected: str, value: Any) -> Violation:
    """As the structural layer words a decode error (`schema.type`)."""
    shown = json_head(value, 60)
    return _v(
        "schema.type",
        path,
        f'Invalid value: "{_json_type(value)}": {path} in body must be of type {expected}: {shown}',
    )


def _int32(spec: dict[str, Any], name: str, path: str) -> Iterator[Violation]:
    value = spec.get(name)
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        yield _type_error(path, "integer", value)
    elif not -(2**31) <= value <= INT32_MAX:
        yield _v(
            "schema.integer-range",
            path,
            f"Invalid value: {value}: json: cannot unmarshal number {value} into Go struct field of type int32",
        )
    elif value < 0:
        yield _v(COUNTS, path, fe.invalid(value, "must be greater than or equal to 0"))


def _bool(spec: dict[str, Any], name: str, path: str) -> Iterator[Violation]:
    value = spec.get(name)
    if value is not None and not isinstance(value, bool):
        yield _type_error(path, "boolean", value)


def _job_counts(spec: dict[str, Any], base: str) -> Iterator[Violation]:
    yield from _int32(spec, "parallelism", f"{base}.parallelism")
    yield from _int32(spec, "completions", f"{base}.completions")
    yield from _bool(spec, "suspend", f"{base}.suspend")
    mode = spec.get("completionMode")
    if mode is None:
        return
    if not isinstance(mode, str):
        yield _type_error(f"{base}.completionMode", "string", mode)
    elif mode not in ("NonIndexed", "Indexed"):
        yield _v(COUNTS, f"{base}.completionMode", fe.not_supported(mode, ("NonIndexed", "Indexed")))
    elif mode == "Indexed":
        if spec.get("completions") is None:
            yield _v(COUNTS, f"{base}.completions", fe.required("when completion mode is Indexed"))
        parallelism = spec.get("parallelism")
        if (
            isinstance(parallelism, int)
            and not isinstance(parallelism, bool)
            and parallelism > MAX_INDEXED_PARALLELISM
        ):
            yield _v(
                COUNTS,
                f"{base}.parallelism",
                fe.invalid(
                    parallelism,
                    f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed",
                ),
            )


def count_violations(obj: dict[str, Any]) -> list[Violation]:
    """The fields a controller reads to decide how many Pods it creates, as the API server checks them."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    out: list[Violation] = []
    if kind in REPLICATED:
        out.extend(_int32(spec, "replicas", "spec.replicas"))
    if kind == "StatefulSet":
        ordinals = spec.get("ordinals")
        if ordinals is not None and not isinstance(ordinals, dict):
            out.append(_type_error("spec.ordinals", "object", ordinals))
        elif isinstance(ordinals, dict):
            out.extend(_int32(ordinals, "start", "spec.ordinals.start"))
    if kind == "Job":
        out.extend(_job_counts(spec, "spec"))
    if kind == "CronJob":
        out.extend(_bool(spec, "suspend", "spec.suspend"))
        job = get_path(spec, ("jobTemplate", "spec"))
        if isinstance(job, dict):
            out.extend(_job_counts(job, "spec.jobTemplate.spec"))
    return out


def _rules(ids: tuple[str, ...], policy: Policy | None) -> list[Any]:
    wanted = [r for r in object_rules("Pod") if r[0].id in ids]
    return [r for r in wanted if policy is None or policy.enabled(r[0].id)]


def _run(
    obj: dict[str, Any], ids: tuple[str, ...], ctx: Context, policy: Policy | None
) -> Iterator[tuple[str, Finding]]:
    """The findings of the Pod rules `ids` on `obj`; a rule that fails is an `internal.rule-crash`
    finding (as in the pipeline), never a lost object."""
    for rule, fn in _rules(ids, policy):
        try:
            found = list(fn(obj, ctx))
        except DeadlinePassed:
            raise  # not a rule failure: the object is reported as not checked
        except Exception as e:  # noqa: BLE001 - a rule bug must never become a traceback
            found = [Finding("", f"rule {rule.id} failed: {type(e).__name__}: {e}")]
            yield "internal.rule-crash", found[0]
            continue
        for f in found:
            yield rule.id, f


def _moved(v: Violation, prefix: str) -> Violation:
    """A violation of the Pod view at its place in the workload (a schema message names its path too)."""
    field = prefixed(prefix, v.field)
    message = v.message
    if v.rule.startswith("schema.") and v.field and v.field in message:
        message = message.replace(v.field, field, 1)
    return Violation(v.rule, v.severity, field, message)


def check_workload(
    obj: dict[str, Any], keys: tuple[str, ...], ctx: Context, policy: Policy | None
) -> tuple[dict[str, Any] | None, list[Violation]]:
    """The workload as stored (None when the API server could not decode its template) and its
    violations: its own metadata, the counts its controller reads, and its Pod template as a Pod."""
    prefix = template_prefix(keys)
    violations: list[Violation] = []
    for rule_id, f in _run(obj, OWN_RULES, ctx, policy):
        violations.append(_v(rule_id, str(f.field), f.message))
    violations.extend(count_violations(obj))
    pod = pod_view(get_path(obj, keys))
    structural, fatal, saw_null = check_nulls(pod, "Pod")
    violations.extend(_moved(v, prefix) for v in structural)
    if fatal:
        return None, _finish(violations, policy)
    if saw_null:
        pod = strip_nulls(pod)
    apply_defaults(pod)
    pod, dropped = strip_disabled_fields(pod, ctx)
    violations.extend(_moved(_v("skew.dropped-field", str(f.field), f.message), prefix) for f in dropped)
    for rule_id, f in _run(pod, TEMPLATE_RULES, ctx, policy):
        field = str(f.field)
        if rule_id in TEMPLATE_META_PATHS and field.startswith("metadata."):
            field = field[len("metadata.") :]
        violations.append(_v(rule_id, prefixed(prefix, field), f.message))
    ephemeral = pod["spec"].get("ephemeralContainers") if isinstance(pod.get("spec"), dict) else None
    if isinstance(ephemeral, list) and ephemeral:
        violations.append(
            _v(
                EPHEMERAL,
                f"{prefix}.spec.ephemeralContainers",
                fe.forbidden("ephemeral containers not allowed in pod template"),
            )
        )
    return with_template(obj, keys, pod), _finish(violations, policy)


def _finish(violations: list[Violation], policy: Policy | None) -> list[Violation]:
    return policy.apply(violations) if policy else violations


def workload_record(stored: dict[str, Any], keys: tuple[str, ...]) -> PodRec | None:
    """The cross-object record of a workload: its template's claim references, at the workload's paths,
    under the workload's namespace and name (for `pod.unknown-claim`)."""
    rec = extract_record(pod_view(get_path(stored, keys)), 0)
    if not isinstance(rec, PodRec):
        return None
    meta = stored.get("metadata") if isinstance(stored.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) and meta.get("namespace") else None
    name = str(meta.get("name")) if isinstance(meta.get("name"), str) else ""
    prefix = template_prefix(keys)
    refs = tuple((prefixed(prefix, path), what, ref) for path, what, ref in rec.claim_refs)
    return dataclasses.replace(rec, namespace=ns, name=name, claim_refs=refs)


__all__ = ["check_workload", "count_violations", "workload_record"]
