"""Renders deploy/ with the real `kubectl kustomize` and finds objects in the output.

Every overlay is rendered from the checkout, except where a test needs files the repository does not
hold (the self-managed certificates): then deploy/ is copied to a temporary directory first, so no test
writes into the repository tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OVERLAYS = (
    "cert-manager",
    "self-managed-certs",
    "translate",
    "monitoring",
    "network-policy",
    "client-auth",
    "audit",
)
NAMESPACE = "draguard-system"
SERVICE_ACCOUNT = "draguard"
SERVICE_ACCOUNT_USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
WEBHOOK_CONFIGS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
# the PrometheusRule's alerts (components/monitoring)
ALERTS = {
    "DraguardWebhookDown",
    "DraguardReplicasDown",
    "DraguardNotReady",
    "DraguardAdmissionLatencyHigh",
    "DraguardStateStale",
    "DraguardWatchRelistLoop",
    "DraguardWatchErrors",
    "DraguardCertificateExpiresSoon",
    "DraguardCertificateReloadFailing",
    "DraguardDenialsSpiking",
    "DraguardInternalErrors",
    "DraguardTranslationErrors",
}

KUBECTL = shutil.which("kubectl")
NO_KUBECTL = (
    "kubectl (with kustomize v5) is not installed: deploy/ is not rendered or checked; "
    "install kubectl to run tests/deploy"
)


def kustomize(directory: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize DIR` renders (an error names the directory and kustomize's words)."""
    assert KUBECTL is not None
    p = subprocess.run(
        [KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    if p.returncode != 0:
        raise AssertionError(f"kubectl kustomize {directory} failed:\n{p.stderr}")
    return [d for d in yaml.safe_load_all(p.stdout) if d is not None]


def _draguard_certs(certs: Path, *args: str) -> str:
    """`draguard certs --dir CERTS ARGS...` with the real CLI; what it printed."""
    p = subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "certs", "--dir", str(certs), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def make_certs(deploy: Path) -> str:
    """The documented step of the self-managed-certs component, with the real CLI: `draguard certs`
    into the component's certs/ directory of a copy of deploy/. Returns the caBundle it printed."""
    certs = deploy / "components" / "self-managed-certs" / "certs"
    return _draguard_certs(certs, "--service", "draguard", "--namespace", NAMESPACE)


def make_client_auth_certs(deploy: Path) -> Path:
    """The documented step of the client-auth component (deploy/components/client-auth), with the real
    CLI: a CA and the API server's client certificate. Returns the certs/ directory."""
    certs = deploy / "components" / "client-auth" / "certs"
    _draguard_certs(certs, "--client", "kube-apiserver")
    return certs


def copy_deploy(tmp: Path) -> Path:
    """deploy/ copied to `tmp` (without TLS material a developer may have generated in the checkout)."""
    target = tmp / "deploy"
    shutil.copytree(DEPLOY, target, ignore=shutil.ignore_patterns("*.crt", "*.key"))
    return target


def find(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [
        o for o in objects if o.get("kind") == kind and (name is None or o["metadata"].get("name") == name)
    ]


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = find(objects, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, rendered {len(found)}"
    return found[0]


def webhooks(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(configuration kind, webhook) for every webhook of every rendered configuration."""
    return [(o["kind"], w) for o in objects if o["kind"] in WEBHOOK_CONFIGS for w in o.get("webhooks", [])]


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = one(objects, "Deployment", "draguard")
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    return c  # type: ignore[no-any-return]
