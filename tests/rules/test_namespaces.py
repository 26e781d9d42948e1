"""Offline rules on the Namespaces of the input (issue 8 §6): admin access against the namespace label,
and objects of a file that creates a Namespace but do not name it."""

from __future__ import annotations

from pathlib import Path

from webhook.validate import RunOptions, check_files


def namespace(name: str, labels: str = "") -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n{labels}"


def admin_claim(ns: str | None, kind: str = "ResourceClaim") -> str:
    meta = f"{{name: debug, namespace: {ns}}}" if ns else "{name: debug}"
    body = "  devices:\n    requests:\n    - name: nics\n      exactly: {deviceClassName: dranet, allocationMode: All, adminAccess: true}\n"
    if kind == "ResourceClaimTemplate":
        body = "  spec:\n" + "".join("  " + ln + "\n" for ln in body.splitlines())
    return f"apiVersion: resource.k8s.io/v1\nkind: {kind}\nmetadata: {meta}\nspec:\n{body}"


def findings(
    tmp_path: Path, text: str, gates: tuple[tuple[str, bool], ...] = (), version: str = "1.37"
) -> list[tuple[str, str, str, int]]:
    (tmp_path / "in.yaml").write_text(text)
    report = check_files([str(tmp_path / "in.yaml")], RunOptions(version=version, gates=gates))
    return [(v.rule, str(o.name), v.field, v.line) for o in report.objects for v in o.violations]


def test_admin_access_needs_the_label_on_a_namespace_of_the_input(tmp_path: Path) -> None:
    text = namespace("net-debug") + "---\n" + admin_claim("net-debug")
    got = [f for f in findings(tmp_path, text) if f[0] == "claim.admin-access-namespace"]
    # upstream's path (as claim.admin-access in the webhook), at the line of the request
    assert got == [("claim.admin-access-namespace", "debug", "spec.devices.requests[0].adminAccess", 12)]
    template = namespace("net-debug") + "---\n" + admin_claim("net-debug", "ResourceClaimTemplate")
    got = [f for f in findings(tmp_path, template) if f[0] == "claim.admin-access-namespace"]
    assert [f[2] for f in got] == ["spec.spec.devices.requests[0].adminAccess"]


def test_admin_access_is_fine_with_the_label_elsewhere_or_without_the_gate(tmp_path: Path) -> None:
    labelled = namespace("net-debug", '  labels:\n    resource.kubernetes.io/admin-access: "true"\n')
    assert not [
        f for f in findings(tmp_path, labelled + "---\n" + admin_claim("net-debug")) if "admin" in f[0]
    ]
    other = namespace("elsewhere") + "---\n" + admin_claim("net-debug")  # its namespace is not in the input
    assert not [f for f in findings(tmp_path, other) if f[0] == "claim.admin-access-namespace"]
    no_ns = namespace("net-debug") + "---\n" + admin_claim(None)  # kubectl decides its namespace
    assert not [f for f in findings(tmp_path, no_ns) if f[0] == "claim.admin-access-namespace"]
    off = (("DRAAdminAccess", False),)  # beta in 1.35: a cluster may turn it off (the field is dropped)
    text = namespace("net-debug") + "---\n" + admin_claim("net-debug")
    assert not [f for f in findings(tmp_path, text, off, "1.35") if f[0] == "claim.admin-access-namespace"]


def test_an_object_without_namespace_in_a_file_creating_one_is_a_warning(tmp_path: Path) -> None:
    text = (
        namespace("gpu-test3")
        + "---\n"
        + admin_claim(None).replace("adminAccess: true", "count: 1").replace("allocationMode: All, ", "")
    )
    got = findings(tmp_path, text)
    assert ("meta.namespace-implied", "debug", "metadata.namespace", 8) in got
    two = namespace("a") + "---\n" + namespace("b") + "---\n" + admin_claim(None)  # which one? not said
    assert not [f for f in findings(tmp_path, two) if f[0] == "meta.namespace-implied"]
