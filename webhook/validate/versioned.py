"""`resource.k8s.io` objects of any version through the validation pipeline (`webhook.validate`) and
`strip`: an apiVersion the target API server does not serve (`--k8s-version`, `--runtime-config`) is an
error with the fix in the message; a served beta/alpha object is converted to v1 as the API server
converts it, validated as v1, and reported at the manifest's own field paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhook.convert import convertible, from_v1, source_message, source_path, to_v1, v1beta1, version_of
from webhook.convert.served import serving
from webhook.model.catalogue import RULES
from webhook.model.plain import deep_copy
from webhook.model.violation import Finding, Violation
from webhook.rules.registry import object_rules
from webhook.state.inventory import extract_record
from webhook.validate.objects import checked_object

if TYPE_CHECKING:
    from webhook.config.context import Context
    from webhook.config.policy import Policy
    from webhook.io.documents import Document
    from webhook.model.report import ObjectResult

API_VERSION = "input.api-version"
DEPRECATED = "input.deprecated-api"
UNKNOWN_FIELD = "schema.unknown-field"  # declared by webhook.schema.structural
WRONG_TYPE = "schema.type"
ALLOCATION_MODE = "claim.allocation-mode"


_MIGRATE = "migrate with `draguard convert --to v1 FILE`"


def _v(rule: str, path: str, message: str) -> Violation:
    return Violation(rule, RULES[rule].severity, path, message)


def _apply(policy: Policy | None, violations: list[Violation]) -> list[Violation]:
    return policy.apply(violations) if policy else violations


def check_versioned(
    doc: Document, result: ObjectResult, ctx: Context, policy: Policy | None
) -> tuple[ObjectResult | None, Any, dict[str, Any] | None] | None:
    """A `resource.k8s.io/*` document (apiVersion and kind are strings): its (result, inventory record,
    object as stored), or None when the ordinary v1 pipeline takes it (a served v1 object). A served
    kind draguard does not check (v1alpha3 ResourcePoolStatusRequest) is skipped: (None, None, None)."""
    obj = doc.obj
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    version = version_of(api_version)
    answer = serving(api_version, kind, ctx.profile.version, ctx.runtime_config)
    if version == "v1" and answer.served:
        return None
    if not answer.served:
        result.violations = _apply(
            policy, [*result.violations, _v(API_VERSION, "apiVersion", answer.message)]
        )
        return result, None, None
    if not convertible(api_version, kind):
        return None, None, None
    found: list[Violation] = []
    if answer.message:
        found.append(_v(DEPRECATED, "apiVersion", f'the API server warns "{answer.message}"; {_MIGRATE}'))
    converted = to_v1(obj)
    if converted.findings:  # strict decoding rejects the object: nothing else is checked
        found.extend(_decoding(f) for f in converted.findings)
        result.violations = _apply(policy, [*result.violations, *found])
        return result, None, None
    extra = _undefaulted(obj, converted.obj, ctx) if version == "v1beta1" else []
    stored, violations = checked_object(converted.obj, ctx, policy)
    for v in [*violations, *extra]:
        found.append(
            Violation(
                v.rule,
                v.severity,
                source_path(api_version, kind, v.field),
                source_message(api_version, kind, v.message),
            )
        )
    result.violations = _apply(policy, [*result.violations, *_unique(found)])
    record = extract_record(stored, 0) if stored is not None else None
    return result, record, stored


def _decoding(f: Finding) -> Violation:
    """A strict-decoding finding of the conversion: an unknown field or a value of the wrong type."""
    rule = UNKNOWN_FIELD if f.message.startswith("unknown field") else WRONG_TYPE
    return _v(rule, str(f.field), f.message)


def _unique(violations: list[Violation]) -> list[Violation]:
    seen: set[Violation] = set()
    return [v for v in violations if not (v in seen or seen.add(v))]  # type: ignore[func-returns-value]


def _undefaulted(beta: dict[str, Any], converted: dict[str, Any], ctx: Context) -> list[Violation]:
    """What v1beta1's narrower defaulting leaves for validation to find (see `v1beta1.undefaulted_requests`):
    `claim.allocation-mode` findings on those requests with allocationMode and count as written."""
    indices = v1beta1.undefaulted_requests(beta)
    if not indices:
        return []
    raw = deep_copy(converted)
    kind = raw.get("kind")
    claim_spec = raw["spec"]["spec"] if kind == "ResourceClaimTemplate" else raw["spec"]
    prefix = "spec.spec" if kind == "ResourceClaimTemplate" else "spec"
    requests = claim_spec["devices"]["requests"]
    wanted = []
    for i in indices:
        exactly = requests[i]["exactly"]
        if exactly.get("allocationMode") is None:
            exactly["allocationMode"] = ""
        if exactly.get("count") is None:
            exactly["count"] = 0
        wanted.append(f"{prefix}.devices.requests[{i}].exactly.")
    out = []
    for rule, fn in object_rules(str(kind)):
        if rule.id == ALLOCATION_MODE:
            for f in fn(raw, ctx):
                if str(f.field).startswith(tuple(wanted)):
                    out.append(Violation(rule.id, rule.severity, str(f.field), f.message))
    return out


@dataclass
class Stripped:
    """`strip` of one resource.k8s.io object: the object as stored in the manifest's version (None when
    the API server does not serve it), the dropped fields and other findings at the manifest's paths."""

    obj: dict[str, Any] | None
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    findings: list[Violation] = field(default_factory=list)


def strip_versioned(obj: dict[str, Any], ctx: Context) -> Stripped | None:
    """`strip` for a resource.k8s.io object of any version; None for a served v1 object or a served kind
    draguard does not check (the caller prints those as they are)."""
    from webhook.apiserver.skew import strip_disabled_fields

    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or version_of(api_version) is None:
        return None
    answer = serving(api_version, kind, ctx.profile.version, ctx.runtime_config)
    if not answer.served:
        return Stripped(None, [], [_v(API_VERSION, "apiVersion", answer.message)])
    if version_of(api_version) == "v1" or not convertible(api_version, kind):
        return None
    findings = []
    if answer.message:
        findings.append(_v(DEPRECATED, "apiVersion", f'the API server warns "{answer.message}"; {_MIGRATE}'))
    converted = to_v1(obj)
    if converted.findings:
        findings.extend(_decoding(f) for f in converted.findings)
        return Stripped(None, [], findings)
    stripped, dropped = strip_disabled_fields(converted.obj, ctx)
    return Stripped(
        from_v1(stripped, api_version),
        [(source_path(api_version, kind, str(d.field)), d.message) for d in dropped],
        findings,
    )
