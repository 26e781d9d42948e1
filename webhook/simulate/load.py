"""Inputs of a simulation: manifests loaded and validated with the shared pipeline (within the run's
deadline, `ctx.deadline`), sorted into the cluster state (what exists) and the work (Pods and unallocated
claims). Invalid objects are left out; objects the deadline left unchecked are reported, never used."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from webhook.config.context import Context
from webhook.config.driverschemas import NONE as NO_EXTRA_SCHEMAS
from webhook.config.driverschemas import with_extra
from webhook.config.policy import Policy
from webhook.config.profile import load_profile
from webhook.convert.served import RuntimeConfig
from webhook.io.documents import (
    MAX_FILE_BYTES,
    STDIN,
    Document,
    DocumentError,
    InputFileError,
    body_text,
    discover_all,
    parse_bytes,
    read_text,
)
from webhook.model.budget import Deadline
from webhook.model.catalogue import RULES
from webhook.model.plain import deep_copy, json_dumps
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Violation
from webhook.model.workloads import WORKLOAD_KINDS, uses_dra
from webhook.rules.facts import MAX_DEVICES_PER_FILE, SliceFacts, without_samples
from webhook.simulate.leftout import (
    CLUSTER_SCOPED,
    DUPLICATE,
    Definition,
    LeftOut,
    identity,
    rejection,
    report_duplicates,
    why,
)
from webhook.simulate.podclaims import generated_name, key_of, name_of, namespace_or_default
from webhook.validate import (
    FileResult,
    Keeper,
    Loaded,
    assemble,
    chart_result,
    check_documents,
    file_result,
    input_error_result,
    kustomization_result,
    skipped_result,
    unread_result,
    usable_workers,
)
from webhook.validate.clusterinput import stored_context
from webhook.validate.files import send_selector_uses
from webhook.validate.ignores import suppress

STATE_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")
NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate", "Pod")


@dataclass
class Inputs:
    report: Report  # validation of every object
    state: list[dict[str, Any]] = field(default_factory=list)  # valid objects forming the ClusterState
    nodes: list[dict[str, Any]] = field(default_factory=list)
    classes: list[dict[str, Any]] = field(default_factory=list)
    claims: dict[tuple[str, str], Loaded] = field(default_factory=dict)  # every valid claim by (ns, name)
    pending: list[Loaded] = field(default_factory=list)  # valid claims without status.allocation
    templates: dict[tuple[str, str], Loaded] = field(default_factory=dict)
    pods: list[Loaded] = field(default_factory=list)
    work: list[Loaded] = field(default_factory=list)  # Pods and workloads that use DRA, in input order
    invalid: dict[tuple[str, str], str] = field(default_factory=dict)  # ("Kind/ns", name) → why left out
    left_out: list[LeftOut] = field(default_factory=list)  # in input order
    generated_seen: dict[str, int] = field(default_factory=dict)  # generateName objects named so far
    conflicts: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, ns, name) defined differently
    texts: dict[str, str] = field(default_factory=dict)  # inputs that cannot be read again (stdin, a body)


def _checked(
    text: str | list[Document | DocumentError], source: str, ctx: Context, policy: Policy | None
) -> tuple[FileResult, list[Loaded | None]]:
    """One file's text (or parsed documents) validated as by `validate` (within `ctx.deadline`), and
    what the simulation takes from it (`webhook.validate.Keeper`)."""
    keeper = Keeper()
    if isinstance(text, str):
        out = file_result(text, source, ctx, policy, frozenset(), keeper)
    else:
        try:
            out = check_documents(text, source, ctx, policy, frozenset(), keeper)
        except Exception as e:  # noqa: BLE001 - as file_result does for a file
            msg = f"draguard failed on this input ({type(e).__name__}: {e}): please report it"
            v = Violation("internal.rule-crash", RULES["internal.rule-crash"].severity, "", msg)
            out = FileResult([ObjectResult(source, 1, None, None, None, None, [v])], [None], crashed=True)
    return out, keeper.objects(out)


def check_object(
    obj: dict[str, Any], ctx: Context, policy: Policy | None
) -> tuple[FileResult, list[Loaded | None]]:
    """One in-memory object validated as `load` validates it (a copy, as document 1 of `<input>`): for a
    caller that keeps each object's result between runs (the background audit) and merges them with
    `merge_results`."""
    return _checked([Document("<input>", 1, deep_copy(obj))], "<input>", ctx, policy)


def merge_results(parts: Sequence[FileResult]) -> FileResult:
    """Objects checked one by one (`check_object`) as one file `<input>` holding them all in this order:
    what `check_documents` would give, the budget of devices kept for the lint facts included (shared by
    the file: past MAX_DEVICES_PER_FILE no slice keeps samples). Results are copied (the inventory rules
    append to them); `Loaded` items stay the caller's to copy."""
    out = FileResult()
    devices = 0
    for fr in parts:
        out.objects.extend(dataclasses.replace(o, violations=list(o.violations)) for o in fr.objects)
        out.records.extend(fr.records)
        out.facts.extend(fr.facts[: len(fr.objects)])
        out.facts.extend([None] * (len(out.objects) - len(out.facts)))
        devices += sum(f.devices for f in fr.facts if isinstance(f, SliceFacts))
        out.skipped += fr.skipped
        for kind, n in fr.kinds_skipped.items():
            out.kinds_skipped[kind] = out.kinds_skipped.get(kind, 0) + n
        out.not_checked += fr.not_checked
        out.namespaces.extend(fr.namespaces)
        out.not_objects += fr.not_objects
        out.first_not_object = out.first_not_object or fr.first_not_object
        out.complete = out.complete and fr.complete
    out.complete = out.complete and devices <= MAX_DEVICES_PER_FILE
    if not out.complete:
        out.facts = without_samples(out.facts)
    return out


