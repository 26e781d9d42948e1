"""`draguard validate`: every object validated, the cross-object rules, and — when the input holds devices
that could serve its claims and Pods — the feasibility checks of `draguard simulate`, in one run.

The input is read and validated once, in worker processes (`check_inputs`). The objects a simulation
needs are kept (and travel back from the workers) only when it may run: from the start for a small input
(at most `KEEP_BYTES`), else in a second pass only when the first found what needs them (devices with
claims or Pods, or a name defined twice). A large input of
devices alone — an inventory check — pays nothing for feasibility, not even the import of the allocator.

Modes (`Feasibility.mode`):

* `auto` (the default): the input is manifests to create (a claim's `status` is reset, as on CREATE)
  in an open world (webhook.simulate.scope): only the claims and Pods whose DeviceClasses and devices the
  input holds are decided, each on its own on the input's devices all free and untainted: whether it can
  ever fit there (a repository's examples are not applied together; the allocations and taints of the
  moment are the cluster's business); the others are counted in one `feasibility.open-world` info
  finding. No
  deadline for reading and validation unless asked (`--deadline-seconds`); the allocation phase has
  `RUN_SECONDS` of its own (each Pod its `--budget-*`).
* `on` (`--feasibility`): the input is the whole cluster as stored (claims keep their allocations), every
  claim and Pod is decided, as `draguard simulate` decides them; a name defined twice with different
  content is an error wherever the copies are; kinds in `--skip` take part but are not reported.
* `off` (`--no-feasibility`): validation and cross-object rules only.

With `--cluster` the world is closed: every claim and Pod of the input is decided against the cluster (in
`auto` still each on its own, on its devices free and untainted: whether it can ever fit there).
A name defined twice is one object when the copies are identical (after defaulting); with different
content it is reported — a warning across files in `auto`/`off` (kustomize bases and overlays), an
error within one file (see `webhook.simulate.leftout.report_duplicates`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from webhook.findinglines import assign_lines
from webhook.io.files import STDIN, InputFileError, discover_all, read_text
from webhook.model.violation import Violation
from webhook.model.workloads import WORKLOAD_KINDS
from webhook.report import ObjectResult, Report
from webhook.validate import Checked, RunOptions, assemble, check_inputs

if TYPE_CHECKING:
    from webhook.simulate.load import Inputs

Mode = Literal["auto", "on", "off"]
KEEP_BYTES = 1 << 20  # an input up to this size keeps its objects from the start (no second pass)
RUN_SECONDS = 60.0  # the allocation phase of `auto`, when no deadline of the run is asked
WORK_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "Pod", *WORKLOAD_KINDS)
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace")


@dataclass(frozen=True)
class Feasibility:
    """How `validate` checks feasibility: the mode (see the module docstring), each Pod's allocator
    budget (steps, seconds: a `webhook.engine.Budget`, made only when a simulation runs: the allocator
    is not even imported otherwise; None: its default), and `--deadline-seconds` when given."""

    mode: Mode = "auto"
    budget: tuple[int, float] | None = None
    deadline_seconds: float | None = None


def validate_paths(
    paths: Sequence[str],
    options: RunOptions,
    feasibility: Feasibility = Feasibility(),
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Validate files and directories (`-`: stdin) and check feasibility as `feasibility.mode` says.
    Raises `UnreadableInput` for a path that does not exist or cannot be read."""
    mode = feasibility.mode
    reported_skip = options.skip
    if mode == "on":  # the input is the cluster as stored; skipped kinds take part, unreported
        options = dataclasses.replace(options, as_stored=True, skip=frozenset())
    stdin_text = _stdin(paths, options)
    keep = mode == "on" or _small(paths, options)
    checked = check_inputs(paths, options, jobs, progress, stdin_text, keep=keep)
    wanted = _needs_objects(checked, mode)
    if wanted and not keep:  # a second pass: rare for the large inputs that get here (module docstring)
        checked = check_inputs(paths, options, jobs, progress, stdin_text, keep=True)
    ctx = options.context()
    report = assemble(checked.results, ctx, options.policy)
    if wanted:
        _simulation_part(report, checked, options, feasibility)
    checked.cluster.drop_from(report)
    assign_lines(report, checked.texts, options.deadline, options.max_bytes)
    if mode == "on" and reported_skip:
        kept = [o for o in report.objects if o.kind not in reported_skip]
        report.skipped += len(report.objects) - len(kept)
        report.objects = kept
    return report


def _stdin(paths: Sequence[str], options: RunOptions) -> str | InputFileError | None:
    """Standard input, read once (a second pass reads this text again), or why it cannot be read
    (`check_inputs` reports it); None when it is not an input."""
    if STDIN not in paths:
        return None
    try:
        return read_text(STDIN, options.max_bytes)
    except InputFileError as e:
        return e


