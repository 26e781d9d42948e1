"""`draguard validate`: every object validated, the cross-object rules, and — when the input holds devices
that could serve its claims and Pods — the feasibility checks of `draguard simulate`, in one run.

The input is read and validated once, in worker processes (`check_inputs`). The objects a simulation
needs travel back from the workers when it may need them: every file's for a small input (at most
`KEEP_BYTES`), else those of the files that hold more than ResourceSlices (claims, classes, Pods,
examples: small); the files of slices alone are read a second time only when the first pass found what
needs their objects (devices with claims or Pods, or a name defined twice). A large input of devices
alone — an inventory check — pays nothing for feasibility, not even the import of the allocator.

Modes (`Feasibility.mode`):

* `auto` (the default): the input is manifests to create (a claim's `status` is reset, as on CREATE)
  in an open world (webhook.simulate.scope): only the claims and Pods whose DeviceClasses and devices the
  input holds are decided, each on its own on the input's devices all free and untainted: whether it can
  ever fit there (a repository's examples are not applied together; the allocations and taints of the
  moment are the cluster's business); the others are counted in one `feasibility.open-world` info
  finding, and so are those not decided within its budget. No deadline for reading and validation
  unless asked (`--deadline-seconds`); the allocation phase has `AUTO_SECONDS` of its own (each Pod its
  `--budget-*`), and takes on at most `MAX_PAIRS` (Pod or claim, device) pairs: a larger input is
  counted in one info finding too. The default check stays quick whatever the input.
* `on` (`--feasibility`): the input is the whole cluster as stored (claims keep their allocations), every
  claim and Pod is decided, as `draguard simulate` decides them; a name defined twice with different
  content is an error wherever the copies are; kinds in `--skip` take part but are not reported.
* `off` (`--no-feasibility`): validation and cross-object rules only.

A policy with tenant entries (`--policy`, `spec.tenants[]`) keeps every file's objects and checks the
input's claims, templates, Pods and workloads against them (`webhook.offline.tenants`), whatever the mode.

With `--cluster` the world is closed: every claim and Pod of the input is decided against the cluster (in
`auto` still each on its own, on its devices free and untainted: whether it can ever fit there).
A name defined twice is one object when the copies are identical (after defaulting); with different
content it is reported — a warning across files in `auto`/`off` (kustomize bases and overlays), an
error within one file (see `webhook.simulate.leftout.report_duplicates`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from webhook.io.files import STDIN, InputFileError, discover_all, read_text
from webhook.io.findinglines import assign_lines
from webhook.model.records import SliceRec
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Severity, Violation
from webhook.model.workloads import WORKLOAD_KINDS
from webhook.validate import Checked, KeepMode, RunOptions, assemble, check_inputs
from webhook.validate.ignores import suppress

if TYPE_CHECKING:
    from webhook.simulate.load import Inputs
    from webhook.simulate.placement import Placement

Mode = Literal["auto", "on", "off"]
KEEP_BYTES = 1 << 20  # an input up to this size keeps its objects from the start (no second pass)
RUN_SECONDS = 60.0  # the allocation phase with --feasibility (and its whole run: webhook.cli.main)
AUTO_SECONDS = 2.0  # the allocation phase of `auto` when no --deadline-seconds is given
# `auto` decides at most this many (Pod or claim, device) pairs: an allocation reads every device its
# classes may match (a few µs each), so this bounds the default check to about a second; a larger input
# is counted in one info finding (`--feasibility` decides it all, within --deadline-seconds)
MAX_PAIRS = 400_000
WORK_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "Pod", *WORKLOAD_KINDS)
SUBJECT_KINDS = ("ResourceClaim", "Pod", *WORKLOAD_KINDS)  # what a simulation decides
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace")


@dataclass(frozen=True)
class Feasibility:
    """How `validate` checks feasibility: the mode (see the module docstring), each Pod's allocator
    budget (steps, seconds: a `webhook.engine.Budget`, made only when a simulation runs: the allocator
    is not even imported otherwise; None: its default), and `--deadline-seconds` when given."""

    mode: Mode = "auto"
    budget: tuple[int, float] | None = None
    deadline_seconds: float | None = None
    placement: Placement = "spread"  # `--placement`: with --feasibility, where a Pod goes


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
    tenants = options.policy is not None and bool(options.policy.tenants)
    keep: KeepMode = "all" if mode == "on" or tenants or _small(paths, options) else "files"
    checked = check_inputs(paths, options, jobs, progress, stdin_text, keep=keep)
    plan = _plan(checked, mode)
    if (plan.simulate or plan.twice) and not all(r.kept_all for r in checked.results[: len(checked.files)]):
        # a second pass over the files whose objects were not kept (see the module docstring)
        checked = check_inputs(paths, options, jobs, progress, stdin_text, keep="all", previous=checked)
    ctx = options.context()
    report = assemble(checked.results, ctx, options.policy)
    if plan.simulate or plan.twice:
        _simulation_part(report, checked, options, feasibility, plan.simulate)
    if tenants and not report.not_checked:
        from webhook.offline.tenants import add_tenant_findings

        assert options.policy is not None
        add_tenant_findings(checked, options.policy, ctx.profile, options.deadline)
    if plan.too_many is not None:
        first = next((o for o in report.objects if o.kind in SUBJECT_KINDS), None)
        _add(first, _too_many(*plan.too_many), options)
    report.excluded = checked.excluded
    checked.cluster.drop_from(report)
    suppress(report)  # offline only: `draguard.io/ignore` annotations, the feasibility findings too
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


@dataclass(frozen=True)
class _Plan:
    """What a run needs once its input is validated: a simulation (the input has claims or Pods, and
    devices unless `--feasibility`), the copies of a name defined twice compared, or neither; and in
    `auto`, (subjects, devices) when that is more than the default check takes on (MAX_PAIRS)."""

    simulate: bool
    twice: bool
    too_many: tuple[int, int] | None = None


def _plan(checked: Checked, mode: Mode) -> _Plan:
    """The plan, from the first pass's results (kinds and the slices' records: no objects needed)."""
    objects = [o for fr in checked.results for o in fr.objects]
    kinds = {o.kind for o in objects if o.kind}
    work = any(k in kinds for k in WORK_KINDS)
    simulate = work and (mode == "on" or (mode == "auto" and "ResourceSlice" in kinds))
    too_many = None
    if simulate and mode == "auto":
        subjects = sum(1 for o in objects if o.kind in SUBJECT_KINDS)
        devices = sum(len(r.devices) for fr in checked.results for r in fr.records if isinstance(r, SliceRec))
        if subjects * devices > MAX_PAIRS:
            simulate, too_many = False, (subjects, devices)
    return _Plan(simulate, _defines_twice(objects), too_many)


def _defines_twice(objects: Iterable[ObjectResult]) -> bool:
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


def _simulation_part(
    report: Report, checked: Checked, options: RunOptions, feasibility: Feasibility, simulate: bool
) -> None:
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
    if not simulate or report.not_checked or not (data.work or data.pending):
        return
    devices = _devices(data)
    if not closed and not devices:
        return
    subjects = len(data.work) + len(data.pending)
    if feasibility.mode == "auto" and subjects * devices > MAX_PAIRS:
        first = min(data.work + data.pending, key=lambda i: (i.source, i.line))
        _add(first.result, _too_many(subjects, devices), options)
        return
    data.texts = checked.texts
    _check_feasibility(data, options, feasibility, closed)


def _devices(data: Inputs) -> int:
    """How many devices the input's (valid) ResourceSlices publish."""
    n = 0
    for obj in data.state:
        if obj.get("kind") == "ResourceSlice":
            spec = obj.get("spec")
            devices = spec.get("devices") if isinstance(spec, dict) else None
            n += len(devices) if isinstance(devices, list) else 0
    return n


