"""`draguard taint preview RULE.yaml`: what a DeviceTaintRule would taint and, with effect NoExecute, which
allocated claims hold those devices and which Pods would be evicted (at once, after their
tolerationSeconds) or tolerate it — on a cluster read from files (`--cluster`) or live (kubeconfig).
The work is webhook/simulate/taintpreview.py's. Exit codes: 0 the preview printed, 2 usage."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from webhook.cli import argtypes
from webhook.cli.livecluster import add_cluster_args, add_read_deadline_arg, check_one_source
from webhook.cli.options import add_input_args, add_jobs_arg, add_profile_args, input_options
from webhook.model.errors import UsageError

HELP = "preview a DeviceTaintRule: the devices it taints, the claims and Pods a NoExecute taint evicts"
DESCRIPTION = (
    "Preview a DeviceTaintRule on a cluster (--cluster files, or live through a kubeconfig): the devices it "
    "taints and, with effect NoExecute, the allocated claims holding them and the Pods the device taint "
    "eviction controller would evict (tolerations honoured; a tolerationSeconds delays, it does not prevent)."
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    m = sub.add_parser("taint", help=HELP, description=DESCRIPTION)
    m.add_argument(
        "what", choices=("preview",), metavar="preview", help="what to do: preview (the only action)"
    )
    m.add_argument("rule", metavar="RULE.yaml", help="the DeviceTaintRule (a file with one; - reads stdin)")
    m.add_argument("-o", "--format", "--output", dest="format", choices=("text", "json"), default="text")
    add_cluster_args(
        m,
        "; Pods are taken from the claims' reservedFor",
        files="(ResourceSlices, ResourceClaims with their status, Pods)",
    )
    m.add_argument(
        "--list",
        type=argtypes.whole_number,
        default=20,
        metavar="N",
        help="devices listed by name (default 20; the count is always exact)",
    )
    add_profile_args(m)
    add_input_args(m)
    add_jobs_arg(m, " for loading --cluster files")
    add_read_deadline_arg(m)
    m.set_defaults(run=run)


def _read_rule(path: str) -> dict[str, Any]:
    import yaml

    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise UsageError(f"{path}: not YAML: {str(e).splitlines()[0]}") from None
    rules = [d for d in docs if isinstance(d, dict) and d.get("kind") == "DeviceTaintRule"]
    if len(rules) != 1:
        raise UsageError(f"{path}: expected one DeviceTaintRule, found {len(rules)}")
    return rules[0]


def run(args: argparse.Namespace) -> int:
    from webhook.config.profile import load_profile
    from webhook.model.budget import Deadline
    from webhook.simulate.explainpod import ExplainOptions, load_files, load_objects
    from webhook.simulate.taintpreview import preview, render_text

    rule = _read_rule(args.rule)
    check_one_source(args)
    options = ExplainOptions(**input_options(args), deadline_seconds=args.deadline_seconds, jobs=args.jobs)
    deadline = Deadline.after(args.deadline_seconds)
    profile = load_profile(options.version, dict(options.gates))
    if args.cluster:
        data = load_files(args.cluster, options, deadline)
        out = preview(data, rule, profile, args.list)
    else:
        from webhook.cli.livecluster import live_client
        from webhook.state.live import watched_for
        from webhook.state.live.listing import list_cluster

        with live_client(args, "list on the DRA kinds and pods") as client:
            listing = list_cluster(client, watched_for(options.version), ("", ""), deadline=deadline)
        out = preview(load_objects(listing.objects, options, deadline), rule, profile, args.list, pods=None)
    if args.format == "json":
        from webhook.model.plain import json_dumps

        sys.stdout.write(json_dumps(dict(out.to_json()), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(out, args.list))
    sys.stdout.flush()
    return 0
