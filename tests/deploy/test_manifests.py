"""deploy/: every overlay rendered by `kubectl kustomize`, validated strictly against the v1.37 schemas,
and held to the invariants issue 9 names (HA, probes, security context, least-privilege RBAC, the
webhook configurations' matching, failure policies, self-exclusion and CA bundles)."""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from admission_cel import compile_condition, evaluate
from cryptography import x509
from deploy_render import (
    DEPLOY,
    NAMESPACE,
    OVERLAYS,
    ROOT,
    SERVICE_ACCOUNT,
    SERVICE_ACCOUNT_USER,
    container,
    find,
    one,
    webhooks,
)

from webhook.admission.review import DRA_KINDS
from webhook.cli.main import build_parser
from webhook.state.live.kinds import POLICIES

K8S_VERSION = "1.37"
ALL = ("base", *OVERLAYS, "everything")
INSTALLABLE = (*OVERLAYS, "everything")  # every overlay carries a certificate component
# Kinds without a built-in schema, checked by shape in test_monitoring.py (their CRDs are not shipped here).
CRD_KINDS = {
    ("cert-manager.io/v1", "Issuer"),
    ("cert-manager.io/v1", "Certificate"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}
PLURALS = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
}
# What the live state lists and watches (docs/webhook.md, live state): exactly what the ClusterRole may read.
STATE_READS = {("resource.k8s.io", r) for r in PLURALS.values()} | {("", "nodes"), ("", "namespaces")}
# ... and the DraguardPolicies it watches, whose status (only) it writes, as a merge patch
POLICY_ACCESS = {
    (POLICIES.api_version.split("/")[0], POLICIES.plural, v) for v in ("get", "list", "watch")
} | {(POLICIES.api_version.split("/")[0], f"{POLICIES.plural}/status", "patch")}
VALIDATING, MUTATING = "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"


def test_every_overlay_directory_is_rendered_here() -> None:
    assert sorted(p.name for p in (DEPLOY / "overlays").iterdir()) == sorted(OVERLAYS)
    components = sorted(p.name for p in (DEPLOY / "components").iterdir())
    assert components == [
        "audit",
        "cert-manager",
        "client-auth",
        "monitoring",
        "network-policy",
        "self-managed-certs",
        "translate",
    ]


