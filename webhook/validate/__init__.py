"""Validation of one object and of whole inputs: the pipeline the CLI, the webhook and the tests share.

    structural schema → v1 defaulting → version-skew stripping → object rules → (all objects) inventory rules

Everything here is pure apart from reading files in `check_files`.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from webhook.apiserver.defaults import apply_defaults
from webhook.apiserver.skew import strip_disabled_fields
from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.config.profile import DEFAULT_VERSION, load_profile
from webhook.convert import source_message, source_path
from webhook.convert.served import DEFAULT as DEFAULT_RUNTIME_CONFIG
from webhook.convert.served import RuntimeConfig
from webhook.io.documents import (
    MAX_FILE_BYTES,
    MAX_REQUEST_BYTES,
    STDIN,
    Document,
    DocumentError,
    HelmChart,
    InputFileError,
    Skipped,
    body_text,
    discover_all,
    not_an_object,
    parse,
    parse_bytes,
    read_text,
)
from webhook.io.findinglines import assign_lines
from webhook.io.unrendered import Template
from webhook.io.unrendered import hint as template_hint
from webhook.model.budget import Deadline, DeadlinePassed
from webhook.model.catalogue import RULES
from webhook.model.keys import DRA_KINDS
from webhook.model.report import ObjectResult, Report
from webhook.model.text import clip
from webhook.model.violation import Severity, Violation
from webhook.model.workloads import WORKLOADS, get_path, uses_dra
from webhook.rules.facts import MAX_DEVICES_PER_FILE, RunFacts, facts_of, namespace_facts, without_samples
from webhook.rules.registry import inventory_rules, object_rules
from webhook.schema.structural import KINDS as SCHEMA_KINDS
from webhook.schema.structural import decode, served
from webhook.state.inventory import Inventory, extract_record
from webhook.validate.clusterinput import ClusterInput, stored_context
from webhook.validate.ignores import suppress, suppression_of
from webhook.validate.templates import check_workload, workload_record
from webhook.validate.versioned import check_versioned

RESOURCE_V1 = "resource.k8s.io/v1"
CHECKED = {(RESOURCE_V1, k) for k in DRA_KINDS} | {("v1", "Pod")} | set(WORKLOADS)
# Kinds whose registry strategy resets `status` on CREATE (PrepareForCreate): the API server stores the
# object without the status a manifest carries; status is written through the /status subresource.
STATUS_RESET_ON_CREATE = ("ResourceClaim", "DeviceTaintRule", "Pod")
DRA_API_PREFIX = "resource.k8s.io/"  # of an apiVersion (webhook.admission.review.DRA_GROUP is the group)


def _violation(rule_id: str, field_: str, message: str, severity: Severity | None = None) -> Violation:
    return Violation(rule_id, severity or RULES[rule_id].severity, field_, message)


def _status_reset(obj: dict[str, Any], ctx: Context) -> bool:
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
    if _status_reset(obj, ctx) and "status" in obj:
        status = obj.get("status")
        obj = {k: v for k, v in obj.items() if k != "status"}
        if status not in (None, {}):
            violations.append(_violation("status.dropped-on-create", "status", _STATUS_DROPPED))
    if kind in SCHEMA_KINDS and served(kind, ctx.profile.version):
        found, fatal, obj = decode(obj, kind, ctx.profile.version, ctx.field_validation_of(obj))
        violations.extend(found)
        if fatal:
            return None, violations
    apply_defaults(obj)
    stripped, dropped = strip_disabled_fields(obj, ctx)
    violations.extend(_violation("skew.dropped-field", str(f.field), f.message) for f in dropped)
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
                _violation("internal.rule-crash", "", f"rule {rule.id} failed: {type(e).__name__}: {e}")
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


def check_object(
    obj: dict[str, Any], ctx: Context | None = None, policy: Policy | None = None
) -> list[Violation]:
    """All single-object violations for one object (it is defaulted in place)."""
    return validate_object(obj, ctx or Context(), policy)[1]


def validate_object(
    obj: dict[str, Any], ctx: Context, policy: Policy | None
) -> tuple[dict[str, Any] | None, list[Violation]]:
    """The object as stored (None when it cannot be decoded) and its single-object violations."""
    stripped, violations = prepare(obj, ctx)
    if stripped is not None:
        violations.extend(run_object_rules(stripped, ctx, policy))
    violations = _dedup_required(violations)
    return stripped, policy.apply(violations) if policy else violations


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


@dataclass
class Loaded:
    """One object as the simulation sees it (defaulted and version-skew stripped), with its origin."""

    source: str
    line: int
    kind: str
    obj: dict[str, Any]
    result: ObjectResult | None = None  # its validation result (None for Nodes, which are not validated)
    decoded: bool = True  # False: the API server could not decode it (obj is the document as written)


# How a run's file results become its report (`assemble`, or one that adds context: webhook.repocontext)
Assembler = Callable[[list[FileResult], Context, Policy | None], Report]

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
        if ctx is None or not _status_reset(obj, ctx) or obj.get("status") in (None, {}):
            return stored
        with_status, violations = validate_object(obj, dataclasses.replace(ctx, as_stored=True), None)
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
) -> tuple[ObjectResult | None, Any]:
    """One parsed document → its result and inventory record (None, None when skipped). Raises
    `DeadlinePassed` when `ctx.deadline` passes while it is validated."""
    result, record, _ = check_stored(doc, ctx, policy, skip)
    return result, record


def check_stored(
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
        result.violations.append(
            _violation(
                "input.kind",
                missing,
                "Required value: every Kubernetes object needs apiVersion and kind (not a Kubernetes "
                "manifest? leave the file out with --exclude)",
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
    keys = WORKLOADS.get((api_version, kind))
    if keys is not None and not uses_dra(get_path(obj, keys)):
        return None, None, None  # a workload whose Pods use no DRA: not a DRA object, skipped and counted
    if keys is not None:  # a workload: its Pod template is checked as a Pod (webhook.validate.templates)
        stripped, violations = check_workload(obj, keys, ctx, policy)
        record: Any = workload_record(stripped, keys) if stripped is not None else None
    else:
        stripped, violations = validate_object(obj, ctx, policy)
        record = extract_record(stripped, 0) if stripped is not None else None
    result.violations.extend(violations)
    if policy:
        result.violations = policy.apply(result.violations)  # the duplicate-key findings too
    return result, record, stripped


def _issue(rule: str, path: str, message: str, warn: bool) -> Violation:
    """A parser issue; a duplicate key of an object written with field validation Warn (stored state) is a
    warning: the API server stores the last value."""
    if warn and rule == "input.duplicate-key":
        return _violation(
            rule, path, f"{message}; stored state: the API server keeps the last value", Severity.WARNING
        )
    return _violation(rule, path, message)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def check_text(
    text: str,
    source: str,
    ctx: Context,
    policy: Policy | None = None,
    skip: frozenset[str] = frozenset(),
    keep: Keep | None = None,
) -> FileResult:
    """Every document of one file's text (see `check_stream`)."""
    expired = ctx.deadline.expired if ctx.deadline is not None else None
    return check_stream(parse(text, source, expired), source, ctx, policy, skip, keep)


