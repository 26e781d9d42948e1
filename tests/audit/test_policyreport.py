"""The PolicyReports `draguard audit` writes are valid `wgpolicyk8s.io/v1alpha2` objects: against the
vendored CRDs' schema (schemas/policyreport/), with no field the API server would prune, and bounded:
at most `max_results` results, failures first, the summary counting every result and an annotation
saying what was cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator

from tests import builders as b
from tests.audit.test_audit_cli import cluster
from tests.cliproc import ROOT, draguard
from webhook.audit.policyreport import CUT, policy_reports
from webhook.audit.results import AuditReport, AuditResult, ResourceRef

CRDS = ROOT / "schemas" / "policyreport" / "v1alpha2"


def schema(kind: str) -> dict[str, Any]:
    name = {"PolicyReport": "policyreports", "ClusterPolicyReport": "clusterpolicyreports"}[kind]
    crd = yaml.safe_load((CRDS / f"wgpolicyk8s.io_{name}.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    assert crd["spec"]["names"]["kind"] == kind and version["served"]
    return version["schema"]["openAPIV3Schema"]


def pruned(value: Any, s: dict[str, Any], path: str = "") -> list[str]:
    """The fields of `value` the API server would prune (not declared by the structural schema `s`)."""
    out: list[str] = []
    if isinstance(value, dict) and s.get("type") == "object":
        props, extra = s.get("properties"), s.get("additionalProperties")
        if props is None and extra is None:
            return out  # e.g. metadata: the API server's own
        for k, v in value.items():
            sub = props.get(k) if props is not None else extra
            if sub is None:
                out.append(f"{path}{k}")
            else:
                out += pruned(v, sub, f"{path}{k}.")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += pruned(v, s.get("items", {}), f"{path[:-1]}[{i}].")
    return out


def check(doc: dict[str, Any]) -> None:
    s = schema(doc["kind"])
    errors = [e.message for e in Draft7Validator(s).iter_errors(doc)]
    assert errors == [], errors
    assert pruned(doc, s) == []
    assert doc["apiVersion"] == "wgpolicyk8s.io/v1alpha2"


def test_every_report_of_an_audit_is_valid_against_the_crd(tmp_path: Path) -> None:
    policy = b.write(tmp_path, "p.yaml", [{"feasibility": {"namespaces": {"team-b": "enforce"}}}])
    p = draguard("audit", "--cluster", cluster(tmp_path), "--policy", policy, "-o", "policyreport")
    assert p.returncode == 1, p.stderr
    docs = list(yaml.safe_load_all(p.stdout))
    assert len(docs) == 4
    for doc in docs:
        check(doc)
    results = [r["result"] for d in docs for r in d["results"]]
    assert {"pass", "warn", "fail"} <= set(results)


def test_the_checker_rejects_what_the_crd_does_not_declare() -> None:
    """The check above can fail: a wrong enum value and a field the API server would prune."""
    ref = ResourceRef(apiVersion="v1", kind="Pod", name="p", namespace="ns")
    (doc,) = policy_reports(AuditReport([AuditResult(ref, "feasibility.busy", "warn", "medium", "m")]), 0.5)
    doc["results"][0]["result"] = "warning"
    assert list(Draft7Validator(schema("PolicyReport")).iter_errors(doc))
    doc["results"][0]["result"] = "warn"
    doc["results"][0]["field"] = "spec"
    assert pruned(doc, schema("PolicyReport")) == ["results[0].field"]


def test_a_report_is_bounded_failures_first_and_says_what_was_cut() -> None:
    results = []
    for n in range(30):
        ref = ResourceRef(apiVersion="resource.k8s.io/v1", kind="DeviceClass", name=f"c{n}")
        kind = "fail" if n % 10 == 9 else "pass"
        results.append(AuditResult(ref, "draguard.rules", kind, "high" if kind == "fail" else "info", "m"))
    (doc,) = policy_reports(AuditReport(results), 1_700_000_000.25, max_results=5)
    check(doc)
    assert doc["kind"] == "ClusterPolicyReport" and "namespace" not in doc["metadata"]
    assert [r["result"] for r in doc["results"]] == ["fail", "fail", "fail", "pass", "pass"]
    assert doc["summary"] == {"pass": 27, "fail": 3, "warn": 0, "error": 0, "skip": 0}
    assert doc["metadata"]["annotations"][CUT] == "25 results not listed (25 pass): at most 5 per report"
    assert doc["results"][0]["timestamp"] == {"seconds": 1_700_000_000, "nanos": 250_000_000}
