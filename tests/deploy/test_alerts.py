"""The alerts of components/monitoring evaluated by Prometheus' own rule engine (`promtool test rules`)
over synthetic series: each fires when its condition holds for its `for` duration, and stays silent on a
healthy neighbour. The annotations' templates are left out of the comparison (expressions, `for` and
labels are what is tested)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_render import ALERTS, NAMESPACE, one

NS = {"namespace": NAMESPACE}


def s(name: str, **labels: str) -> str:
    """A series of the scrape job `draguard` in draguard's namespace."""
    inner = ",".join(f'{k}="{v}"' for k, v in {"job": "draguard", **NS, **labels}.items())
    return f"{name}{{{inner}}}"


def series(name: str, values: str, **labels: str) -> dict[str, str]:
    return {"series": s(name, **labels), "values": values}


def fires(labels: dict[str, str], severity: str = "warning") -> list[dict[str, Any]]:
    return [{"exp_labels": {"severity": severity, **labels}}]


def check(at: str, alert: str, expected: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"eval_time": at, "alertname": alert, "exp_alerts": expected or []}


ALL_DOWN = {
    "interval": "1m",
    "input_series": [series("up", "0x20", pod="a"), series("up", "0x20", pod="b")],
    "alert_rule_test": [
        check("3m", "DraguardWebhookDown"),
        check("10m", "DraguardWebhookDown", fires({}, "critical")),  # absent() of a comparison: no labels
    ],
}

CERT = "draguard_tls_certificate_expiry_timestamp_seconds"
SYNCED, LAST_EVENT, RESTARTS = (
    "draguard_state_synced",
    "draguard_watch_last_event_timestamp_seconds",
    "draguard_watch_restarts_total",
)
DEGRADED = {
    "interval": "1m",
    "input_series": [
        series("up", "0x70", pod="a"),  # does not answer
        series("up", "1x70", pod="b"),
        series(SYNCED, "1x70", pod="b"),
        series("up", "1x70", pod="c"),
        series(SYNCED, "0x70", pod="c"),  # answers, never synced
        # a quiet kind whose watch keeps being re-opened is not stale; a kind whose watch is stuck is
        series(LAST_EVENT, "0x70", pod="b", kind="DeviceTaintRule"),
        series(RESTARTS, "0+0.2x70", pod="b", kind="DeviceTaintRule", reason="timeout"),
        series(LAST_EVENT, "0x70", pod="b", kind="ResourceSlice"),
        series(CERT, "864000x70", pod="b"),  # 10 days after the epoch: expires within 14 days
        series(CERT, "99999999x70", pod="c"),
    ],
    "alert_rule_test": [
        check("5m", "DraguardWebhookDown"),
        check("20m", "DraguardReplicasDown"),  # two replicas answer
        check("25m", "DraguardNotReady", fires({**NS, "pod": "a"}) + fires({**NS, "pod": "c"})),
        check("25m", "DraguardStateStale", fires({**NS, "pod": "b", "kind": "ResourceSlice"})),
        check("30m", "DraguardCertificateExpiresSoon"),  # for: 1h
        check("61m", "DraguardCertificateExpiresSoon", fires({**NS, "pod": "b"})),
    ],
}

ONE_REPLICA = {
    "interval": "1m",
    "input_series": [series("up", "1x20", pod="a")],
    "alert_rule_test": [check("16m", "DraguardReplicasDown", fires(NS))],
}

