"""The server's background audit (`serve --state cluster --audit-interval S`, webhook/server/liveaudit.py)
against the API-server stand-in over real HTTP: the PolicyReports appear (valid against the vendored
CRD), are rewritten after a watch event changes a result, are not rewritten when nothing changed, and a
report whose namespace has no result any more is deleted."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.audit.test_policyreport import check
from tests.server.server_proc import Server, make_certs, metric_samples
from tests.simulate.test_explainpod import cluster
from tests.standin import objects as o
from tests.standin.process import StandIn
from webhook.server.liveaudit import AuditSettings, BackgroundAudit
from webhook.server.options import CLUSTER, ServeOptions
from webhook.state.live import KubeClient, load_api_client

REPORTS = "/apis/wgpolicyk8s.io/v1alpha2"
WAIT = 20.0


@pytest.fixture
def api(tmp_path: Path) -> Iterator[StandIn]:
    with StandIn.start(tmp_path) as server:
        server.seed(
            [
                *cluster(),
                o.namespace("team-b"),
                o.claim("huge", 5, namespace="team-b"),
                o.pod("never", ["huge"], namespace="team-b"),
            ]
        )
        yield server


def until(what: Callable[[], Any], timeout: float = WAIT) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s")


def report(api: StandIn, ns: str | None) -> dict[str, Any] | None:
    path = (
        f"{REPORTS}/namespaces/{ns}/policyreports/draguard-audit"
        if ns
        else f"{REPORTS}/clusterpolicyreports/draguard-audit"
    )
    status, body, _ = api.request("GET", path)
    return body if status == 200 else None


def feasibility(doc: dict[str, Any]) -> dict[str, str]:
    return {
        r["resources"][0]["name"]: r["result"] for r in doc["results"] if r["rule"].startswith("feasibility.")
    }


def writes(api: StandIn) -> int:
    return sum(
        1 for r in api.requests() if r["path"].startswith(REPORTS) and r["method"] in ("PATCH", "DELETE")
    )


def test_reports_appear_and_follow_watch_events(api: StandIn, tmp_path: Path) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    options = ServeOptions(state=CLUSTER, certs=str(tmp_path), kubeconfig=kubeconfig)
    background = BackgroundAudit(
        options,
        AuditSettings(interval=0.1, max_results=50, max_pending_pods=10, deadline_seconds=30.0),
        [],
        KubeClient(load_api_client(kubeconfig)),
        KubeClient(load_api_client(kubeconfig)),
    )
    background.start()
    try:
        default = until(lambda: report(api, "default"))
        team_b = until(lambda: report(api, "team-b"))
        cluster_report = until(lambda: report(api, None))
        for doc in (default, team_b, cluster_report):
            check(doc)
        assert feasibility(default) == {"waiting": "warn"}  # busy
        assert feasibility(team_b) == {"never": "warn"}  # unsatisfiable, feasibility warn
        assert any(r["resources"][0]["name"] == "node-c-bad" for r in cluster_report["results"])
        # nothing changes: nothing is written again
        until(lambda: background.last is not None)
        before = writes(api)
        time.sleep(0.5)
        assert writes(api) == before
        # a watch event: the claim now wants one GPU, which node-b has free -> the Pod fits
        api.seed([o.claim("want", 1)])
        until(lambda: feasibility(report(api, "default") or {"results": []}) == {"waiting": "pass"})
        assert report(api, "team-b") == team_b  # unchanged: not rewritten
        # team-b's Pod and claim are gone: its report is deleted
        api.delete(
            o.ref(o.pod("never", ["huge"], namespace="team-b")), o.ref(o.claim("huge", 5, namespace="team-b"))
        )
        until(lambda: report(api, "team-b") is None)
    finally:
        background.stop()


def test_serve_audits_in_a_process_of_its_own_and_exports_the_results(
    tmp_path: Path, monkeypatch: Any
) -> None:
    with StandIn.start(tmp_path, tls=True) as api:
        api.seed([*cluster()])
        certs = tmp_path / "certs"
        make_certs(certs)
        kubeconfig = api.kubeconfig(
            tmp_path / "kubeconfig", token="system:serviceaccount:draguard-system:draguard"
        )
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        server = Server(
            tmp_path,
            "--state",
            "cluster",
            "--certs",
            str(certs),
            "--workers",
            "1",
            "--audit-interval",
            "0.2",
            certs=certs,
        )
        try:
            doc = until(lambda: report(api, "default"))
            assert feasibility(doc) == {"waiting": "warn"}
            samples = until(lambda: _audited(server))
            assert samples[("draguard_audit_results", (("result", "warn"),))] >= 1
            assert samples[("draguard_audit_runs_total", (("result", "ok"),))] >= 1
        finally:
            server.stop()


def _audited(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
    samples = metric_samples(server.get("/metrics")[1].decode())
    return samples if samples.get(("draguard_audit_runs_total", (("result", "ok"),)), 0) >= 1 else None
