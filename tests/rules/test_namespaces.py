"""Offline rules on the Namespaces of the input (issue 8 §6): admin access against the namespace label,
and objects of a file that creates a Namespace but do not name it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.builders import claim, dump_yaml, line_of, obj, request
from webhook.validate import RunOptions, check_files


def namespace(name: str, **labels: str) -> dict[str, Any]:
    ns = obj("Namespace", name, api="v1")
    if labels:
        ns["metadata"]["labels"] = labels
    return ns


def admin_claim(ns: str | None, kind: str = "ResourceClaim", **exactly: Any) -> dict[str, Any]:
    """Claim (or template) debug in `ns` (None: no namespace) for all of class dranet's devices, with admin
    access (`exactly` instead, when given)."""
    exactly = exactly or {"allocationMode": "All", "adminAccess": True}
    return claim("debug", [request("nics", "dranet", **exactly)], ns=ns, kind=kind)


def findings(
    tmp_path: Path,
    objs: list[dict[str, Any]],
    gates: tuple[tuple[str, bool], ...] = (),
    version: str = "1.37",
) -> list[tuple[str, str, str, int]]:
    (tmp_path / "in.yaml").write_text(dump_yaml(objs))
    report = check_files([str(tmp_path / "in.yaml")], RunOptions(version=version, gates=gates))
    return [(v.rule, str(o.name), v.field, v.line) for o in report.objects for v in o.violations]


def test_admin_access_needs_the_label_on_a_namespace_of_the_input(tmp_path: Path) -> None:
    objs = [namespace("net-debug"), admin_claim("net-debug")]
    got = [f for f in findings(tmp_path, objs) if f[0] == "claim.admin-access-namespace"]
    # upstream's path (as claim.admin-access in the webhook), at the line of the request
    line = line_of((tmp_path / "in.yaml").read_text(), "- name: nics")
    assert got == [("claim.admin-access-namespace", "debug", "spec.devices.requests[0].adminAccess", line)]
    template = [namespace("net-debug"), admin_claim("net-debug", "ResourceClaimTemplate")]
    got = [f for f in findings(tmp_path, template) if f[0] == "claim.admin-access-namespace"]
    assert [f[2] for f in got] == ["spec.spec.devices.requests[0].adminAccess"]


def test_admin_access_is_fine_with_the_label_elsewhere_or_without_the_gate(tmp_path: Path) -> None:
    labelled = namespace("net-debug", **{"resource.kubernetes.io/admin-access": "true"})
    assert not [f for f in findings(tmp_path, [labelled, admin_claim("net-debug")]) if "admin" in f[0]]
    other = [namespace("elsewhere"), admin_claim("net-debug")]  # its namespace is not in the input
    assert not [f for f in findings(tmp_path, other) if f[0] == "claim.admin-access-namespace"]
    no_ns = [namespace("net-debug"), admin_claim(None)]  # kubectl decides its namespace
    assert not [f for f in findings(tmp_path, no_ns) if f[0] == "claim.admin-access-namespace"]
    off = (("DRAAdminAccess", False),)  # beta in 1.35: a cluster may turn it off (the field is dropped)
    objs = [namespace("net-debug"), admin_claim("net-debug")]
    assert not [f for f in findings(tmp_path, objs, off, "1.35") if f[0] == "claim.admin-access-namespace"]


def test_an_object_without_namespace_in_a_file_creating_one_is_a_warning(tmp_path: Path) -> None:
    got = findings(tmp_path, [namespace("gpu-test3"), admin_claim(None, count=1)])
    written = (tmp_path / "in.yaml").read_text()
    # the claim's metadata
    line = line_of(written, "metadata:", start=line_of(written, "kind: ResourceClaim"))
    assert ("meta.namespace-implied", "debug", "metadata.namespace", line) in got
    two = [namespace("a"), namespace("b"), admin_claim(None)]  # which one? not said
    assert not [f for f in findings(tmp_path, two) if f[0] == "meta.namespace-implied"]
