"""Parsed documents → their results: which documents are DRA objects (or workloads using DRA), what each
is checked as (any served `resource.k8s.io` version, a workload's Pod template, a manifest or stored
state), and a file's documents read lazily within the run's deadline (`check_documents`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.io.documents import (
    Document,
    DocumentError,
    not_an_object,
    parse,
)
from webhook.io.unrendered import Template
from webhook.io.unrendered import hint as template_hint
from webhook.model.budget import DeadlinePassed
from webhook.model.keys import DRA_KINDS
from webhook.model.report import ObjectResult
from webhook.model.text import clip
from webhook.model.violation import Severity, Violation
from webhook.model.workloads import WORKLOADS, get_path, uses_dra
from webhook.rules.facts import MAX_DEVICES_PER_FILE, facts_of, namespace_facts, without_samples
from webhook.state.inventory import extract_record
from webhook.validate.ignores import suppression_of
from webhook.validate.objects import apply_policy, checked_object, status_reset, violation
from webhook.validate.templates import check_workload, workload_record
from webhook.validate.versioned import check_versioned

if TYPE_CHECKING:
    from webhook.cel.uses import Uses

RESOURCE_V1 = "resource.k8s.io/v1"


CHECKED = {(RESOURCE_V1, k) for k in DRA_KINDS} | {("v1", "Pod")} | set(WORKLOADS)


TEMPLATE_RULE = "input.template"  # an unrendered template: an error when named, a warning when found
DRA_API_PREFIX = "resource.k8s.io/"  # of an apiVersion (webhook.admission.review.DRA_GROUP is the group)


@dataclass
class FileResult:
    objects: list[ObjectResult] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)  # aligned with objects; None for objects without one
    skipped: int = 0
    kinds_skipped: dict[str, int] = field(default_factory=dict)
    not_checked: int = 0  # objects or rests of files the deadline left unvalidated (`input.not-checked`)
    crashed: bool = False  # draguard failed on the file: one internal.rule-crash stands for all of it
    facts: list[Any] = field(
        default_factory=list
    )  # for the lint rules, aligned with objects (may be shorter)
    namespaces: list[Any] = field(default_factory=list)  # the file's Namespaces (webhook.rules.facts)
    complete: bool = True  # every device of the file is in its facts
    not_objects: int = 0  # documents that are not Kubernetes objects (`not_an_object`), in `skipped` too
    first_not_object: str = ""  # where the first is: "file:line"
    kept: list[Loaded | None] = field(default_factory=list)  # for a simulation, when asked (`Keeper`)
    kept_all: bool = False  # `kept` holds every object of the file (see `check_inputs`)
    # from a worker process: the selector lint's analysis of the file's selectors (RunFacts.uses)
    selector_uses: dict[tuple[str, bool, bool], Uses | None] = field(default_factory=dict)


@dataclass
class Loaded:
    """One object as the simulation sees it (defaulted and version-skew stripped), with its origin."""

    source: str
    line: int
    kind: str
    obj: dict[str, Any]
    result: ObjectResult | None = None  # its validation result (None for Nodes, which are not validated)
    decoded: bool = True  # False: the API server could not decode it (obj is the document as written)


# What a document gives the simulation besides its result: the object as stored (None when invalid or skipped)
Keep = Callable[[Document, "ObjectResult | None", "dict[str, Any] | None"], None]


class Keeper:
    """A `Keep` hook collecting what a simulation takes from one file: the objects as stored (those the
    API server would reject too, to be reported as left out; an undecodable one as written), Nodes and
    Namespaces (not validated) at the end.

    Read as manifests to create (`ctx`), a claim's or Pod's `status` is reset; but a claim that carries an
    allocation comes from a cluster where it is allocated, so the simulation takes its status as stored
    (validated as such; reset after all when that finds an error in it)."""

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx
        self.loaded: list[Loaded | None] = []
        self.nodes: list[Loaded | None] = []  # and Namespaces (their labels: admin access in the webhook)

    def __call__(self, doc: Document, result: ObjectResult | None, stored: dict[str, Any] | None) -> None:
        obj = doc.obj
        if result is None:
            kind = obj.get("kind")
            if (
                kind in ("Node", "Namespace")
                and obj.get("apiVersion") == "v1"
                and isinstance(obj.get("metadata"), dict)
            ):
                self.nodes.append(Loaded(doc.source, doc.line, str(kind), obj))
            elif kind == "Pod" and stored is not None:  # a Pod that uses no DRA (`check_document`)
                self.loaded.append(Loaded(doc.source, doc.line, "Pod", self._status(obj, stored)))
            return
        if stored is None:  # not decodable: left out, named from the document as written
            self.loaded.append(Loaded(doc.source, doc.line, str(obj.get("kind")), obj, result, decoded=False))
        else:
            self.loaded.append(
                Loaded(doc.source, doc.line, str(obj.get("kind")), self._status(obj, stored), result)
            )

    def _status(self, obj: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
        """`stored`, or the object with its status as a cluster stores it (see the class docstring)."""
        ctx = self.ctx
        if ctx is None or not status_reset(obj, ctx) or obj.get("status") in (None, {}):
            return stored
        with_status, violations = checked_object(obj, dataclasses.replace(ctx, as_stored=True), None)
        if with_status is None or any(
            v.field.startswith("status") and v.severity is Severity.ERROR for v in violations
        ):
            return stored
        return with_status

    def objects(self, out: FileResult) -> list[Loaded | None]:
        """What was kept of the file checked into `out` (nothing when draguard failed on the file: its
        objects are not in the report, so none is in the simulation either)."""
        return [] if out.crashed else self.loaded + self.nodes


def check_document(
    doc: Document, ctx: Context, policy: Policy | None, skip: frozenset[str]
) -> tuple[ObjectResult | None, Any, dict[str, Any] | None]:
    """`check_document`, and the object as a v1.37 API server would store it (None when it cannot be
    decoded or was skipped)."""
    obj = doc.obj
    if not_an_object(doc):
        return None, None, None  # CI configuration, Helm values, a JSON array, ...: skipped and counted
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or meta.get("generateName")
    result = ObjectResult(
        doc.source,
        doc.line,
        _str(api_version),
        _str(kind),
        _str(meta.get("namespace")),
        _str(name),
        root_line=doc.root_line,
        prefix=doc.prefix,
        suppression=suppression_of(meta),
    )
    warn = bool(doc.issues) and ctx.field_validation_of(obj) == "Warn"
    for issue in doc.issues:
        result.violations.append(_issue(issue.rule, issue.path, f"{issue.message} (line {issue.line})", warn))
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        missing = "apiVersion" if not isinstance(api_version, str) or not api_version else "kind"
        near = next(
            (k for k in obj if isinstance(k, str) and k != missing and k.lower() == missing.lower()), None
        )
        hint = (
            f" (this object has `{near}`: field names are case-sensitive, write `{missing}`)"
            if near is not None
            else " (not a Kubernetes manifest? leave the file out with --exclude)"
        )
        result.violations.append(
            violation(
                "input.kind",
                missing,
                f"Required value: every Kubernetes object needs apiVersion and kind{hint}",
            )
        )
        return result, None, None
    if kind in skip:
        return None, None, None
    if api_version.startswith(DRA_API_PREFIX):  # any version: served? converted to v1? (webhook.convert)
        versioned = check_versioned(doc, result, ctx, policy)
        if versioned is not None:
            return versioned
    if (api_version, kind) not in CHECKED:
        return None, None, None
    if (api_version, kind) == ("v1", "Pod") and not uses_dra(obj):
        # a Pod that uses no DRA is not a DRA object, as a workload whose template uses none: skipped and
        # counted, its findings not reported; a simulation still takes it as the API server would store
        # it (its requests count on the node it runs on), and silently leaves it out when it would not
        stored, violations = checked_object(obj, ctx, None)
        rejected = stored is None or any(v.severity is Severity.ERROR for v in violations)
        return None, None, None if rejected else stored
    keys = WORKLOADS.get((api_version, kind))
    if keys is not None and not uses_dra(get_path(obj, keys)):
        return None, None, None  # a workload whose Pods use no DRA: not a DRA object, skipped and counted
    if keys is not None:  # a workload: its Pod template is checked as a Pod (webhook.validate.templates)
        stripped, violations = check_workload(obj, keys, ctx, policy)
        record: Any = workload_record(stripped, keys) if stripped is not None else None
    else:
        stripped, violations = checked_object(obj, ctx, policy)
        record = extract_record(stripped, 0) if stripped is not None else None
    result.violations.extend(violations)
    if policy:
        result.violations = policy.apply(result.violations)  # the duplicate-key findings too
    return result, record, stripped


def _issue(rule: str, path: str, message: str, warn: bool) -> Violation:
    """A parser issue; a duplicate key of an object written with field validation Warn (stored state) is a
    warning: the API server stores the last value."""
    if warn and rule == "input.duplicate-key":
        return violation(
            rule, path, f"{message}; stored state: the API server keeps the last value", Severity.WARNING
        )
    return violation(rule, path, message)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def check_file_text(
    text: str,
    source: str,
    ctx: Context,
    policy: Policy | None = None,
    skip: frozenset[str] = frozenset(),
    keep: Keep | None = None,
    *,
    walked: bool = False,
) -> FileResult:
    """Every document of one file's text (see `check_documents`)."""
    expired = ctx.deadline.expired if ctx.deadline is not None else None
    return check_documents(parse(text, source, expired), source, ctx, policy, skip, keep, walked=walked)


