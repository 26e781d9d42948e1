"""Whole inputs: files (in parallel worker processes), standard input and request bodies, each through
`documents` and then into one report (`report.assemble`). The only part of the pipeline that reads files."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from webhook.config.context import Context
from webhook.config.driverschemas import NONE as NO_EXTRA_SCHEMAS
from webhook.config.driverschemas import with_extra
from webhook.config.policy import Policy
from webhook.config.profile import DEFAULT_VERSION, load_profile
from webhook.convert.served import DEFAULT as DEFAULT_RUNTIME_CONFIG
from webhook.convert.served import RuntimeConfig
from webhook.io.documents import (
    MAX_FILE_BYTES,
    MAX_REQUEST_BYTES,
    STDIN,
    HelmChart,
    InputFileError,
    Skipped,
    body_text,
    discover_all,
    parse_bytes,
    read_text,
)
from webhook.io.files import Kustomization
from webhook.io.findinglines import assign_lines
from webhook.model.budget import Deadline
from webhook.model.report import ObjectResult, Report
from webhook.validate.clusterinput import ClusterInput, stored_context
from webhook.validate.documents import (
    FileResult,
    Keep,
    Keeper,
    check_documents,
    check_file_text,
    unread_result,
)
from webhook.validate.ignores import suppress
from webhook.validate.objects import apply_policy, violation
from webhook.validate.report import Assembler, assemble


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
            driver_schemas=with_extra(NO_EXTRA_SCHEMAS, self.policy.driver_schemas if self.policy else ()),
        )


_worker: dict[str, Any] = {}


# What `check_inputs` keeps of each file for a simulation: nothing, the objects of the files that hold
# more than ResourceSlices (a repository's claims, classes and examples: small), or every file's
KeepMode = Literal["none", "files", "all"]


def _init_worker(
    options: RunOptions,
    cluster_files: tuple[str, ...] = (),
    keep: KeepMode = "none",
    process: bool = False,
    walked: frozenset[str] = frozenset(),
) -> None:
    _worker["options"] = options
    _worker["ctx"] = options.context()
    _worker["cluster"] = frozenset(cluster_files)
    _worker["walked"] = walked  # files found in a directory: an unrendered template there is a warning
    _worker["keep"] = keep
    _worker["process"] = process  # a worker process: its results carry what the lint needs of them


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
    walked = path in _worker["walked"]
    if _worker["keep"] == "none":
        out = file_result(text, path, ctx, options.policy, options.skip, walked=walked)
    else:
        keeper = Keeper(ctx)
        out = _ship(
            file_result(text, path, ctx, options.policy, options.skip, keeper, walked=walked),
            keeper,
            _worker["keep"],
        )
    if _worker["process"]:
        send_selector_uses(out, _worker["ctx"])
    return out


def _check_files(paths: list[str]) -> list[FileResult]:
    """A worker's task: a few files (small ones go together, so that a task's cost is not its overhead)."""
    return [_check_file(p) for p in paths]


# What one task of a worker process holds: files in a row up to these bounds (a larger file is a task of
# its own). Thousands of small manifests cost about 1 ms each in task overhead when sent one by one.
TASK_BYTES = 1 << 20
TASK_FILES = 64


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # reported when the worker reads it


def task_chunks(items: list[int], sizes: list[int], jobs: int) -> list[list[int]]:
    """`items` in order, cut into tasks of at most TASK_FILES files and TASK_BYTES bytes, and small enough
    that every worker gets several (the last ones to finish stay short)."""
    limit = max(1, min(TASK_BYTES, sum(sizes) // (8 * jobs)))
    out: list[list[int]] = []
    cur: list[int] = []
    held = 0
    for item, size in zip(items, sizes, strict=True):
        if cur and (held + size > limit or len(cur) >= TASK_FILES):
            out.append(cur)
            cur, held = [], 0
        cur.append(item)
        held += size
    if cur:
        out.append(cur)
    return out


def send_selector_uses(out: FileResult, ctx: Context) -> None:
    """In a worker process: the lint's analysis of the selectors the worker compiled for `out`'s rules,
    sent with it, so that the lint (in the run's own process) does not compile them again. `ctx`: the
    run's (its gates are the lint's; the stored context of a cluster file has the same)."""
    if ctx.deadline is not None and ctx.deadline.expired():
        return  # the lint does not run
    from webhook.rules.selectorlint import selector_uses

    try:
        out.selector_uses = selector_uses(out.facts, ctx)
    except Exception:  # noqa: BLE001 - the lint compiles what is not sent (and reports a failure then)
        out.selector_uses = {}


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


def file_result(
    text: str,
    source: str,
    ctx: Context,
    policy: Policy | None,
    skip: frozenset[str],
    keep: Keep | None = None,
    *,
    walked: bool = False,
) -> FileResult:
    """`check_file_text`, with any failure of draguard itself turned into an error on that file (never a
    traceback that stops the other files); `crashed` is then set."""
    try:
        return check_file_text(text, source, ctx, policy, skip, keep, walked=walked)
    except RecursionError:
        msg = "draguard ran out of stack on this file (extremely deep nesting?): please report it"
    except Exception as e:  # noqa: BLE001 - the last line of defence for one file
        msg = f"draguard failed on this file ({type(e).__name__}: {e}): please report it"
    return FileResult(
        [ObjectResult(source, 1, None, None, None, None, [violation("internal.rule-crash", "", msg)])],
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
    the report of the files' results (webhook.offline.repocontext: with the repository's other files in view).

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
    patches = found.patch_files()  # parts of objects until built: not read (`kustomization_result`)
    on_disk = [i for i, p in enumerate(files) if p != STDIN and results[i] is None and p not in patches]
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
                results[i] = file_result(text, "<stdin>", ctx, options.policy, options.skip)
                continue
            keeper = Keeper(ctx)
            res = file_result(text, "<stdin>", ctx, options.policy, options.skip, keeper)
            results[i] = _ship(res, keeper, keep)
    done = 0
    walked = frozenset(found.walked)
    if jobs == 1 or len(on_disk) <= 1:
        _init_worker(options, cluster.files, keep, False, walked)
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
            initargs=(options, cluster.files, keep, True, walked),
        ) as pool:
            chunks = task_chunks(on_disk, [_size(files[i]) for i in on_disk], jobs)
            futures = [pool.submit(_check_files, [files[i] for i in chunk]) for chunk in chunks]
            for chunk, future in zip(chunks, futures, strict=True):
                try:
                    for i, res in zip(chunk, future.result(), strict=True):
                        results[i] = res
                except RecursionError:  # a kept object nested deeper than pickle can send: check here
                    _init_worker(options, cluster.files, keep, False, walked)
                    for i in chunk:
                        results[i] = _check_file(files[i])
                done += len(chunk)
                if progress:
                    progress(done, len(on_disk))
    skipped = [skipped_result(s, options.policy) for s in found.skipped]
    charts = [chart_result(c, options.policy) for c in found.charts]
    charts += [kustomization_result(k, options.policy) for k in found.kustomizations]
    return Checked(
        [r for r in results if r is not None] + skipped + charts, cluster, kept, files, len(found.excluded)
    )


def input_error_result(e: InputFileError) -> FileResult:
    """A file that was found but not read (too large, not UTF-8): one error on it."""
    return FileResult(
        [ObjectResult(e.path, 1, None, None, None, None, [violation(e.rule, "", str(e))])], [None]
    )


def skipped_result(s: Skipped, policy: Policy | None = None) -> FileResult:
    """A directory entry that was not opened (FIFO, socket, device, broken symlink): one warning."""
    violations = [violation("input.skipped-file", "", s.reason)]
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


def kustomization_result(k: Kustomization, policy: Policy | None = None) -> FileResult:
    """A kustomization whose patch files were not read: one info finding on its kustomization.yaml."""
    files = f"{len(k.patches)} file{'s' if len(k.patches) != 1 else ''}"
    message = (
        f"a kustomization: its patches ({files}) are parts of objects until built and were not read; "
        f"validate what it builds with `kubectl kustomize {shlex.quote(k.directory)} | draguard validate -`"
    )
    violations = apply_policy(policy, [violation("input.kustomize-patches", "", message)])
    if not violations:
        return FileResult()
    return FileResult([ObjectResult(k.file, 1, None, None, None, None, violations)], [None])


def chart_result(chart: HelmChart, policy: Policy | None = None) -> FileResult:
    """A Helm chart whose templates were not read: one info finding on its Chart.yaml."""
    violations = apply_policy(policy, [violation("input.helm-chart", "", chart_message(chart))])
    if not violations:
        return FileResult()
    return FileResult([ObjectResult(chart.chart_file, 1, None, None, None, None, violations)], [None])


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
        result = check_documents(docs, source, ctx, options.policy, options.skip)
    except Exception as e:  # noqa: BLE001 - the last line of defence, as for a file
        msg = f"draguard failed on this request ({type(e).__name__}: {e}): please report it"
        result = FileResult(
            [ObjectResult(source, 1, None, None, None, None, [violation("internal.rule-crash", "", msg)])],
            [None],
            crashed=True,
        )
    report = assemble([result], ctx, options.policy)
    if text is not None:
        assign_lines(report, {source: text}, ctx.deadline, max_bytes)
    return report
