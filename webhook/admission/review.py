"""`review()`: one AdmissionReview in, one AdmissionReview out (no threads, no globals; I/O: see below).

    review(admission_review, snapshot, config, deadline=None) -> dict

- A body that is no AdmissionReview raises `BadReview` (the server answers 400); anything else is
  answered, never raised: malformed request fields and an object whose kind is not the one the request
  names are denied with 400 `BadRequest`; an internal error is admitted with a warning
  (`failure_mode: open`) or denied with 500 `InternalError` (`closed`).
- Handled (validate): CREATE and UPDATE of ResourceSlice, DeviceClass, ResourceClaim (and its `status`),
  ResourceClaimTemplate, DeviceTaintRule (`resource.k8s.io/v1`) and Pod CREATE (with
  `extended_resources: native`, the DeviceClass mapping of its extended resources too), claims, templates
  and Pods against the tenant entries covering their namespace; (mutate) CREATE and UPDATE of the kinds
  with version-skew fields, CREATE of claims and templates for the selectors tenant entries require
  (`webhook.admission.tenants`), and Pod CREATE with `extended_resources: translate`.
  Everything else is allowed untouched.
- Side effects: none, except one. A translated Pod refers to ResourceClaimTemplates; those the
  snapshot does not hold yet are applied through `config.templates` before the answer — never for a
  `dryRun` request (same patch, nothing written). When that fails, the failure mode answers: `closed`
  denies the Pod (500 InternalError naming the template and the API server's reason: its controller
  retries), `open` admits it unchanged with a warning (as the API server would with failurePolicy
  Ignore and the webhook unreachable).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from webhook.admission import extended, mutating, oversize, statusauthz, taints, tenants, validating
from webhook.admission import feasibility as fz
from webhook.admission.config import AdmissionConfig
from webhook.admission.patch import apply_ops
from webhook.admission.request import (
    BadReview,
    MalformedRequest,
    Request,
    parse_request,
    uid_of,
)
from webhook.admission.response import (
    RESPONSE_BYTES,
    audit_annotations,
    cap_warnings,
    envelope,
    failure_status,
    invalid_status,
    json_patch,
    json_size,
)
from webhook.admission.templates_writer import TemplateWriteError
from webhook.admission.wire import (
    AdmissionResponse,
    AdmissionReviewResponse,
    ClusterSnapshot,
    Decision,
    Status,
)
from webhook.model.budget import Deadline, DeadlinePassed
from webhook.model.keys import DRA_KINDS
from webhook.model.text import clip, one_line
from webhook.model.violation import Severity, Violation
from webhook.simulate.tenants import CLAIM_KINDS

DRA_GROUP = "resource.k8s.io"
FEASIBILITY_RULE = "admission.feasibility"
UNKNOWN_CLAIM = "pod.unknown-claim"

__all__ = ["BadReview", "ReviewInfo", "review", "review_with_info"]


@dataclass(frozen=True)
class ReviewInfo:
    """What one review decided, for metrics and logs (docs/webhook.md)."""

    kind: str
    operation: str
    decision: Decision
    verdict: str | None = None  # feasibility verdict, when feasibility ran
    feasibility_seconds: float | None = None
    warnings: int = 0
    extended: str | None = None  # translate mode: translated | unmapped | dryrun | error


@dataclass
class _Answer:
    allowed: bool = True
    status: Status | None = None
    warnings: list[str] = field(default_factory=list)
    patch: list[dict[str, str]] = field(default_factory=list)
    audit: dict[str, str] = field(default_factory=dict)
    invalid: tuple[Request, list[Violation]] | None = None  # a denial's errors (its status is made last)
    decision: Decision = "allowed"
    verdict: str | None = None
    feasibility_seconds: float | None = None
    extended: str | None = None


def review(
    admission_review: object,  # a parsed request body: checked here, anything may arrive
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline | None = None,
) -> AdmissionReviewResponse:
    """The AdmissionReview answering `admission_review` (see the module docstring)."""
    return review_with_info(admission_review, snapshot, config, deadline)[0]


def review_with_info(
    admission_review: object,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline | None = None,
) -> tuple[AdmissionReviewResponse, ReviewInfo]:
    """`review()` plus what it decided (`ReviewInfo`)."""
    uid = uid_of(admission_review)  # BadReview: no answer possible
    assert isinstance(admission_review, dict)  # uid_of accepts only a JSON object
    own = Deadline.after(config.deadline_seconds)
    if deadline is None or own.at < deadline.at:
        deadline = own
    kind, operation = "", ""
    try:
        req = parse_request(admission_review)
        kind, operation = req.kind.kind, req.operation
        answer = _answer(req, snapshot, config, deadline)
    except MalformedRequest as e:
        answer = _Answer(False, failure_status(400, "BadRequest", str(e)), decision="denied")
    except (Exception, RecursionError, MemoryError) as e:  # noqa: BLE001 - the boundary: always an answer
        answer = _internal_error(e, config)
    response: AdmissionResponse = {"uid": uid, "allowed": answer.allowed}
    warnings = cap_warnings(answer.warnings, config.max_warnings, config.max_warning_chars)
    if warnings:
        response["warnings"] = warnings
    if answer.patch and config.endpoint == "mutate" and answer.allowed:
        response["patchType"] = "JSONPatch"
        response["patch"] = json_patch(answer.patch)
    if answer.audit:
        response["auditAnnotations"] = audit_annotations(answer.audit)
    if not answer.allowed:
        status = answer.status
        if answer.invalid is not None:  # the causes get what the rest of the answer leaves
            denied, errors = answer.invalid
            rest = json_size(envelope(response)) + len(',"status":')
            status = invalid_status(
                denied.kind.group, denied.kind.kind, _name(denied), errors, RESPONSE_BYTES - rest
            )
        if status is not None:  # `status` right after `allowed`, as the API server's own answers have it
            response = {"uid": uid, "allowed": False, "status": status, **response}
    info = ReviewInfo(
        kind,
        operation,
        answer.decision,
        answer.verdict,
        answer.feasibility_seconds,
        len(warnings),
        answer.extended,
    )
    return envelope(response), info


def _internal_error(e: BaseException, config: AdmissionConfig) -> _Answer:
    detail = one_line(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
    if len(detail) > 200:
        detail = detail[:197] + "..."
    if config.failure_mode == "open":
        text = f"draguard could not check this request ({detail}); admitted (failure mode: open)"
        return _Answer(True, warnings=[text], decision="error")
    text = f"draguard could not check this request ({detail}); denied (failure mode: closed)"
    return _Answer(False, failure_status(500, "InternalError", text), decision="error")


def _too_late(config: AdmissionConfig) -> _Answer:
    """The request's deadline passed while its rules ran (costly CEL): not checked, so the failure mode
    decides, as the API server's failurePolicy would on a timeout."""
    what = f"draguard could not finish checking this request within its deadline ({config.deadline_seconds:g} s or the API server's timeout)"
    if config.failure_mode == "open":
        return _Answer(True, warnings=[f"{what}; admitted (failure mode: open)"], decision="error")
    return _Answer(
        False,
        failure_status(500, "InternalError", f"{what}; denied (failure mode: closed)"),
        decision="error",
    )