def check_stream(
    docs: Iterable[Document | DocumentError],
    source: str,
    ctx: Context,
    policy: Policy | None = None,
    skip: frozenset[str] = frozenset(),
    keep: Keep | None = None,
) -> FileResult:
    """Every document of one file (read lazily: a file is parsed as it is checked). Once `ctx.deadline`
    has passed, the document in hand is reported `input.not-checked` and nothing after it is read.
    `keep(doc, result, stored)` sees every document that was checked or skipped."""
    out = FileResult()
    deadline = ctx.deadline
    budget = [MAX_DEVICES_PER_FILE]  # devices kept in the facts of this file's slices
    for doc in docs:
        if deadline is not None and deadline.expired():
            _cut(out, not_checked_result(doc, _BEFORE, policy))
            break
        if isinstance(doc, DocumentError):
            out.objects.append(
                ObjectResult(
                    source, doc.line, None, None, None, None, [_violation(doc.rule, "", doc.message)]
                )
            )
            out.records.append(None)
            continue
        try:
            result, record, stored = check_stored(doc, ctx, policy, skip)
        except DeadlinePassed:
            _cut(out, not_checked_result(doc, _WHILE, policy))
            break
        if result is not None and doc.template is not None and result.errors:
            result.violations = _apply(policy, [_template_hint(doc.template, result)])
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


