"""`draguard validate --policy` with tenant entries, end to end on real YAML files
(tests/fixtures/tenants/): one manifest per restriction, the cluster's Namespaces and devices from
`--cluster` (or from the input itself), each finding at its field path and line with its rule id and the
entry's mode deciding the severity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cliproc import ROOT, draguard

FIXTURES = ROOT / "tests" / "fixtures" / "tenants"
POLICY = FIXTURES / "policy.yaml"
CLUSTER = FIXTURES / "cluster"
MANIFESTS = FIXTURES / "manifests"


def _validate(
    *paths: Path | str, cluster: bool = True, policy: Path = POLICY
) -> tuple[int, list[dict[str, Any]]]:
    args = ["validate", "-o", "json", "--policy", str(policy)]
    if cluster:
        args += ["--cluster", str(CLUSTER)]
    p = draguard(*args, *map(str, paths))
    assert p.returncode in (0, 1), p.stderr
    found = [
        {"object": f"{o['kind']} {o.get('namespace')}/{o['name']}", **v}
        for o in json.loads(p.stdout)["objects"]
        for v in o["violations"]
    ]
    return p.returncode, found


def _tenant(found: list[dict[str, Any]]) -> list[tuple[str, str, str, str, int]]:
    """(object, rule, severity, field, line) of the tenant findings."""
    return sorted(
        (f["object"], f["rule"], f["severity"], f["field"], f["line"])
        for f in found
        if f["rule"].startswith("tenant.")
    )


def test_a_compliant_claim_passes() -> None:
    code, found = _validate(MANIFESTS / "compliant.yaml")
    assert code == 0 and found == []


def test_device_classes_by_mode_and_exclusion() -> None:
    code, found = _validate(MANIFESTS / "device-class.yaml")
    assert code == 1
    classes = [t for t in _tenant(found) if t[1] == "tenant.device-class"]
    assert classes == [
        (
            "Pod team-c/worker",
            "tenant.device-class",
            "warning",
            "spec.resourceClaims[0].resourceClaimTemplateName",
            56,
        ),
        (
            "ResourceClaim team-a/dedicated",
            "tenant.device-class",
            "error",
            "spec.devices.requests[0].firstAvailable[1].deviceClassName",
            12,
        ),
        (
            "ResourceClaim team-c/dedicated",
            "tenant.device-class",
            "warning",
            "spec.devices.requests[0].exactly.deviceClassName",
            21,
        ),
        (
            "ResourceClaim team-d/dedicated",
            "tenant.device-class",
            "info",
            "spec.devices.requests[0].exactly.deviceClassName",
            30,
        ),
        (
            "ResourceClaimTemplate team-c/dedicated",
            "tenant.device-class",
            "warning",
            "spec.spec.devices.requests[0].exactly.deviceClassName",
            49,
        ),
    ]  # team-a-sandbox is excluded
    messages = {f["object"]: f["message"] for f in found if f["rule"] == "tenant.device-class"}
    assert messages["ResourceClaim team-a/dedicated"] == (
        'Forbidden: DeviceClass "dedicated.example.com" may not be used in namespace "team-a" (allowed: '
        '"gpu.example.com") (tenant gpu-tenants/shared, mode Enforce)'
    )
    assert "(tenant audit-only/watch, mode Audit)" in messages["ResourceClaim team-d/dedicated"]
    assert messages["Pod team-c/worker"] == (
        'Forbidden: ResourceClaimTemplate "dedicated" uses DeviceClass "dedicated.example.com", which may not be '
        'used in namespace "team-c" (allowed: "gpu.example.com") (tenant gpu-tenants/trial, mode Warn)'
    )


def test_required_selector_mutate_is_an_info_deny_an_error() -> None:
    code, found = _validate(MANIFESTS / "required-selector.yaml")
    assert code == 1
    assert _tenant(found) == [
        (
            "ResourceClaim team-b/any-gpu",
            "tenant.required-selector",
            "error",
            "spec.devices.requests[0].exactly.selectors",
            21,
        ),
        (
            "ResourceClaimTemplate team-a/any-gpu",
            "tenant.required-selector",
            "info",
            "spec.spec.devices.requests[0].exactly.selectors",
            10,
        ),
    ]
    added = next(f for f in found if f["object"].endswith("team-a/any-gpu"))
    assert added["message"].startswith("the admission webhook adds the selector")


def test_max_devices_per_claim_counts_all_on_the_input_devices() -> None:
    code, found = _validate(MANIFESTS / "max-per-claim.yaml")
    assert code == 1
    limits = [f for f in found if f["rule"] == "tenant.max-devices-per-claim"]
    assert [(f["object"], f["severity"], f["field"], f["line"]) for f in limits] == [
        ("ResourceClaim team-a/five", "error", "spec.devices.requests", 8),
        ("ResourceClaim team-a/all-and-one", "error", "spec.devices.requests", 17),
    ]
    # allocationMode All: the 4 shared GPUs the required selector leaves it, plus one
    assert "asks for 5 devices (all=4, one=1)" in limits[1]["message"]


def test_all_without_devices_is_a_warning_not_an_error(tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text(
        (MANIFESTS / "max-per-claim.yaml").read_text().split("---\n", 1)[1]  # the All claim only
        + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n"
    )
    code, found = _validate(manifest, cluster=False)  # no devices, no classes: All cannot be counted
    limits = [f for f in found if f["rule"] == "tenant.max-devices-per-claim"]
    assert [(f["severity"], f["field"]) for f in limits] == [("warning", "spec.devices.requests")]
    assert limits[0]["message"].startswith("cannot tell how many devices all ")
    assert code == 0


def test_max_devices_per_pod_sums_the_claims_of_its_templates() -> None:
    _, found = _validate(MANIFESTS / "max-per-pod.yaml")
    pods = [f for f in found if f["rule"] == "tenant.max-devices-per-pod"]
    assert [(f["object"], f["severity"], f["field"], f["line"]) for f in pods] == [
        ("Pod team-a/trainer", "error", "spec.resourceClaims", 20)
    ]
    assert "asks for 8 devices (first=4, second=4)" in pods[0]["message"]
    assert not [f for f in found if f["rule"] == "tenant.max-devices-per-claim"]  # 4 per claim is allowed


def test_admin_access_forbidden_besides_the_namespace_label() -> None:
    code, found = _validate(MANIFESTS / "admin-access.yaml")
    assert code == 1
    assert _tenant(found) == [
        (
            "ResourceClaim team-a/monitor",
            "tenant.admin-access",
            "error",
            "spec.devices.requests[0].exactly.adminAccess",
            11,
        )
    ]
    assert {f["rule"] for f in found} == {"tenant.admin-access", "claim.admin-access-namespace"}


def test_extended_resources_served_by_dra_forbidden() -> None:
    code, found = _validate(MANIFESTS / "extended-resources.yaml")
    assert code == 1
    assert _tenant(found) == [
        (
            "Pod team-a/legacy",
            "tenant.extended-resources",
            "error",
            "spec.containers[0].resources.limits[example.com/gpu]",
            10,
        )
    ]


def test_a_workload_template_is_checked_like_a_pod(tmp_path: Path) -> None:
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: legacy, namespace: team-a}\nspec:\n"
        "  selector: {matchLabels: {app: legacy}}\n  template:\n    metadata: {labels: {app: legacy}}\n"
        "    spec:\n      containers:\n      - name: main\n        image: registry.example.com/legacy:1.0\n"
        "        resources: {limits: {example.com/gpu: 2}}\n"
    )
    _, found = _validate(manifest)
    assert [(f["rule"], f["field"]) for f in found if f["rule"].startswith("tenant.")] == [
        ("tenant.extended-resources", "spec.template.spec.containers[0].resources.limits[example.com/gpu]")
    ]


def test_namespace_labels_come_from_the_input_or_the_entry_is_not_applied(tmp_path: Path) -> None:
    claim = (MANIFESTS / "device-class.yaml").read_text().split("---\n")[1]  # team-c, Warn
    alone = tmp_path / "alone.yaml"
    alone.write_text(claim)
    _, found = _validate(alone, cluster=False)  # team-c's labels unknown: the entry selects on `team`
    assert not _tenant(found)
    labelled = tmp_path / "labelled.yaml"
    labelled.write_text(
        claim + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-c, labels: {team: c}}\n"
    )
    _, found = _validate(labelled, cluster=False)
    assert [t[1:3] for t in _tenant(found)] == [("tenant.device-class", "warning")]


def test_the_policy_can_turn_a_tenant_rule_off_and_the_ignore_annotation_silences_it(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        POLICY.read_text()
        + "---\napiVersion: draguard.io/v1alpha1\nkind: DraguardPolicy\nmetadata: {name: quiet}\n"
        + 'spec:\n  rules: {tenant.extended-resources: "off"}\n'
    )
    code, found = _validate(MANIFESTS / "extended-resources.yaml", policy=policy)
    assert code == 0 and not _tenant(found)
    ignored = tmp_path / "ignored.yaml"
    ignored.write_text(
        (MANIFESTS / "admin-access.yaml")
        .read_text()
        .replace(
            "namespace: team-a}", "namespace: team-a, annotations: {draguard.io/ignore: tenant.admin-access}}"
        )
    )
    _, found = _validate(ignored)
    assert not _tenant(found)


@pytest.mark.parametrize("name", sorted(p.name for p in MANIFESTS.glob("*.yaml")))
def test_text_output_names_rule_field_and_tenant(name: str) -> None:
    p = draguard("validate", "--policy", str(POLICY), "--cluster", str(CLUSTER), str(MANIFESTS / name))
    tenant_lines = [line for line in p.stdout.splitlines() if " tenant." in line]
    if name == "compliant.yaml":
        assert p.returncode == 0 and not tenant_lines
        return
    assert tenant_lines, p.stdout
    for line in tenant_lines:
        assert (
            line.startswith(f"{MANIFESTS / name}:".replace(str(ROOT) + "/", ""))
            or str(MANIFESTS / name) in line
        )
        assert "(tenant " in line and ", mode " in line


def test_the_pre_commit_hooks_context_run_checks_tenant_entries_too(tmp_path: Path) -> None:
    """`validate --context .` (the pre-commit hook) with a tenant policy: the changed file's objects are
    judged with what the file itself holds (here its Namespace's labels); a file the policy passes stays
    clean, so the hook never blocks on what only the context would say."""
    repo = tmp_path / "repo"
    repo.mkdir()
    claim = (MANIFESTS / "device-class.yaml").read_text().split("---\n")[1]  # team-c, Warn
    (repo / "claim.yaml").write_text(
        claim + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-c, labels: {team: c}}\n"
    )
    (repo / "ok.yaml").write_text((MANIFESTS / "compliant.yaml").read_text())
    args = ["validate", "-o", "json", "--policy", str(POLICY), "--context", str(repo)]
    p = draguard(*args, str(repo / "claim.yaml"), str(repo / "ok.yaml"))
    assert p.returncode == 0, p.stderr  # a warning only
    found = [
        (o["name"], v["rule"], v["severity"])
        for o in json.loads(p.stdout)["objects"]
        for v in o["violations"]
        if v["rule"].startswith("tenant.")
    ]
    assert [f[1:] for f in found] == [("tenant.device-class", "warning")]
