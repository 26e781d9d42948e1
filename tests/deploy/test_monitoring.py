"""deploy/components/monitoring and the cert-manager objects: every PromQL expression (alerts, dashboard)
reads only metrics and labels `draguard serve` exports, the alerts issue 9 names exist, and the custom
resources have the shape their CRDs require (checked by hand: the CRDs are not shipped here)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from deploy_render import ALERTS, NAMESPACE, find, one
from promql_names import PromQLError, reads

# Labels Prometheus attaches to every target of the ServiceMonitor (kubernetes_sd endpoints role, as the
# prometheus-operator configures it). `endpoint` is the operator's too, but the ServiceMonitor sets
# honorLabels so the metrics' own `endpoint` label (validate/mutate) is the one kept.
TARGET_LABELS = frozenset({"job", "instance", "namespace", "pod", "service", "container", "endpoint"})

# docs/webhook.md's metrics of the live state and the extended-resource translation (types, label names), until
# the watch and extres branches register them: then the registered ones must match these.
DESIGN9 = {
    "draguard_watch_events": ("counter", frozenset({"kind", "type"})),
    "draguard_watch_relists": ("counter", frozenset({"kind", "reason"})),
    "draguard_watch_restarts": ("counter", frozenset({"kind", "reason"})),
    "draguard_watch_last_event_timestamp_seconds": ("gauge", frozenset({"kind"})),
    "draguard_state_synced": ("gauge", frozenset()),
    "draguard_watch_event_to_visible_seconds": ("histogram", None),  # labels not in the contract
    "draguard_extended_resource_translations": ("counter", frozenset({"result"})),
}


def _registered() -> dict[str, tuple[str, frozenset[str]]]:
    """Every prometheus_client metric defined by a module of the server, state and admission packages:
    name (without the _total suffix) -> (type, label names)."""
    from prometheus_client.metrics import MetricWrapperBase

    import webhook

    for pkg in ("webhook.server", "webhook.state", "webhook.admission"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            importlib.import_module(info.name)
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for name, mod in list(sys.modules.items()):
        if not (name == "webhook" or name.startswith("webhook.")) or mod is None:
            continue
        for value in vars(mod).values():
            if isinstance(value, MetricWrapperBase):
                out[value._name] = (str(value._type), frozenset(value._labelnames))
    assert webhook and out
    return out


def _series() -> dict[str, frozenset[str] | None]:
    """Series name -> label names (None: any label) that a scrape of draguard can return. Counters are
    exported as `<name>_total`, histograms as `_bucket` (with `le`), `_sum` and `_count` (multiprocess
    mode writes no `_created`); `up` is Prometheus' own."""
    metrics = dict(_registered())
    for name, declared in DESIGN9.items():
        metrics.setdefault(name, declared)  # type: ignore[arg-type]
    out: dict[str, frozenset[str] | None] = {"up": frozenset()}
    for name, (kind, labels) in metrics.items():
        if kind == "counter":
            out[name + "_total"] = labels
        elif kind == "histogram":
            out[name + "_bucket"] = None if labels is None else labels | {"le"}
            out[name + "_sum"] = out[name + "_count"] = labels
        else:
            out[name] = labels
    return out


def _check(expr: str, series: dict[str, frozenset[str] | None]) -> list[str]:
    problems = []
    try:
        r = reads(expr)
    except PromQLError as e:
        return [str(e)]
    if not r.selectors:
        problems.append(f"reads no metric: {expr}")
    known: set[str] = set(TARGET_LABELS)
    for sel in r.selectors:
        if sel.metric not in series:
            problems.append(f"{sel.metric} is not exported by draguard")
            continue
        labels = series[sel.metric]
        allowed = None if labels is None else labels | TARGET_LABELS
        known |= labels or set()
        if allowed is not None:
            problems += [f"{sel.metric} has no label {m}" for m in sel.matchers if m not in allowed]
        if sel.matchers.get("job") != ("=", "draguard"):
            problems.append(f'{sel.metric} without job="draguard" (another job may export the same name)')
    if any(series.get(s.metric, frozenset()) is None for s in r.selectors):
        known.add("*")
    if "*" not in known:
        problems += [f"grouping by {g}, a label none of its metrics has" for g in r.grouping - known - {"le"}]
    return problems


