"""Real manifests through the real CLI: required fields as the API server enforces them, status reset
on CREATE, per-version APIs (`--k8s-version`) and whole `--feature-gates` strings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests import forkrun

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "versions"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return forkrun.run(args, cwd=ROOT)


def findings(*args: str) -> tuple[int, list[tuple[str, str, str]]]:
    p = run("validate", "-o", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    out = json.loads(p.stdout)
    return p.returncode, [
        (v["rule"], v["severity"], v["field"]) for o in out["objects"] for v in o["violations"]
    ]


def test_a_slice_without_pool_generation_is_valid_and_simulate_uses_it() -> None:
    path = str(DATA / "cluster-no-generation.yaml")
    assert findings(path) == (0, [])
    p = run("simulate", "-o", "json", path)
    assert p.returncode == 0, p.stdout + p.stderr
    pods = json.loads(p.stdout)["pods"]
    assert [(x["pod"], x["feasible"], x["node"]) for x in pods] == [("team-a/trainer", True, "node-a")]


def test_a_status_block_on_create_is_not_validated_only_noted() -> None:
    code, found = findings(str(DATA / "claim-with-status.yaml"))
    assert (code, found) == (0, [("status.dropped-on-create", "info", "status")])


def test_1_36_validates_against_the_1_36_api() -> None:
    v136 = str(DATA / "slice-1.36-mappings.yaml")
    v137 = str(DATA / "slice-1.37-node-allocatable.yaml")
    # the 1.36 field exists in 1.36: dropped while its alpha gate is off, kept when it is on
    assert findings("--k8s-version", "1.36", v136) == (
        0,
        [("skew.dropped-field", "warning", "spec.devices[0].nodeAllocatableResourceMappings")],
    )
    assert findings("--k8s-version", "1.36", "--feature-gates", "DRANodeAllocatableResources=true", v136) == (
        0,
        [],
    )
    # each version's field is unknown to the other, with a hint to the field that version has
    p = run("validate", "--k8s-version", "1.36", v137)
    assert p.returncode == 1
    assert (
        'unknown field "spec.devices[0].nodeAllocatableResources": did you mean "nodeAllocatableResourceMappings"?'
        in p.stdout
    )
    p = run("validate", "--k8s-version", "1.37", v136)
    assert p.returncode == 1
    assert 'did you mean "nodeAllocatableResources"?' in p.stdout
    assert findings("--k8s-version", "1.37", "--feature-gates", "DRANodeAllocatableResources=true", v137) == (
        0,
        [],
    )


def test_a_v1_device_taint_rule_needs_1_37() -> None:
    path = str(DATA / "taint-rule-v1.yaml")
    assert findings("--k8s-version", "1.37", path) == (0, [])
    for version in ("1.35", "1.36"):
        code, found = findings("--k8s-version", version, path)
        assert (code, found) == (1, [("input.api-version", "error", "apiVersion")])
    p = run("validate", "--k8s-version", "1.36", path)
    assert 'no matches for kind "DeviceTaintRule" in version "resource.k8s.io/v1"' in p.stdout


CLUSTER_GATES = (
    "ContextualLogging=true,LoggingBetaOptions=true, KubeletTracing=true,ImageVolume=1,"
    "DRAConsumableCapacity=false,MutatingAdmissionPolicy=true,AllBeta=false"
)


def test_a_clusters_whole_gate_string_is_accepted() -> None:
    path = str(DATA / "cluster-no-generation.yaml")
    assert findings("--feature-gates", CLUSTER_GATES, path) == (0, [])
    # 1.35 knows ImageVolume but not gates introduced in 1.36/1.37
    assert findings("--k8s-version", "1.35", "--feature-gates", "ImageVolume=true,EnvFiles=true", path) == (
        0,
        [],
    )


def test_unknown_and_locked_gates_are_usage_errors_worded_as_kube_apiserver() -> None:
    path = str(DATA / "cluster-no-generation.yaml")
    p = run("validate", "--feature-gates", "ContextualLogging=true,NoSuchGate=true", path)
    assert p.returncode == 2
    assert (
        'invalid argument "ContextualLogging=true,NoSuchGate=true" for "--feature-gates" flag: '
        "unrecognized feature gate: NoSuchGate"
    ) in p.stderr
    p = run("validate", "--k8s-version", "1.36", "--feature-gates", "DRADeviceCompatibilityGroups=true", path)
    assert p.returncode == 2 and "unrecognized feature gate: DRADeviceCompatibilityGroups" in p.stderr
    p = run("validate", "--feature-gates", "InPlacePodVerticalScaling=false", path)
    assert p.returncode == 2
    assert "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true" in p.stderr
    p = run("validate", "--feature-gates", "ContextualLogging", path)
    assert p.returncode == 2 and "missing bool value for ContextualLogging" in p.stderr
    p = run("validate", "--feature-gates", "ContextualLogging=yes", path)
    assert p.returncode == 2
    assert (
        'invalid value of ContextualLogging=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'
        in p.stderr
    )


def test_a_beta_device_taint_rule_before_1_37_is_checked_against_its_schema(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(
        "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: drain}\n"
        "spec:\n  deviceSelector: {driver: gpu.example.com, pool: node-1}\n  taint: {key: maintenance, efect: NoSchedule}\n"
    )
    for version, served in (("1.36", "v1beta2"), ("1.35", "v1alpha3")):
        rule.write_text(rule.read_text().replace("v1beta2", served))
        p = run(
            "validate",
            "--k8s-version",
            version,
            "--runtime-config",
            f"resource.k8s.io/{served}=true",
            "--feature-gates",
            "DRADeviceTaintRules=true",
            str(rule),
        )
        assert p.returncode == 1
        assert f"{rule}:6: error schema.unknown-field: spec.taint.efect:" in p.stdout, p.stdout