def _template_hint(template: Template, result: ObjectResult) -> Violation:
    """`input.template` for a document that parses, holds a template marker and has errors: it stands
    for them (they come from the text as written: `${NAME}` is no valid name); the first is quoted."""
    errors = [v for v in result.violations if v.severity is Severity.ERROR]
    first = f"{errors[0].field}: {errors[0].message}" if errors[0].field else errors[0].message
    message = template_hint(template, len(errors), clip(first, 300))
    return dataclasses.replace(_violation("input.template", "", message), line=template.line)


_BEFORE = "the deadline of the run passed before this object was validated"
_WHILE = "the deadline of the run passed while this object was validated"
_REST = "nothing after it in this file was read either"
_UNREAD = "the deadline of the run passed before this file was read: nothing in it was checked"
_NO_INVENTORY = (
    "cross-object rules (pools, duplicate devices, classes, extended resource names) were not run: the "
    "input was not read completely before the deadline"
)


def not_checked_result(doc: Document | DocumentError, why: str, policy: Policy | None) -> ObjectResult:
    """The document in hand when the deadline passed, named, with `input.not-checked`."""
    text = f"not checked: {why}; {_REST}"
    if isinstance(doc, DocumentError):  # the parse error is known: report it, and the cut
        violations = [_violation("input.not-checked", "", text)]
        if doc.rule != "input.not-checked":  # not the parser's own stop at the deadline
            violations.insert(0, _violation(doc.rule, "", doc.message))
        return ObjectResult(doc.source, doc.line, None, None, None, None, _apply(policy, violations))
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
        _apply(policy, [_violation("input.not-checked", "", text)]),
    )


def _cut(out: FileResult, result: ObjectResult) -> None:
    out.not_checked += 1
    if result.violations:  # empty only when a policy disables input.not-checked
        out.objects.append(result)
        out.records.append(None)


def unread_result(source: str, policy: Policy | None) -> FileResult:
    """A file the deadline left unread."""
    out = FileResult()
    violations = _apply(policy, [_violation("input.not-checked", "", f"not checked: {_UNREAD}")])
    _cut(out, ObjectResult(source, 1, None, None, None, None, violations, unread=True))
    return out


def _apply(policy: Policy | None, violations: list[Violation]) -> list[Violation]:
    return policy.apply(violations) if policy else violations


# -- whole runs ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class InputOptions:
    """What every offline run is given: the target API server, the policy, and how its input is read
    (`validate`'s RunOptions and `simulate`'s SimulateOptions add their own)."""

    version: str = DEFAULT_VERSION
    gates: tuple[tuple[str, bool], ...] = ()
    runtime_config: RuntimeConfig = DEFAULT_RUNTIME_CONFIG  # --runtime-config: served beta/alpha versions
    policy: Policy | None = None
    max_bytes: int = MAX_FILE_BYTES  # one file or stdin
    cluster: tuple[
        str, ...
    ] = ()  # `--cluster` paths: the cluster's objects (see webhook.validate.clusterinput)
    exclude: tuple[str, ...] = ()  # `--exclude` globs: paths left out (webhook.io.files.excluded)


@dataclass(frozen=True, kw_only=True)
class RunOptions(InputOptions):
    skip: frozenset[str] = frozenset()
    deadline: Deadline | None = None  # of the whole run: what is left when it passes is not checked
    as_stored: bool = False  # the input is a cluster's stored state (`validate --feasibility`), not manifests

    def context(self) -> Context:
        return Context(
            profile=load_profile(self.version, dict(self.gates)),
            deadline=self.deadline,
            runtime_config=self.runtime_config,
            whole_cluster=bool(self.cluster),
            as_stored=self.as_stored,
        )


_worker: dict[str, Any] = {}


# What `check_inputs` keeps of each file for a simulation: nothing, the objects of the files that hold
# more than ResourceSlices (a repository's claims, classes and examples: small), or every file's
KeepMode = Literal["none", "files", "all"]


