"""`draguard audit rbac` as a real process: --cluster files, text and JSON, the version and gates deciding
granular status authorization, the exit codes (0 nothing above info, 1 a warning or error, 2 usage), and
`draguard audit` itself unchanged beside it."""

from __future__ import annotations

import json

from tests.cliproc import draguard

EXAMPLE = "tests/fixtures/realistic/dra-example-driver/rbac"
VAP = "tests/fixtures/rbac/node-bound/dra-example-driver-vap.yaml"


def test_json_names_subject_binding_role_rule_and_fix() -> None:
    p = draguard("audit", "rbac", "--cluster", EXAMPLE, "-o", "json")
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["granularStatusAuthorization"] is True
    (f,) = out["findings"]
    assert f["check"] == "resourceslice.write-any-node" and f["severity"] == "warning"
    assert f["subject"] == {
        "kind": "ServiceAccount",
        "name": "dra-example-driver-service-account",
        "namespace": "dra-example-driver",
    }
    assert f["binding"] == {
        "kind": "ClusterRoleBinding",
        "name": "dra-example-driver-role-binding",
        "namespace": "",
    }
    assert f["role"] == {"kind": "ClusterRole", "name": "dra-example-driver-role", "namespace": ""}
    assert f["rule"]["index"] == 4 and '"resourceslices"' in f["rule"]["text"]
    assert "ValidatingAdmissionPolicy" in f["fix"]


def test_node_bound_is_exit_0_and_text_says_why() -> None:
    p = draguard("audit", "rbac", "--cluster", EXAMPLE, "--cluster", VAP)
    assert p.returncode == 0, p.stderr
    assert (
        "info: resourceslice.write-any-node: ServiceAccount dra-example-driver/dra-example-driver-service-account"
        in p.stdout
    )
    assert "granular status authorization: on" in p.stdout


def test_version_and_gates_decide_granular_authorization() -> None:
    for args in (
        ("--k8s-version", "1.35"),
        ("--feature-gates", "DRAResourceClaimGranularStatusAuthorization=false"),
    ):
        p = draguard("audit", "rbac", "--cluster", EXAMPLE, "--cluster", VAP, "-o", "json", *args)
        out = json.loads(p.stdout)
        assert out["granularStatusAuthorization"] is False
        assert [f["check"] for f in out["findings"] if f["severity"] == "warning"] == ["claim-status.ungated"]
        assert p.returncode == 1


def test_usage_errors() -> None:
    p = draguard("audit", "rbac", "--cluster", EXAMPLE, "--kubeconfig", "/nonexistent")
    assert p.returncode == 2 and "pass one" in p.stderr


def test_draguard_audit_is_unchanged_beside_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = draguard("audit", "--cluster", EXAMPLE, "-o", "json")
    assert p.returncode == 0, p.stderr
    assert "results" in json.loads(p.stdout)


def test_rbac_objects_the_api_server_would_reject_are_named_not_dropped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A role whose rules are not a list and a binding without a usable roleRef: each named with why,
    exit 1; the valid objects beside them are still judged."""
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: broken}\nrules: oops\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: ns}\n"
        "roleRef: 5\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
        "metadata: {name: c}\nroleRef: {kind: ClusterRole, name: broken}\nsubjects: [{kind: User}]\n"
    )
    p = draguard("audit", "rbac", "--cluster", str(tmp_path), "--cluster", EXAMPLE, "-o", "json")
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["unread"] == [
        "ClusterRole broken: rules is not a list",
        "RoleBinding ns/b: roleRef is not a Role or ClusterRole with a name",
        "ClusterRoleBinding c: subjects[0] is not a User, Group or ServiceAccount with a name",
    ]
    assert [f["check"] for f in out["findings"]] == ["resourceslice.write-any-node"]  # the chart still judged
    text = draguard("audit", "rbac", "--cluster", str(tmp_path)).stdout
    assert (
        "warning: not judged (the API server would reject it): ClusterRole broken: rules is not a list"
        in text
    )
    clean = json.loads(draguard("audit", "rbac", "--cluster", EXAMPLE, "-o", "json").stdout)
    assert clean["unread"] == []
