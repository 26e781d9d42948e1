"""webhook/admission/statusauthz.py's pieces against the cases of upstream's own tests of the granular
status authorization (pkg/registry/resource): which drivers a status change touches, the node an
allocation names, whether a user is a service account bound to a node."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.admission.request import GroupVersionKind, Request
from webhook.admission.statusauthz import allocated_node, bound_node, check, modified_drivers


def dev(driver: str, device: str, **more: Any) -> dict[str, Any]:
    return {"driver": driver, "pool": "pool-1", "device": device, **more}


@pytest.mark.parametrize(
    ("new", "old", "drivers"),
    [
        ([dev("a", "1"), dev("b", "2")], [dev("a", "1"), dev("b", "2")], []),
        ([dev("a", "1"), dev("b", "2")], [dev("a", "1")], ["b"]),
        ([dev("a", "1"), dev("a", "2")], [dev("a", "1")], ["a"]),
        ([dev("a", "1")], [dev("a", "1"), dev("b", "2")], ["b"]),
        ([dev("a", "1", networkData={"interfaceName": "eth0", "ips": ["192.168.7.1/24"]})],
         [dev("a", "1", networkData={"interfaceName": "eth0"})], ["a"]),
        ([dev("a", "1", networkData={"interfaceName": "eth0", "ips": ["192.168.7.1/24"]}), dev("b", "2"), dev("c", "3")],
         [dev("a", "1", networkData={"interfaceName": "eth0"}), dev("b", "2"), dev("d", "4")], ["a", "c", "d"]),
        ([], [], []),
        ([dev("a", "1")], [], ["a"]),
        ([], [dev("a", "1")], ["a"]),
        # semantic equality: an empty list is no list; the shareID is part of the key
        ([dev("a", "1", conditions=[])], [dev("a", "1")], []),
        ([dev("a", "1", shareID="u1")], [dev("a", "1")], ["a"]),
    ],
)  # fmt: skip
def test_modified_drivers(new: list[Any], old: list[Any], drivers: list[str]) -> None:
    assert modified_drivers({"devices": new}, {"devices": old}) == drivers


def sel(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"allocation": {"nodeSelector": {"nodeSelectorTerms": list(terms)}}}


def field_in(*values: str, key: str = "metadata.name", op: str = "In") -> dict[str, Any]:
    return {"matchFields": [{"key": key, "operator": op, "values": list(values)}]}


@pytest.mark.parametrize(
    ("status", "node"),
    [
        ({}, ""),
        ({"allocation": {}}, ""),
        (sel(field_in("worker-1")), "worker-1"),
        (sel(field_in("node-a", "node-b")), ""),
        (
            sel(
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                    ]
                }
            ),
            "",
        ),
        (sel(field_in("node-1"), field_in("node-2")), ""),
        (sel(field_in("node-1", key="metadata.namespace")), ""),
        (sel(field_in("node-1", op="NotIn")), ""),
    ],
)
def test_allocated_node(status: dict[str, Any], node: str) -> None:
    assert allocated_node(status) == node


def req(username: str, extra: dict[str, list[str]], old: Any = None, new: Any = None) -> Request:
    return Request(
        uid="u",
        kind=GroupVersionKind("resource.k8s.io", "v1", "ResourceClaim"),
        resource="resourceclaims",
        sub_resource="status",
        request_kind=None,
        name="c",
        namespace="default",
        operation="UPDATE",
        username=username,
        object=new,
        old_object=old,
        dry_run=False,
        user_extra=tuple((k, tuple(v)) for k, v in extra.items()),
    )


SA = "system:serviceaccount:default:dra-driver-sa"
KEY = "authentication.kubernetes.io/node-name"


@pytest.mark.parametrize(
    ("username", "extra", "node"),
    [
        (SA, {KEY: ["worker-node-1"]}, "worker-node-1"),
        ("system:node:worker-node-1", {KEY: ["worker-node-1"]}, ""),  # the kubelet: not a service account
        ("jane-doe", {KEY: ["worker-node-1"]}, ""),
        (SA, {}, ""),
        (SA, {KEY: ["worker-node-1", "worker-node-2"]}, ""),
        (SA, {KEY: ["invalid_node_name!"]}, ""),
        ("system:serviceaccount:only-namespace", {KEY: ["worker-node-1"]}, ""),
    ],
)
def test_bound_node(username: str, extra: dict[str, list[str]], node: str) -> None:
    assert bound_node(req(username, extra)) == node


def test_off_unless_the_policy_turns_it_on() -> None:
    old = {"status": sel(field_in("n1"))}
    new = {"status": {**old["status"], "devices": [dev("a", "1")]}}
    r = req(SA, {KEY: ["n2"]}, old, new)
    assert check(r, enforce=False) is None
    denied = check(r, enforce=True)
    assert denied is not None and denied.field == "status.devices"
    assert check(req(SA, {KEY: ["n1"]}, old, new), enforce=True) is None