def check_documents(
    docs: Iterable[Document | DocumentError],
    source: str,
    ctx: Context,
    policy: Policy | None = None,
    skip: frozenset[str] = frozenset(),
    keep: Keep | None = None,
    *,
    walked: bool = False,
) -> FileResult:
    """Every document of one file (read lazily: a file is parsed as it is checked). Once `ctx.deadline`
    has passed, the document in hand is reported `input.not-checked` and nothing after it is read.
    `keep(doc, result, stored)` sees every document that was checked or skipped. `walked`: the file was
    found in a directory, not named: an unrendered template in it is a warning (a repository holds
    templates of other tools: clusterloader2's, an operator's assets), named it stays an error."""
    template_severity = Severity.WARNING if walked else Severity.ERROR
    out = FileResult()
    deadline = ctx.deadline
    budget = [MAX_DEVICES_PER_FILE]  # devices kept in the facts of this file's slices
    for doc in docs:
        if deadline is not None and deadline.expired():
            _cut(out, not_checked_result(doc, _BEFORE, policy))
            break
        if isinstance(doc, DocumentError):
            found = [violation(doc.rule, "", doc.message)]
            if doc.rule == TEMPLATE_RULE:  # its severity as a policy sets it, else by where it was found
                found = apply_policy(policy, [violation(doc.rule, "", doc.message, template_severity)])
            out.objects.append(ObjectResult(source, doc.line, None, None, None, None, found))
            out.records.append(None)
            continue
        try:
            result, record, stored = check_document(doc, ctx, policy, skip)
        except DeadlinePassed:
            _cut(out, not_checked_result(doc, _WHILE, policy))
            break
        if result is not None and doc.template is not None and result.errors:
            result.violations = apply_policy(
                policy, [_template_hint(doc.template, result, template_severity)]
            )
            record = stored = None  # as a template that does not parse: not checked further
        if keep is not None:
            keep(doc, result, stored)
        if result is None:
            if not_an_object(doc):
                out.not_objects += 1
                out.first_not_object = out.first_not_object or f"{doc.source}:{doc.line}"
            out.skipped += 1
            kind = str(doc.obj.get("kind"))
            out.kinds_skipped[kind] = out.kinds_skipped.get(kind, 0) + 1
            ns = namespace_facts(doc.obj, doc.source, doc.line) if kind == "Namespace" else None
            if ns is not None:
                out.namespaces.append(ns)
            continue
        out.objects.append(result)
        out.records.append(record)
        out.facts.extend([None] * (len(out.objects) - 1 - len(out.facts)))
        out.facts.append(facts_of(stored, budget) if stored is not None else None)
    out.complete = budget[0] >= 0
    if not out.complete:
        out.facts = without_samples(out.facts)
    return out