@pytest.mark.parametrize("overlay", ALL)
def test_every_object_is_valid_against_the_v1_37_schemas_strictly(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    assert objects
    errors = []
    for o in objects:
        if (o["apiVersion"], o["kind"]) in CRD_KINDS:
            continue
        try:
            kubernetes_validate.validate(o, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{o['kind']}/{o['metadata']['name']}: {path}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError:
            errors.append(f"{o['apiVersion']} {o['kind']}: no v{K8S_VERSION} schema (and not a known CRD)")
    assert not errors, "\n".join(errors)
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]
    assert len(names) == len(set(names)), "an object is rendered twice"


def test_strict_validation_rejects_an_unknown_field(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """The check above is strict: a misspelt probe field is an error, as `kubectl apply` reports it."""
    deployment = json.loads(json.dumps(one(rendered["cert-manager"], "Deployment", "draguard")))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["failureTreshold"] = 3
    with pytest.raises(kubernetes_validate.ValidationError, match="failureTreshold"):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


# -- the Deployment ---------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", ALL)
def test_deployment_is_highly_available(rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    objects = rendered[overlay]
    deployment = one(objects, "Deployment", "draguard")
    spec, pod = deployment["spec"], deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert spec["replicas"] >= 2
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    rolling = spec["strategy"]["rollingUpdate"]
    assert spec["strategy"]["type"] == "RollingUpdate" and rolling["maxUnavailable"] == 0
    assert rolling["maxSurge"] >= 1
    spread = {c["topologyKey"]: c for c in pod["spec"]["topologySpreadConstraints"]}
    assert set(spread) == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    for c in spread.values():
        assert c["maxSkew"] == 1
        assert c["labelSelector"]["matchLabels"].items() <= labels.items()
    assert spread["kubernetes.io/hostname"]["whenUnsatisfiable"] == "DoNotSchedule"
    pdb = one(objects, "PodDisruptionBudget", "draguard")
    assert pdb["metadata"]["namespace"] == deployment["metadata"]["namespace"] == NAMESPACE
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    # a drain can take a replica, never all of them
    if "maxUnavailable" in pdb["spec"]:
        assert 1 <= pdb["spec"]["maxUnavailable"] < spec["replicas"]
    else:
        assert 1 <= pdb["spec"]["minAvailable"] < spec["replicas"]
    assert pod["spec"]["priorityClassName"] == "system-cluster-critical"


@pytest.mark.parametrize("overlay", ALL)
def test_probes_are_https_on_the_serving_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    c = container(rendered[overlay])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"https": 8443}
    paths = {}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["timeoutSeconds"] >= 3, f"{probe}: a GC pause or a busy worker is not a failure"
        get = c[probe]["httpGet"]
        assert get["scheme"] == "HTTPS" and ports.get(get["port"], get["port"]) == 8443, probe
        paths[probe] = get["path"]
    assert paths == {"startupProbe": "/healthz", "readinessProbe": "/readyz", "livenessProbe": "/healthz"}
    # the startup probe covers the initial list (minutes on a large cluster) before liveness counts
    startup = c["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 300


@pytest.mark.parametrize("overlay", ALL)
def test_pod_runs_restricted(rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    objects = rendered[overlay]
    pod = one(objects, "Deployment", "draguard")["spec"]["template"]["spec"]
    sc = pod["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert isinstance(sc["runAsUser"], int) and sc["runAsUser"] > 0
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    c = container(objects)
    csc = c["securityContext"]
    assert csc["allowPrivilegeEscalation"] is False
    assert csc["readOnlyRootFilesystem"] is True
    assert csc["capabilities"] == {"drop": ["ALL"]}
    assert csc.get("privileged", False) is False
    assert not any(k in pod for k in ("hostNetwork", "hostPID", "hostIPC"))
    # the namespace enforces the restricted Pod Security Standard this Pod meets
    ns = one(objects, "Namespace", NAMESPACE)
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    # read-only root: writable emptyDirs where the server writes (prometheus multiprocess files in
    # TMPDIR, gunicorn's heartbeat files in /dev/shm), the certificates read-only from the Secret
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    assert volumes[mounts["/dev/shm"]["name"]]["emptyDir"]["medium"] == "Memory"
    assert mounts["/certs"]["readOnly"] is True
    assert volumes[mounts["/certs"]["name"]]["secret"]["secretName"] == "draguard-tls"
    assert pod["serviceAccountName"] == SERVICE_ACCOUNT


@pytest.mark.parametrize("overlay", ALL)
def test_resources_are_requested_and_memory_bounded(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    res = container(rendered[overlay])["resources"]
    assert set(res["requests"]) == {"cpu", "memory"}
    assert _mebibytes(res["limits"]["memory"]) >= _mebibytes(res["requests"]["memory"]) >= 480
    assert "cpu" not in res["limits"], "CFS throttling shows up as admission latency"


def _mebibytes(q: str) -> float:
    m = re.fullmatch(r"(\d+)(Mi|Gi)", q)
    assert m, q
    return int(m[1]) * (1024 if m[2] == "Gi" else 1)


def _serve_args(c: dict[str, Any]) -> argparse.Namespace:
    """The container's args as draguard's own parser reads them (the image's entrypoint is `draguard`):
    a renamed or removed flag fails here, not in the cluster."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            return build_parser().parse_args(c["args"])
    except SystemExit:
        raise AssertionError(
            f"draguard rejects the Deployment's args {c['args']}: {stderr.getvalue()}"
        ) from None


@pytest.mark.parametrize("overlay", ALL)
def test_container_args_are_serves_real_flags(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    c = container(objects)
    args = _serve_args(c)
    assert args.command == "serve"
    assert args.state == "cluster"
    assert args.address == "0.0.0.0"
    assert args.port == c["ports"][0]["containerPort"] == 8443
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert args.certs == mounts["certs"]
    assert args.k8s_version == K8S_VERSION
    assert args.workers >= 1, "gunicorn's default is one worker per core of the node"
    assert args.failure_mode == "open"
    translate = overlay in ("translate", "everything")
    assert any(a.startswith("--extended-resources") for a in c["args"]) == translate
    if translate:
        assert args.extended_resources == "translate"
    audit = overlay == "audit"
    assert any(a.startswith("--audit-interval") for a in c["args"]) == audit
    assert (args.audit_interval > 0) == audit


@pytest.mark.parametrize("overlay", ALL)
def test_service_routes_443_to_the_serving_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    svc = one(objects, "Service", "draguard")
    labels = one(objects, "Deployment", "draguard")["spec"]["template"]["metadata"]["labels"]
    assert svc["metadata"]["namespace"] == NAMESPACE
    assert svc["spec"]["selector"].items() <= labels.items()
    (port,) = svc["spec"]["ports"]
    assert port["port"] == 443 and port["targetPort"] == "https"
    for _, w in webhooks(objects):
        ref = w["clientConfig"]["service"]
        assert (ref["name"], ref["namespace"], ref["port"]) == ("draguard", NAMESPACE, 443), w["name"]


# -- RBAC ---------------------------------------------------------------------------------------------


def _grants(role: dict[str, Any]) -> set[tuple[str, str, str]]:
    out = set()
    for rule in role["rules"]:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, "no resourceNames, no nonResourceURLs"
        for g in rule["apiGroups"]:
            for r in rule["resources"]:
                for v in rule["verbs"]:
                    assert "*" not in (g, r, v)
                    out.add((g, r, v))
    return out


@pytest.mark.parametrize("overlay", ALL)
def test_rbac_is_exactly_what_the_state_reads(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    reads = {(g, r, v) for g, r in STATE_READS for v in ("get", "list", "watch")}
    assert _grants(one(objects, "ClusterRole", "draguard")) == reads | POLICY_ACCESS
    translate = overlay in ("translate", "everything")
    audit = overlay == "audit"
    roles = {o["metadata"]["name"] for o in find(objects, "ClusterRole")}
    assert roles == {"draguard"} | ({"draguard-translate"} if translate else set()) | (
        {"draguard-audit"} if audit else set()
    )
    if audit:
        reports = {
            ("wgpolicyk8s.io", r, v)
            for r in ("policyreports", "clusterpolicyreports")
            for v in ("get", "list", "create", "patch", "delete")
        }
        pods = {("", "pods", v) for v in ("get", "list", "watch")}
        assert _grants(one(objects, "ClusterRole", "draguard-audit")) == reports | pods
    if translate:
        writes = {
            ("resource.k8s.io", "resourceclaimtemplates", "create"),
            ("resource.k8s.io", "resourceclaimtemplates", "patch"),
        }
        assert _grants(one(objects, "ClusterRole", "draguard-translate")) == writes
    assert not find(objects, "Role") and not find(objects, "RoleBinding")
    for binding in find(objects, "ClusterRoleBinding"):
        assert binding["roleRef"]["name"] in roles
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
        ]
    assert one(objects, "ServiceAccount", SERVICE_ACCOUNT)["metadata"]["namespace"] == NAMESPACE


# -- the webhook configurations -------------------------------------------------------------------------


def _covered(objects: list[dict[str, Any]], config: str) -> set[tuple[str, str, str]]:
    """(api group, resource, operation) the configuration's webhooks are called for."""
    out = set()
    for kind, w in webhooks(objects):
        if kind != config:
            continue
        for rule in w["rules"]:
            assert rule["apiVersions"] == ["v1"], (
                f"{w['name']}: matchPolicy Equivalent converts other versions"
            )
            for g in rule["apiGroups"]:
                for r in rule["resources"]:
                    for op in rule["operations"]:
                        out.add((g, r, op))
    return out


@pytest.mark.parametrize("overlay", ALL)
def test_webhooks_are_called_for_every_kind_draguard_checks(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    assert set(DRA_KINDS) == set(PLURALS), "a DRA kind the admission core checks has no webhook rule here"
    dra = {("resource.k8s.io", PLURALS[k], op) for k in DRA_KINDS for op in ("CREATE", "UPDATE")}
    status = {("resource.k8s.io", "resourceclaims/status", "UPDATE")}
    pods = {("", "pods", "CREATE")}
    assert _covered(objects, VALIDATING) == dra | status | pods
    translate = overlay in ("translate", "everything")
    assert _covered(objects, MUTATING) == dra | status | (pods if translate else set())


# failurePolicy per webhook (deploy/base/validating-webhook.yaml explains each choice)
POLICY = {
    "objects.validate.draguard.io": ("Fail", "None", None),
    "claim-status.validate.draguard.io": ("Ignore", "None", None),
    "pods.validate.draguard.io": ("Ignore", "None", None),
    "objects.mutate.draguard.io": ("Ignore", "None", "Never"),
    "pods.mutate.draguard.io": ("Ignore", "NoneOnDryRun", "IfNeeded"),
}


@pytest.mark.parametrize("overlay", ALL)
def test_webhook_settings(rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    objects = rendered[overlay]
    names = [w["name"] for _, w in webhooks(objects)]
    assert len(names) == len(set(names))
    for kind, w in webhooks(objects):
        name = w["name"]
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}", name), name
        assert w["admissionReviewVersions"] == ["v1"], name
        assert w["matchPolicy"] == "Equivalent", name
        failure, side_effects, reinvocation = POLICY[name]
        assert (w["failurePolicy"], w["sideEffects"], w.get("reinvocationPolicy")) == (
            failure,
            side_effects,
            reinvocation,
        ), name
        # small timeouts (good practice), above the server's own deadline (`--deadline-seconds` 2)
        assert 2 <= w["timeoutSeconds"] <= 10, name
        assert w["clientConfig"]["service"]["path"] == ("/validate" if kind == VALIDATING else "/mutate")
        conditions = [c["name"] for c in w.get("matchConditions", [])]
        assert len(conditions) == len(set(conditions)) <= 64
        assert all(re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", c) for c in conditions)


def _excluded_namespaces(w: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for e in w.get("namespaceSelector", {}).get("matchExpressions", []):
        if e["key"] == "kubernetes.io/metadata.name" and e["operator"] == "NotIn":
            out |= set(e["values"])
    return out


REVIEW = json.loads((ROOT / "examples" / "admission" / "claim-create.json").read_text())


@pytest.mark.parametrize("overlay", ALL)
def test_draguard_never_waits_on_itself(rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    """Its namespace is excluded by namespaceSelector, its ServiceAccount by a matchCondition (the only
    way for cluster-scoped kinds); both name what the rendered objects really are."""
    objects = rendered[overlay]
    sa = one(objects, "ServiceAccount", SERVICE_ACCOUNT)
    assert (
        f"system:serviceaccount:{sa['metadata']['namespace']}:{sa['metadata']['name']}"
        == SERVICE_ACCOUNT_USER
    )
    request = {k: v for k, v in REVIEW["request"].items() if k not in ("object", "oldObject", "uid")}
    (pod,) = [p for p in _example_pods() if p["metadata"]["name"] == "vllm-inference"]  # nvidia.com/gpu
    own = {**request, "userInfo": {"username": SERVICE_ACCOUNT_USER, "groups": ["system:serviceaccounts"]}}
    for _, w in webhooks(objects):
        assert NAMESPACE in _excluded_namespaces(w), w["name"]
        if any("pods" in r["resources"] for r in w["rules"]):
            assert "kube-system" in _excluded_namespaces(w), w["name"]
        results_own = [evaluate(c["expression"], object=pod, request=own) for c in w["matchConditions"]]
        results_other = [evaluate(c["expression"], object=pod, request=request) for c in w["matchConditions"]]
        assert False in results_own, f"{w['name']}: draguard's own requests are sent to draguard"
        assert all(r is True for r in results_other), f"{w['name']}: {results_other}"


@pytest.mark.parametrize("overlay", ("translate", "everything"))
def test_every_match_condition_compiles_in_the_admission_cel_environment(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    for _, w in webhooks(rendered[overlay]):
        for c in w["matchConditions"]:
            assert compile_condition(c["expression"]) == "", f"{w['name']} {c['name']}"


def test_the_cel_environment_rejects_what_the_api_server_rejects() -> None:
    assert "undefined field 'usernme'" in compile_condition("request.userInfo.usernme != 'x'")
    assert "must evaluate to bool" in compile_condition("request.userInfo.username")
    assert "Syntax error" in compile_condition("object.spec ==")


def _example_pods() -> list[dict[str, Any]]:
    pods = []
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        pods += [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "Pod"]
    return pods


def _condition(objects: list[dict[str, Any]], webhook: str, condition: str) -> str:
    for _, w in webhooks(objects):
        if w["name"] == webhook:
            for c in w["matchConditions"]:
                if c["name"] == condition:
                    return str(c["expression"])
    raise AssertionError(f"no matchCondition {condition} on {webhook}")


PLAIN_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "containers": [
            {"name": "nginx", "image": "nginx", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
        ],
        "initContainers": [
            {"name": "init", "image": "busybox", "resources": {"requests": {"hugepages-2Mi": "2Mi"}}}
        ],
    },
}


def test_pod_webhooks_see_exactly_the_pods_with_devices(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """Evaluated with draguard's CEL evaluator on the repository's example Pods (claims, extended
    resources) and on Pods with nothing to check."""
    objects = rendered["everything"]
    validating = _condition(objects, "pods.validate.draguard.io", "uses-devices")
    mutating = _condition(objects, "pods.mutate.draguard.io", "uses-extended-resources")
    pods = _example_pods()
    assert len(pods) >= 5
    for pod in pods:
        assert evaluate(validating, object=pod) is True, pod["metadata"]["name"]
        extended = any(
            "/" in n for c in pod["spec"]["containers"] for n in c.get("resources", {}).get("limits", {})
        )
        assert evaluate(mutating, object=pod) is extended, pod["metadata"]["name"]
    assert evaluate(validating, object=PLAIN_POD) is False
    assert evaluate(mutating, object=PLAIN_POD) is False
    init_gpu = json.loads(json.dumps(PLAIN_POD))
    init_gpu["spec"]["initContainers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    assert evaluate(validating, object=init_gpu) is True
    assert evaluate(mutating, object=init_gpu) is True
    no_claims: dict[str, Any] = json.loads(json.dumps(PLAIN_POD))
    no_claims["spec"]["resourceClaims"] = []
    assert evaluate(validating, object=no_claims) is False
    mirror = {
        **init_gpu,
        "metadata": {**init_gpu["metadata"], "annotations": {"kubernetes.io/config.mirror": "x"}},
    }
    assert (
        evaluate(_condition(objects, "pods.mutate.draguard.io", "not-a-mirror-pod"), object=mirror) is False
    )
    assert (
        evaluate(_condition(objects, "pods.mutate.draguard.io", "not-a-mirror-pod"), object=init_gpu) is True
    )


# -- certificates and caBundles ------------------------------------------------------------------------


def _configs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] in (VALIDATING, MUTATING)]


@pytest.mark.parametrize("overlay", ("cert-manager", "translate", "monitoring", "network-policy"))
def test_cert_manager_injects_the_ca_of_the_serving_certificate(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    certificates = [c for c in find(objects, "Certificate") if c["spec"]["secretName"] == "draguard-tls"]
    (serving,) = certificates
    assert "draguard.draguard-system.svc" in serving["spec"]["dnsNames"]
    issuer = one(objects, "Issuer", serving["spec"]["issuerRef"]["name"])
    assert "ca" in issuer["spec"], "a CA issuer: the caBundle survives the serving certificate's renewals"
    ca = [
        c
        for c in find(objects, "Certificate")
        if c["spec"]["secretName"] == issuer["spec"]["ca"]["secretName"]
    ]
    assert ca and ca[0]["spec"]["isCA"] is True
    # renewed before the 14-day expiry alert would fire
    assert _hours(serving["spec"]["renewBefore"]) > 14 * 24
    for config in _configs(objects):
        annotations = config["metadata"]["annotations"]
        assert annotations["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/{serving['metadata']['name']}"
        assert all("caBundle" not in w["clientConfig"] for w in config["webhooks"])
    assert not find(objects, "Secret")


def _hours(duration: str) -> int:
    m = re.fullmatch(r"(\d+)h", duration)
    assert m, duration
    return int(m[1])


@pytest.mark.parametrize("overlay", ("self-managed-certs", "everything"))
def test_self_managed_certs_fill_every_ca_bundle(
    rendered: dict[str, list[dict[str, Any]]], self_managed: tuple[Path, str], overlay: str
) -> None:
    """After `draguard certs`, every webhook (the translate component's too) carries the caBundle the
    command printed, and that CA verifies the serving certificate in the rendered Secret, which names
    the Service the API server calls."""
    objects = rendered[overlay]
    _, bundle = self_managed
    secret = one(objects, "Secret", "draguard-tls")
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}, "never the CA's private key"
    assert not find(objects, "Certificate") and not find(objects, "Issuer")
    for config in _configs(objects):
        assert "cert-manager.io/inject-ca-from" not in config["metadata"].get("annotations", {})
        for w in config["webhooks"]:
            assert w["clientConfig"]["caBundle"].replace("\n", "") == bundle, w["name"]
    ca = x509.load_pem_x509_certificate(base64.b64decode(bundle))
    leaf = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    leaf.verify_directly_issued_by(ca)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"draguard.{NAMESPACE}.svc" in sans.get_values_for_type(x509.DNSName)


def test_base_alone_has_no_certificate_source(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["base"]
    assert not find(objects, "Secret") and not find(objects, "Certificate")
    for config in _configs(objects):
        assert "annotations" not in config["metadata"]
        assert all("caBundle" not in w["clientConfig"] for w in config["webhooks"])


@pytest.mark.parametrize("overlay", INSTALLABLE)
def test_every_installable_overlay_provides_the_serving_secret(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    secrets = {o["metadata"]["name"] for o in find(objects, "Secret")}
    secrets |= {c["spec"]["secretName"] for c in find(objects, "Certificate")}
    assert "draguard-tls" in secrets


@pytest.mark.parametrize("overlay", INSTALLABLE)
def test_the_staged_install_selectors_split_off_exactly_the_webhook_configurations(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """deploy/README.md applies `-l app.kubernetes.io/component!=webhook-configuration` first and the
    webhook configurations (`=webhook-configuration`) once draguard is ready."""
    objects = rendered[overlay]
    labelled = [
        o
        for o in objects
        if o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "webhook-configuration"
    ]
    assert sorted(o["kind"] for o in labelled) == sorted([VALIDATING, MUTATING])


@pytest.mark.parametrize("overlay", ALL)
def test_one_worker_per_replica_scaled_out_on_cpu(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    """Issue 18: one state and one list+watch per kind per replica (one worker), more replicas for more
    traffic: an HPA on the Deployment's CPU request, never below what the PDB needs."""
    objects = rendered[overlay]
    deployment = one(objects, "Deployment", "draguard")
    assert _serve_args(container(objects)).workers == 1
    hpa = one(objects, "HorizontalPodAutoscaler", "draguard")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", "draguard")
    assert hpa["spec"]["minReplicas"] == deployment["spec"]["replicas"] >= 2
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["type"] == "Utilization"
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100
    assert "cpu" in container(objects)["resources"]["requests"], "utilization is of the request"