BUCKET, REQUESTS = "draguard_admission_request_duration_seconds_bucket", "draguard_admission_requests_total"
BUSY = {
    "interval": "1m",
    "input_series": [
        # /validate: most answers between 0.5 and 1 s; /mutate: fast
        series(BUCKET, "0+1x30", pod="a", endpoint="validate", kind="Pod", le="0.5"),
        series(BUCKET, "0+100x30", pod="a", endpoint="validate", kind="Pod", le="1.0"),
        series(BUCKET, "0+100x30", pod="a", endpoint="validate", kind="Pod", le="+Inf"),
        series(BUCKET, "0+100x30", pod="a", endpoint="mutate", kind="Pod", le="0.5"),
        series(BUCKET, "0+100x30", pod="a", endpoint="mutate", kind="Pod", le="+Inf"),
        series(
            REQUESTS,
            "0+100x30",
            pod="a",
            endpoint="validate",
            kind="Pod",
            operation="CREATE",
            decision="allowed",
        ),
        series(
            REQUESTS,
            "0+100x30",
            pod="a",
            endpoint="mutate",
            kind="Pod",
            operation="CREATE",
            decision="allowed",
        ),
        series(
            REQUESTS,
            "0+1x30",
            pod="a",
            endpoint="validate",
            kind="DeviceClass",
            operation="CREATE",
            decision="error",
        ),
        # a relist per minute after 410 is a loop; the initial lists are not counted
        series("draguard_watch_relists_total", "0+1x30", pod="a", kind="ResourceSlice", reason="expired"),
        series("draguard_watch_relists_total", "0+1x30", pod="a", kind="DeviceClass", reason="initial"),
        series(RESTARTS, "0+1x30", pod="a", kind="Node", reason="error"),
        series(RESTARTS, "0+1x30", pod="a", kind="Namespace", reason="timeout"),
        series("draguard_tls_certificate_reloads_total", "0+1x30", pod="a", result="error"),
        series("draguard_tls_certificate_reloads_total", "0+1x30", pod="b", result="ok"),
        series("draguard_extended_resource_translations_total", "0+1x30", pod="a", result="error"),
        series("draguard_extended_resource_translations_total", "0+1x30", pod="a", result="translated"),
    ],
    "alert_rule_test": [
        check("20m", "DraguardAdmissionLatencyHigh", fires({**NS, "endpoint": "validate"})),
        check("20m", "DraguardInternalErrors", fires({**NS, "kind": "DeviceClass"})),
        check("30m", "DraguardWatchRelistLoop", fires({**NS, "pod": "a", "kind": "ResourceSlice"})),
        check("30m", "DraguardWatchErrors", fires({**NS, "pod": "a", "kind": "Node"})),
        check("30m", "DraguardCertificateReloadFailing", fires({**NS, "pod": "a"})),
        check("30m", "DraguardTranslationErrors", fires(NS)),
    ],
}

SPIKE = {
    "interval": "1m",
    "input_series": [
        # slices: a day without denials, then one a second; claims: one a second all along (no spike)
        series(
            REQUESTS,
            "0x1440 0+60x30",
            pod="a",
            endpoint="validate",
            kind="ResourceSlice",
            operation="CREATE",
            decision="denied",
        ),
        series(
            REQUESTS,
            "0+60x1470",
            pod="a",
            endpoint="validate",
            kind="ResourceClaim",
            operation="CREATE",
            decision="denied",
        ),
    ],
    "alert_rule_test": [
        check("1d", "DraguardDenialsSpiking"),
        check("1d20m", "DraguardDenialsSpiking", fires({**NS, "kind": "ResourceSlice"})),
    ],
}

CASES = [ALL_DOWN, DEGRADED, ONE_REPLICA, BUSY, SPIKE]


def test_every_alert_has_a_case_where_it_fires() -> None:
    fired = {t["alertname"] for case in CASES for t in case["alert_rule_test"] if t["exp_alerts"]}  # type: ignore[index, union-attr]
    assert fired == ALERTS


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (alert unit tests)")
def test_alerts_fire_on_the_series_they_are_about(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    rule = one(rendered["monitoring"], "PrometheusRule", "draguard")
    groups = json.loads(json.dumps(rule["spec"]["groups"]))
    for g in groups:
        for r in g["rules"]:
            r.pop("annotations", None)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": CASES}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests))
    p = subprocess.run(
        ["promtool", "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stdout + p.stderr
