"""Rendered overlays, shared by the deploy tests (each rendered once per session and worker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deploy_render import (
    DEPLOY,
    KUBECTL,
    NO_KUBECTL,
    copy_deploy,
    kustomize,
    make_certs,
    make_client_auth_certs,
)


@pytest.fixture(scope="session")
def self_managed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of deploy/ after the documented `draguard certs` step, and the caBundle it printed."""
    if KUBECTL is None:
        pytest.skip(NO_KUBECTL)
    deploy = copy_deploy(tmp_path_factory.mktemp("self-managed"))
    return deploy, make_certs(deploy)


@pytest.fixture(scope="session")
def client_auth(self_managed: tuple[Path, str]) -> Path:
    """The client-auth component's certs/ in that copy, after its documented `draguard certs` step."""
    copy, _ = self_managed
    return make_client_auth_certs(copy)


@pytest.fixture(scope="session")
def rendered(self_managed: tuple[Path, str], client_auth: Path) -> dict[str, list[dict[str, Any]]]:
    """Every overlay (and the base) rendered by kubectl kustomize; `everything` is a user's composition
    of the base with every optional component and self-managed certificates, listed in the documented
    order (client-auth after monitoring, every optional one before the certificate component)."""
    copy, _ = self_managed
    everything = copy / "overlays" / "everything"
    everything.mkdir()
    (everything / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources: [../../base]\n"
        "components: [../../components/translate, ../../components/monitoring, "
        "../../components/network-policy, ../../components/client-auth, "
        "../../components/self-managed-certs]\n"
    )
    return {
        "base": kustomize(DEPLOY / "base"),
        "cert-manager": kustomize(DEPLOY / "overlays" / "cert-manager"),
        "self-managed-certs": kustomize(copy / "overlays" / "self-managed-certs"),
        "translate": kustomize(DEPLOY / "overlays" / "translate"),
        "monitoring": kustomize(DEPLOY / "overlays" / "monitoring"),
        "network-policy": kustomize(DEPLOY / "overlays" / "network-policy"),
        "client-auth": kustomize(copy / "overlays" / "client-auth"),
        "audit": kustomize(DEPLOY / "overlays" / "audit"),
        "everything": kustomize(everything),
    }
