"""DraguardPolicies in a real `draguard serve --state cluster` (gunicorn, HTTPS) fed by the API-server
stand-in process: a policy created over the API is in force at the next review (an infeasible
ResourceClaim admitted with a warning, then denied), its status written through the status subresource,
an invalid generation leaving the last valid one in force with its status saying why, and the policy's
deletion taking it out again."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.server.server_proc import Reviewer, Server, make_certs, metric_samples, review_of
from tests.standin import objects as o
from tests.standin.process import StandIn, wait_for

TOKEN = "system:serviceaccount:draguard-system:draguard"
COLLECTION = "/apis/draguard.io/v1alpha1/draguardpolicies"


def _policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


ENFORCE_CLAIMS = {"feasibility": {"kinds": {"ResourceClaim": "enforce"}}}


def _verdict(answer: dict[str, Any]) -> str:
    response = answer["response"]
    if not response["allowed"]:
        return "denied"
    text = " ".join(response.get("warnings") or [])
    return "warned" if "admission.feasibility: unsatisfiable" in text else "admitted"


def _status(api: StandIn, name: str) -> dict[str, Any]:
    code, body, _ = api.request("GET", f"{COLLECTION}/{name}")
    assert code == 200, body
    status: dict[str, Any] = body.get("status") or {}
    return status


def _conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions", [])}


def _says(api: StandIn, name: str, generation: int, ready: str) -> bool:
    status = _status(api, name)
    c = _conditions(status).get("Ready")
    return status.get("observedGeneration") == generation and c is not None and c["status"] == ready


def _put_spec(api: StandIn, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Replace a policy's spec (read, changed, written back: as kubectl edit does)."""
    code, current, _ = api.request("GET", f"{COLLECTION}/{name}")
    assert code == 200, current
    current["spec"] = spec
    code, updated, _ = api.request("PUT", f"{COLLECTION}/{name}", current)
    assert code == 200, updated
    result: dict[str, Any] = updated
    return result


