"""Reading a cluster once, for the commands that do (`explain pod`, `audit`, `taint preview`): their
--kubeconfig and --cluster arguments (one of them), the kubeconfig as kubectl finds it, and the API
server's refusals and absence as one-line usage errors."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from webhook.cli import argtypes
from webhook.cli.options import RUN_SECONDS
from webhook.model.errors import UsageError

if TYPE_CHECKING:
    from webhook.state.live import KubeClient

KUBECONFIG_HOME = "~/.kube/config"
KUBECTL_GET = (
    "(e.g. `kubectl get resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,devicetaintrules,"
    "nodes,namespaces,pods -A -o yaml`)"
)


def add_cluster_args(
    parser: argparse.ArgumentParser, listed: str, files: str = KUBECTL_GET, also: str = ""
) -> None:
    """--kubeconfig (`listed`: what is read of the live cluster, said after the default) and --cluster
    (`files`: what the files hold; `also`: said after `repeatable`)."""
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="the cluster to read, as kubectl reads it (default: $KUBECONFIG, else ~/.kube/config, else the "
        f"in-cluster service account){listed}",
    )
    parser.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="DIR",
        help=f"read the cluster from files instead {files}: files or directories, repeatable{also}",
    )


def add_read_deadline_arg(parser: argparse.ArgumentParser) -> None:
    """--deadline-seconds of a command whose run is reading the cluster."""
    parser.add_argument(
        "--deadline-seconds",
        type=argtypes.seconds,
        default=RUN_SECONDS,
        metavar="S",
        help=f"deadline for reading the cluster (default {RUN_SECONDS:g})",
    )


def check_one_source(args: argparse.Namespace) -> None:
    """--cluster and --kubeconfig are exclusive."""
    if args.cluster and args.kubeconfig:
        raise UsageError("--cluster reads the cluster from files, --kubeconfig from the API server: pass one")


def kubeconfig(args: argparse.Namespace) -> str | None:
    """--kubeconfig; else None when $KUBECONFIG is set (the client reads it); else ~/.kube/config if it
    exists; else None (the in-cluster configuration, or an error saying what to pass)."""
    if args.kubeconfig:
        return str(args.kubeconfig)
    if os.environ.get("KUBECONFIG"):
        return None
    home = os.path.expanduser(KUBECONFIG_HOME)
    return home if os.path.isfile(home) else None


def connect(args: argparse.Namespace) -> KubeClient:
    """A client of the cluster `args` names (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster)."""
    from webhook.state.live import ConfigError, KubeClient, load_api_client

    path = kubeconfig(args)
    try:
        return KubeClient(load_api_client(path))
    except ConfigError as e:
        if (
            path is None
            and not os.environ.get("KUBECONFIG")
            and not os.environ.get("KUBERNETES_SERVICE_HOST")
        ):
            raise UsageError(
                f"no cluster to read: no $KUBECONFIG, no {KUBECONFIG_HOME} and not running in a cluster; pass "
                "--kubeconfig PATH, or --cluster DIR with a dump of the cluster"
            ) from None
        raise UsageError(str(e)) from None


@contextmanager
def live_client(args: argparse.Namespace, needs: str) -> Iterator[KubeClient]:
    """A client of the cluster `args` names (`connect`), closed at the end; the API server's refusals and
    absence inside as usage errors (`api_errors(needs)`)."""
    client = connect(args)
    try:
        with api_errors(needs):
            yield client
    finally:
        client.close()


@contextmanager
def api_errors(needs: str) -> Iterator[None]:
    """The API server refusing a listing or being unreachable, as one usage error (`needs`: the
    permissions to name on 401/403)."""
    from webhook.state.live import ApiError, Unreachable

    try:
        yield
    except ApiError as e:
        hint = f"; draguard needs {needs}" if e.status in (401, 403) else ""
        raise UsageError(f"the API server refused to list the cluster: {e}{hint}") from None
    except Unreachable as e:
        raise UsageError(f"cannot reach the API server: {e}") from None