def _small(paths: Sequence[str], options: RunOptions) -> bool:
    """Whether keeping every object from the start costs next to nothing: an input of at most
    KEEP_BYTES (a larger one kept whole would also cost memory, and the garbage collector's time)."""
    found = discover_all([*paths, *options.cluster])
    total = 0
    for f in found.files:
        if f == STDIN:
            continue
        try:
            total += os.stat(f).st_size
        except OSError:
            continue  # reported when it is read
        if total > KEEP_BYTES:
            return False
    return True


def _needs_objects(checked: Checked, mode: Mode) -> bool:
    """Whether the objects are needed (the simulation's modules loaded, a pass that did not keep them
    done again keeping them): the input may be simulated (claims or Pods, and devices unless
    `--feasibility`), or it defines a name twice (the copies are compared)."""
    kinds = {o.kind for fr in checked.results for o in fr.objects if o.kind}
    if any(k in kinds for k in WORK_KINDS) and (
        mode == "on" or (mode == "auto" and "ResourceSlice" in kinds)
    ):
        return True
    return _defines_twice(o for fr in checked.results for o in fr.objects)


def _defines_twice(objects: Any) -> bool:
    seen: set[tuple[str, str, str, str]] = set()
    for o in objects:
        if not o.kind or not o.name:
            continue
        group = (o.api_version or "").rpartition("/")[0]
        ns = "" if o.kind in CLUSTER_SCOPED else (o.namespace or "default")
        key = (group, o.kind, ns, o.name)
        if key in seen:
            return True
        seen.add(key)
    return False


def _simulation_part(report: Report, checked: Checked, options: RunOptions, feasibility: Feasibility) -> None:
    """The input's objects sorted as a simulation takes them (a name defined twice compared and
    reported), and the simulation itself when the input holds what it decides."""
    from webhook.simulate.load import sort_loaded

    loaded = [item for fr in checked.results for item in fr.kept]
    data = sort_loaded(report, loaded, options.policy, strict=feasibility.mode == "on")
    cluster = checked.cluster
    if cluster.files:  # the cluster's Pods, workloads and pending claims are its own, not the input's
        data.pods = [p for p in data.pods if p.source not in cluster]
        data.work = [p for p in data.work if p.source not in cluster]
        data.pending = [p for p in data.pending if p.source not in cluster]
        cluster.drop_from(report)  # before the simulation's findings: none is added to them
    closed = feasibility.mode == "on" or bool(cluster.files)
    if feasibility.mode == "off" or report.not_checked or not (data.work or data.pending):
        return
    if closed or _has_devices(data):
        data.texts = checked.texts
        _check_feasibility(data, options, feasibility, closed)


def _has_devices(data: Inputs) -> bool:
    """Whether the input's (valid) ResourceSlices publish any device."""
    for obj in data.state:
        if obj.get("kind") == "ResourceSlice":
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("devices"):
                return True
    return False


def _check_feasibility(data: Inputs, options: RunOptions, feasibility: Feasibility, closed: bool) -> None:
    """Simulate the loaded input and add the `feasibility.*` findings to the objects they concern (and,
    in the open world, the one info finding that counts what was not decided)."""
    from webhook.engine import Budget
    from webhook.rules.registry import RULES
    from webhook.simulate import SimulateOptions, feasibility_findings, simulate
    from webhook.simulate.findings import OPEN_WORLD
    from webhook.simulate.scope import OpenWorld, skipped_message

    sim_options = SimulateOptions(
        options.version,
        options.gates,
        options.policy,
        budget=Budget(*feasibility.budget) if feasibility.budget else None,
        deadline_seconds=RUN_SECONDS
        if feasibility.deadline_seconds is None
        else feasibility.deadline_seconds,
        max_bytes=options.max_bytes,
        runtime_config=options.runtime_config,
    )
    scope = None if closed else OpenWorld()
    sim = simulate(
        (),
        sim_options,
        deadline=options.deadline,
        loaded=data,
        scope=scope,
        independent=feasibility.mode == "auto",
    )
    report = data.report
    index = {(o.source, o.line, o.kind, o.namespace or "default", o.name): o for o in report.objects}
    at = {(o.source, o.line, o.kind): o for o in reversed(report.objects)}  # generateName objects
    for subject, violation in feasibility_findings(sim):
        target = index.get(
            (subject.source, subject.line, subject.kind, subject.namespace or "default", subject.name)
        ) or at.get((subject.source, subject.line, subject.kind))
        _add(target, violation, options)
    if scope is not None and scope.skipped:
        v = Violation(OPEN_WORLD, RULES[OPEN_WORLD].severity, "", skipped_message(scope.skipped))
        _add(scope.skipped[0].result, v, options)


def _add(target: ObjectResult | None, violation: Violation, options: RunOptions) -> None:
    policy = options.policy
    if target is None or (policy is not None and not policy.enabled(violation.rule)):
        return
    target.violations.extend(policy.apply([violation]) if policy else [violation])
