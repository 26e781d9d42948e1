"""`rbac: {enforceNodeBoundStatus: true}` through the real webhook: `draguard serve --state DIR --policy
FILE` over HTTPS on 127.0.0.1, and ResourceClaim status UPDATEs as kube-apiserver sends them
(subResource status, the user's bound-token extra `authentication.kubernetes.io/node-name`) for a claim
allocated on kind-worker (tests/fixtures/rbac/status/): the node-aware rule of granular status
authorization, as upstream's tests state it — a driver on the claim's node may write status.devices, one
on another node may not, a node-bound account may not write the allocation, other users are RBAC's."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from server_proc import ROOT, Server, make_certs

FIXTURES = ROOT / "tests" / "fixtures" / "rbac" / "status"
DRIVER = "system:serviceaccount:dra-example-driver:dra-example-driver-service-account"
NODE_KEY = "authentication.kubernetes.io/node-name"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("statusauthz")
    (tmp / "state").mkdir()
    certs = tmp / "certs"
    make_certs(certs)
    s = Server(
        tmp,
        "--state", str(tmp / "state"),
        "--policy", str(FIXTURES / "policy.yaml"),
        "--certs", str(certs),
        "--workers", "1",
        certs=certs,
    )  # fmt: skip
    yield s
    assert s.stop() == 0, s.log()


def stored() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((FIXTURES / "claim.yaml").read_text())
    return data


def with_device_status(claim: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(claim)
    new["metadata"]["resourceVersion"] = "4712"
    new["status"]["devices"] = [
        {
            "driver": "gpu.example.com",
            "pool": "kind-worker",
            "device": "gpu-0",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Prepared",
                    "message": "",
                    "lastTransitionTime": "2026-11-30T10:00:05Z",
                }
            ],
            "data": {"uuid": "gpu-18db0e85-99e9-c746-8531-ffeb86328b39"},
        }
    ]
    return new


def status_update(
    new: dict[str, Any], old: dict[str, Any], user: str, node: str | None, verb: str = "update"
) -> dict[str, Any]:
    """The AdmissionReview of a status update, as the API server sends it (a patch arrives as UPDATE too)."""
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    gvr = {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"}
    extra = {NODE_KEY: [node]} if node else {}
    if node:
        extra["authentication.kubernetes.io/pod-name"] = ["dra-example-driver-kubeletplugin-x7k2p"]
    request = {
        "uid": str(uuid.uuid4()),
        "kind": gvk,
        "resource": gvr,
        "subResource": "status",
        "requestKind": gvk,
        "requestResource": gvr,
        "requestSubResource": "status",
        "name": new["metadata"]["name"],
        "namespace": new["metadata"]["namespace"],
        "operation": "UPDATE",
        "userInfo": {
            "username": user,
            "uid": "8d1f8c2e-3b4a-4f5e-9a6b-7c8d9e0f1a2b",
            "groups": [
                "system:serviceaccounts",
                "system:serviceaccounts:dra-example-driver",
                "system:authenticated",
            ]
            if user.startswith("system:serviceaccount:")
            else ["system:authenticated"],
            "extra": extra,
        },
        "object": new,
        "oldObject": old,
        "dryRun": False,
        "options": {
            "kind": "UpdateOptions" if verb == "update" else "PatchOptions",
            "apiVersion": "meta.k8s.io/v1",
        },
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def answer(server: Server, ar: dict[str, Any]) -> dict[str, Any]:
    status, body = server.review(ar)
    assert status == 200, body
    response: dict[str, Any] = body["response"]
    return response


def test_the_driver_on_the_claims_node_writes_its_device_status(server: Server) -> None:
    old = stored()
    r = answer(server, status_update(with_device_status(old), old, DRIVER, "kind-worker"))
    assert r["allowed"] is True, r


def test_the_driver_on_another_node_is_denied(server: Server) -> None:
    old = stored()
    r = answer(server, status_update(with_device_status(old), old, DRIVER, "kind-worker2", verb="patch"))
    assert r["allowed"] is False
    msg = r["status"]["message"]
    assert (
        "bound to node kind-worker2" in msg
        and "gpu.example.com" in msg
        and "allocated to node kind-worker" in msg
    )
    assert r["status"]["details"]["causes"][0]["field"] == "status.devices"


def test_a_claim_on_several_nodes_is_no_node_bound_accounts(server: Server) -> None:
    old = stored()
    old["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = [
        "kind-worker",
        "kind-worker2",
    ]
    r = answer(server, status_update(with_device_status(old), old, DRIVER, "kind-worker"))
    assert r["allowed"] is False and "not allocated to a single node" in r["status"]["message"]


def test_removing_another_drivers_entry_is_a_change_of_that_driver(server: Server) -> None:
    old = with_device_status(stored())
    new = copy.deepcopy(old)
    new["status"]["devices"] = []
    assert answer(server, status_update(new, old, DRIVER, "kind-worker"))["allowed"] is True
    r = answer(server, status_update(new, old, DRIVER, "kind-worker2"))
    assert r["allowed"] is False


def test_a_node_bound_account_may_not_write_the_allocation_or_reservations(server: Server) -> None:
    old = stored()
    new = copy.deepcopy(old)
    new["status"]["reservedFor"].append(
        {"resource": "pods", "name": "pod1", "uid": "1c9d8e7f-1a2b-4c3d-8e9f-102030405061"}
    )
    r = answer(server, status_update(new, old, DRIVER, "kind-worker"))
    assert r["allowed"] is False and "status.reservedFor" in r["status"]["message"]


def test_unchanged_devices_and_other_users_are_left_to_rbac(server: Server) -> None:
    old = with_device_status(stored())
    same = copy.deepcopy(old)
    same["metadata"]["labels"] = {"touched": "yes"}
    assert answer(server, status_update(same, old, DRIVER, "kind-worker2"))["allowed"] is True
    # no node-name extra (a controller), the scheduler, a token with two node names: not node-bound
    new = with_device_status(stored())
    for user, node in (
        (DRIVER, None),
        ("system:kube-scheduler", None),
        ("system:serviceaccount:x", "kind-worker2"),
    ):
        assert answer(server, status_update(new, stored(), user, node))["allowed"] is True, user