# -- routing -------------------------------------------------------------------------------------


def _answer(req: Request, snapshot: ClusterSnapshot, config: AdmissionConfig, deadline: Deadline) -> _Answer:
    target = _target(req, config)
    if isinstance(target, _Answer):
        return target
    if not target:
        return _Answer()
    mismatch = _kind_mismatch(req)
    if mismatch:
        return _Answer(False, failure_status(400, "BadRequest", mismatch), decision="denied")
    too_many = _oversized(req)
    if too_many is not None:
        if config.endpoint == "mutate":  # not mutated; the API server's validation rejects it next
            return _Answer(
                warnings=[f"draguard did not mutate this object: {too_many.field}: {too_many.message}"]
            )
        return _deny(_Answer(), req, [too_many])
    if config.endpoint == "mutate":
        ops, warnings = mutating.skew_patch(req, config)
        answer = _Answer(patch=ops, warnings=warnings)
        if config.policy.tenants:
            denied = _tenant_selectors(answer, req, snapshot, config)
            if denied:
                return _deny(answer, req, denied)
        if (
            _is_pod_create(req)
            and config.extended_resources == "translate"
            and not tenants.forbids_extended(req, req.object or {}, snapshot, config)
        ):
            _translate(answer, req, snapshot, config, deadline)
        return answer
    return _validate(req, snapshot, config, deadline)


