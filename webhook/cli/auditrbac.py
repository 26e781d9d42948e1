"""`draguard audit rbac`: a cluster's Roles, ClusterRoles and bindings (live through a kubeconfig, or
`--cluster` files) against the DRA hardening guidance. The work is webhook/audit/rbac/'s; this shell reads
the objects and prints text or JSON. Exit codes: 0 nothing above info, 1 a warning or an error, 2 usage."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from webhook.cli.livecluster import add_cluster_args, add_read_deadline_arg, check_one_source
from webhook.cli.options import add_input_args, add_profile_args
from webhook.model.errors import UsageError

HELP = "check the cluster's RBAC against the DRA hardening guidance"
DESCRIPTION = (
    "Check a cluster's Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (live through a kubeconfig, "
    "or --cluster files) against the DRA hardening guidance: who may write ResourceSlices for any node and "
    "DeviceClasses, who may change ResourceClaim status beyond what a node-local driver needs "
    "(resourceclaims/binding, resourceclaims/driver with arbitrary-node: verbs or for every driver, or "
    "resourceclaims/status itself without DRAResourceClaimGranularStatusAuthorization), who may write "
    "DeviceTaintRules, and who may set or use the resource.kubernetes.io/admin-access namespace label. Each "
    "finding names the subject, the binding, the role and the rule, with the least-privilege fix."
)
LIVE_KINDS = (
    ("ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", False),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    ("Role", "rbac.authorization.k8s.io/v1", "roles", True),
    ("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings", True),
    ("Namespace", "v1", "namespaces", False),
    ("ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1", "validatingadmissionpolicies", False),
    (
        "ValidatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicybindings",
        False,
    ),
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    m = sub.add_parser("rbac", help=HELP, description=DESCRIPTION)
    m.add_argument("-o", "--output", "--format", dest="format", choices=("text", "json"), default="text")
    add_cluster_args(
        m,
        ": its roles, bindings, Namespaces and ValidatingAdmissionPolicies are listed once",
        "(e.g. `kubectl get clusterroles,clusterrolebindings,roles,rolebindings,namespaces,"
        "validatingadmissionpolicies,validatingadmissionpolicybindings -A -o yaml`)",
    )
    add_profile_args(m, runtime_config=False)
    add_input_args(m)
    add_read_deadline_arg(m)
    m.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from webhook.audit.rbac.authz import load
    from webhook.audit.rbac.checks import check, granular_from
    from webhook.config.profile import load_profile, parse_feature_gates

    check_one_source(args)
    profile = load_profile(args.k8s_version, parse_feature_gates(args.feature_gates), args.feature_gates)
    objects = _files(args) if args.cluster else _live(args)
    report = check(load(objects), granular_from(profile.values, profile.version))
    if args.format == "json":
        from webhook.model.plain import json_dumps

        sys.stdout.write(json_dumps(report.to_dict(), indent=2) + "\n")
    else:
        from webhook.audit.rbac.text import render_text

        sys.stdout.write(render_text(report))
    sys.stdout.flush()
    return report.exit_code


def _files(args: argparse.Namespace) -> list[dict[str, Any]]:
    from webhook.io.documents import Document, DocumentError, discover_all, parse, read_text

    out: list[dict[str, Any]] = []
    for path in discover_all(args.cluster, args.exclude).files:
        for doc in parse(read_text(path, args.max_input_bytes), path):
            if isinstance(doc, DocumentError):
                raise UsageError(f"{doc.source}:{doc.line}: {doc.message}")
            if isinstance(doc, Document) and doc.obj:
                out.append(doc.obj)
    return out


def _live(args: argparse.Namespace) -> list[dict[str, Any]]:
    from webhook.cli.livecluster import live_client
    from webhook.model.budget import Deadline, OutOfBudget
    from webhook.state.live.client import ApiError
    from webhook.state.live.kinds import WatchedKind
    from webhook.state.live.listing import list_kind

    deadline = Deadline.after(args.deadline_seconds)
    out: list[dict[str, Any]] = []
    with live_client(
        args, "list on clusterroles, clusterrolebindings, roles, rolebindings and namespaces"
    ) as client:
        for kind, api, plural, namespaced in LIVE_KINDS:
            try:
                out += list_kind(
                    client, WatchedKind(kind, api, plural, namespaced), _whole, deadline=deadline
                )
            except ApiError as e:
                if kind.startswith("ValidatingAdmissionPolicy") and e.status in (403, 404):
                    continue  # optional: without them, node-binding policies are not seen
                raise
            except OutOfBudget:
                raise UsageError(
                    f"the deadline passed while {plural} were listed (raise --deadline-seconds)"
                ) from None
    return out


def _whole(obj: dict[str, Any]) -> dict[str, Any]:
    return obj
