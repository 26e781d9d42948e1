"""Who may connect (issue 14, part 4): the network-policy component admits only the API server and
Prometheus, only on the port the Service sends to; the client-auth component makes the server require a
client certificate on the admission endpoints, mounts the CA bundle where `--client-ca` points, and leaves
probes and scrapes as they are. The probes and the control-plane kubeconfig are run against a real
`draguard serve --client-ca`."""

from __future__ import annotations

import http.client
import json
import ssl
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from cryptography import x509
from deploy_render import DEPLOY, NAMESPACE, container, find, one, webhooks

from tests.server.server_proc import Server, example_review, make_certs

POLICY_OVERLAYS = ("network-policy", "everything")
CLIENT_AUTH_OVERLAYS = ("client-auth", "everything")
PLACEHOLDER = "192.0.2.0/24"  # TEST-NET-1, in the component
EXAMPLE = "198.51.100.0/24"  # TEST-NET-2, the overlay's example patch
CONTROL_PLANE = DEPLOY / "components" / "client-auth" / "control-plane"


def _service_port(objects: list[dict[str, Any]]) -> tuple[str, int]:
    """The name the Service's targetPort gives, and the container port of that name (which is `--port`)."""
    (port,) = one(objects, "Service", "draguard")["spec"]["ports"]
    c = container(objects)
    named = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert f"--port={named[port['targetPort']]}" in c["args"]
    return port["targetPort"], named[port["targetPort"]]