def _tenant_selectors(
    answer: _Answer, req: Request, snapshot: ClusterSnapshot, config: AdmissionConfig
) -> list[Violation]:
    """Add the selectors tenant entries require to the patch (computed on the object the skew removals
    leave); the violations that deny the request instead (webhook.admission.tenants)."""
    if req.object is None or req.operation != "CREATE" or req.kind.kind not in CLAIM_KINDS:
        return []
    obj = req.object
    if answer.patch:
        obj = copy.deepcopy(obj)
        apply_ops(obj, answer.patch)
    m = tenants.mutate(req, obj, snapshot, config)
    if m.denied:
        return m.denied
    answer.patch.extend(m.ops)
    answer.audit.update(m.audit)
    return []


def _oversized(req: Request) -> Violation | None:
    if req.kind.group != "resource.k8s.io":
        return None
    return oversize.oversized(req.object, req.kind.kind) or oversize.oversized(req.old_object, req.kind.kind)


def _is_pod_create(req: Request) -> bool:
    return req.kind.kind == "Pod" and req.kind.group == "" and req.operation == "CREATE"


def _pod_namespace(req: Request) -> str:
    meta = (req.object or {}).get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return req.namespace or (ns if isinstance(ns, str) and ns else "default")


def _target(req: Request, config: AdmissionConfig) -> bool | _Answer:
    """Whether this endpoint checks the request (or an answer for a DRA version it does not check)."""
    g, v, k = req.kind.group, req.kind.version, req.kind.kind
    if req.operation not in ("CREATE", "UPDATE"):
        return False
    if g == DRA_GROUP and k in DRA_KINDS:
        if v != "v1":
            return _Answer(
                warnings=[
                    f"draguard checks {DRA_GROUP}/v1 objects only, this request is {DRA_GROUP}/{clip(v)}: register "
                    "the webhook for apiVersions [v1] with matchPolicy Equivalent (the API server then "
                    "sends every version as v1)"
                ]
            )
        if req.sub_resource == "status":
            return k == "ResourceClaim"
        return req.sub_resource == ""
    if g == "" and v == "v1" and k == "Pod" and req.sub_resource == "":
        return config.endpoint == "mutate" or req.operation == "CREATE"
    return False


def _kind_mismatch(req: Request) -> str:
    """Why the object does not match the request (the API server never sends that), or ""."""
    for name, obj in (("object", req.object), ("oldObject", req.old_object)):
        if obj is None:
            if name == "object" or req.operation == "UPDATE":
                return f"request.{name} is missing for a {req.operation} of {req.kind.kind}"
            continue
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version != req.kind.api_version or kind != req.kind.kind:
            got = (
                f"{clip(api_version)} {clip(kind)}"
                if isinstance(api_version, str) and isinstance(kind, str)
                else "no kind"
            )
            expected = f"{clip(req.kind.api_version)} {clip(req.kind.kind)}"
            return one_line(
                f"request.{name} is {got} but request.kind is {expected}: the object must be of the kind "
                "the request names (with matchPolicy Equivalent the API server converts it)"
            )
    return ""