def _template_hint(template: Template, result: ObjectResult, severity: Severity) -> Violation:
    """`input.template` for a document that parses, holds a template marker and has errors: it stands
    for them (they come from the text as written: `${NAME}` is no valid name); the first is quoted."""
    errors = [v for v in result.violations if v.severity is Severity.ERROR]
    first = f"{errors[0].field}: {errors[0].message}" if errors[0].field else errors[0].message
    message = template_hint(template, len(errors), clip(first, 300))
    return dataclasses.replace(violation(TEMPLATE_RULE, "", message, severity), line=template.line)


_BEFORE = "the deadline of the run passed before this object was validated"


_WHILE = "the deadline of the run passed while this object was validated"


_REST = "nothing after it in this file was read either"


_UNREAD = "the deadline of the run passed before this file was read: nothing in it was checked"


def not_checked_result(doc: Document | DocumentError, why: str, policy: Policy | None) -> ObjectResult:
    """The document in hand when the deadline passed, named, with `input.not-checked`."""
    text = f"not checked: {why}; {_REST}"
    if isinstance(doc, DocumentError):  # the parse error is known: report it, and the cut
        violations = [violation("input.not-checked", "", text)]
        if doc.rule != "input.not-checked":  # not the parser's own stop at the deadline
            violations.insert(0, violation(doc.rule, "", doc.message))
        return ObjectResult(doc.source, doc.line, None, None, None, None, apply_policy(policy, violations))
    obj = doc.obj
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or meta.get("generateName")
    return ObjectResult(
        doc.source,
        doc.line,
        _str(obj.get("apiVersion")),
        _str(obj.get("kind")),
        _str(meta.get("namespace")),
        _str(name),
        apply_policy(policy, [violation("input.not-checked", "", text)]),
    )


def _cut(out: FileResult, result: ObjectResult) -> None:
    out.not_checked += 1
    if result.violations:  # empty only when a policy disables input.not-checked
        out.objects.append(result)
        out.records.append(None)


def unread_result(source: str, policy: Policy | None) -> FileResult:
    """A file the deadline left unread."""
    out = FileResult()
    violations = apply_policy(policy, [violation("input.not-checked", "", f"not checked: {_UNREAD}")])
    _cut(out, ObjectResult(source, 1, None, None, None, None, violations, unread=True))
    return out
