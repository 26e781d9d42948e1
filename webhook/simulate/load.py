"""Inputs of a simulation: manifests loaded and validated with the shared pipeline, sorted into the
cluster state (what exists) and the work (Pods and unallocated claims). Invalid objects are left out."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from webhook.context import Context
from webhook.io.documents import (
    MAX_FILE_BYTES,
    STDIN,
    Document,
    DocumentError,
    InputFileError,
    discover_all,
    parse,
    read_text,
)
from webhook.model.violation import Violation
from webhook.policy import Policy
from webhook.profile import load_profile
from webhook.report import ObjectResult, Report
from webhook.rules.registry import RULES
from webhook.simulate.podclaims import key_of, namespace_of
from webhook.validate import FileResult, assemble, check_document, prepare, skipped_result, usable_workers

STATE_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")
NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate", "Pod")


@dataclass
class Loaded:
    """One object as the simulation sees it (defaulted and version-skew stripped), with its origin."""

    source: str
    line: int
    kind: str
    obj: dict[str, Any]
    result: ObjectResult | None = None  # its validation result (None for Nodes, which are not validated)


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
    invalid: dict[tuple[str, str], str] = field(default_factory=dict)  # ("Kind/ns", name) → why left out


def _file_result(
    docs: list[Document | DocumentError], ctx: Context, policy: Policy | None
) -> tuple[FileResult, list[Loaded | None]]:
    out = FileResult()
    loaded: list[Loaded | None] = []
    nodes: list[Loaded | None] = []
    for doc in docs:
        if isinstance(doc, DocumentError):
            out.objects.append(
                ObjectResult(
                    doc.source,
                    doc.line,
                    None,
                    None,
                    None,
                    None,
                    [Violation(doc.rule, RULES[doc.rule].severity, "", doc.message)],
                )
            )
            out.records.append(None)
            loaded.append(None)
            continue
        original = copy.deepcopy(doc.obj)
        result, record = check_document(doc, ctx, policy, frozenset())
        kind = original.get("kind")
        if result is None:
            out.skipped += 1
            if (
                kind == "Node"
                and original.get("apiVersion") == "v1"
                and isinstance(original.get("metadata"), dict)
            ):
                nodes.append(Loaded(doc.source, doc.line, "Node", original))
            continue
        stripped = prepare(original, ctx)[0] if not result.errors else None
        out.objects.append(result)
        out.records.append(record)
        loaded.append(
            Loaded(doc.source, doc.line, str(kind), stripped, result) if stripped is not None else None
        )
    return out, loaded + nodes


_worker: dict[str, Any] = {}


def _init(version: str, gates: tuple[tuple[str, bool], ...], policy: Policy | None, max_bytes: int) -> None:
    _worker["ctx"] = Context(profile=load_profile(version, dict(gates)))
    _worker["policy"] = policy
    _worker["max_bytes"] = max_bytes


def _documents(path: str, max_bytes: int, text: str | None = None) -> list[Document | DocumentError]:
    """The documents of one input (`-`: stdin, or `text` when it was read already)."""
    source = "<stdin>" if path == STDIN else path
    try:
        if text is None:
            text = read_text(path, max_bytes)
    except InputFileError as e:
        return [DocumentError(source, 1, str(e), e.rule)]
    return list(parse(text, source))


def _load_file(path: str) -> tuple[FileResult, list[Loaded | None]]:
    return _file_result(_documents(path, _worker["max_bytes"]), _worker["ctx"], _worker["policy"])


def load(
    inputs: Sequence[str] | Sequence[dict[str, Any]],
    ctx: Context,
    jobs: int = 1,
    policy: Policy | None = None,
    stdin_text: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> Inputs:
    """Load paths (files, directories, `-`) or in-memory objects, validate them, sort them."""
    results: list[tuple[FileResult, list[Loaded | None]]] = []
    if all(isinstance(i, dict) for i in inputs):
        docs: list[Document | DocumentError] = [
            Document("<input>", n + 1, copy.deepcopy(obj))
            for n, obj in enumerate(inputs)
            if isinstance(obj, dict)
        ]
        results.append(_file_result(docs, ctx, policy))
    else:
        found = discover_all([str(p) for p in inputs])
        files = found.files
        on_disk = [p for p in files if p != STDIN]
        gates = tuple(sorted(ctx.profile.values.items()))
        done: dict[str, tuple[FileResult, list[Loaded | None]]] = {}
        if STDIN in files:
            done[STDIN] = _file_result(_documents(STDIN, max_bytes, stdin_text), ctx, policy)
        jobs = usable_workers(jobs, len(on_disk))
        if jobs == 1:
            for path in on_disk:
                done[path] = _file_result(_documents(path, max_bytes), ctx, policy)
        else:
            import multiprocessing as mp

            with ProcessPoolExecutor(
                jobs,
                mp_context=mp.get_context("fork"),
                initializer=_init,
                initargs=(ctx.profile.version, gates, policy, max_bytes),
            ) as pool:
                done.update(zip(on_disk, pool.map(_load_file, on_disk, chunksize=1), strict=True))
        results.extend(done[p] for p in files)
        results.extend((skipped_result(s, policy), []) for s in found.skipped)
    report = assemble([fr for fr, _ in results], ctx, policy)
    return _sort(report, [x for _, loaded in results for x in loaded])


def _sort(report: Report, loaded: list[Loaded | None]) -> Inputs:
    out = Inputs(report)
    for item in loaded:
        if item is None:
            continue
        if item.kind == "Node":
            out.nodes.append(item.obj)
            out.state.append(item.obj)
            continue
        if item.result is not None and item.result.errors:  # inventory (cross-object) errors came late
            if item.kind in NAMESPACED:
                ns, name = key_of(item.obj)
                out.invalid[(f"{item.kind}/{ns}", name)] = _why_result(item.result)
            continue
        obj = item.obj
        if item.kind in NAMESPACED:
            meta = obj.setdefault("metadata", {})
            meta.setdefault("namespace", namespace_of(obj))
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
    for result in report.objects:  # objects whose own validation failed never became `Loaded`
        if result.errors and result.kind in NAMESPACED and result.name:
            ns = result.namespace or "default"
            out.invalid.setdefault((f"{result.kind}/{ns}", result.name), _why_result(result))
    return out


def _why_result(result: ObjectResult) -> str:
    errors = [v for v in result.violations if v.severity.value == "error"]
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    where = f"{first.field}: " if first.field else ""
    return f"{result.source}:{result.line}: {first.rule}: {where}{first.message}{more}"


def document_objects(
    doc: Document | DocumentError, ctx: Context, policy: Policy | None = None
) -> tuple[list[dict[str, Any]], ObjectResult | None]:
    """One parsed document as `load` takes it, without the cross-object (inventory) pass: the objects it
    contributes (none, or the object defaulted, version-skew stripped and with its namespace set; a Node
    as it is) and its validation result (None when skipped; errors mean it contributes nothing). For a
    caller that loads documents one at a time (the webhook's state directory)."""
    result, loaded = _file_result([doc], ctx, policy)
    out = []
    for item in loaded:
        if item is None:
            continue
        if item.kind in NAMESPACED:
            item.obj.setdefault("metadata", {}).setdefault("namespace", namespace_of(item.obj))
        out.append(item.obj)
    return out, (result.objects[0] if result.objects else None)
