"""Beta API versions through the real command line: an error by default (per --k8s-version), valid input
with --runtime-config (converted to v1, validated, reported at the manifest's own paths) for validate,
simulate and strip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cliproc import draguard

HERE = Path(__file__).resolve().parent / "manifests"
GPU_CLUSTER = HERE / "v1beta1" / "gpu-cluster.yaml"
MIG = HERE / "v1beta1" / "partitionable-gpu.yaml"
NIC = HERE / "v1beta2" / "nic.yaml"
MISTAKES = HERE / "v1beta1" / "mistakes.yaml"
V1_CLUSTER = Path(__file__).resolve().parents[2] / "examples" / "simulate" / "gpu-cluster.yaml"


def findings(*args: str) -> tuple[int, list[tuple[str, str, str, str]]]:
    p = draguard("validate", "-o", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    out = json.loads(p.stdout)
    return p.returncode, [
        (o["name"], v["rule"], v["severity"], v["field"]) for o in out["objects"] for v in o["violations"]
    ]


@pytest.mark.parametrize("k8s", ["1.35", "1.36", "1.37"])
def test_beta_manifests_are_errors_by_default_with_the_fix_in_the_message(k8s: str) -> None:
    p = draguard("validate", "--k8s-version", k8s, str(GPU_CLUSTER), str(NIC))
    assert p.returncode == 1
    lines = [line for line in p.stdout.splitlines() if "input.api-version" in line]
    assert len(lines) == 8  # gpu-cluster: 2 slices, a class, a template; nic: slice, class, claim, rule
    first = lines[0]
    assert first.startswith(f"{GPU_CLUSTER}:6: error input.api-version: apiVersion: ")
    assert 'no matches for kind "ResourceSlice" in version "resource.k8s.io/v1beta1"' in first
    assert f"Kubernetes {k8s} does not serve resource.k8s.io/v1beta1 by default" in first
    assert "draguard convert --to v1 FILE" in first
    assert "--runtime-config resource.k8s.io/v1beta1=true" in first
    # the DeviceTaintRule: v1beta2 has none in 1.35; in 1.36/1.37 it is simply not enabled
    rule = [line for line in lines if "DeviceTaintRule" in line]
    assert len(rule) == 1
    if k8s == "1.35":
        assert "Kubernetes 1.35 has no DeviceTaintRule in resource.k8s.io/v1beta2" in rule[0]
    else:
        assert "does not serve resource.k8s.io/v1beta2 by default" in rule[0]


def test_runtime_config_makes_beta_manifests_valid_input() -> None:
    code, found = findings(
        "--runtime-config",
        "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true",
        str(GPU_CLUSTER),
        str(MIG),
        str(NIC),
    )
    assert code == 0
    assert {rule for _, rule, _, _ in found} == {"input.deprecated-api"}
    assert all(sev == "warning" and field == "apiVersion" for _, _, sev, field in found)
    # v1beta2 is deprecated from 1.36: 1.35 serves it without a warning
    code, found = findings(
        "--k8s-version", "1.35", "--runtime-config", "resource.k8s.io/v1beta2=true", str(NIC)
    )
    assert (
        "drain-node-b-eth3",
        "input.api-version",
        "error",
        "apiVersion",
    ) in found  # no v1beta2 DTR in 1.35
    assert not [f for f in found if f[1] == "input.deprecated-api"]


def test_only_the_enabled_version_is_valid() -> None:
    code, found = findings("--runtime-config", "resource.k8s.io/v1beta2=true", str(GPU_CLUSTER))
    assert code == 1 and {r for _, r, _, _ in found} == {"input.api-version"}
    code, found = findings(
        "--runtime-config", "resource.k8s.io/v1beta1/resourceslices=true", str(GPU_CLUSTER)
    )
    slices = [f for f in found if f[0].endswith("gpu.example.com")]
    assert slices and all(r == "input.deprecated-api" for _, r, _, _ in slices)
    assert ("example-gpu", "input.api-version", "error", "apiVersion") in found  # deviceclasses not enabled


def test_findings_name_the_fields_as_the_v1beta1_manifest_writes_them() -> None:
    code, found = findings("--runtime-config", "api/beta=true", str(MISTAKES))
    assert code == 1
    got = {(name, rule, field) for name, rule, _, field in found if rule != "input.deprecated-api"}
    assert got == {
        ("mistakes", "claim.requests", "spec.devices.requests[1]"),
        ("mistakes", "claim.requests", "spec.devices.requests[2]"),
        ("mistakes", "claim.device-class-name", "spec.devices.requests[0].deviceClassName"),
        ("mistakes", "claim.allocation-mode", "spec.devices.requests[0].count"),
        ("mistakes", "claim.selectors", "spec.devices.requests[0].selectors[0].cel.expression"),
        ("v1-shaped", "schema.unknown-field", "spec.spec.devices.requests[0].exactly"),
        ("flat-devices", "schema.unknown-field", "spec.devices[0].attributes"),
        ("bad-attributes", "device.attributes", "spec.devices[0].basic.attributes"),
        ("bad-attributes", "device.attribute-value", "spec.devices[0].basic.attributes[memory]"),
        ("bad-capacity", "schema.quantity", "spec.devices[0].basic.capacity[memory].value"),
    }
    p = draguard("validate", "--runtime-config", "api/beta=true", str(MISTAKES))
    assert "exactly one of `deviceClassName` (an exact request) or `firstAvailable` is required" in p.stdout
    assert "device fields go under `basic`: spec.devices[0].basic.attributes" in p.stdout


def test_cross_object_findings_use_the_manifest_paths_too(tmp_path: Path) -> None:
    f = tmp_path / "claim.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n---\n"
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      deviceClassName: no-such-class\n"
    )
    code, found = findings("--runtime-config", "resource.k8s.io/v1beta1", str(f))
    # an info offline (the class may be kept elsewhere: issue 8 §6), at the manifest's own path
    assert ("c", "claim.unknown-device-class", "info", "spec.devices.requests[0].deviceClassName") in found


def test_v1beta1_defaulting_is_narrower_than_v1s(tmp_path: Path) -> None:
    """v1beta1 defaults allocationMode/count only when deviceClassName is set: a request with selectors but
    no class gets allocationMode "" (unsupported) besides the missing class; its v1 form would not."""
    f = tmp_path / "claim.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      selectors: [{cel: {expression: 'true'}}]\n"
    )
    code, found = findings("--runtime-config", "resource.k8s.io/v1beta1", str(f))
    rules = {(rule, field) for _, rule, _, field in found}
    assert ("claim.allocation-mode", "spec.devices.requests[0].allocationMode") in rules
    assert code == 1


def _pods(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            p["pod"],
            p["feasible"],
            p["node"],
            [[(r["pool"], r["device"]) for r in c["results"]] for c in p["claims"]],
        )
        for p in report["pods"]
    ]


def test_simulate_gives_the_same_answers_for_the_v1beta1_cluster_as_for_its_v1_form() -> None:
    beta = draguard(
        "simulate", "-o", "json", "--runtime-config", "resource.k8s.io/v1beta1=true", str(GPU_CLUSTER)
    )
    v1 = draguard("simulate", "-o", "json", str(V1_CLUSTER))
    assert beta.returncode == v1.returncode == 1  # trainer-5 does not fit
    assert _pods(json.loads(beta.stdout)) == _pods(json.loads(v1.stdout))
    assert [p["feasible"] for p in json.loads(beta.stdout)["pods"]] == [True, True, True, True, False]
    # without the flag, every beta object is left out and named in the Pods' reasons
    off = json.loads(draguard("simulate", "-o", "json", str(GPU_CLUSTER)).stdout)
    assert all(p["feasible"] is False for p in off["pods"])
    assert "input.api-version" in off["pods"][0]["reason"]


def test_simulate_partitionable_and_nic_beta_manifests() -> None:
    p = draguard("simulate", "-o", "json", "--runtime-config", "api/beta=true", str(MIG))
    report = json.loads(p.stdout)
    assert p.returncode == 0, p.stdout
    [claims] = report["pods"]
    assert [r["device"] for r in claims["claims"][0]["results"]] == ["gpu-0-mig-3g-20gb-0"]
    p = draguard("simulate", "-o", "json", "--runtime-config", "api/beta=true", str(NIC))
    assert p.returncode == 0, p.stdout
    [claims] = json.loads(p.stdout)["pods"]
    # eth1 carries a NoSchedule taint the claim tolerates; eth3 is on the other NUMA node
    assert sorted(r["device"] for r in claims["claims"][0]["results"]) == ["eth1", "eth2"]


def test_strip_keeps_the_manifests_version_and_reports_at_its_paths(tmp_path: Path) -> None:
    f = tmp_path / "slice.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
        "  driver: d.example.com\n  nodeName: n\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
        "  devices:\n  - name: a\n    basic:\n      attributes: {x: {int: 1}}\n"
        "      taints: [{key: k, effect: NoSchedule}]\n"
    )
    p = draguard("strip", "--k8s-version", "1.35", "--runtime-config", "resource.k8s.io/v1beta1=true", str(f))
    assert p.returncode == 0, p.stderr
    [obj] = list(yaml.safe_load_all(p.stdout))
    assert obj["apiVersion"] == "resource.k8s.io/v1beta1"
    assert obj["spec"]["devices"] == [{"name": "a", "basic": {"attributes": {"x": {"int": 1}}}}]
    assert "warning skew.dropped-field: spec.devices[0].basic.taints:" in p.stderr
    assert "input.deprecated-api" in p.stderr
    off = draguard("strip", str(f))
    assert off.returncode == 1 and off.stdout.strip() in ("", "[]")
    assert "error input.api-version: apiVersion: no matches for kind" in off.stderr


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (
            "resource.k8s.io/v1alpha2=true",
            "group version resource.k8s.io/v1alpha2 that has not been registered",
        ),
        ("api/beta=yes", "invalid value api/beta=yes"),
        ("resource.k8s.io/v1beta2=maybe", "strconv.ParseBool"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "simulate", "strip"])
def test_bad_runtime_config_is_a_usage_error(command: str, flag: str, message: str) -> None:
    p = draguard(command, "--runtime-config", flag, str(NIC))
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr
