"""A real `draguard serve --state cluster` (gunicorn, HTTPS) fed by the API-server stand-in process: ready only
after the initial sync, admission verdicts that follow the cluster while Pods are admitted, relists, metrics,
a clean stop, and the configuration paths (--kubeconfig, $KUBECONFIG, in-cluster)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.server.server_proc import ROOT, Reviewer, Server, make_certs, metric_samples
from tests.standin import objects as o
from tests.standin.process import StandIn, wait_for
from webhook.state.live import KubeClient, load_api_client


def _verdict(answer: dict[str, Any]) -> str:
    response = answer["response"]
    if not response["allowed"]:
        return "denied"
    text = " ".join(response.get("warnings") or [])
    for verdict in ("busy", "unsatisfiable", "undecided"):
        if f"admission.feasibility: {verdict}" in text:
            return verdict
    return "feasible" if not text else "warned"


def _readyz(server: Server) -> dict[str, Any]:
    status, body = server.get("/readyz")
    assert status == 200, body
    data: dict[str, Any] = json.loads(body)
    return data


def _answered(server: Server) -> bool:
    """Whether the server answers /readyz within a second (a syncing worker accepts no connection)."""
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=server.context(), timeout=1.0)
    try:
        conn.request("GET", "/readyz")
        conn.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _visible(server: Server, kind: str, rv: int) -> bool:
    return int(_readyz(server)["resourceVersions"].get(kind, "0")) >= rv


def test_serve_syncs_then_follows_the_cluster_while_pods_are_admitted(
    tmp_path: Path, monkeypatch: Any
) -> None:
    with StandIn.start(tmp_path, tls=True) as api:
        api.seed(
            [o.node("node-a"), o.device_class(), o.resource_slice("node-a", 2, name="a-gen1")]
            + [o.claim("big", 2), o.claim("small", 1), o.claim("four", 4)]
        )
        api.fail(10_000, 500, path="/api/v1/nodes", method="GET")
        certs = tmp_path / "certs"
        make_certs(certs)
        token = "system:serviceaccount:draguard-system:draguard"
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig", token=token)
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))  # --state cluster, outside a cluster
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        server = Server(
            tmp_path,
            "--state",
            "cluster",
            "--certs",
            str(certs),
            "--workers",
            "1",
            "--list-page-size",
            "2",
            "--watch-timeout-seconds",
            "1",  # every watch restarts each second: the verdicts must follow the cluster all the same
            certs=certs,
            wait_ready=False,
        )
        try:
            # syncing: the Node list keeps failing, so the worker takes no connection
            wait_for(
                "failed Node lists",
                lambda: sum(r["path"] == "/api/v1/nodes" and r["status"] == 500 for r in api.requests()) >= 2,
            )
            # every kind but Nodes watches: the six other state kinds and the DraguardPolicies
            wait_for("seven watches", lambda: len(api.watches()) == 7)
            assert not _answered(server)
            api.clear_failures()
            wait_for("ready", lambda: _answered(server) and server.get("/readyz")[0] == 200)
            ready = _readyz(server)
            assert ready["objects"]["ResourceClaim"] == 3 and ready["objects"]["Node"] == 1
            samples = metric_samples(server.get("/metrics")[1].decode())
            assert samples[("draguard_state_synced", ())] == 1
            assert samples[("draguard_watch_relists_total", (("kind", "Node"), ("reason", "initial")))] == 1
            assert samples[("draguard_watch_relists_total", (("kind", "Node"), ("reason", "error")))] >= 2

            # a claim allocated by the scheduler (status update) while a Pod using another claim is admitted
            admitter = Reviewer(server, o.pod("p", ["small"]), _verdict)
            try:
                assert admitter.after(0, 3) == ["feasible"] * 3
                rv = api.seed([{**o.claim("big", 2), "status": o.allocation("node-a", [0, 1])}])
                wait_for("the allocation", lambda: _visible(server, "ResourceClaim", rv))
                assert admitter.after(len(admitter.verdicts)) == ["busy"] * 5
                rv = api.seed([o.claim("big", 2)])  # deallocated
                wait_for("the deallocation", lambda: _visible(server, "ResourceClaim", rv))
                assert admitter.after(len(admitter.verdicts)) == ["feasible"] * 5
            finally:
                admitter.stop()

            # a slice republished with a new pool generation (more devices), then the old one deleted
            admitter = Reviewer(server, o.pod("p", ["four"]), _verdict)
            try:
                assert admitter.after(0, 2) == ["unsatisfiable"] * 2
                rv = api.seed([o.resource_slice("node-a", 4, generation=2, name="a-gen2")])
                wait_for("generation 2", lambda: _visible(server, "ResourceSlice", rv))
                assert admitter.after(len(admitter.verdicts)) == ["feasible"] * 5
                # the old generation deleted while the watch is down: the relist after 410 drops it
                api.configure(stallWatches=True)
                api.delete(o.ref(o.resource_slice("node-a", name="a-gen1")))
                api.expire(drop=True)
                api.configure(stallWatches=False)
                wait_for("the relist", lambda: _readyz(server)["objects"]["ResourceSlice"] == 1)
                assert admitter.after(len(admitter.verdicts)) == ["feasible"] * 5
            finally:
                admitter.stop()
            log = api.requests()
            assert {r["user"] for r in log if not r["path"].startswith("/_control")} == {
                "system:serviceaccount:draguard-system:draguard"
            }
            claim_lists = [
                r["query"] for r in log if r["path"].endswith("/resourceclaims") and "watch" not in r["query"]
            ]
            assert claim_lists[:2] == [{"limit": "2"}, {"limit": "2", "continue": claim_lists[1]["continue"]}]
            assert {r["query"]["timeoutSeconds"] for r in log if "watch" in r["query"]} == {"1"}
            samples = metric_samples(server.get("/metrics")[1].decode())
            assert (
                samples[("draguard_watch_restarts_total", (("kind", "DeviceClass"), ("reason", "timeout")))]
                >= 1
            )
            assert (
                samples[("draguard_watch_relists_total", (("kind", "ResourceSlice"), ("reason", "expired")))]
                >= 1
            )
            assert (
                samples[("draguard_watch_events_total", (("kind", "ResourceClaim"), ("type", "MODIFIED")))]
                == 2
            )
            assert (
                samples[("draguard_watch_restarts_total", (("kind", "ResourceSlice"), ("reason", "error")))]
                >= 1
            )
            assert samples[("draguard_watch_event_to_visible_seconds_count", ())] >= 3
            assert samples[("draguard_state_objects", (("kind", "ResourceSlice"),))] == 1
        finally:
            code = server.stop()
        assert code == 0, server.log()
        assert "Traceback" not in server.log()


def _serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "serve", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def test_serve_cluster_configuration_errors_are_usage_errors(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    p = _serve("--state", "cluster", env=env)
    assert p.returncode == 2 and "not running in a cluster" in p.stderr and "--kubeconfig PATH" in p.stderr
    p = _serve("--kubeconfig", str(tmp_path / "missing"), env=env)
    assert p.returncode == 2 and "no such file" in p.stderr
    p = _serve("--kubeconfig", str(tmp_path / "missing"), "--state", "examples", env=env)
    assert p.returncode == 2 and "--state cluster" in p.stderr


def test_in_cluster_configuration_reads_the_service_account(tmp_path: Path, monkeypatch: Any) -> None:
    with StandIn.start(tmp_path, tls=True) as api:
        assert api.ca is not None
        token = tmp_path / "token"
        token.write_text(
            "system:serviceaccount:draguard-system:draguard"
        )  # as the kubelet writes it: no newline
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(api.port))
        client = KubeClient(load_api_client(None, in_cluster={"token": str(token), "ca": str(api.ca)}))
        try:
            page = client.list_page("/api/v1/namespaces", limit=10)
        finally:
            client.close()
        assert [n["metadata"]["name"] for n in page["items"]][0] == "default"
        assert api.requests()[-1]["user"] == "system:serviceaccount:draguard-system:draguard"
