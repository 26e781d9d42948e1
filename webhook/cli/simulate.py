"""`draguard simulate PATH...`: allocate the input's Pods and claims on the cluster its objects describe.
Exit codes: 0 all feasible, 1 any infeasible (or invalid input), 3 any undecided (or not checked before
the deadline), 2 usage."""

from __future__ import annotations

import argparse
import sys

from webhook.cli.options import (
    add_budget_args,
    add_cluster_arg,
    add_driver_schemas_arg,
    add_input_args,
    add_jobs_arg,
    add_placement_arg,
    add_policy_arg,
    add_profile_args,
    allocation_budget,
    deadline_seconds,
    input_options,
    policy_of,
    run_deadline,
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    add_profile_args(m)
    add_input_args(m)
    add_cluster_arg(m)
    add_jobs_arg(m, " for loading")
    add_policy_arg(m, "rule severities decide what is reported as errors")
    add_driver_schemas_arg(m)
    add_budget_args(m)
    add_placement_arg(m)
    m.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from webhook.simulate import SimulateOptions, simulate
    from webhook.simulate.render import render_text

    options = SimulateOptions(
        **input_options(args),
        budget=allocation_budget(args),
        jobs=args.jobs,
        deadline_seconds=args.deadline_seconds,
        cluster=tuple(args.cluster),
        placement=args.placement,
        policy=policy_of(args),
    )
    report = simulate(args.paths, options, deadline=run_deadline(args))  # findings at their fields' lines
    from webhook.cli.ignored import warn_unknown_ignores

    warn_unknown_ignores(report.validation, texts=report.texts, max_bytes=args.max_input_bytes)
    if args.format == "json":
        from webhook.model.plain import json_dumps

        sys.stdout.write(json_dumps(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report, deadline_seconds(args)))
    sys.stdout.flush()
    return report.exit_code
