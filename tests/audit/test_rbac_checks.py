"""`draguard audit rbac`'s checks on real objects: the public drivers' Helm charts' RBAC as rendered
(tests/fixtures/realistic/<driver>/rbac/), with and without the ValidatingAdmissionPolicies the charts ship
(tests/fixtures/rbac/node-bound/), and the hardening guide's example roles bound the way the guide
describes and the ways it warns against (tests/fixtures/rbac/hazards/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from webhook.audit.rbac.authz import load
from webhook.audit.rbac.checks import RbacReport, check
from webhook.io.documents import Document, discover_all, parse, read_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REALISTIC = FIXTURES / "realistic"
HARDENING = REALISTIC / "k8s-website" / "hardening"


def objects(*paths: Path) -> list[dict[str, Any]]:
    out = []
    for f in discover_all([str(p) for p in paths]).files:
        out += [d.obj for d in parse(read_text(f), f) if isinstance(d, Document)]
    return out


def judged(report: RbacReport) -> set[tuple[str, str, str, str, int]]:
    return {
        (f.check.value, f.severity.value, str(f.subject), f.binding.name, f.rule.index)
        for f in report.findings
    }


SLICE_WARNING = "resourceslice.write-any-node", "warning"

# Each chart with the 1.37 default (granular status authorization on): its kubelet plugin's service
# account may write ResourceSlices for any node, which the RBAC alone cannot narrow; nothing else.
CHARTS = {
    "dra-example-driver": (
        "ServiceAccount dra-example-driver/dra-example-driver-service-account",
        "dra-example-driver-role-binding",
        4,
    ),
    "nvidia": (
        "ServiceAccount nvidia-dra-driver-gpu/dra-driver-nvidia-gpu-service-account-kubeletplugin",
        "dra-driver-nvidia-gpu-clusterrole-binding-kubeletplugin",
        2,
    ),
    "dranet": ("ServiceAccount kube-system/dranet", "dranet", 2),
    "intel": (
        "ServiceAccount intel-gpu-resource-driver/intel-gpu-sa",
        "intel-gpu-resource-driver-rolebinding",
        1,
    ),
}


@pytest.mark.parametrize("driver", sorted(CHARTS))
def test_a_charts_rbac_alone_grants_slice_writes_for_any_node_and_nothing_else(driver: str) -> None:
    report = check(load(objects(REALISTIC / driver / "rbac")), granular=True)
    subject, binding, index = CHARTS[driver]
    assert judged(report) == {(*SLICE_WARNING, subject, binding, index)}
    assert report.exit_code == 1


def test_the_example_drivers_policy_node_binds_its_slices() -> None:
    report = check(
        load(
            objects(
                REALISTIC / "dra-example-driver" / "rbac",
                FIXTURES / "rbac/node-bound/dra-example-driver-vap.yaml",
            )
        ),
        True,
    )
    ((kind, severity, *_),) = judged(report)
    assert (kind, severity) == ("resourceslice.write-any-node", "info")
    assert report.exit_code == 0


def test_the_nvidia_policy_names_a_service_account_the_kubelet_plugin_does_not_run_as() -> None:
    """A real finding on the chart: its ValidatingAdmissionPolicy's condition names
    `...-service-account`; the kubelet plugin, which holds the ResourceSlice writes, runs as
    `...-service-account-kubeletplugin`, so the policy never applies to it."""
    report = check(
        load(objects(REALISTIC / "nvidia" / "rbac", FIXTURES / "rbac/node-bound/nvidia-vap.yaml")), True
    )
    subject, binding, index = CHARTS["nvidia"]
    assert judged(report) == {(*SLICE_WARNING, subject, binding, index)}


@pytest.mark.parametrize(("driver", "status_rule"), [("dra-example-driver", 1), ("dranet", 4)])
def test_without_granular_authorization_a_drivers_status_update_writes_every_drivers_status(
    driver: str, status_rule: int
) -> None:
    """1.35 (or the gate off): the drivers' resourceclaims/status update is the whole status."""
    subject, binding, _ = CHARTS[driver]
    report = check(load(objects(REALISTIC / driver / "rbac")), granular=False)
    assert ("claim-status.ungated", "warning", subject, binding, status_rule) in judged(report)
    (f,) = [f for f in report.findings if f.check == "claim-status.ungated"]
    assert "enforceNodeBoundStatus" in f.fix and "associated-node:update" in f.fix