def _too_many(subjects: int, devices: int) -> Violation:
    from webhook.model.catalogue import RULES
    from webhook.simulate.findings import OPEN_WORLD

    message = (
        f"{subjects} claims, Pods and workloads not checked for feasibility: against {devices} devices that is "
        f"more than the default check takes on ({MAX_PAIRS:,} pairs); pass --feasibility to check them all "
        "(bounded by --deadline-seconds)"
    )
    return Violation(OPEN_WORLD, RULES[OPEN_WORLD].severity, "", message)


def _check_feasibility(data: Inputs, options: RunOptions, feasibility: Feasibility, closed: bool) -> None:
    """Simulate the loaded input and add the `feasibility.*` findings to the objects they concern (and,
    in the open world, the one info finding that counts what was not decided)."""
    from webhook.engine import Budget
    from webhook.model.catalogue import RULES
    from webhook.simulate import SimulateOptions, feasibility_findings, simulate
    from webhook.simulate.findings import OPEN_WORLD
    from webhook.simulate.scope import OpenWorld, skipped_message

    sim_options = (
        SimulateOptions(  # the input is read already (`loaded`): its cluster paths are not read again
            version=options.version,
            gates=options.gates,
            policy=options.policy,
            budget=Budget(*feasibility.budget) if feasibility.budget else None,
            deadline_seconds=_phase_seconds(feasibility),
            max_bytes=options.max_bytes,
            runtime_config=options.runtime_config,
            placement=feasibility.placement,
        )
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
    undecided: list[ObjectResult] = []
    for subject, violation in feasibility_findings(sim):
        target = index.get(
            (subject.source, subject.line, subject.kind, subject.namespace or "default", subject.name)
        ) or at.get((subject.source, subject.line, subject.kind))
        if feasibility.mode == "auto" and violation.rule == "feasibility.undecided":
            if target is not None and all(target is not u for u in undecided):
                undecided.append(target)
            continue  # not asked for: counted, not a warning each
        if scope is not None and violation.rule == "feasibility.infeasible":
            violation = _open_world(violation)
        _add(target, violation, options)
    if scope is not None and scope.skipped:
        v = Violation(OPEN_WORLD, RULES[OPEN_WORLD].severity, "", skipped_message(scope.skipped))
        _add(scope.skipped[0].result, v, options)
    if undecided:
        message = (
            f"{len(undecided)} claims, Pods and workloads not decided within the default check's budget "
            f"({_phase_seconds(feasibility):g} s for all, --budget-seconds/--budget-steps each): pass "
            "--deadline-seconds S (and --budget-seconds S) to give it more, or --feasibility"
        )
        _add(undecided[0], Violation(OPEN_WORLD, RULES[OPEN_WORLD].severity, "", message), options)


OPEN_WORLD_NOTE = (
    " (a warning in the open world: the input's devices stand for the cluster's, and a repository's example "
    "slices are rarely the devices its claims meet; pass --cluster DIR with the cluster's objects, or "
    "--feasibility, to make it an error)"
)


def _open_world(violation: Violation) -> Violation:
    """An infeasible answer decided on the input's devices alone: a warning, the safe side of doubt (the
    same claim meets other devices in the cluster: a repository's example slices of one cloud, its claims
    for another). With `--cluster` or `--feasibility` the world is closed and it stays an error."""
    return dataclasses.replace(
        violation, severity=Severity.WARNING, message=violation.message + OPEN_WORLD_NOTE
    )


def _phase_seconds(feasibility: Feasibility) -> float:
    """How long the allocation phase may take: --deadline-seconds when given (the run's deadline bounds
    it too), else AUTO_SECONDS in `auto` (the default check stays quick on any input), RUN_SECONDS with
    --feasibility."""
    if feasibility.deadline_seconds is not None:
        return feasibility.deadline_seconds
    return AUTO_SECONDS if feasibility.mode == "auto" else RUN_SECONDS


def _add(target: ObjectResult | None, violation: Violation, options: RunOptions) -> None:
    policy = options.policy
    if target is None or (policy is not None and not policy.enabled(violation.rule)):
        return
    target.violations.extend(policy.apply([violation]) if policy else [violation])
