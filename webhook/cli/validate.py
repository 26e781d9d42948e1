"""`draguard validate PATH...`: check manifests as a v1.37 API server and scheduler would. Exit codes: 0
clean (warnings allowed), 1 any error, 2 usage error or unreadable input, 3 no error but the deadline
(`--deadline-seconds`) passed before everything was checked."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TextIO

from webhook.cli import argtypes
from webhook.cli.formats import FORMATS, not_objects_line, render
from webhook.cli.options import (
    EXIT_ERRORS,
    EXIT_NOT_CHECKED,
    EXIT_OK,
    add_budget_args,
    add_cluster_arg,
    add_driver_schemas_arg,
    add_input_args,
    add_jobs_arg,
    add_placement_arg,
    add_policy_arg,
    add_profile_args,
    deadline_seconds,
    input_options,
    policy_of,
    run_deadline,
)
from webhook.model.errors import UsageError

PROGRESS_AFTER = 1.0  # seconds a run takes before its progress line appears (on a terminal)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    v = sub.add_parser(
        "validate",
        help="validate manifest files and directories (offline)",
        description="Validate manifests: files, directories (recursively), - for stdin.",
    )
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("-o", "--format", "--output", dest="format", choices=FORMATS, default="text")
    add_profile_args(v)
    add_input_args(v)
    add_policy_arg(v, "disable rules or change their severity")
    add_driver_schemas_arg(v)
    add_jobs_arg(v)
    v.add_argument(
        "--skip",
        type=argtypes.kinds(checked_kinds),
        default=frozenset(),
        metavar="KIND,...",
        help="kinds to skip (counted as skipped), e.g. ResourceSlice,Pod: kinds draguard checks",
    )
    v.add_argument("--summary", action="store_true", help="print a summary line (text format)")
    v.add_argument("--no-progress", action="store_true", help="never print the progress line on stderr")
    add_cluster_arg(v)
    v.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="DIR",
        help="the repository the input belongs to (the pre-commit hook passes --context .): its other "
        "manifests (files git tracks; outside git, the directory's) are read so cross-object rules see "
        "them; only the input's findings are shown, and the cross-object findings the input causes on "
        "them (repeatable)",
    )
    checks = v.add_mutually_exclusive_group()
    checks.add_argument(
        "--feasibility",
        action="store_true",
        help="take the input as the whole cluster (as stored) and allocate every claim/Pod in it, as "
        "`draguard simulate` does: infeasible ones are errors, undecided ones warnings (default: "
        "feasibility is checked for the claims/Pods whose DeviceClass and devices the input holds)",
    )
    checks.add_argument(
        "--no-feasibility",
        action="store_true",
        help="do not check feasibility (validation and cross-object rules only)",
    )
    add_budget_args(v, validate=True)
    add_placement_arg(v, validate=True)
    v.set_defaults(run=run)


def checked_kinds() -> tuple[str, ...]:
    """The kinds `validate` checks and reports, which `--skip` may name."""
    from webhook.model.keys import DRA_KINDS
    from webhook.model.workloads import WORKLOAD_KINDS

    return (*DRA_KINDS, "Pod", *WORKLOAD_KINDS)


def run(args: argparse.Namespace) -> int:
    from webhook.offline.run import Feasibility, Mode, validate_paths
    from webhook.validate import RunOptions

    given = input_options(args)  # usage errors (version, gates, --runtime-config) before any work
    policy = policy_of(args)
    skip: frozenset[str] = args.skip
    options = RunOptions(
        **given, policy=policy, skip=skip, deadline=run_deadline(args), cluster=tuple(args.cluster)
    )
    progress = None
    if not args.no_progress and sys.stderr.isatty():
        progress = Progress()
    if args.context:
        if args.feasibility:
            raise UsageError("--context is not used with --feasibility: pass the cluster with --cluster")
        from webhook.offline.repocontext import check_with_context

        report = check_with_context(args.paths, options, args.context, jobs=args.jobs, progress=progress)
    else:
        mode: Mode = "on" if args.feasibility else "off" if args.no_feasibility else "auto"
        budget = (args.budget_steps, args.budget_seconds)
        feasibility = Feasibility(mode, budget, args.deadline_seconds, args.placement)
        report = validate_paths(args.paths, options, feasibility, jobs=args.jobs, progress=progress)
    if progress:
        progress.finish()
    from webhook.cli.ignored import warn_unknown_ignores

    warn_unknown_ignores(report, policy, max_bytes=args.max_input_bytes)
    if report.not_objects and args.format == "text":
        sys.stderr.write(not_objects_line(report) + "\n")
    sys.stdout.write(render(report, args.format, args.summary, deadline_seconds(args)))
    sys.stdout.flush()
    if report.errors:
        return EXIT_ERRORS
    return EXIT_NOT_CHECKED if report.not_checked else EXIT_OK


class Progress:
    """A single self-overwriting stderr line (`draguard: 3/40 files`), written only once the run has
    taken PROGRESS_AFTER seconds: a run that ends sooner, even on its first or last file, prints
    nothing. The clock and the stream are parameters for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, stream: TextIO | None = None) -> None:
        self.clock = clock
        self.stream = stream if stream is not None else sys.stderr
        self.start = clock()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if self.clock() - self.start < PROGRESS_AFTER:
            return
        self.shown = True
        self.stream.write(f"\rdraguard: {done}/{total} files")
        self.stream.flush()

    def finish(self) -> None:
        """Erase the line, if it was written."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
