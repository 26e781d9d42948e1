"""What several `draguard` commands share: exit codes, the argument groups (target version, budgets and
deadline, input bounds, cluster, placement) and the values derived from them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from webhook.cli import argtypes
from webhook.config.profile import DEFAULT_VERSION, SUPPORTED_VERSIONS
from webhook.io.files import MAX_FILE_BYTES

if TYPE_CHECKING:  # imported when a command runs, not when the parser is built
    from webhook.config.policy import Policy
    from webhook.convert.served import RuntimeConfig
    from webhook.engine import Budget
    from webhook.model.budget import Deadline

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_NOT_CHECKED = 0, 1, 2, 3
RUN_SECONDS = 60.0  # default deadline of `simulate` and `validate --feasibility` (plain validate: none)
# (plain validate bounds only its allocation phase, when it runs: webhook.offline.run.AUTO_SECONDS)


def add_profile_args(p: argparse.ArgumentParser, runtime_config: bool = True) -> None:
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


def add_budget_args(p: argparse.ArgumentParser, validate: bool = False, deadline_help: str = "") -> None:
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
        help_ = deadline_help or (
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


def add_input_args(p: argparse.ArgumentParser) -> None:
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


def add_jobs_arg(p: argparse.ArgumentParser, purpose: str = "") -> None:
    """`-j`/`--jobs`: worker processes (`purpose`, e.g. " for loading", says what they do)."""
    p.add_argument(
        "-j",
        "-n",
        "--jobs",
        dest="jobs",
        type=argtypes.workers,
        default=None,
        help=f"parallel workers{purpose}, at least 1 (default: all usable cores; never more than the input's "
        "files)",
    )


def add_policy_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--policy", metavar="FILE", help=f"policy file or DraguardPolicy objects: {what}")


def add_driver_schemas_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--driver-schemas",
        metavar="DIR",
        help="JSON Schemas of drivers' opaque config parameters (one per *.json/*.yaml file, with an "
        "`x-draguard: {drivers, apiVersion, kind}` section), besides the bundled ones (schemas/drivers/); "
        "a file for the same driver, apiVersion and kind replaces the bundled schema",
    )


def policy_of(args: argparse.Namespace) -> Policy | None:
    """The `--policy` file's policy (either format; a tenant's CEL selector compiled for the target version
    and gates) with the `--driver-schemas` directory's schemas, None without either; a bad file is a usage
    error."""
    schemas_dir = getattr(args, "driver_schemas", None)
    if not args.policy and not schemas_dir:
        return None
    from webhook.config.driverschemas import load_dir
    from webhook.config.policy import PolicySpec, combine
    from webhook.config.policyfile import load_policy_specs
    from webhook.config.profile import load_profile, parse_feature_gates
    from webhook.model.catalogue import RULES

    profile = load_profile(args.k8s_version, parse_feature_gates(args.feature_gates), args.feature_gates)
    specs = load_policy_specs(args.policy, RULES, profile) if args.policy else []
    if schemas_dir:
        specs.append(PolicySpec(driver_schemas=load_dir(schemas_dir)))
    return combine(specs)


def input_options(args: argparse.Namespace) -> dict[str, Any]:
    """What every offline run is given (`InputOptions`' fields) from the shared flags: the target version
    and feature gates (a bad one is a usage error now, before any work), `--runtime-config`,
    `--max-input-bytes` and `--exclude`."""
    from webhook.config.profile import load_profile, parse_feature_gates

    gates = parse_feature_gates(args.feature_gates)
    load_profile(args.k8s_version, gates, args.feature_gates)
    return {
        "version": args.k8s_version,
        "gates": tuple(sorted(gates.items())),
        "runtime_config": runtime_config(args),
        "max_bytes": args.max_input_bytes,
        "exclude": tuple(args.exclude),
    }


def add_cluster_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="DIR",
        help="the cluster's objects (files or directories, e.g. `kubectl get resourceslices,deviceclasses,"
        "resourceclaims,nodes,namespaces -A -o yaml`): the input is checked (and simulated) against them as "
        "the whole cluster; their own findings are not shown, except errors (repeatable)",
    )


def add_placement_arg(p: argparse.ArgumentParser, validate: bool = False) -> None:
    p.add_argument(
        "--placement",
        choices=("spread", "pack"),
        default="spread",
        help=("with --feasibility: " if validate else "")
        + "where a Pod goes among the nodes it fits on: spread (default: the default scheduler's "
        "LeastAllocated, BalancedAllocation and DRA scores, ties by node name) or pack (the first node "
        "by name)",
    )


def runtime_config(args: argparse.Namespace) -> RuntimeConfig:
    """`--runtime-config` (all of them), checked as kube-apiserver of `--k8s-version` checks it."""
    from webhook.convert.served import parse_runtime_config

    return parse_runtime_config(args.runtime_config, args.k8s_version)


def allocation_budget(args: argparse.Namespace) -> Budget:
    """The allocator's budget per Pod: `--budget-steps`, `--budget-seconds`."""
    from webhook.engine import Budget

    return Budget(steps=args.budget_steps, seconds=args.budget_seconds)


def run_deadline(args: argparse.Namespace) -> Deadline | None:
    """The run's deadline: `--deadline-seconds` after the process (or the in-process call) started;
    None for plain `validate` without the flag."""
    from webhook.model.budget import Deadline

    seconds = deadline_seconds(args)
    return None if seconds is None else Deadline(args.started + seconds)


def deadline_seconds(args: argparse.Namespace) -> float | None:
    """`--deadline-seconds`, or its default for the command (None: no deadline)."""
    seconds: float | None = args.deadline_seconds
    if seconds is None and getattr(args, "feasibility", True):
        seconds = RUN_SECONDS
    return seconds
