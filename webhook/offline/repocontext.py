"""`--context DIR`: the repository the input belongs to (what the pre-commit hook passes: the changed files
are the input, the repository is the context).

The context's manifests are read with the input, so the cross-object rules (pools split over several
files, the classes a claim names, the claims a Pod names, the devices selectors are linted against) see
the whole repository, but only the input is reported:

- every finding on the input's objects (their own and cross-object ones, now with the repository in
  view);
- a cross-object finding on a context object only when the change to the input causes it: the context
  with the input's earlier version does not have that finding (same rule, field, severity and message,
  numbers aside). The earlier version is the input's content at git revision `PRE_COMMIT_FROM_REF` (set
  by `pre-commit run --from-ref`), else HEAD; a file that is new there, or outside git, had none. A
  counter set renamed in a changed file breaks the references of the devices in an unchanged one, a
  ResourceClaimTemplate renamed leaves the Pods that name it dangling: shown. A finding the unchanged
  files had anyway is not.

Unlike `--cluster` (webhook.validate.clusterinput), context objects are manifests (validated as the input is, as
requests to create them), the context is not taken as complete (a reference to something it lacks may
be satisfied in the cluster), and none of its own findings is shown, errors included. Context files are
read best-effort: in a git work tree the files git tracks (webhook.io.gitfiles), else a directory walk; a
file that cannot be read, decoded or parsed, a document that is not a Kubernetes object, and a file that
names nothing DRA-related (no `resource.k8s.io`, no `resourceClaim`, no `Namespace`) are left out
without a finding.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.io import gitfiles
from webhook.io.files import (
    MANIFEST_SUFFIXES,
    STDIN,
    UnreadableInput,
    decode_file_text,
    discover_all,
    read_bytes,
)
from webhook.io.findinglines import assign_lines
from webhook.model.errors import UsageError
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Violation
from webhook.rules.registry import inventory_rules
from webhook.validate import FileResult, RunOptions, assemble, check_file_text, check_files, check_inputs
from webhook.validate.ignores import suppress

# A manifest that matters to the cross-object rules names one of these: a resource.k8s.io apiVersion, a
# Pod (or workload) with resourceClaims, a Namespace (its labels: claim.admin-access-namespace).
RELEVANT = re.compile(r"resource\.k8s\.io|resourceClaim|Namespace")
CAUSED = " (an object of --context: the input's change causes this)"


@dataclass(frozen=True)
class Sources:
    """Where the context comes from: its manifest files, and the git work trees of the context
    directories (to find the input's earlier versions in)."""

    files: tuple[str, ...]
    roots: tuple[str, ...]


def context_sources(dirs: Iterable[str], exclude: Iterable[str] = ()) -> Sources:
    """The manifest files of the context directories (git-tracked, or found by a walk), each once, without
    the files in `exclude` (the input's, the cluster's). Raises `UsageError` for a path that is not a
    directory."""
    skip = {_identity(p) for p in exclude}
    files: list[str] = []
    roots: list[str] = []
    for top in dirs:
        if top == STDIN or not os.path.isdir(top):
            raise UsageError(f"--context takes directories (the repository, e.g. .), not {top!r}")
        found = gitfiles.tracked_files(top, MANIFEST_SUFFIXES)
        root = gitfiles.toplevel(top) if found is not None else None
        if root is not None and root not in roots:
            roots.append(root)
        if found is None:
            try:
                found = discover_all([top]).files
            except UnreadableInput:
                found = []  # a directory that cannot be listed: no context from it
        for path in found:
            key = _identity(path)
            if key not in skip:
                skip.add(key)
                files.append(path)
    return Sources(tuple(files), tuple(roots))


def _identity(path: str) -> str:
    """One name per file however it is written (`./a.yaml`, `a.yaml`, through a symlinked directory)."""
    return os.path.realpath(path)


def read_context(text: str, source: str, ctx: Context) -> FileResult | None:
    """One context file's objects, records and facts (validated as the input is; its findings are never
    shown); None for a file that names nothing DRA-related or that draguard fails on: context is
    best-effort."""
    if RELEVANT.search(text) is None:
        return None
    try:
        result = check_file_text(text, source, ctx)
    except Exception:  # noqa: BLE001 - a context file never stops the run (RecursionError included)
        return None
    if result.not_checked:
        return None
    kept = [i for i, o in enumerate(result.objects) if o.kind]  # parse errors, templates: no object
    if not kept and not result.namespaces:
        return None
    facts = result.facts
    return FileResult(
        objects=[result.objects[i] for i in kept],
        records=[result.records[i] for i in kept],
        facts=[facts[i] if i < len(facts) else None for i in kept],
        namespaces=result.namespaces,
        complete=result.complete,
    )


def _read_text(path: str, max_bytes: int) -> str | None:
    try:
        return decode_file_text(read_bytes(path, max_bytes), path)
    except (UnreadableInput, OSError):  # InputFileError (not UTF-8 or UTF-16) is an UnreadableInput
        return None  # unreadable, too large, not UTF-8, not a regular file: no context from it


@dataclass(frozen=True)
class RepoContext:
    sources: Sources
    inputs: tuple[str, ...]  # the input's files on disk (their earlier versions are the baseline)
    revision: str  # where the earlier versions are: a git revision
    max_bytes: int

    @classmethod
    def of(
        cls, inputs: Iterable[str], options: RunOptions, dirs: Iterable[str], revision: str
    ) -> RepoContext:
        """The context of `dirs` for a run over `inputs` (and `options.cluster`). Raises `UsageError` for
        a context path that is not a directory, `UnreadableInput` for an input path that does not exist."""
        mine = discover_all([str(p) for p in inputs if str(p) != STDIN]).files
        cluster = discover_all([str(p) for p in options.cluster if str(p) != STDIN]).files
        sources = context_sources(dirs, [*mine, *cluster])
        return cls(sources, tuple(mine), revision, options.max_bytes)

    def read(self, ctx: Context) -> list[FileResult] | None:
        """Every context file's result (None when the run's deadline passed before all were read: a part
        of the context could show findings the rest would answer)."""
        out = []
        for path in self.sources.files:
            if ctx.deadline is not None and ctx.deadline.expired():
                return None
            text = _read_text(path, self.max_bytes)
            fr = read_context(text, path, ctx) if text is not None else None
            if fr is not None:
                out.append(fr)
        return out

    def earlier(self, ctx: Context) -> Iterator[FileResult]:
        """The input's files as they were at `revision` (those git has there), validated as context."""
        for root in self.sources.roots:
            real = os.path.realpath(root)
            mine = {}
            for path in self.inputs:
                rel = os.path.relpath(os.path.realpath(path), real)
                if not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
                    mine[rel.replace(os.sep, "/")] = path
            for rel, data in gitfiles.at_revision(root, self.revision, mine, self.max_bytes).items():
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                fr = read_context(text, mine[rel], ctx)
                if fr is not None:
                    yield fr

    def assemble(self, inputs: list[FileResult], ctx: Context, policy: Policy | None) -> Report:
        """The report of the input with the context in view (see the module docstring): the cross-object
        rules run over input and context; context objects keep only the findings the change causes."""
        context = self.read(ctx) if self.sources.files else []
        if not context:
            return assemble(inputs, ctx, policy)
        theirs = [o for fr in context for o in fr.objects]
        own = [len(o.violations) for o in theirs]  # their single-object findings: never shown
        report = assemble(inputs + context, ctx, policy)
        found = [o.violations[n:] for o, n in zip(theirs, own, strict=True)]
        rules = {v.rule for vs in found for v in vs}
        if rules and not report.not_checked:
            for o, n in zip(theirs, own, strict=True):
                del o.violations[n:]
            # the baseline: the context with the input as it was (first, as the input is in the run)
            assemble([*self.earlier(ctx), *context], ctx, _only(rules, policy))
            for i, (o, n) in enumerate(zip(theirs, own, strict=True)):
                before = {_same(v) for v in o.violations[n:]}
                found[i] = [v for v in found[i] if _same(v) not in before]
        shown = [_shown(o, vs) for o, vs in zip(theirs, found, strict=True) if vs]
        report.objects = report.objects[: len(report.objects) - len(theirs)] + shown
        report.context = len(theirs) - len(shown)
        return report


_NUMBER = re.compile(r"\d+")


def _same(v: Violation) -> tuple[str, str, str, str]:
    """What makes two findings on one object the same finding before and after the change: rule, field,
    severity and message, its numbers aside (a count of the devices or slices checked changes with the
    input; the finding does not)."""
    return v.rule, v.field, v.severity.value, _NUMBER.sub("#", v.message)


def _only(rules: set[str], policy: Policy | None) -> Policy:
    """`policy` with only the inventory rules `rules` on (the baseline needs no other)."""
    off = frozenset(r.id for r, _ in inventory_rules() if r.id not in rules)
    if policy is None:
        return Policy(disabled=off)
    return dataclasses.replace(policy, disabled=policy.disabled | off)


def _shown(o: ObjectResult, found: list[Violation]) -> ObjectResult:
    """A context object with only the findings the change causes, each saying so (its file may be one
    the commit does not touch)."""
    o.violations = [dataclasses.replace(v, message=v.message + CAUSED) for v in found]
    return o


def baseline_revision() -> str:
    """The revision the input's earlier versions are read from: `PRE_COMMIT_FROM_REF` when pre-commit
    runs the hook over a range (`pre-commit run --from-ref A --to-ref B`, where HEAD is already B), else
    HEAD (a commit: the staged files against the last commit)."""
    return os.environ.get("PRE_COMMIT_FROM_REF") or "HEAD"


def check_with_context(
    paths: Iterable[str],
    options: RunOptions,
    dirs: Iterable[str],
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    revision: str | None = None,
) -> Report:
    """`validate.check_files` over `paths` with the manifests of `dirs` as context (module docstring);
    the input's earlier versions at `revision` (default `baseline_revision()`)."""
    paths = list(paths)
    repo = RepoContext.of(paths, options, dirs, revision or baseline_revision())
    policy = options.policy
    if policy is None or not policy.tenants:
        return check_files(paths, options, jobs=jobs, progress=progress, assembler=repo.assemble)
    # tenant entries: judged on the input's own objects (its Namespaces' labels, the claims and templates
    # its Pods name); what only the context holds is unknown, and unknown is never a finding
    from webhook.offline.tenants import add_tenant_findings

    checked = check_inputs(paths, options, jobs, progress, keep="all")
    ctx = options.context()
    report = repo.assemble(checked.results, ctx, policy)
    if not report.not_checked:
        add_tenant_findings(checked, policy, ctx.profile, options.deadline)
    report.excluded = checked.excluded
    checked.cluster.drop_from(report)
    suppress(report)
    assign_lines(report, checked.texts, options.deadline, options.max_bytes)
    return report
