"""`draguard explain pod NS/NAME`: why a Pending Pod cannot be scheduled on DRA grounds, and the smallest
changes verified to make it fit, read live (kubeconfig) or from a dump of the cluster (`--cluster`).
The work is webhook/simulate/explainpod.py's; this shell reads the cluster and prints. Exit codes: 0 the
Pod fits now (or is not pending, or uses no DRA), 1 it does not (explained), 2 usage (bad NS/NAME, no such
Pod, no cluster to read), 3 undecided (a budget or the deadline ran out first)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from webhook.cli import argtypes
from webhook.cli.livecluster import add_cluster_args, check_one_source
from webhook.cli.options import (
    RUN_SECONDS,
    add_budget_args,
    add_input_args,
    add_jobs_arg,
    add_profile_args,
    allocation_budget,
    input_options,
    run_deadline,
)
from webhook.model.errors import UsageError

if TYPE_CHECKING:
    from webhook.model.budget import Deadline
    from webhook.simulate.explainpod import ExplainOptions, PodExplanation

HELP = "explain why a Pending Pod cannot be scheduled on DRA grounds, and what would make it fit"
DESCRIPTION = (
    "Explain a Pod of a cluster (live through a kubeconfig, or --cluster files): per claim, request and node "
    "whether it is unsatisfiable, busy (and which claims hold the devices), blocked by device taints; the "
    "objects left out; and the smallest changes, each verified by running the allocator again, that make it fit."
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from webhook.model.budget import SEARCH_RUNS  # not the simulation: building the parser loads none of it

    m = sub.add_parser("explain", help=HELP, description=DESCRIPTION)
    m.add_argument("what", choices=("pod",), metavar="pod", help="what to explain: a Pod (the only kind)")
    m.add_argument("ref", metavar="NS/NAME", help="the Pod: namespace/name (a name alone: namespace default)")
    m.add_argument("-o", "--format", "--output", dest="format", choices=("text", "json"), default="text")
    add_cluster_args(
        m, ": its DRA objects, Nodes, Namespaces and Pods are listed once", also="; the Pod is one of them"
    )
    add_profile_args(m)
    add_input_args(m)
    add_jobs_arg(m, " for loading --cluster files")
    add_budget_args(
        m,
        deadline_help="deadline of the whole command (reading, the verdict, the search for changes): a "
        f"verdict not reached by then is undecided (exit 3); a search cut short says so; default {RUN_SECONDS:g}",
    )
    m.add_argument(
        "--search-runs",
        type=argtypes.whole_number,
        default=SEARCH_RUNS,
        metavar="N",
        help=f"allocator runs the search for changes may make, each within the budget (default {SEARCH_RUNS}; "
        "0: no search)",
    )
    m.set_defaults(run=run)


def parse_ref(ref: str) -> tuple[str, str]:
    """`NS/NAME` (or `NAME`: namespace default) checked as the API server checks the names."""
    from webhook.model.names import dns_label, dns_subdomain

    parts = ref.split("/")
    if len(parts) > 2:
        raise UsageError(f"{ref!r}: expected NS/NAME (one slash), e.g. default/my-pod")
    ns, name = parts if len(parts) == 2 else ("default", parts[0])
    for what, value, problems in (("namespace", ns, dns_label(ns)), ("Pod name", name, dns_subdomain(name))):
        if problems:
            raise UsageError(f"{ref!r}: the {what} {value!r} is not valid: {problems[0]}")
    return ns, name


def run(args: argparse.Namespace) -> int:
    from webhook.simulate.explainpod import ExplainOptions, explain_pod, load_files
    from webhook.simulate.explaintext import render_text

    ns, name = parse_ref(args.ref)
    check_one_source(args)
    options = ExplainOptions(
        **input_options(args),
        budget=allocation_budget(args),
        deadline_seconds=args.deadline_seconds,
        search_runs=args.search_runs,
        jobs=args.jobs,
    )
    deadline = run_deadline(args)
    assert deadline is not None  # explain always has one
    if args.cluster:
        data = load_files(args.cluster, options, deadline)
        out = explain_pod(data, ns, name, options, deadline)
    else:
        out = _live(args, (ns, name), options, deadline)
    if args.format == "json":
        from webhook.model.plain import json_dumps

        sys.stdout.write(json_dumps(out.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(out))
    sys.stdout.flush()
    return out.exit_code


def _live(
    args: argparse.Namespace, pod: tuple[str, str], options: ExplainOptions, deadline: Deadline
) -> PodExplanation:
    from webhook.cli.livecluster import live_client
    from webhook.model.budget import OutOfBudget
    from webhook.simulate.explainpod import explain_pod, load_objects
    from webhook.state.live import watched_for
    from webhook.state.live.listing import list_cluster

    try:
        with live_client(args, "list on the DRA kinds, nodes, namespaces and pods") as client:
            listing = list_cluster(client, watched_for(options.version), pod, deadline=deadline)
    except OutOfBudget:
        from webhook.simulate.explainpod import PodExplanation
        from webhook.simulate.run import DEADLINE_PASSED

        why = f"undecided: {DEADLINE_PASSED} while the cluster was listed (raise --deadline-seconds)"
        return PodExplanation(f"{pod[0]}/{pod[1]}", "undecided", summary=why)
    objects = listing.objects + ([listing.pod] if listing.pod is not None else [])
    data = load_objects(objects, options, deadline)
    return explain_pod(data, pod[0], pod[1], options, deadline, live=True, pods=listing.pods)