def _readyz(server: Server) -> dict[str, Any]:
    status, body = server.get("/readyz")
    assert status == 200, body
    data: dict[str, Any] = json.loads(body)
    return data


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with StandIn.start(tmp_path, tls=True) as api:
        api.seed([o.node("node-a"), o.device_class(), o.resource_slice("node-a", 2)])
        certs = tmp_path / "certs"
        make_certs(certs)
        monkeypatch.setenv("KUBECONFIG", str(api.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        server = Server(tmp_path, "--state", "cluster", "--certs", str(certs), "--workers", "1", certs=certs)
        try:
            yield api, server
        finally:
            code = server.stop()
            assert code == 0, server.log()
            assert "Traceback" not in server.log()


def test_a_policy_change_is_in_force_at_once_and_its_status_written(
    cluster: tuple[StandIn, Server], record_property: Any
) -> None:
    api, server = cluster
    assert _readyz(server)["policies"] == {"version": 1, "inForce": {}, "invalid": {}}
    reviewer = Reviewer(server, o.claim("four", 4), _verdict)  # 4 GPUs, the node has 2: unsatisfiable
    try:
        assert reviewer.after(0, 3) == ["warned"] * 3  # the default mode: warn

        # created over the API: in force at the worker's next review
        t0 = time.monotonic()
        code, created, _ = api.request("POST", COLLECTION, _policy("claims", ENFORCE_CLAIMS))
        assert code == 201, created
        latency = reviewer.first("denied", t0) - t0
        record_property("policy_change_to_effect_seconds", round(latency, 4))
        print(f"\npolicy change to effect: {latency * 1000:.1f} ms")
        assert reviewer.after(len(reviewer.verdicts), 3) == ["denied"] * 3
        wait_for("the status", lambda: _says(api, "claims", 1, "True"))
        status = _status(api, "claims")
        assert {
            t: (c["status"], c["reason"], c["observedGeneration"]) for t, c in _conditions(status).items()
        } == {
            "Ready": ("True", "Applied", 1),
            "Invalid": ("False", "Valid", 1),
        }

        # an invalid generation (a rule id draguard does not have passes the CRD): generation 1 stays in force
        updated = _put_spec(api, "claims", {**ENFORCE_CLAIMS, "rules": {"pool.complete": "off"}})
        assert updated["metadata"]["generation"] == 2
        wait_for("the Invalid status", lambda: _says(api, "claims", 2, "False"))
        invalid = _conditions(_status(api, "claims"))["Invalid"]
        assert (invalid["status"], invalid["reason"]) == ("True", "UnknownRule")
        assert (
            invalid["message"]
            == "spec.rules[pool.complete]: unknown rule id (list them with `draguard rules`)"
        )
        assert _readyz(server)["policies"]["inForce"] == {"claims": 1}
        assert _readyz(server)["policies"]["invalid"] == {"claims": 2}
        assert reviewer.after(len(reviewer.verdicts), 3) == ["denied"] * 3

        # fixed, relaxing claims to warn: in force, Ready again
        t1 = time.monotonic()
        _put_spec(api, "claims", {"feasibility": {"kinds": {"ResourceClaim": "warn"}}})
        reviewer.first("warned", t1)
        wait_for("Ready again", lambda: _says(api, "claims", 3, "True"))

        # a second policy enforcing claims wins over the first's warn (the most restrictive setting)
        t2 = time.monotonic()
        code, _, _ = api.request("POST", COLLECTION, _policy("strict", ENFORCE_CLAIMS))
        assert code == 201
        reviewer.first("denied", t2)
        # ... and deleting it takes it out again
        t3 = time.monotonic()
        code, _, _ = api.request("DELETE", f"{COLLECTION}/strict")
        assert code == 200
        reviewer.first("warned", t3)
    finally:
        reviewer.stop()

    log = [r for r in api.requests() if not r["path"].startswith("/_control")]
    writes = [r for r in log if r["method"] not in ("GET",) and r["user"] == TOKEN]
    assert writes and {(r["method"], r["path"].rsplit("/", 1)[-1]) for r in writes} == {("PATCH", "status")}
    assert all(r["contentType"] == "application/merge-patch+json" for r in writes)
    assert all(r["query"].get("fieldManager") == "draguard" for r in writes)
    samples = metric_samples(server.get("/metrics")[1].decode())
    assert samples[("draguard_policies", (("state", "in_force"),))] == 1
    assert samples[("draguard_policies", (("state", "invalid"),))] == 0
    assert samples[("draguard_policy_status_writes_total", (("result", "ok"),))] >= 3
    assert samples[("draguard_policy_changes_total", ())] >= 5
    assert samples[("draguard_watch_events_total", (("kind", "DraguardPolicy"), ("type", "ADDED")))] == 2


def test_a_policy_invalid_from_the_start_is_not_applied_and_the_server_stays_ready(
    cluster: tuple[StandIn, Server],
) -> None:
    api, server = cluster
    spec = {
        **ENFORCE_CLAIMS,
        "tenants": [
            {
                "name": "t",
                "namespaceSelector": {},
                "requiredSelector": {"expression": "device.attributes['gpu.example.com'].model =="},
            }
        ],
    }
    code, _, _ = api.request("POST", COLLECTION, _policy("broken", spec))
    assert code == 201
    wait_for("the Invalid status", lambda: _says(api, "broken", 1, "False"))
    invalid = _conditions(_status(api, "broken"))["Invalid"]
    assert invalid["reason"] == "InvalidExpression"
    assert invalid["message"].startswith("spec.tenants[0].requiredSelector.expression: Invalid value:")
    ready = _readyz(server)
    assert ready["policies"]["inForce"] == {} and ready["policies"]["invalid"] == {"broken": 1}
    status, answer = server.review(review_of(o.claim("four", 4)))
    assert status == 200 and _verdict(answer) == "warned"  # not enforced: the policy is not in force
    assert "DraguardPolicy broken is invalid" in server.log()
