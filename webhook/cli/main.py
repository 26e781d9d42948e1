"""`draguard` entry point: argument parsing, exit codes, output. Exit codes of `validate`:
0 clean (warnings allowed), 1 any error, 2 usage error or unreadable input, 3 no error but the deadline
(`--deadline-seconds`) passed before everything was checked; of `simulate`: 0 all feasible, 1 any
infeasible (or invalid input), 3 any undecided (or not checked before the deadline), 2 usage; of `serve`:
gunicorn's (0 after a graceful stop), 2 usage; `serve` and `certs` live in webhook/cli/serve.py.

The deadline of a run counts from the start of the process (its whole life: interpreter start-up,
reading, validation, allocation), or from the call when `main(argv)` is called in-process."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from webhook import __version__
from webhook.cli import argtypes, convert
from webhook.cli.formats import FORMATS, not_objects_line, render, rules_table
from webhook.io.files import MAX_FILE_BYTES, InputFileError, UnreadableInput
from webhook.model.errors import UsageError
from webhook.model.text import one_line
from webhook.profile import DEFAULT_VERSION, SUPPORTED_VERSIONS, load_profile, parse_feature_gates

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_NOT_CHECKED = 0, 1, 2, 3
RUN_SECONDS = 60.0  # default deadline of `simulate` and `validate --feasibility` (plain validate: none)
PROGRESS_AFTER = 1.0  # seconds a run takes before its progress line appears (on a terminal)
# (plain validate bounds only its allocation phase, when it runs: webhook.validaterun.AUTO_SECONDS)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its message short and clear
        self.print_usage(sys.stderr)
        sys.stderr.write(f"draguard: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _add_profile_args(p: argparse.ArgumentParser, runtime_config: bool = True) -> None:
    p.add_argument(
        "--k8s-version",
        "--kubernetes-version",
        dest="k8s_version",
        default=DEFAULT_VERSION,
        choices=SUPPORTED_VERSIONS,
        help=f"target Kubernetes version (default {DEFAULT_VERSION})",
    )
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="Name=true,...",
        help="feature gates of the target API server/scheduler, as for kube-apiserver",
    )
    if not runtime_config:
        return
    p.add_argument(
        "--runtime-config",
        action="append",
        default=[],
        metavar="KEY=VALUE,...",
        help="the API server's --runtime-config (repeatable): e.g. resource.k8s.io/v1beta2=true serves "
        "v1beta2 manifests, which are then converted to v1 and validated; without it beta/alpha "
        "resource.k8s.io versions are errors, as on a default API server",
    )


def _add_budget_args(p: argparse.ArgumentParser, validate: bool = False) -> None:
    p.add_argument(
        "--budget-steps",
        type=argtypes.whole_number,
        default=200_000,
        metavar="N",
        help="allocator search steps per Pod before the answer is undecided (default 200000)",
    )
    p.add_argument(
        "--budget-seconds",
        type=argtypes.seconds,
        default=2.0,
        metavar="S",
        help="allocator wall-clock limit per Pod before the answer is undecided (default 2)",
    )
    if validate:
        help_ = (
            "deadline of the whole run (reading, validation, allocation): what is left when it passes is "
            "reported input.not-checked (exit 3 when there is no error); default: none for reading and "
            "validation, 2 for the allocation phase when it runs (what it leaves undecided is counted in "
            f"one info finding); {RUN_SECONDS:g} for the whole run with --feasibility"
        )
    else:
        help_ = (
            "deadline of the whole run (reading, validation, every Pod): objects not checked and Pods not "
            f"decided by then make the answer undecided (exit 3); default {RUN_SECONDS:g}"
        )
    p.add_argument(
        "--deadline-seconds",
        type=argtypes.seconds,
        default=None if validate else RUN_SECONDS,
        metavar="S",
        help=help_,
    )


def _add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-input-bytes",
        type=argtypes.byte_size,
        default=MAX_FILE_BYTES,
        metavar="SIZE",
        help="largest file or stdin read (default 256Mi); a larger one is an error on that input",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files and directories whose path, or a tail of it after a /, matches GLOB "
        "(fnmatch, * also matches /: e.g. vendor, '*.json', 'charts/*/ci'); never read, counted as "
        "excluded (repeatable)",
    )


def _add_cluster_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="DIR",
        help="the cluster's objects (files or directories, e.g. `kubectl get resourceslices,deviceclasses,"
        "resourceclaims,nodes,namespaces -A -o yaml`): the input is checked (and simulated) against them as "
        "the whole cluster; their own findings are not shown, except errors (repeatable)",
    )


def _add_placement_arg(p: argparse.ArgumentParser, validate: bool = False) -> None:
    p.add_argument(
        "--placement",
        choices=("spread", "pack"),
        default="spread",
        help=("with --feasibility: " if validate else "")
        + "where a Pod goes among the nodes it fits on: spread (default: the default scheduler's "
        "LeastAllocated, BalancedAllocation and DRA scores, ties by node name) or pack (the first node "
        "by name)",
    )


def _runtime_config(args: argparse.Namespace) -> Any:
    """`--runtime-config` (all of them), checked as kube-apiserver of `--k8s-version` checks it."""
    from webhook.convert.served import parse_runtime_config

    return parse_runtime_config(args.runtime_config, args.k8s_version)


def _budget(args: argparse.Namespace) -> Any:
    from webhook.engine import Budget

    return Budget(steps=args.budget_steps, seconds=args.budget_seconds)


def _checked_kinds() -> tuple[str, ...]:
    """The kinds `validate` checks and reports, which `--skip` may name."""
    from webhook.model.workloads import WORKLOAD_KINDS
    from webhook.validate import DRA_KINDS

    return (*DRA_KINDS, "Pod", *WORKLOAD_KINDS)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="draguard",
        description="Validate Kubernetes DRA (resource.k8s.io/v1) objects as a "
        "v1.37 API server and scheduler would.",
    )
    parser.add_argument("--version", action="version", version=f"draguard {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    v = sub.add_parser(
        "validate",
        help="validate manifest files and directories (offline)",
        description="Validate manifests: files, directories (recursively), - for stdin.",
    )
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("-o", "--format", "--output", dest="format", choices=FORMATS, default="text")
    _add_profile_args(v)
    _add_input_args(v)
    v.add_argument("--policy", metavar="FILE", help="policy file: disable rules or change their severity")
    v.add_argument(
        "-j",
        "-n",
        "--jobs",
        dest="jobs",
        type=argtypes.workers,
        default=None,
        help="parallel workers, at least 1 (default: all usable cores; never more than the input's files)",
    )
    v.add_argument(
        "--skip",
        type=argtypes.kinds(_checked_kinds),
        default=frozenset(),
        metavar="KIND,...",
        help="kinds to skip (counted as skipped), e.g. ResourceSlice,Pod: kinds draguard checks",
    )
    v.add_argument("--summary", action="store_true", help="print a summary line (text format)")
    v.add_argument("--no-progress", action="store_true", help="never print the progress line on stderr")
    _add_cluster_arg(v)
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
    _add_budget_args(v, validate=True)
    _add_placement_arg(v, validate=True)
    v.set_defaults(run=_validate)

    m = sub.add_parser(
        "simulate",
        help="allocate the input's Pods/claims against the input's cluster objects",
        description="Load manifests: ResourceSlices, DeviceClasses, DeviceTaintRules, Nodes and allocated "
        "ResourceClaims form the cluster; each Pod (in file order) is scheduled with the claims it "
        "references, then each unallocated claim no Pod uses is asked on its own (feasible now, busy or "
        "unsatisfiable, as admission answers it). Objects with validation errors are reported and left out.",
    )
    m.add_argument("paths", nargs="+", metavar="PATH")
    m.add_argument("-o", "--format", "--output", dest="format", choices=("text", "json"), default="text")
    _add_profile_args(m)
    _add_input_args(m)
    _add_cluster_arg(m)
    m.add_argument(
        "-j",
        "-n",
        "--jobs",
        dest="jobs",
        type=argtypes.workers,
        default=None,
        help="parallel workers for loading, at least 1 (default: all usable cores; never more than the "
        "input's files)",
    )
    _add_budget_args(m)
    _add_placement_arg(m)
    m.set_defaults(run=_simulate)

    s = sub.add_parser(
        "strip",
        help="print objects as an API server of the target version would store them",
        description="Drop the fields that the target version/feature gates would silently drop "
        "(version skew) and print the objects as YAML; each dropped field is reported on stderr.",
    )
    s.add_argument("paths", nargs="+", metavar="PATH")
    _add_profile_args(s)
    _add_input_args(s)
    s.set_defaults(run=_strip)

    convert.add_parser(sub, _add_input_args, argtypes.seconds)
    from webhook.cli.serve import add_certs_parser, add_serve_parser

    # serve: the API server converts beta objects to v1 before calling the webhook (no --runtime-config)
    add_serve_parser(sub, lambda p: _add_profile_args(p, runtime_config=False))
    add_certs_parser(sub)

    r = sub.add_parser("rules", help="list every rule id with its severity and field path")
    r.add_argument("-o", "--format", dest="format", choices=("text", "markdown", "json"), default="text")
    r.set_defaults(run=_rules)
    return parser


STARTUP_SECONDS = 5.0  # a process older than this when main() starts is not a fresh `draguard` run


def _process_age() -> float:
    """Seconds since this process started (Linux `/proc/self/stat`), the interpreter's start-up; 0 (count
    from now) elsewhere, or when the process is older than STARTUP_SECONDS (main() called late in a
    long-lived process)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        started = int(stat[stat.rindex(b")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return age if 0.0 <= age <= STARTUP_SECONDS else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`argv`, else the process's command line, which then ends with it)."""
    started = time.monotonic() - (_process_age() if argv is None else 0.0)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.started = started
    code = _dispatch(parser, args)
    if argv is None:
        _exit(code)
    return code


def _exit(code: int) -> NoReturn:
    """End a command-line run once its output is written, without tearing down the heap: freeing a full
    compile cache takes up to a second on a busy machine, past the run's deadline. Nothing is left to do
    (worker pools are closed, output is flushed here)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    os._exit(code)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] | None = getattr(
        args, "run", None
    )  # set by each command's parser
    if run is None:  # no command
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return run(args)
    except UsageError as e:
        sys.stderr.write(one_line(f"draguard: error: {e}") + "\n")
        return EXIT_USAGE
    except UnreadableInput as e:
        where = f"{e.path}: " if isinstance(e, InputFileError) and e.path else ""
        sys.stderr.write(one_line(f"draguard: error: {where}{e}") + "\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    sys.stdout.write(rules_table(args.format))
    return EXIT_OK


def _deadline(args: argparse.Namespace) -> Any:
    """The run's deadline: `--deadline-seconds` after the process (or the in-process call) started;
    None for plain `validate` without the flag."""
    from webhook.model.budget import Deadline

    seconds = _deadline_seconds(args)
    return None if seconds is None else Deadline(args.started + seconds)


def _deadline_seconds(args: argparse.Namespace) -> float | None:
    """`--deadline-seconds`, or its default for the command (None: no deadline)."""
    seconds: float | None = args.deadline_seconds
    if seconds is None and getattr(args, "feasibility", True):
        seconds = RUN_SECONDS
    return seconds


def _validate(args: argparse.Namespace) -> int:
    from webhook.io.policyfile import load_policy
    from webhook.model.catalogue import RULES
    from webhook.validate import RunOptions
    from webhook.validaterun import Feasibility, Mode, validate_paths

    gates = parse_feature_gates(args.feature_gates)
    load_profile(args.k8s_version, gates, args.feature_gates)  # usage errors before any work
    policy = load_policy(args.policy, RULES) if args.policy else None
    skip: frozenset[str] = args.skip
    deadline = _deadline(args)
    options = RunOptions(
        args.k8s_version,
        tuple(sorted(gates.items())),
        policy,
        skip,
        args.max_input_bytes,
        deadline,
        runtime_config=_runtime_config(args),
        cluster=tuple(args.cluster),
        exclude=tuple(args.exclude),
    )
    progress = None
    if not args.no_progress and sys.stderr.isatty():
        progress = Progress()
    if args.context:
        if args.feasibility:
            raise UsageError("--context is not used with --feasibility: pass the cluster with --cluster")
        from webhook.repocontext import check_with_context

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
    sys.stdout.write(render(report, args.format, args.summary, _deadline_seconds(args)))
    sys.stdout.flush()
    if report.errors:
        return EXIT_ERRORS
    return EXIT_NOT_CHECKED if report.not_checked else EXIT_OK


def _simulate(args: argparse.Namespace) -> int:
    from webhook.simulate import SimulateOptions, simulate
    from webhook.simulate.render import render_text

    gates = parse_feature_gates(args.feature_gates)
    load_profile(args.k8s_version, gates, args.feature_gates)
    options = SimulateOptions(
        args.k8s_version,
        tuple(sorted(gates.items())),
        runtime_config=_runtime_config(args),
        budget=_budget(args),
        jobs=args.jobs,
        deadline_seconds=args.deadline_seconds,
        max_bytes=args.max_input_bytes,
        cluster=tuple(args.cluster),
        placement=args.placement,
        exclude=tuple(args.exclude),
    )
    report = simulate(args.paths, options, deadline=_deadline(args))  # findings at their fields' lines
    from webhook.cli.ignored import warn_unknown_ignores

    warn_unknown_ignores(report.validation, texts=report.texts, max_bytes=args.max_input_bytes)
    if args.format == "json":
        from webhook.model.plain import json_dumps

        sys.stdout.write(json_dumps(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report, _deadline_seconds(args)))
    sys.stdout.flush()
    return report.exit_code


def _strip(args: argparse.Namespace) -> int:
    from webhook.context import Context
    from webhook.convert.pipeline import strip_versioned
    from webhook.findinglines import FileLines
    from webhook.io.documents import DocumentError, discover_all, not_an_object, parse, read_text
    from webhook.io.yamlload import expansion_error, expansion_limit
    from webhook.io.yamlout import dump_documents
    from webhook.model.catalogue import RULES
    from webhook.model.jsontext import json_size
    from webhook.skew import strip_disabled_fields
    from webhook.validate import chart_message

    def say(line: str) -> None:
        sys.stderr.write(one_line(line) + "\n")

    ctx = Context(
        profile=load_profile(args.k8s_version, parse_feature_gates(args.feature_gates)),
        runtime_config=_runtime_config(args),
    )
    status = EXIT_OK
    out = []
    found = discover_all(args.paths, args.exclude)
    for skipped in found.skipped:
        say(f"{skipped.path}:1: warning input.skipped-file: {skipped.reason}")
    for chart in found.charts:
        say(f"{chart.chart_file}:1: info input.helm-chart: {chart_message(chart)}")
    for path in found.files:
        source = "<stdin>" if path == "-" else path
        try:
            text = read_text(path, args.max_input_bytes)
        except InputFileError as e:
            say(f"{source}:1: error {e.rule}: {e}")
            status = EXIT_ERRORS
            continue
        limit = expansion_limit(len(text))  # what strip writes is bounded on its own, not only by the reader
        lines = FileLines(text)
        for doc in parse(text, source):
            if isinstance(doc, DocumentError):
                say(f"{doc.source}:{doc.line}: error {doc.rule}: {doc.message}")
                status = EXIT_ERRORS
                continue
            if not_an_object(doc):
                continue  # values.yaml, CI configuration, a JSON array: nothing an API server stores
            for issue in doc.issues:
                severity = RULES[issue.rule].severity.value
                say(f"{doc.source}:{issue.line}: {severity} {issue.rule}: {issue.path}: {issue.message}")
                status = EXIT_ERRORS if severity == "error" else status
            versioned = strip_versioned(doc.obj, ctx)  # resource.k8s.io/*: served? converted?
            if versioned is not None:
                at = lines.of(doc, [str(v.field) for v in versioned.findings])
                for v in versioned.findings:
                    say(
                        f"{doc.source}:{at(str(v.field))}: {v.severity.value} {v.rule}: {v.field}: {v.message}"
                    )
                    status = EXIT_ERRORS if v.severity.value == "error" else status
                if versioned.obj is None:
                    continue
                stripped, dropped = versioned.obj, versioned.dropped
            else:
                stripped, skew = strip_disabled_fields(doc.obj, ctx)
                dropped = [(str(f.field), f.message) for f in skew]
            if json_size(stripped, limit) > limit:
                say(f"{doc.source}:{doc.line}: error input.parse: {expansion_error(limit)}")
                status = EXIT_ERRORS
                continue
            at = lines.of(doc, [path_ for path_, _ in dropped])
            for path_, message in dropped:
                say(f"{doc.source}:{at(path_)}: warning skew.dropped-field: {path_}: {message}")
            out.append(stripped)
    dump_documents(out, sys.stdout)  # webhook.io.yamlout: block style; JSON for the deepest documents
    return status


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


if __name__ == "__main__":
    raise SystemExit(main())