_worker: dict[str, Any] = {}


def _init(
    version: str,
    gates: tuple[tuple[str, bool], ...],
    policy: Policy | None,
    max_bytes: int,
    deadline: Deadline | None,
    runtime_config: RuntimeConfig,
    cluster_files: tuple[str, ...] = (),
    whole_cluster: bool = False,
) -> None:
    _worker["ctx"] = Context(
        profile=load_profile(version, dict(gates)),
        deadline=deadline,
        as_stored=True,
        runtime_config=runtime_config,
        whole_cluster=whole_cluster,
        driver_schemas=with_extra(NO_EXTRA_SCHEMAS, policy.driver_schemas if policy else ()),
    )
    _worker["cluster"] = frozenset(cluster_files)
    _worker["policy"] = policy
    _worker["max_bytes"] = max_bytes


def _file(
    path: str,
    ctx: Context,
    policy: Policy | None,
    max_bytes: int,
    text: str | None = None,
    texts: dict[str, str] | None = None,
) -> tuple[FileResult, list[Loaded | None]]:
    """One input (`-`: stdin, or `text` when it was read already), unread once the deadline passed;
    its text is put in `texts` when given (stdin: the findings' lines are found after the run)."""
    source = "<stdin>" if path == STDIN else path
    if ctx.deadline is not None and ctx.deadline.expired():
        return unread_result(source, policy), []
    try:
        if text is None:
            text = read_text(path, max_bytes)
    except InputFileError as e:
        return input_error_result(e), []
    if texts is not None:
        texts[source] = text
    return _checked(text, source, ctx, policy)


def _load_file(path: str) -> tuple[FileResult, list[Loaded | None]]:
    ctx = _worker["ctx"]
    out = _file(
        path,
        stored_context(ctx) if path in _worker["cluster"] else ctx,
        _worker["policy"],
        _worker["max_bytes"],
    )
    send_selector_uses(out[0], ctx)  # only worker processes load files this way
    return out