def _init_worker(options: RunOptions, cluster_files: tuple[str, ...] = (), keep: KeepMode = "none") -> None:
    _worker["options"] = options
    _worker["ctx"] = options.context()
    _worker["cluster"] = frozenset(cluster_files)
    _worker["keep"] = keep


def _check_file(path: str) -> FileResult:
    options: RunOptions = _worker["options"]
    if options.deadline is not None and options.deadline.expired():
        return unread_result(path, options.policy)
    try:
        text = read_text(path, options.max_bytes)
    except InputFileError as e:
        return input_error_result(e)
    ctx = _worker["ctx"]
    if path in _worker["cluster"]:
        ctx = stored_context(ctx)  # the cluster's objects: any version it has, converted as stored
    if _worker["keep"] == "none":
        return safe_check_text(text, path, ctx, options.policy, options.skip)
    keeper = Keeper(ctx)
    out = safe_check_text(text, path, ctx, options.policy, options.skip, keeper)
    return _ship(out, keeper, _worker["keep"])


def _ship(out: FileResult, keeper: Keeper, keep: KeepMode) -> FileResult:
    """`out` with the objects `keeper` kept, when `keep` says so: every file's, or (`files`) those of a
    file holding more than ResourceSlices — the bulk of an inventory stays in the worker, so a run of
    devices alone sends nothing back."""
    if keep == "all" or any(o.kind and o.kind != "ResourceSlice" for o in out.objects):
        out.kept = keeper.objects(out)
        out.kept_all = True
    return out