def _rules(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rule = one(objects, "PrometheusRule", "draguard")
    return [r for g in rule["spec"]["groups"] for r in g["rules"]]


def _dashboard(objects: list[dict[str, Any]]) -> dict[str, Any]:
    cm = one(objects, "ConfigMap", "draguard-dashboard")
    (text,) = cm["data"].values()
    return json.loads(text)  # type: ignore[no-any-return]


def _dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    exprs = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            # Grafana's variables, as Grafana substitutes them before sending the query
            exprs.append(target["expr"].replace("$__rate_interval", "5m").replace("$namespace", NAMESPACE))
    return exprs


def test_every_metric_name_and_label_of_the_alerts_is_exported(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    series = _series()
    problems = []
    for rule in _rules(rendered["monitoring"]):
        problems += [f"{rule['alert']}: {p}" for p in _check(rule["expr"], series)]
    assert not problems, "\n".join(problems)


def test_every_metric_name_and_label_of_the_dashboard_is_exported(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    series = _series()
    dashboard = _dashboard(rendered["monitoring"])
    problems = []
    for expr in _dashboard_exprs(dashboard):
        problems += [f"{expr}: {p}" for p in _check(expr, series)]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            m = re.fullmatch(r"label_values\((.+), *(\w+)\)", var["query"]["query"])
            assert m, var["query"]
            problems += _check(m[1], series)
            assert m[2] in TARGET_LABELS
    assert not problems, "\n".join(problems)


def test_the_name_check_catches_a_wrong_metric_or_label() -> None:
    series = _series()
    assert _check('rate(draguard_admission_requests_total{job="draguard"}[5m])', series) == []
    assert _check('rate(draguard_admission_request_total{job="draguard"}[5m])', series) == [
        "draguard_admission_request_total is not exported by draguard"
    ]
    assert _check('draguard_tls_certificate_reloads_total{job="draguard", reason="error"}', series) == [
        "draguard_tls_certificate_reloads_total has no label reason"
    ]
    assert _check('sum by (verdict) (draguard_admission_requests_total{job="draguard"})', series) == [
        "grouping by verdict, a label none of its metrics has"
    ]
    assert _check("up", series) == ['up without job="draguard" (another job may export the same name)']
    with pytest.raises(PromQLError, match="unknown function"):
        reads("rates(up[5m])")


def test_design9_metrics_are_registered_as_the_contract_says() -> None:
    """The watch and extended-resource metrics are registered with docs/webhook.md's types and labels (the
    alerts and the dashboard use those names)."""
    registered = _registered()
    for name, (kind, labels) in DESIGN9.items():
        assert name in registered, f"{name} (docs/webhook.md) is not registered"
        assert registered[name][0] == kind, name
        if labels is not None:
            assert registered[name][1] == labels, name


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (PromQL syntax)")
def test_promtool_accepts_the_rules_and_the_dashboard_queries(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    objects = rendered["monitoring"]
    groups = one(objects, "PrometheusRule", "draguard")["spec"]["groups"]
    dash = [
        {"record": f"draguard:dashboard:{i}", "expr": e}
        for i, e in enumerate(_dashboard_exprs(_dashboard(objects)))
    ]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [*groups, {"name": "dashboard", "rules": dash}]}))
    p = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_alerts_issue_9_names_exist_and_say_what_to_do(rendered: dict[str, list[dict[str, Any]]]) -> None:
    rules = {r["alert"]: r for r in _rules(rendered["monitoring"])}
    assert set(rules) == ALERTS
    for name, rule in rules.items():
        assert rule["labels"]["severity"] in ("warning", "critical"), name
        assert re.fullmatch(r"\d+[mh]", rule["for"]), name
        assert rule["annotations"]["summary"] and len(rule["annotations"]["description"]) > 80, name
        # labels an annotation shows must survive the expression's aggregation
        used = set(re.findall(r"\$labels\.(\w+)", json.dumps(rule["annotations"])))
        assert used <= reads(rule["expr"]).grouping, f"{name}: {used}"
    assert rules["DraguardWebhookDown"]["labels"]["severity"] == "critical"
    # 14 days, as the certificate alert is specified
    assert "14 * 86400" in rules["DraguardCertificateExpiresSoon"]["expr"]


def test_dashboard_is_a_labelled_configmap(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["monitoring"]
    cm = one(objects, "ConfigMap", "draguard-dashboard")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == NAMESPACE
    # kubectl apply keeps the whole object in an annotation (256 KiB at most)
    assert len(json.dumps(cm)) < 128 * 1024
    dashboard = _dashboard(objects)
    assert dashboard["uid"] == "draguard" and dashboard["panels"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]


def test_servicemonitor_scrapes_the_service_over_verified_tls(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["monitoring"]
    sm = one(objects, "ServiceMonitor", "draguard")
    svc = one(objects, "Service", "draguard")
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == [svc["metadata"]["namespace"]]
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    assert (endpoint["scheme"], endpoint["path"], endpoint["honorLabels"]) == ("https", "/metrics", True)
    tls = endpoint["tlsConfig"]
    assert "insecureSkipVerify" not in tls
    assert tls["ca"]["secret"] == {"name": "draguard-tls", "key": "ca.crt"}
    serving = [c for c in find(objects, "Certificate") if c["spec"]["secretName"] == "draguard-tls"]
    assert tls["serverName"] in serving[0]["spec"]["dnsNames"]


# -- custom resources, by shape ---------------------------------------------------------------------------
# Strict subsets of the CRDs' schemas (prometheus-operator monitoring.coreos.com/v1, cert-manager
# cert-manager.io/v1; checked against the upstream CRDs when these were written): the fields deploy/ uses,
# with their types and enums, unknown fields rejected.


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_STR = {"type": "string"}
_STRMAP = {"type": "object", "additionalProperties": _STR}
_DURATION = {
    "type": "string",
    "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
}
_META = _obj(["name", "namespace"], name=_STR, namespace=_STR, labels=_STRMAP, annotations=_STRMAP)
_SELECTOR = _obj([], matchLabels=_STRMAP)
_ISSUER_REF = _obj(["name"], name=_STR, kind={"enum": ["Issuer", "ClusterIssuer"]}, group=_STR)
_KEY = _obj(
    [],
    algorithm={"enum": ["RSA", "ECDSA", "Ed25519"]},
    size={"type": "integer"},
    rotationPolicy={"enum": ["Never", "Always"]},
)
_USAGES = {
    "type": "array",
    "items": {
        "enum": [
            "signing",
            "digital signature",
            "content commitment",
            "key encipherment",
            "key agreement",
            "data encipherment",
            "cert sign",
            "crl sign",
            "encipher only",
            "decipher only",
            "any",
            "server auth",
            "client auth",
            "code signing",
            "email protection",
            "s/mime",
            "ipsec end system",
            "ipsec tunnel",
            "ipsec user",
            "timestamping",
            "ocsp signing",
            "microsoft sgc",
            "netscape sgc",
        ]
    },
}
_GO_DURATION = {"type": "string", "pattern": r"^([0-9]+(\.[0-9]+)?(h|m|s|ms))+$"}

SHAPES: dict[tuple[str, str], dict[str, Any]] = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): _obj(
        ["apiVersion", "kind", "metadata", "spec"],
        apiVersion=_STR,
        kind=_STR,
        metadata=_META,
        spec=_obj(
            ["selector", "endpoints"],
            selector=_SELECTOR,
            namespaceSelector=_obj([], matchNames={"type": "array", "items": _STR}),
            endpoints={
                "type": "array",
                "items": _obj(
                    [],
                    port=_STR,
                    scheme={"enum": ["http", "https", "HTTP", "HTTPS"]},
                    path=_STR,
                    interval=_DURATION,
                    scrapeTimeout=_DURATION,
                    honorLabels={"type": "boolean"},
                    tlsConfig=_obj(
                        [],
                        serverName=_STR,
                        ca=_obj([], secret=_obj(["key"], name=_STR, key=_STR)),
                        # the client certificate (components/client-auth)
                        cert=_obj([], secret=_obj(["key"], name=_STR, key=_STR)),
                        keySecret=_obj(["key"], name=_STR, key=_STR),
                    ),
                ),
            },
        ),
    ),
    ("monitoring.coreos.com/v1", "PrometheusRule"): _obj(
        ["apiVersion", "kind", "metadata", "spec"],
        apiVersion=_STR,
        kind=_STR,
        metadata=_META,
        spec=_obj(
            [],
            groups={
                "type": "array",
                "items": _obj(
                    ["name"],
                    name={"type": "string", "minLength": 1},
                    rules={
                        "type": "array",
                        "items": _obj(
                            ["expr"],
                            alert=_STR,
                            expr=_STR,
                            labels=_STRMAP,
                            annotations=_STRMAP,
                            **{"for": _DURATION},
                        ),
                    },
                ),
            },
        ),
    ),
    ("cert-manager.io/v1", "Issuer"): _obj(
        ["apiVersion", "kind", "metadata", "spec"],
        apiVersion=_STR,
        kind=_STR,
        metadata=_META,
        spec={
            "type": "object",
            "oneOf": [{"required": ["selfSigned"]}, {"required": ["ca"]}],
            "properties": {"selfSigned": _obj([]), "ca": _obj(["secretName"], secretName=_STR)},
            "additionalProperties": False,
        },
    ),
    ("cert-manager.io/v1", "Certificate"): _obj(
        ["apiVersion", "kind", "metadata", "spec"],
        apiVersion=_STR,
        kind=_STR,
        metadata=_META,
        spec=_obj(
            ["issuerRef", "secretName"],
            isCA={"type": "boolean"},
            commonName={"type": "string", "maxLength": 64},
            dnsNames={"type": "array", "items": _STR},
            secretName=_STR,
            duration=_GO_DURATION,
            renewBefore=_GO_DURATION,
            usages=_USAGES,
            privateKey=_KEY,
            issuerRef=_ISSUER_REF,
        ),
    ),
}


@pytest.mark.parametrize(
    ("overlay", "custom"),
    [("cert-manager", 4), ("monitoring", 6), ("translate", 4), ("client-auth", 4), ("everything", 2)],
)
def test_custom_resources_have_their_crds_shape(
    rendered: dict[str, list[dict[str, Any]]], overlay: str, custom: int
) -> None:
    seen = 0
    for o in rendered[overlay]:
        shape = SHAPES.get((o["apiVersion"], o["kind"]))
        if shape is not None:
            jsonschema.validate(o, shape)
            seen += 1
    assert seen == custom


def test_the_shape_check_rejects_an_unknown_field(rendered: dict[str, list[dict[str, Any]]]) -> None:
    sm = json.loads(json.dumps(one(rendered["monitoring"], "ServiceMonitor", "draguard")))
    sm["spec"]["endpoints"][0]["tlsConfig"]["insecureSkipVerfy"] = True
    with pytest.raises(jsonschema.ValidationError, match="insecureSkipVerfy"):
        jsonschema.validate(sm, SHAPES[("monitoring.coreos.com/v1", "ServiceMonitor")])
