"""`draguard audit`: every DRA object of a cluster (live through a kubeconfig, or `--cluster` files) and
every Pod pending on DRA grounds, checked against the rules and the policies in force (`--policy` and,
live, the cluster's DraguardPolicies), ratcheted as an UPDATE that changes nothing would be. The work is
webhook/audit/'s; this shell reads the cluster and prints text, JSON or PolicyReports. Exit codes: 0 no
failure, 1 failures, 2 usage, 3 no failure but the audit is incomplete (the deadline, --max-pending-pods)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from webhook.cli import argtypes
from webhook.cli.livecluster import add_cluster_args, check_one_source
from webhook.cli.options import (
    RUN_SECONDS,
    add_budget_args,
    add_driver_schemas_arg,
    add_input_args,
    add_jobs_arg,
    add_policy_arg,
    add_profile_args,
    allocation_budget,
    input_options,
    run_deadline,
)

if TYPE_CHECKING:
    from webhook.audit.results import AuditReport
    from webhook.audit.run import AuditOptions
    from webhook.config.policy import PolicySpec
    from webhook.model.budget import Deadline

HELP = "audit a cluster's DRA objects and Pods pending on DRA against the rules and policies in force"
DESCRIPTION = (
    "Check every ResourceClaim, ResourceClaimTemplate, DeviceClass, ResourceSlice and DeviceTaintRule of a "
    "cluster (live through a kubeconfig, or --cluster files), and explain every Pod pending on DRA grounds, "
    "against the rules and the policies in force. Ratcheting: what an UPDATE that changes nothing would let "
    "stand is a warning (existing violation), not a failure. Output: text, json, or wgpolicyk8s.io/v1alpha2 "
    "PolicyReports (one per namespace) and a ClusterPolicyReport, as a YAML stream for kubectl apply."
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from webhook.audit.policyreport import MAX_RESULTS
    from webhook.audit.results import MAX_PENDING_PODS  # not the run: building the parser loads no simulation

    m = sub.add_parser("audit", help=HELP, description=DESCRIPTION)
    m.add_argument(
        "-o", "--output", "--format", dest="format", choices=("text", "json", "policyreport"), default="text"
    )
    add_cluster_args(m, ": its DRA objects, Nodes, Namespaces, Pods and DraguardPolicies are listed once")
    add_policy_arg(m, "the policy in force besides the cluster's DraguardPolicies (live)")
    add_driver_schemas_arg(m)
    m.add_argument(
        "--max-pending-pods",
        type=argtypes.whole_number,
        default=MAX_PENDING_PODS,
        metavar="N",
        help=f"Pods pending on DRA grounds to explain (default {MAX_PENDING_PODS}); the rest are skipped and "
        "the audit is incomplete",
    )
    m.add_argument(
        "--max-results",
        type=argtypes.whole_number,
        default=MAX_RESULTS,
        metavar="N",
        help=f"results listed per PolicyReport (default {MAX_RESULTS}; failures first): the summary counts "
        "every result, and an annotation says how many were cut",
    )
    add_profile_args(m)
    add_input_args(m)
    add_jobs_arg(m, " for loading --cluster files")
    add_budget_args(
        m,
        deadline_help="deadline of the whole audit (reading, the rules, the Pods): what is left when it passes "
        f"is skipped and the audit incomplete (exit 3 without failures); default {RUN_SECONDS:g}",
    )
    m.set_defaults(run=run)
    from webhook.cli import auditrbac

    what = m.add_subparsers(
        dest="audit_what",
        metavar="rbac",
        help="rbac: check the cluster's RBAC instead (`draguard audit rbac`)",
    )
    auditrbac.add_parser(what)


def _options(args: argparse.Namespace, specs: list[PolicySpec]) -> AuditOptions:
    from webhook.audit.run import AuditOptions
    from webhook.config.policy import combine

    owners: dict[str, str] = {}
    for s in sorted(specs, key=lambda s: s.name):
        for rule in s.rules:
            if s.name:
                owners.setdefault(rule, s.name)
    return AuditOptions(
        **input_options(args),
        policy=combine(specs) if specs else None,
        budget=allocation_budget(args),
        deadline_seconds=args.deadline_seconds,
        search_runs=0,
        jobs=args.jobs,
        max_pending_pods=args.max_pending_pods,
        rule_policies=owners,
    )


def _file_specs(args: argparse.Namespace) -> list[PolicySpec]:
    """`--policy`'s policies, and `--driver-schemas`' schemas as one more (nameless) policy."""
    if not args.policy and not args.driver_schemas:
        return []
    from webhook.config.driverschemas import load_dir
    from webhook.config.policy import PolicySpec
    from webhook.config.policyfile import load_policy_specs
    from webhook.config.profile import load_profile, parse_feature_gates
    from webhook.model.catalogue import RULES

    profile = load_profile(args.k8s_version, parse_feature_gates(args.feature_gates), args.feature_gates)
    specs = load_policy_specs(args.policy, RULES, profile) if args.policy else []
    if args.driver_schemas:
        specs.append(PolicySpec(driver_schemas=load_dir(args.driver_schemas)))
    return specs


def run(args: argparse.Namespace) -> int:
    check_one_source(args)
    deadline = run_deadline(args)
    assert deadline is not None  # audit always has one
    specs = _file_specs(args)
    if args.cluster:
        from webhook.audit.run import audit
        from webhook.simulate.explainpod import load_files

        options = _options(args, specs)
        data = load_files(args.cluster, options, deadline)
        report = audit(data, options, deadline)
    else:
        report = _live(args, specs, deadline)
    out = sys.stdout
    if args.format == "json":
        from webhook.model.plain import json_dumps

        out.write(json_dumps(report.to_dict(), indent=2) + "\n")
    elif args.format == "policyreport":
        from webhook.audit.policyreport import policy_reports
        from webhook.io.yamlout import dump_documents

        dump_documents(policy_reports(report, time.time(), args.max_results), out)
    else:
        from webhook.audit.text import render_text

        out.write(render_text(report))
    out.flush()
    return report.exit_code


def _cluster_policies(
    objects: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[list[PolicySpec], list[str]]:
    """The cluster's DraguardPolicies in force, and `name: why` of those that are not (invalid)."""
    from webhook.config.policyobject import check_policy_object, policy_name
    from webhook.config.profile import load_profile, parse_feature_gates
    from webhook.model.catalogue import RULES

    profile = load_profile(args.k8s_version, parse_feature_gates(args.feature_gates), args.feature_gates)
    specs, invalid = [], []
    for obj in objects:
        got = check_policy_object(obj, RULES, profile)
        if isinstance(got, list):
            first = got[0]
            invalid.append(f"{policy_name(obj)}: {first.field + ': ' if first.field else ''}{first.message}")
        else:
            specs.append(got)
    return specs, invalid


def _live(args: argparse.Namespace, specs: list[PolicySpec], deadline: Deadline) -> AuditReport:
    from webhook.audit.results import AuditReport
    from webhook.audit.run import audit
    from webhook.cli.livecluster import live_client
    from webhook.model.budget import OutOfBudget
    from webhook.simulate.explainpod import load_objects
    from webhook.simulate.run import DEADLINE_PASSED
    from webhook.state.live import watched_for
    from webhook.state.live.kinds import POLICIES
    from webhook.state.live.listing import list_for_audit

    try:
        with live_client(
            args, "list on the DRA kinds, nodes, namespaces, pods and draguardpolicies"
        ) as client:
            listing, policies = list_for_audit(
                client, watched_for(args.k8s_version), POLICIES, deadline=deadline
            )
    except OutOfBudget:
        return AuditReport(
            incomplete=f"{DEADLINE_PASSED} while the cluster was listed (raise --deadline-seconds)"
        )
    live_specs, invalid = _cluster_policies(policies, args)
    options = _options(args, specs + live_specs)
    data = load_objects(listing.objects, options, deadline)
    report = audit(data, options, deadline, live=True, pods=listing.pods)
    report.invalid_policies = invalid
    return report