# -- extended resources -----------------------------------------------------------------------------


def _translate(
    answer: _Answer, req: Request, snapshot: ClusterSnapshot, config: AdmissionConfig, deadline: Deadline
) -> None:
    """Add the translation of a Pod's extended resources into claims to `answer` (see the module
    docstring for the templates it writes, and for what a failed write answers)."""
    assert req.object is not None
    namespace = _pod_namespace(req)
    t = extended.translate(
        req.object, namespace, snapshot.objects("DeviceClass").values(), snapshot.objects("Node").values()
    )
    answer.extended = t.result
    if t.result != "translated":
        return
    if req.dry_run:
        answer.extended = "dryrun"
    else:
        stored = snapshot.objects("ResourceClaimTemplate")
        assert config.templates is not None
        for template in t.templates:
            if extended.same_template(stored.get((namespace, template["metadata"]["name"])), template):
                continue
            try:
                config.templates.apply(template, deadline.remaining() - config.reserve_seconds)
            except TemplateWriteError as e:
                _not_translated(answer, str(e), config)
                return
    answer.patch.extend(t.ops)
    answer.warnings.extend(t.warnings)
    answer.audit["extended-resources"] = t.audit


def _not_translated(answer: _Answer, detail: str, config: AdmissionConfig) -> None:
    answer.extended = "error"
    answer.decision = "error"
    what = f"draguard could not translate this Pod's extended resources into ResourceClaims ({detail})"
    if config.failure_mode == "open":
        answer.warnings.append(
            f"{what}; admitted unchanged (failure mode: open): this cluster's scheduler does not serve its "
            "extended resources through DRA"
        )
        return
    answer.allowed = False
    answer.status = failure_status(
        500, "InternalError", f"{what}; denied (failure mode: closed), retry later"
    )


# -- the validating endpoint -----------------------------------------------------------------------


def _name(req: Request) -> str:
    meta = (req.object or {}).get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else req.name


def _validate(
    req: Request, snapshot: ClusterSnapshot, config: AdmissionConfig, deadline: Deadline
) -> _Answer:
    try:
        found = validating.check(req, snapshot, config, Deadline(deadline.at - config.reserve_seconds))
    except DeadlinePassed:
        return _too_late(config)
    errors, warns = found.errors, list(found.warnings)
    templates: dict[tuple[str, str], dict[str, Any]] = {}
    if _is_pod_create(req) and found.stored is not None:
        more, templates = _extended_checks(req, found.stored, snapshot, config)
        errors = errors + [v for v in more if v.severity is Severity.ERROR]
        warns += [v for v in more if v.severity is Severity.WARNING]
        if templates:  # the templates exist (just made by the mutating webhook): not unknown claims
            known = _template_fields(found.stored, templates)
            warns = [v for v in warns if not (v.rule == UNKNOWN_CLAIM and v.field in known)]
            errors = [v for v in errors if not (v.rule == UNKNOWN_CLAIM and v.field in known)]
    audit: dict[str, str] = {}
    if config.policy.tenants and found.stored is not None:
        t = tenants.validate(
            req,
            found.stored,
            found.old,
            snapshot,
            config,
            Deadline(deadline.at - config.reserve_seconds),
            templates,
        )
        errors = errors + t.errors
        warns += t.warnings
        audit = t.audit
    radius_warning: list[str] = []
    if found.stored is not None and req.kind.kind == "DeviceTaintRule" and not errors:  # invalid: moot
        radius = taints.check(req, found.stored, found.old, snapshot, config)
        if radius is not None:
            audit[taints.AUDIT_KEY] = radius.audit
            if radius.denied is not None:
                errors = errors + [radius.denied]
            else:
                radius_warning.append(radius.warning)
    bound = statusauthz.check(req, config.policy.rbac.enforce_node_bound_status)
    if bound is not None:
        errors = errors + [bound]
    if config.failure_mode == "open":  # a rule that crashed does not deny with fail-open
        warns += [v for v in errors if v.rule.startswith("internal.")]
        errors = [v for v in errors if not v.rule.startswith("internal.")]
    answer = _Answer(warnings=radius_warning + [validating.warning_text(v) for v in warns], audit=audit)
    if errors:
        return _deny(answer, req, errors)
    if req.operation == "CREATE" and found.stored is not None and req.kind.kind in ("ResourceClaim", "Pod"):
        _feasibility(answer, req, found.stored, snapshot, config, deadline, templates)
    return answer