SRIOV = (
    "ServiceAccount dra-driver-sriov/dra-driver-sriov-dra-driver-sriov-chart-service-account",
    "dra-driver-sriov-dra-driver-sriov-chart-role-binding",
)


def test_the_sriov_chart_grants_its_driver_status_for_any_driver() -> None:
    """A real finding on the SR-IOV DRA driver's chart (its ValidatingAdmissionPolicy templates are
    disabled, `*.bak`): `associated-node:update` on `resourceclaims/driver` without resourceNames lets it
    write any driver's status entries on its node's claims; and its slice writes are for any node."""
    report = check(load(objects(REALISTIC / "sriov" / "rbac")), granular=True)
    assert judged(report) == {
        (*SLICE_WARNING, *SRIOV, 4),
        ("claim-status.driver-any-driver", "warning", *SRIOV, 2),
    }
    (f,) = [f for f in report.findings if f.check == "claim-status.driver-any-driver"]
    assert "resourceNames" in f.fix
    ungated = check(load(objects(REALISTIC / "sriov" / "rbac")), granular=False)
    assert ("claim-status.ungated", "warning", *SRIOV, 1) in judged(ungated)


def test_the_guides_roles_bound_as_it_describes_and_as_it_warns() -> None:
    report = check(load(objects(HARDENING, FIXTURES / "rbac/hazards")), granular=True)
    assert judged(report) == {
        # the allocation controller: binding power, legitimate but a scheduler's, so named
        ("claim-status.binding", "warning", "ServiceAccount dra-system/allocator", "custom-allocator", 1),
        # the multi-node controller: arbitrary-node, with resourceNames
        (
            "claim-status.driver-arbitrary-node",
            "warning",
            "ServiceAccount dra-system/fabric-controller",
            "example-multinode",
            1,
        ),
        # a person with the allocator's role
        ("claim-status.binding", "error", "User jane@example.com", "debug-allocation", 1),
        # verbs ["*"] on resourceclaims/driver is arbitrary-node for every driver; resourceclaims/* is nothing
        (
            "claim-status.driver-arbitrary-node",
            "warning",
            "ServiceAccount dra-system/sloppy",
            "sloppy-driver",
            0,
        ),
        # a DeviceTaintRule writer aggregated into a role every service account has
        ("devicetaintrule.write", "error", "Group system:serviceaccounts", "device-ops-everyone", 0),
        ("devicetaintrule.write", "warning", "ServiceAccount dra-system/health", "health-controller", 0),
        # the self-service namespace pattern of the guide's admin-access section
        ("admin-access.label", "warning", "Group team-a-devs", "team-a-self-service", 0),
        ("admin-access.use", "info", "ServiceAccount monitoring/device-monitor", "device-monitor", 0),
        ("resourceslice.write-any-node", "error", "User bob@example.com", "slice-editor", 0),
        ("deviceclass.write", "warning", "User bob@example.com", "slice-editor", 0),
    }
    # the node-local driver role of the guide: no finding; admins and the control plane: not judged
    assert "kubelet-plugin" not in str(judged(report))
    assert report.admins == ["Group ops"]
    assert report.built_in == 4  # system:masters' cluster-admin (2 rules), the scheduler's role (2 rules)
    (arb,) = [f for f in report.findings if f.subject.name == "fabric-controller"]
    assert (
        arb.rule.text()
        == '{apiGroups: ["resource.k8s.io"], resources: ["resourceclaims/driver"], resourceNames: ["dra.example.com"], verbs: ["arbitrary-node:patch", "arbitrary-node:update"]}'
    )
    assert "associated-node:update" in arb.fix


def test_the_guides_roles_without_granular_authorization() -> None:
    """Gate off: every status writer holds the whole status; the binding/driver rules are inert."""
    report = check(load(objects(HARDENING, FIXTURES / "rbac/hazards")), granular=False)
    ungated = {
        (f.severity.value, str(f.subject)) for f in report.findings if f.check == "claim-status.ungated"
    }
    assert ungated == {
        ("warning", "ServiceAccount dra-system/allocator"),
        ("warning", "ServiceAccount dra-system/kubelet-plugin"),
        ("warning", "ServiceAccount dra-system/fabric-controller"),
        ("warning", "ServiceAccount dra-system/sloppy"),
        ("error", "User jane@example.com"),
    }
    assert not [
        f
        for f in report.findings
        if f.check.value.startswith("claim-status.") and f.check != "claim-status.ungated"
    ]