# -- network-policy ---------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", POLICY_OVERLAYS)
def test_network_policy_selects_the_webhook_pods_and_admits_one_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    policy = one(objects, "NetworkPolicy", "draguard")
    deployment = one(objects, "Deployment", "draguard")
    assert policy["metadata"]["namespace"] == deployment["metadata"]["namespace"] == NAMESPACE
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert policy["spec"]["podSelector"] == {"matchLabels": selector}
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    # ingress only: draguard lists and watches the API server, translate writes through it
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    port_name, _ = _service_port(objects)
    rules = policy["spec"]["ingress"]
    assert len(rules) == 2
    for rule in rules:
        assert rule["ports"] == [{"port": port_name, "protocol": "TCP"}]
        assert rule["from"], "an empty `from` admits every source"
    api_server, prometheus = rules
    assert all(set(peer) == {"ipBlock"} for peer in api_server["from"])
    (peer,) = prometheus["from"]
    assert peer["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}
    assert set(peer["namespaceSelector"]["matchLabels"]) == {"kubernetes.io/metadata.name"}


def test_the_api_server_range_is_a_placeholder_the_overlay_shows_how_to_replace(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """The component holds a range no host has (admission stays blocked until it is replaced); the
    overlay's patch, the one deploy/README.md documents, replaces it."""

    def cidrs(overlay: str) -> list[str]:
        rule = one(rendered[overlay], "NetworkPolicy", "draguard")["spec"]["ingress"][0]
        return [peer["ipBlock"]["cidr"] for peer in rule["from"]]

    assert cidrs("everything") == [PLACEHOLDER]
    assert cidrs("network-policy") == [EXAMPLE]
    readme = (DEPLOY / "README.md").read_text()
    assert PLACEHOLDER in readme and "path: /spec/ingress/0/from" in readme


def test_prometheus_scrapes_the_port_the_policy_admits(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["everything"]
    (endpoint,) = one(objects, "ServiceMonitor", "draguard")["spec"]["endpoints"]
    port_name, _ = _service_port(objects)
    assert endpoint["port"] == port_name  # the Service port's name, which targets the same name


# -- client-auth ------------------------------------------------------------------------------------


def _mounted_secret(objects: list[dict[str, Any]], path: str) -> tuple[dict[str, Any], str]:
    """The Secret mounted at `path`'s directory, and the key `path` names in it."""
    pod = one(objects, "Deployment", "draguard")["spec"]["template"]["spec"]
    c = container(objects)
    p = PurePosixPath(path)
    (mount,) = [m for m in c["volumeMounts"] if PurePosixPath(m["mountPath"]) == p.parent]
    assert mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    secret = one(objects, "Secret", volume["secret"]["secretName"])
    assert secret["metadata"]["namespace"] == NAMESPACE
    assert p.name in secret["data"], f"{path}: no key {p.name} in Secret {secret['metadata']['name']}"
    return secret, p.name


def _client_ca(objects: list[dict[str, Any]]) -> str:
    flags = [a for a in container(objects)["args"] if a.startswith("--client-ca")]
    assert len(flags) == 1 and flags[0].startswith("--client-ca="), flags
    return flags[0].removeprefix("--client-ca=")


@pytest.mark.parametrize("overlay", CLIENT_AUTH_OVERLAYS)
def test_client_ca_is_a_file_of_the_mounted_secret(
    rendered: dict[str, list[dict[str, Any]]], client_auth: Path, overlay: str
) -> None:
    objects = rendered[overlay]
    secret, key = _mounted_secret(objects, _client_ca(objects))
    assert secret["metadata"]["name"] == "draguard-client-auth"
    assert set(secret["data"]) == {"ca.crt"}, "the CA bundle only: never a private key"
    assert key == "ca.crt"
    ca = x509.load_pem_x509_certificate((client_auth / "ca.crt").read_bytes())
    # the bundle verifies the certificate the API server presents (copied to the control plane hosts)
    x509.load_pem_x509_certificate((client_auth / "client.crt").read_bytes()).verify_directly_issued_by(ca)


@pytest.mark.parametrize("overlay", ("cert-manager", "self-managed-certs", "network-policy"))
def test_without_client_auth_nothing_asks_for_a_client_certificate(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    assert not any(a.startswith("--client-ca") for a in container(objects)["args"])
    assert not find(objects, "Secret", "draguard-client-auth")


@pytest.mark.parametrize("overlay", CLIENT_AUTH_OVERLAYS)
def test_probes_and_scrapes_stay_as_the_base_has_them(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """The server asks for a certificate but only the admission endpoints require one: the kubelet's
    httpGet probes and the ServiceMonitor need no change."""
    c, base = container(rendered[overlay]), container(rendered["base"])
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe] == base[probe], probe
    for sm in find(rendered[overlay], "ServiceMonitor", "draguard"):
        tls = sm["spec"]["endpoints"][0].get("tlsConfig", {})
        assert "cert" not in tls and "keySecret" not in tls


def _control_plane() -> tuple[dict[str, Any], dict[str, Any]]:
    config = yaml.safe_load((CONTROL_PLANE / "admission-configuration.yaml").read_text())
    kubeconfig = yaml.safe_load((CONTROL_PLANE / "admission-kubeconfig.yaml").read_text())
    return config, kubeconfig


def test_the_admission_configuration_names_the_kubeconfig_for_both_webhook_plugins() -> None:
    config, kubeconfig = _control_plane()
    assert (config["apiVersion"], config["kind"]) == ("apiserver.config.k8s.io/v1", "AdmissionConfiguration")
    plugins = {p["name"]: p["configuration"] for p in config["plugins"]}
    assert set(plugins) == {"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"}
    for c in plugins.values():
        assert c == {
            "apiVersion": "apiserver.config.k8s.io/v1",
            "kind": "WebhookAdmissionConfiguration",
            "kubeConfigFile": c["kubeConfigFile"],
        }
        assert PurePosixPath(c["kubeConfigFile"]).name == "admission-kubeconfig.yaml"
    assert (kubeconfig["apiVersion"], kubeconfig["kind"]) == ("v1", "Config")


def _user_for(kubeconfig: dict[str, Any], service: dict[str, Any]) -> dict[str, Any]:
    """The kubeconfig user the API server picks for a webhook Service: `<name>.<namespace>.svc`, with
    `:<port>` unless the port is 443; `*` matches leading segments."""
    host = f"{service['name']}.{service['namespace']}.svc"
    if service.get("port", 443) != 443:
        host += f":{service['port']}"
    for user in kubeconfig["users"]:
        name = user["name"]
        if name == host or (name.startswith("*.") and host.endswith(name[1:])) or name == "*":
            return user["user"]  # type: ignore[no-any-return]
    raise AssertionError(f"no kubeconfig user for {host}")


def test_every_webhook_gets_the_client_certificate(rendered: dict[str, list[dict[str, Any]]]) -> None:
    _, kubeconfig = _control_plane()
    for _, w in webhooks(rendered["everything"]):
        user = _user_for(kubeconfig, w["clientConfig"]["service"])
        assert PurePosixPath(user["client-certificate"]).name == "client.crt", w["name"]
        assert PurePosixPath(user["client-key"]).name == "client.key", w["name"]


def test_probes_and_the_api_servers_certificate_pass_a_real_server_and_nothing_else_does(
    rendered: dict[str, list[dict[str, Any]]], client_auth: Path, tmp_path: Path
) -> None:
    """`draguard serve --client-ca` with the component's ca.crt: the rendered probes' paths answer a client
    without a certificate (the kubelet), a review presenting the certificate the control-plane kubeconfig
    names is answered; a review without a certificate gets 401, one with another CA's fails the handshake."""
    serving = tmp_path / "serving"
    make_certs(serving)
    _, kubeconfig = _control_plane()
    user = _user_for(kubeconfig, {"name": "draguard", "namespace": NAMESPACE, "port": 443})
    apiserver = tuple(client_auth / PurePosixPath(user[k]).name for k in ("client-certificate", "client-key"))
    server = Server(
        tmp_path,
        "--state", str(DEPLOY.parent / "examples" / "simulate"),
        "--certs", str(serving),
        "--client-ca", str(client_auth / "ca.crt"),
        "--workers", "1",
        certs=serving,
        client=apiserver,  # type: ignore[arg-type]
    )  # fmt: skip
    try:
        kubelet = server.connection(server.context(anonymous=True))
        c = container(rendered["client-auth"])
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            status, body = server.request("GET", c[probe]["httpGet"]["path"], conn=kubelet)
            assert status == 200, f"{probe}: {status} {body!r}"
        ar = example_review("claim-create.json")
        status, answer = server.review(ar)
        assert status == 200 and answer["response"]["allowed"] is True
        status, body = server.request("POST", "/validate", json.dumps(ar).encode(), conn=kubelet)
        assert status == 401 and json.loads(body)["reason"] == "Unauthorized"
        other = tmp_path / "other"
        make_certs(other, "--client", "intruder")
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            server.review(
                ar, conn=server.connection(server.context((other / "client.crt", other / "client.key")))
            )
    finally:
        assert server.stop() == 0, server.log()
