"""`draguard audit` live: a real process lists the API-server stand-in through a kubeconfig — the DRA
objects, the Pods and the cluster's DraguardPolicies (in force with `--policy`; an invalid one named,
not used) — and reports as it would from files, writing nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import forkrun
from tests.cliproc import ROOT
from tests.simulate.test_explainpod import cluster
from tests.standin import objects as o
from tests.standin.process import StandIn

ENFORCE = {
    "apiVersion": "draguard.io/v1alpha1",
    "kind": "DraguardPolicy",
    "metadata": {"name": "enforce-feasibility"},
    "spec": {"feasibility": {"default": "enforce"}},
}
BROKEN = {
    "apiVersion": "draguard.io/v1alpha1",
    "kind": "DraguardPolicy",
    "metadata": {"name": "broken"},
    "spec": {"rules": {"no.such-rule": "error"}},
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with StandIn.start(tmp_path_factory.mktemp("standin")) as server:
        server.seed([*cluster(), o.claim("huge", 5), o.pod("never", ["huge"]), ENFORCE, BROKEN])
        yield server


def audit(api: StandIn, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    p = forkrun.run(["audit", "--kubeconfig", kubeconfig, *args], cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def feasibility(out: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        r["resource"]["name"]: (r["rule"], r["result"])
        for r in out["results"]
        if r["rule"].startswith("feasibility.")
    }


def test_the_live_cluster_is_audited_with_its_policies(api: StandIn, tmp_path: Path) -> None:
    code, stdout, stderr = audit(api, tmp_path, "-o", "json")
    assert (code, stderr) == (1, "")
    out = json.loads(stdout)
    assert out["policies"] == ["enforce-feasibility"]
    assert len(out["invalidPolicies"]) == 1 and out["invalidPolicies"][0].startswith("broken: spec.rules")
    # unsatisfiable under the cluster's enforce policy fails; busy warns; the running Pod is not audited
    assert feasibility(out) == {
        "never": ("feasibility.infeasible", "fail"),
        "waiting": ("feasibility.busy", "warn"),
    }
    (bad,) = [r for r in out["results"] if r["resource"]["name"] == "node-c-bad"]
    assert (bad["result"], bad["existingViolation"]) == ("warn", True)
    assert {r["method"] for r in api.requests()} == {"GET"}
    paths = {r["path"] for r in api.requests()}
    assert "/apis/draguard.io/v1alpha1/draguardpolicies" in paths and "/api/v1/pods" in paths


def test_policyreports_from_the_live_cluster(api: StandIn, tmp_path: Path) -> None:
    code, stdout, _ = audit(api, tmp_path, "-o", "policyreport")
    assert code == 1
    docs = list(yaml.safe_load_all(stdout))
    assert [d["kind"] for d in docs] == ["ClusterPolicyReport", "PolicyReport"]
    assert docs[1]["summary"]["fail"] == 1 and docs[1]["results"][0]["resources"][0]["name"] == "never"


def test_a_refused_listing_is_a_usage_error(api: StandIn, tmp_path: Path) -> None:
    api.fail(1, code=403, path="/apis/draguard.io/v1alpha1/draguardpolicies")
    code, stdout, stderr = audit(api, tmp_path)
    assert (code, stdout) == (2, "")
    assert "refused to list the cluster: 403" in stderr and "draguardpolicies" in stderr