def usable_workers(requested: int | None, inputs: int) -> int:
    """Worker processes worth starting: `requested` (0/None: all), but never more than the cores this
    process may run on (its CPU affinity) nor than `inputs` (files are the unit of work); at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(requested or cores, cores, inputs))


def safe_check_text(
    text: str,
    source: str,
    ctx: Context,
    policy: Policy | None,
    skip: frozenset[str],
    keep: Keep | None = None,
) -> FileResult:
    """`check_text`, with any failure of draguard itself turned into an error on that file (never a
    traceback that stops the other files); `crashed` is then set."""
    try:
        return check_text(text, source, ctx, policy, skip, keep)
    except RecursionError:
        msg = "draguard ran out of stack on this file (extremely deep nesting?): please report it"
    except Exception as e:  # noqa: BLE001 - the last line of defence for one file
        msg = f"draguard failed on this file ({type(e).__name__}: {e}): please report it"
    return FileResult(
        [ObjectResult(source, 1, None, None, None, None, [_violation("internal.rule-crash", "", msg)])],
        [None],
        crashed=True,
    )


def check_files(
    paths: Iterable[str],
    options: RunOptions,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    stdin_text: str | None = None,
    assembler: Assembler | None = None,
) -> Report:
    """Validate files (directories expanded; `-` is stdin) in parallel, then run inventory rules.
    With `options.deadline`, what is left when it passes is reported `input.not-checked`
    (`Report.not_checked`) and the inventory rules are not run. `assembler` (default `assemble`) makes
    the report of the files' results (webhook.repocontext: with the repository's other files in view).

    Raises `UnreadableInput` for a path that does not exist or cannot be read."""
    checked = check_inputs(paths, options, jobs, progress, stdin_text)
    report = (assembler or assemble)(checked.results, options.context(), options.policy)
    report.excluded = checked.excluded
    checked.cluster.drop_from(report)
    suppress(report)  # offline only: `draguard.io/ignore` annotations (webhook.validate.ignores)
    assign_lines(report, checked.texts, options.deadline, options.max_bytes)
    return report


@dataclass
class Checked:
    """Every input file checked (`check_inputs`), before the cross-object rules."""

    results: list[FileResult]  # the files' in order (`files`), then one per directory entry not opened
    cluster: ClusterInput  # the `--cluster` files that are not input files
    texts: dict[str, str]  # inputs that cannot be read again for the findings' lines (stdin)
    files: list[str] = field(default_factory=list)
    excluded: int = 0  # paths left out by --exclude (a directory counts once), never read


def check_inputs(
    paths: Iterable[str],
    options: RunOptions,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    stdin_text: str | InputFileError | None = None,
    keep: KeepMode = "none",
    previous: Checked | None = None,
) -> Checked:
    """Every file of `paths` and of `options.cluster` checked (in parallel), in order; results carry
    their objects as stored (`FileResult.kept`, see `Keeper`) for a simulation as `keep` says. With
    `previous` (a run of the same paths), a file whose objects it kept all is not checked again.
    `stdin_text`: standard input already read (or why it could not be)."""
    paths = list(paths)
    cluster = ClusterInput.of(paths, options.cluster)
    found = discover_all([*paths, *cluster.files], options.exclude)
    files = found.files
    ctx = options.context()
    results: list[FileResult | None] = [None] * len(files)
    if previous is not None and previous.files == files:
        for i, before in enumerate(previous.results[: len(files)]):
            if before.kept_all:
                results[i] = before
    on_disk = [i for i, p in enumerate(files) if p != STDIN and results[i] is None]
    jobs = usable_workers(jobs, len(on_disk))
    kept: dict[str, str] = dict(previous.texts) if previous is not None else {}
    for i, p in enumerate(files):
        if p == STDIN and results[i] is None:
            if options.deadline is not None and options.deadline.expired():
                results[i] = unread_result("<stdin>", options.policy)
                continue
            try:
                if isinstance(stdin_text, InputFileError):
                    raise stdin_text
                text = stdin_text if stdin_text is not None else read_text(p, options.max_bytes)
            except InputFileError as e:
                results[i] = input_error_result(e)
                continue
            kept["<stdin>"] = text
            if keep == "none":
                results[i] = safe_check_text(text, "<stdin>", ctx, options.policy, options.skip)
                continue
            keeper = Keeper(ctx)
            res = safe_check_text(text, "<stdin>", ctx, options.policy, options.skip, keeper)
            results[i] = _ship(res, keeper, keep)
    done = 0
    if jobs == 1 or len(on_disk) <= 1:
        _init_worker(options, cluster.files, keep)
        for i in on_disk:
            results[i] = _check_file(files[i])
            done += 1
            if progress:
                progress(done, len(on_disk))
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(
            jobs,
            mp_context=mp.get_context("fork"),
            initializer=_init_worker,
            initargs=(options, cluster.files, keep),
        ) as pool:
            futures = [pool.submit(_check_file, files[i]) for i in on_disk]
            for i, future in zip(on_disk, futures, strict=True):
                try:
                    results[i] = future.result()
                except RecursionError:  # a kept object nested deeper than pickle can send: check it here
                    _init_worker(options, cluster.files, keep)
                    results[i] = _check_file(files[i])
                done += 1
                if progress:
                    progress(done, len(on_disk))
    skipped = [skipped_result(s, options.policy) for s in found.skipped]
    charts = [chart_result(c, options.policy) for c in found.charts]
    return Checked(
        [r for r in results if r is not None] + skipped + charts, cluster, kept, files, len(found.excluded)
    )


def input_error_result(e: InputFileError) -> FileResult:
    """A file that was found but not read (too large, not UTF-8): one error on it."""
    return FileResult(
        [ObjectResult(e.path, 1, None, None, None, None, [_violation(e.rule, "", str(e))])], [None]
    )


def skipped_result(s: Skipped, policy: Policy | None = None) -> FileResult:
    """A directory entry that was not opened (FIFO, socket, device, broken symlink): one warning."""
    violations = [_violation("input.skipped-file", "", s.reason)]
    if policy is not None and not policy.enabled("input.skipped-file"):
        return FileResult()
    return FileResult(
        [ObjectResult(s.path, 1, None, None, None, None, policy.apply(violations) if policy else violations)],
        [None],
    )


def chart_message(chart: HelmChart) -> str:
    """What `input.helm-chart` says of a chart: its templates were not read, and the command to run."""
    files = f"{chart.templates} file{'s' if chart.templates != 1 else ''}"
    return (
        f"a Helm chart: its templates/ ({files}) are not manifests until rendered and were not read; "
        f"validate what it renders with `helm template {shlex.quote(chart.directory)} | draguard validate -`"
    )


def chart_result(chart: HelmChart, policy: Policy | None = None) -> FileResult:
    """A Helm chart whose templates were not read: one info finding on its Chart.yaml."""
    violations = _apply(policy, [_violation("input.helm-chart", "", chart_message(chart))])
    if not violations:
        return FileResult()
    return FileResult([ObjectResult(chart.chart_file, 1, None, None, None, None, violations)], [None])


def assemble(file_results: list[FileResult], ctx: Context, policy: Policy | None) -> Report:
    """Concatenate per-file results and run the inventory (cross-object) rules over all of them —
    unless the deadline left something unchecked: rules over part of the input could report what is
    missing from it (a class, a slice of a pool), so none is run and the first `input.not-checked`
    finding says so."""
    report = Report()
    records: list[Any] = []
    facts = RunFacts()
    for fr in file_results:
        facts.add(fr, len(report.objects))
        report.objects.extend(fr.objects)
        records.extend(fr.records)
        report.skipped += fr.skipped
        report.not_checked += fr.not_checked
        if fr.not_objects:
            report.not_objects += fr.not_objects
            report.not_object_files += 1
            report.first_not_object = report.first_not_object or fr.first_not_object
    if report.not_checked:
        first = next(
            (o for o in report.objects if any(v.rule == "input.not-checked" for v in o.violations)), None
        )
        if first is not None:
            first.violations.extend(_apply(policy, [_violation("input.not-checked", "", _NO_INVENTORY)]))
        return report
    facts.objects = [(o.source, o.kind, o.namespace) for o in report.objects]
    for o, rec in zip(report.objects, records, strict=False):
        rule = next((v.rule for v in o.violations if v.severity is Severity.ERROR), None)
        if rec is None and o.kind and o.name and rule is not None:
            facts.rejected.setdefault((o.kind, o.namespace or None, o.name), (o.source, o.line, rule))
    run_inventory_rules(report.objects, records, dataclasses.replace(ctx, facts=facts), policy)
    return report


def check_body(
    body: bytes,
    options: RunOptions,
    source: str = "<request>",
    max_bytes: int = MAX_REQUEST_BYTES,
    ctx: Context | None = None,
) -> Report:
    """A request body (one or more documents, YAML or JSON) through the whole pipeline — size cap and
    UTF-8, parse, validation, cross-object rules — within `options.deadline`: the admission server's
    entry point, one request deadline for all of it (`simulate(body, ...)` adds feasibility). `ctx`
    (the request's operation, old object, namespace labels; its `deadline` governs) replaces the
    context `options` would make."""
    ctx = ctx or options.context()
    if ctx.deadline is not None and ctx.deadline.expired():
        return assemble([unread_result(source, options.policy)], ctx, options.policy)
    docs = parse_bytes(body, source, max_bytes)
    text = body_text(body, max_bytes)
    try:
        result = check_stream(docs, source, ctx, options.policy, options.skip)
    except Exception as e:  # noqa: BLE001 - the last line of defence, as for a file
        msg = f"draguard failed on this request ({type(e).__name__}: {e}): please report it"
        result = FileResult(
            [ObjectResult(source, 1, None, None, None, None, [_violation("internal.rule-crash", "", msg)])],
            [None],
            crashed=True,
        )
    report = assemble([result], ctx, options.policy)
    if text is not None:
        assign_lines(report, {source: text}, ctx.deadline, max_bytes)
    return report


def run_inventory_rules(
    objects: list[ObjectResult], records: list[Any], ctx: Context, policy: Policy | None
) -> None:
    """Cross-object rules; their findings are appended to the objects they name."""
    inventory = Inventory(records)
    for rule, fn in inventory_rules():
        if policy is not None and not policy.enabled(rule.id):
            continue
        try:
            for f in fn(inventory, ctx):
                assert isinstance(f.index, int)  # a run's inventory is keyed by position
                target = objects[f.index]
                field_ = source_path(target.api_version, target.kind, str(f.field))  # a converted beta
                message = source_message(target.api_version, target.kind, f.message)
                v = Violation(rule.id, f.severity or rule.severity, field_, message)
                target.violations.extend(policy.apply([v]) if policy else [v])
        except Exception as e:
            if objects:
                objects[0].violations.append(
                    _violation("internal.rule-crash", "", f"rule {rule.id} failed: {type(e).__name__}: {e}")
                )
