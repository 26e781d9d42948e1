"""`draguard audit --cluster DIR` as a real process on YAML files: ratcheting (an error the stored object
has is a warning, an existing violation), Pods pending on DRA explained (unsatisfiable fails under
feasibility enforce, busy warns), text, JSON and PolicyReport output, and the exit codes: 0 no failure,
1 failures, 2 usage, 3 incomplete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import builders as b
from tests.cliproc import draguard

GPU = 'device.driver == "gpu.example.com"'


def cluster(tmp_path: Path) -> str:
    """Two GPUs on one node; a claim whose stored allocation names a request it does not have (an error
    the API server rejects on create), a Pod pending on a claim for 5 GPUs (unsatisfiable) and one on a
    claim for 1 that fits; a bound Pod (not audited)."""
    slice_ = b.resource_slice("s1", [{"name": "g0"}, {"name": "g1"}], pool="p1", node="n1")
    slice_["metadata"]["uid"] = "0b5a7d4e-1111-4c1e-9a57-000000000001"
    bound = b.pod("bound", ["ok"], ns="team-a")
    bound["spec"]["nodeName"] = "n1"
    objs = [
        b.node("n1"),
        b.device_class("gpu", GPU),
        slice_,
        b.claim("bad", [b.request("r", "gpu")], status=b.allocated(b.result("nope", "p1", "g0"))),
        b.claim("ok", [b.request("r", "gpu")], ns="team-a"),
        b.claim("big", [b.request("r", "gpu", count=5)], ns="team-b"),
        b.pod("fits", ["ok"], ns="team-a"),
        b.pod("never", ["big"], ns="team-b"),
        bound,
    ]
    b.write(tmp_path / "cluster", "c.yaml", objs)
    return str(tmp_path / "cluster")


def audited(*args: str) -> tuple[int, dict[str, Any]]:
    p = draguard("audit", *args, "-o", "json")
    assert p.stderr == "", p.stderr
    return p.returncode, json.loads(p.stdout)


def by(out: dict[str, Any], kind: str, name: str, feasibility: bool = False) -> list[dict[str, Any]]:
    """The results of one resource (a Pod's: its validation's, or with `feasibility` its explanation's)."""
    return [
        r
        for r in out["results"]
        if (r["resource"]["kind"], r["resource"]["name"]) == (kind, name)
        and r["rule"].startswith("feasibility.") == feasibility
    ]


def test_existing_violations_are_warnings_and_pending_pods_are_explained(tmp_path: Path) -> None:
    code, out = audited("--cluster", cluster(tmp_path))
    assert code == 0
    (bad,) = by(out, "ResourceClaim", "bad")
    assert (bad["result"], bad["rule"], bad["existingViolation"]) == ("warn", "claim-status.results", True)
    assert bad["field"] == "status.allocation.devices.results[0].request"
    assert "existing violation" in bad["message"]
    (never,) = by(out, "Pod", "never", True)
    assert (never["result"], never["rule"], never["category"]) == (
        "warn",
        "feasibility.infeasible",
        "Scheduling",
    )
    assert "unsatisfiable" in never["message"] and "5 requested" in never["message"]
    (fits,) = by(out, "Pod", "fits", True)
    assert (fits["result"], fits["resource"]["namespace"]) == ("pass", "team-a")
    assert [r["result"] for r in by(out, "Pod", "never")] == ["pass"]  # its validation
    assert (
        by(out, "Pod", "bound") == by(out, "Pod", "bound", True) == []
    )  # bound to a node: not pending, not audited
    (s1,) = by(out, "ResourceSlice", "s1")
    assert s1["result"] == "pass" and s1["resource"]["uid"] == "0b5a7d4e-1111-4c1e-9a57-000000000001"
    assert (out["resources"], out["pendingPods"], out["explained"]) == (7, 2, 2)
    assert out["summary"] == {"pass": 7, "fail": 0, "warn": 2, "error": 0, "skip": 0}


def test_an_unsatisfiable_pod_fails_under_feasibility_enforce_and_off_skips_it(tmp_path: Path) -> None:
    dir_ = cluster(tmp_path)
    enforce = b.write(tmp_path, "enforce.yaml", [{"feasibility": {"namespaces": {"team-b": "enforce"}}}])
    code, out = audited("--cluster", dir_, "--policy", enforce)
    (never,) = by(out, "Pod", "never", True)
    assert (code, never["result"], never["severity"]) == (1, "fail", "high")
    p = draguard("audit", "--cluster", dir_, "--policy", enforce)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0].startswith(
        "FAIL  Pod team-b/never: Pod team-b/never can never be scheduled"
    )
    off = b.write(tmp_path, "off.yaml", [{"feasibility": {"namespaces": {"team-b": "off"}}}])
    code, out = audited("--cluster", dir_, "--policy", off)
    (never,) = by(out, "Pod", "never", True)
    assert (code, never["result"]) == (0, "skip")