def load(
    inputs: Sequence[str] | Sequence[dict[str, Any]] | bytes,
    ctx: Context,
    jobs: int | None = 1,
    policy: Policy | None = None,
    stdin_text: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    progress: Callable[[int, int], None] | None = None,
    cluster_files: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Inputs:
    """Load paths (files, directories, `-`; minus those `exclude` matches), in-memory objects or one
    request body (bytes: size cap MAX_REQUEST_BYTES), validate them, sort them. Everything happens within
    `ctx.deadline`: what is left when it passes is reported `input.not-checked`
    (`Inputs.report.not_checked`). Offline (paths, objects) an object's `draguard.io/ignore` annotations
    silence its findings before it is sorted: an object whose errors are all silenced is simulated; a
    request body's are not (the webhook's answer is the API server's, webhook.validate.ignores)."""
    if policy is not None and policy.driver_schemas:  # --driver-schemas, a policy's driverSchemas
        ctx = dataclasses.replace(ctx, driver_schemas=with_extra(NO_EXTRA_SCHEMAS, policy.driver_schemas))
    results: list[tuple[FileResult, list[Loaded | None]]] = []
    excluded = 0
    texts: dict[str, str] = {}
    if isinstance(inputs, bytes):
        if ctx.deadline is not None and ctx.deadline.expired():
            results.append((unread_result("<request>", policy), []))
        else:
            results.append(_checked(parse_bytes(inputs, "<request>"), "<request>", ctx, policy))
            body = body_text(inputs)
            if body is not None:
                texts["<request>"] = body
    elif all(isinstance(i, dict) for i in inputs):
        docs: list[Document | DocumentError] = [
            Document("<input>", n + 1, deep_copy(obj))
            for n, obj in enumerate(inputs)
            if isinstance(obj, dict)
        ]
        results.append(_checked(docs, "<input>", ctx, policy))
    else:
        found = discover_all([str(p) for p in inputs], exclude)
        excluded = len(found.excluded)
        patches = found.patch_files()  # parts of objects until built: not read (`kustomization_result`)
        files = [p for p in found.files if p not in patches]
        cluster = frozenset(cluster_files)
        on_disk = [p for p in files if p != STDIN]
        gates = tuple(sorted(ctx.profile.values.items()))
        done: dict[str, tuple[FileResult, list[Loaded | None]]] = {}
        if STDIN in files:
            done[STDIN] = _file(STDIN, ctx, policy, max_bytes, stdin_text, texts)
        jobs = usable_workers(jobs, len(on_disk))
        if jobs == 1:
            for n, path in enumerate(on_disk):
                done[path] = _file(path, stored_context(ctx) if path in cluster else ctx, policy, max_bytes)
                if progress:
                    progress(n + 1, len(on_disk))
        else:
            import multiprocessing as mp

            with ProcessPoolExecutor(
                jobs,
                mp_context=mp.get_context("fork"),
                initializer=_init,
                initargs=(
                    ctx.profile.version,
                    gates,
                    policy,
                    max_bytes,
                    ctx.deadline,
                    ctx.runtime_config,
                    tuple(cluster),
                    ctx.whole_cluster,
                ),
            ) as pool:
                for n, (path, res) in enumerate(
                    zip(on_disk, pool.map(_load_file, on_disk, chunksize=1), strict=True)
                ):
                    done[path] = res
                    if progress:
                        progress(n + 1, len(on_disk))
        results.extend(done[p] for p in files)
        results.extend((skipped_result(s, policy), []) for s in found.skipped)
        results.extend((chart_result(c, policy), []) for c in found.charts)
        results.extend((kustomization_result(k, policy), []) for k in found.kustomizations)
    report = assemble([fr for fr, _ in results], ctx, policy)
    report.excluded = excluded
    if not isinstance(inputs, bytes):
        suppress(report)
    out = sort_loaded(report, [x for _, loaded in results for x in loaded], policy)
    out.texts = texts
    return out


def sort_loaded(
    report: Report, loaded: list[Loaded | None], policy: Policy | None, strict: bool = True
) -> Inputs:
    """The validated objects sorted into the cluster state and the work; a name defined twice is one
    object when the copies are identical, else reported (`strict`: as an error wherever the copies
    are, see `leftout.report_duplicates`) and the first valid copy is used."""
    out = Inputs(report)
    items = [item for item in loaded if item is not None]
    defs: list[Definition] = []
    positions: list[int] = []
    for n, item in enumerate(items):
        key = identity(item.obj.get("apiVersion"), item.kind, item.obj, namespace_or_default(item.obj))
        if key is not None:
            valid = item.decoded and not rejection(item.result)
            stored = item.obj if item.decoded else None
            defs.append(Definition(item.source, item.line, key, item.result, stored, valid))
            positions.append(n)
    dups = report_duplicates(defs, report, policy, strict)
    out.conflicts = {(defs[i].key[1], defs[i].key[2], defs[i].key[3]) for i in dups.different}
    later = {positions[i] for i in dups.different}
    same = {positions[i] for i in dups.same}  # the same object again: not used, not reported
    for d, n in zip(defs, positions, strict=True):
        items[n].result = d.result  # a duplicate Node got a result of its own
    for n, item in enumerate(items):
        if n in same:
            continue
        if item.kind in ("Node", "Namespace"):
            if n in later:
                _leave_out(out, item, [], True)
            else:
                if item.kind == "Node":
                    out.nodes.append(item.obj)
                out.state.append(item.obj)
            continue
        reasons = rejection(item.result)
        if not item.decoded and not reasons and n not in later:
            continue  # a kind draguard does not simulate (e.g. a beta DRA version): only its warning
        if n in later or reasons or not item.decoded:
            _leave_out(out, item, reasons, n in later)
            continue
        _take(out, item)
    _unread(out, {id(item.result) for item in items})
    position = {id(result): i for i, result in enumerate(report.objects)}
    out.left_out.sort(key=lambda lo: position.get(id(lo.result), len(position)))  # input order
    return out


def _unread(out: Inputs, seen: set[int]) -> None:
    """Documents that never became objects (a parse error, a file too large, draguard failing on a file)
    are left out as well: what they would have held is not in the simulation."""
    for result in out.report.objects:
        if id(result) in seen:
            continue
        reasons = rejection(result)
        if not reasons:
            continue
        kind = result.kind or ""
        ns = (result.namespace or "default") if kind and kind not in CLUSTER_SCOPED else None
        name = result.name or ""
        text = why(result.source, result.line, reasons)
        out.left_out.append(LeftOut(kind or "?", ns, name, result.source, result.line, text, None, result))
        if kind and name:
            out.invalid.setdefault((f"{kind}/{ns or ''}", name), text)


def _leave_out(out: Inputs, item: Loaded, reasons: list[Violation], duplicate: bool) -> None:
    ns = namespace_or_default(item.obj) if item.kind not in CLUSTER_SCOPED else None
    name = name_of(item.obj) or str(_meta(item.obj).get("generateName") or "")
    if duplicate:
        dup = [v for v in (item.result.violations if item.result else []) if v.rule == DUPLICATE]
        text = (
            why(item.source, item.line, dup)
            if dup
            else f"{item.source}:{item.line}: {DUPLICATE}: defined twice"
        )
    elif reasons:
        text = why(item.source, item.line, reasons)
    else:  # an undecodable object always has its decoding error; this is the safe side
        text = f"{item.source}:{item.line}: the API server cannot decode it"
    obj, raw = (item.obj, None) if item.decoded else (None, item.obj)
    out.left_out.append(LeftOut(item.kind, ns, name, item.source, item.line, text, obj, item.result, raw))
    out.invalid.setdefault((f"{item.kind}/{ns or ''}", name), text)


def _name_generated(out: Inputs, obj: dict[str, Any]) -> None:
    """An object with only `generateName` gets the name the API server would give it (a reproducible
    suffix derived from its content and how many equal ones came before), so two are never merged."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or meta.get("name"):
        return
    base = meta.get("generateName")
    if not isinstance(base, str) or not base:
        return
    seed = json_dumps(obj, sort_keys=True, default=str)
    n = out.generated_seen.get(seed, 0)
    out.generated_seen[seed] = n + 1
    meta["name"] = generated_name(base, f"{seed}#{n}")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _take(out: Inputs, item: Loaded) -> None:
    obj = item.obj
    _name_generated(out, obj)
    if item.kind in NAMESPACED or item.kind in WORKLOAD_KINDS:
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", namespace_or_default(obj))
    if item.kind in STATE_KINDS:
        out.state.append(obj)
        if item.kind == "DeviceClass":
            out.classes.append(obj)
    elif item.kind == "ResourceClaim":
        out.claims[key_of(obj)] = item
        if isinstance(obj.get("status"), dict) and obj["status"].get("allocation"):
            out.state.append(obj)
        else:
            out.pending.append(item)
    elif item.kind == "ResourceClaimTemplate":
        out.templates[key_of(obj)] = item
    elif item.kind == "Pod":
        out.pods.append(item)
        if uses_dra(obj):  # a Pod without claims or extended resources has nothing to allocate
            out.work.append(item)
    elif item.kind in WORKLOAD_KINDS:
        out.work.append(item)


def document_objects(
    doc: Document | DocumentError, ctx: Context, policy: Policy | None = None
) -> tuple[list[dict[str, Any]], ObjectResult | None]:
    """One parsed document as `load` takes it, without the cross-object (inventory) pass: the objects it
    contributes (none, or the object defaulted, version-skew stripped and with its namespace set; a Node
    or Namespace as it is) and its validation result (None when skipped; an error the API server would
    reject it for means it contributes nothing). For a caller that loads documents one at a time (the
    webhook's state directory). The state is the cluster as stored: claims keep their status (allocations),
    whatever `ctx.as_stored` says."""
    if not ctx.as_stored:
        ctx = dataclasses.replace(ctx, as_stored=True)
    result, loaded = _checked([doc], doc.source, ctx, policy)
    out = []
    for item in loaded:
        if item is None or not item.decoded or rejection(item.result):
            continue
        if item.kind in NAMESPACED or item.kind in WORKLOAD_KINDS:
            item.obj.setdefault("metadata", {}).setdefault("namespace", namespace_or_default(item.obj))
        out.append(item.obj)
    return out, (result.objects[0] if result.objects else None)


def stored_objects(
    objs: Sequence[dict[str, Any]], ctx: Context, policy: Policy | None = None
) -> list[dict[str, Any]]:
    """In-memory objects as the webhook's state loader stores them (`document_objects` one by one,
    copies): the valid ones defaulted and stripped, Nodes and Namespaces as they are; invalid ones left
    out. For tests and benchmarks that build a `StateStore` the way `draguard serve` does."""
    out: list[dict[str, Any]] = []
    for n, obj in enumerate(objs):
        got, _ = document_objects(Document("<input>", n + 1, deep_copy(obj)), ctx, policy)
        out.extend(got)
    return out