def _extended_checks(
    req: Request, pod: dict[str, Any], snapshot: ClusterSnapshot, config: AdmissionConfig
) -> tuple[list[Violation], dict[tuple[str, str], dict[str, Any]]]:
    """Native mode: the DeviceClass mapping of the Pod's extended resources (policy applied). Translate
    mode: the draguard templates the Pod refers to that the state does not hold yet."""
    if config.extended_resources == "native":
        found = extended.native_violations(
            pod, snapshot.objects("DeviceClass").values(), snapshot.objects("Node").values()
        )
        return config.policy.apply(found), {}
    if config.extended_resources == "translate":
        templates = extended.managed_templates(
            pod,
            _pod_namespace(req),
            snapshot.objects("ResourceClaimTemplate"),
            snapshot.objects("DeviceClass"),
        )
        return [], templates
    return [], {}


def _template_fields(pod: dict[str, Any], templates: dict[tuple[str, str], dict[str, Any]]) -> set[str]:
    names = {name for _, name in templates}
    entries = (pod.get("spec") or {}).get("resourceClaims") or []
    return {
        f"spec.resourceClaims[{i}].resourceClaimTemplateName"
        for i, e in enumerate(entries)
        if isinstance(e, dict) and e.get("resourceClaimTemplateName") in names
    }


def _deny(answer: _Answer, req: Request, errors: list[Violation]) -> _Answer:
    """Deny with `errors` as the Status (message and causes) and their rule ids in the audit annotation
    `denied-by`. No warning repeats the denial: kubectl prints every warning above the error, so an echo
    would say the same thing twice; the warnings that stay are the request's other findings."""
    answer.allowed = False
    answer.decision = "denied"
    answer.invalid = (req, errors)
    rules = sorted({v.rule for v in errors})
    answer.audit["denied-by"] = ",".join(rules)[:1000]
    return answer


def _feasibility(
    answer: _Answer,
    req: Request,
    obj: dict[str, Any],
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline,
    templates: dict[tuple[str, str], dict[str, Any]] | None = None,
) -> None:
    kind = req.kind.kind
    mode = config.policy.feasibility.mode(kind, req.namespace)
    if mode == "off":
        return
    inner = Deadline(deadline.at - config.reserve_seconds)
    try:
        if kind == "ResourceClaim":
            result = fz.check_claim(obj, req.namespace, snapshot, config, inner)
        else:
            result = fz.check_pod(obj, req.namespace, snapshot, config, inner, templates)
    except fz.FeasibilityCrash as e:
        raise RuntimeError(f"feasibility check failed: {e}") from None
    answer.verdict = result.verdict
    answer.feasibility_seconds = result.seconds
    if result.verdict in ("feasible", "skipped") or not result.message:
        return
    if result.verdict == "unsatisfiable" and mode == "enforce":
        violation = Violation(
            FEASIBILITY_RULE, Severity.ERROR, result.field or "spec", f"Forbidden: {result.message}"
        )
        _deny(answer, req, [violation])
        answer.audit["feasibility"] = result.verdict
        return
    answer.warnings.append(f"{result.message} ({FEASIBILITY_RULE}: {result.verdict}, mode {mode})")
    answer.audit["feasibility"] = result.verdict