def test_a_policy_object_names_the_rules_it_grades(tmp_path: Path) -> None:
    policy = {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": "strict-status"},
        "spec": {"rules": {"claim-status.results": "off"}},
    }
    code, out = audited("--cluster", cluster(tmp_path), "--policy", b.write(tmp_path, "p.yaml", [policy]))
    assert code == 0 and out["policies"] == ["strict-status"]
    (bad,) = by(out, "ResourceClaim", "bad")
    assert bad["result"] == "pass"  # the policy turns the rule off


def test_policyreports_one_per_namespace_and_a_cluster_report(tmp_path: Path) -> None:
    p = draguard("audit", "--cluster", cluster(tmp_path), "-o", "policyreport")
    assert p.returncode == 0 and p.stderr == ""
    docs = list(yaml.safe_load_all(p.stdout))
    assert [(d["kind"], d["metadata"].get("namespace")) for d in docs] == [
        ("ClusterPolicyReport", None),
        ("PolicyReport", "default"),
        ("PolicyReport", "team-a"),
        ("PolicyReport", "team-b"),
    ]
    assert docs[1]["summary"] == {"pass": 0, "fail": 0, "warn": 1, "error": 0, "skip": 0}
    assert docs[3]["summary"] == {"pass": 2, "fail": 0, "warn": 1, "error": 0, "skip": 0}
    (r,) = docs[1]["results"]
    assert (r["policy"], r["rule"], r["result"], r["source"]) == (
        "draguard",
        "claim-status.results",
        "warn",
        "draguard",
    )
    assert r["resources"] == [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "name": "bad", "namespace": "default"}
    ]
    assert r["properties"] == {
        "field": "status.allocation.devices.results[0].request",
        "existingViolation": "true",
    }
    assert set(r["timestamp"]) == {"seconds", "nanos"}


def test_exit_codes_for_usage_and_an_incomplete_audit(tmp_path: Path) -> None:
    dir_ = cluster(tmp_path)
    code, out = audited("--cluster", dir_, "--max-pending-pods", "1")
    assert code == 3 and out["explained"] == 1
    assert [r["result"] for r in out["results"] if r["resource"]["kind"] == "Pod"].count("skip") == 1
    assert out["incomplete"].startswith("Pods pending on DRA left unexplained: --max-pending-pods (1)")
    for args, message in (
        (["--cluster", dir_, "--kubeconfig", "kc"], "--cluster reads the cluster from files"),
        (["--cluster", str(tmp_path / "nope")], "nope"),
        (["--cluster", dir_, "-o", "sarif"], "invalid choice"),
    ):
        p = draguard("audit", *args)
        assert p.returncode == 2 and p.stdout == "", args
        assert message in p.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "policyreport"])
def test_an_empty_cluster_is_clean(tmp_path: Path, fmt: str) -> None:
    b.write(tmp_path / "empty", "n.yaml", [b.node("n1")])
    p = draguard("audit", "--cluster", str(tmp_path / "empty"), "-o", fmt)
    assert p.returncode == 0 and p.stderr == ""
    if fmt == "text":
        assert p.stdout.startswith("audited 0 object(s) and 0 Pod(s) pending on DRA")
    if fmt == "policyreport":
        assert p.stdout.strip() == ""


def test_a_pending_pod_with_an_error_is_an_existing_violation_and_not_explained(tmp_path: Path) -> None:
    """The webhook checks Pods on CREATE only: nothing of a stored Pod is denied on UPDATE."""
    bad = b.pod("odd", ["Not_A_Name"], ns="team-c")
    dir_ = b.write(tmp_path / "c", "c.yaml", [b.node("n1"), bad])
    code, out = audited("--cluster", str(Path(dir_).parent))
    assert code == 0
    found = by(out, "Pod", "odd")
    assert found and {(r["result"], r["existingViolation"]) for r in found} == {("warn", True)}
    assert {r["field"] for r in found} == {"spec.resourceClaims[0].resourceClaimName"}
    assert by(out, "Pod", "odd", True) == []  # invalid: left out of the simulation, not explained
