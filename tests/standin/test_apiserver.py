"""The API-server stand-in as its clients see it: a real process, real HTTP(S), the `kubernetes` client.
One stand-in serves the module (each test uses its own names); TLS and admission get their own."""

from __future__ import annotations

import json
import signal
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client, config, watch

from tests.standin.process import StandIn, wait_for

DRA = "resource.k8s.io/v1"


def slice_obj(name: str, node: str = "node-0", generation: int = 1, devices: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
        },
    }


def claim_obj(name: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    tmp = tmp_path_factory.mktemp("standin")
    with StandIn.start(tmp) as server:
        yield server


@pytest.fixture(scope="module")
def kube(api: StandIn, tmp_path_factory: pytest.TempPathFactory) -> client.ApiClient:
    kubeconfig = api.kubeconfig(tmp_path_factory.mktemp("kc") / "kubeconfig")
    return config.new_client_from_config(str(kubeconfig))


def raw(response: Any) -> Any:
    return json.loads(response.data)


def test_a_paginated_list_is_one_snapshot(api: StandIn, kube: client.ApiClient) -> None:
    dra = client.ResourceV1Api(kube)
    api.seed([slice_obj(f"page-{i}") for i in range(5)])
    selector = "fieldSelector=spec.driver%3Dgpu.example.com"  # the stand-in's equality selectors
    first = raw(dra.list_resource_slice(limit=2, _preload_content=False))
    assert [i["metadata"]["name"] for i in first["items"]][:1] == ["page-0"]
    assert "kind" not in first["items"][0] and first["items"][0]["spec"]["driver"] == "gpu.example.com"
    assert first["metadata"]["remainingItemCount"] >= 3
    # writes between the pages are not seen by the rest of the list
    dra.delete_resource_slice("page-3")
    dra.create_resource_slice(slice_obj("page-31"))
    names = [i["metadata"]["name"] for i in first["items"]]
    token = first["metadata"]["continue"]
    while token:
        page = raw(dra.list_resource_slice(limit=2, _continue=token, _preload_content=False))
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert {"page-3"} <= set(names) and "page-31" not in names and names == sorted(names)
    now = [i["metadata"]["name"] for i in raw(dra.list_resource_slice(_preload_content=False))["items"]]
    assert "page-3" not in now and "page-31" in now
    status, answer, _ = api.request("GET", f"/apis/{DRA}/resourceslices?{selector}")
    assert status == 200 and len(answer["items"]) == len(now)


def test_watch_from_the_list_rv_sees_every_change_then_a_bookmark(
    api: StandIn, kube: client.ApiClient
) -> None:
    dra = client.ResourceV1Api(kube)
    rv = raw(dra.list_resource_slice(_preload_content=False))["metadata"]["resourceVersion"]
    dra.create_resource_slice(slice_obj("watched"))
    dra.patch_resource_slice("watched", {"spec": {"pool": {"generation": 2}}})
    dra.delete_resource_slice("watched")
    seen: list[tuple[str, str | None, str]] = []
    w = watch.Watch()
    for event in w.stream(
        dra.list_resource_slice, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=60
    ):
        obj = event["raw_object"]
        seen.append((event["type"], obj["metadata"].get("name"), obj["metadata"]["resourceVersion"]))
        if event["type"] == "DELETED":
            api.bookmark()
        if event["type"] == "BOOKMARK":
            w.stop()
    types = [t for t, _, _ in seen]
    assert types == ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
    assert seen[1][1] == "watched" and event["raw_object"]["kind"] == "ResourceSlice"
    rvs = [int(r) for _, _, r in seen]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    assert rvs[-1] == api.state()["resourceVersion"]  # the bookmark carries the current resourceVersion


def test_watch_without_rv_starts_with_synthetic_adds_and_the_initial_events_end(api: StandIn) -> None:
    api.seed([claim_obj("c-1", "kube-public"), claim_obj("c-2", "kube-public"), claim_obj("c-3")])
    path = f"/apis/{DRA}/namespaces/kube-public/resourceclaims?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
    events = _stream(api, path)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:2]] == [
        ("ADDED", "c-1"),
        ("ADDED", "c-2"),
    ]
    assert events[2]["type"] == "BOOKMARK"
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def _stream(api: StandIn, path: str) -> list[dict[str, Any]]:
    """A whole watch stream, read until the server ends it (timeoutSeconds)."""
    c = api.connection()
    try:
        c.request("GET", path)
        r = c.getresponse()
        assert r.status == 200 and r.getheader("Transfer-Encoding") == "chunked"
        return [json.loads(line) for line in r.read().splitlines()]
    finally:
        c.close()


def test_a_watch_ends_at_timeout_seconds(api: StandIn, kube: client.ApiClient) -> None:
    rv = raw(client.CoreV1Api(kube).list_node(_preload_content=False))["metadata"]["resourceVersion"]
    assert _stream(api, f"/api/v1/nodes?watch=1&resourceVersion={rv}&timeoutSeconds=1") == []


def test_an_expired_resource_version_is_410(api: StandIn, kube: client.ApiClient) -> None:
    dra = client.ResourceV1Api(kube)
    api.seed([slice_obj(f"exp-{i}") for i in range(3)])
    listed = raw(dra.list_resource_slice(limit=1, _preload_content=False))
    api.expire()
    with pytest.raises(client.ApiException) as caught:
        for _ in watch.Watch().stream(
            dra.list_resource_slice,
            resource_version=listed["metadata"]["resourceVersion"],
            timeout_seconds=30,
        ):
            pass
    assert caught.value.status == 410 and "too old resource version" in str(caught.value.reason)
    # the continue token of the list before is gone too
    status, answer, _ = api.request(
        "GET", f"/apis/{DRA}/resourceslices?limit=1&continue={listed['metadata']['continue']}"
    )
    assert (status, answer["reason"], answer["code"]) == (410, "Expired", 410)
    # a relist gives an rv the watch accepts
    rv = raw(dra.list_resource_slice(_preload_content=False))["metadata"]["resourceVersion"]
    assert _stream(api, f"/apis/{DRA}/resourceslices?watch=1&resourceVersion={rv}&timeoutSeconds=1") == []


def test_it_stops_on_sigint_when_started_with_sigint_ignored(tmp_path: Path) -> None:
    """A shell without job control starts background jobs (a CI step, `cmd &`) with SIGINT ignored, and
    children inherit that: the stand-in must still end on stop()'s SIGINT, not at the kill 10 s later."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server = StandIn.start(tmp_path)
    finally:
        signal.signal(signal.SIGINT, before)
    server.stop()
    assert server.proc.returncode == 0  # -9: it ignored SIGINT and was killed


def test_history_beyond_the_limit_is_forgotten(tmp_path: Path) -> None:
    with StandIn.start(tmp_path, extra=["--history-limit", "4"]) as api:
        rv = api.state()["resourceVersion"]
        api.seed([slice_obj(f"h-{i}") for i in range(6)])
        events = _stream(api, f"/apis/{DRA}/resourceslices?watch=1&resourceVersion={rv}&timeoutSeconds=1")
        assert [e["type"] for e in events] == ["ERROR"] and events[0]["object"]["code"] == 410


def test_dropped_watch_connections_break_the_stream(api: StandIn, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    rv = raw(core.list_namespace(_preload_content=False))["metadata"]["resourceVersion"]
    outcome: dict[str, Any] = {}
    opened = threading.Event()

    def read(graceful: bool) -> None:
        resp = core.list_namespace(
            watch=True, resource_version=rv, timeout_seconds=60, _preload_content=False
        )
        opened.set()
        try:
            outcome[graceful] = b"".join(resp.stream(decode_content=False))
        except urllib3.exceptions.HTTPError as e:
            outcome[graceful] = e

    for graceful in (False, True):
        # this round's watch is the one opened after `started` (the previous round's dropped watch may still
        # be listed for a moment: a count compared with one taken before could stay equal)
        started = time.time()
        opened.clear()
        t = threading.Thread(target=read, args=(graceful,))
        t.start()
        opened.wait(30)
        wait_for(
            "the watch",
            lambda s=started: any(w["resource"] == "namespaces" and w["since"] >= s for w in api.watches()),
        )
        api.drop_watches(graceful=graceful)
        t.join(30)
    assert isinstance(outcome[False], urllib3.exceptions.ProtocolError)
    assert outcome[True] == b""


def test_writes_answer_with_status_errors(api: StandIn, kube: client.ApiClient) -> None:
    dra = client.ResourceV1Api(kube)

    def error(call: Any, *args: Any, **kw: Any) -> dict[str, Any]:
        with pytest.raises(client.ApiException) as caught:
            call(*args, **kw)
        body: dict[str, Any] = json.loads(caught.value.body)
        assert body["kind"] == "Status" and body["code"] == caught.value.status
        return body

    dra.create_device_class({"apiVersion": DRA, "kind": "DeviceClass", "metadata": {"name": "err-gpu"}})
    assert error(dra.read_device_class, "nope")["reason"] == "NotFound"
    body = error(
        dra.create_device_class, {"apiVersion": DRA, "kind": "DeviceClass", "metadata": {"name": "err-gpu"}}
    )
    assert (body["reason"], body["details"]["name"]) == ("AlreadyExists", "err-gpu")
    stale = raw(dra.read_device_class("err-gpu", _preload_content=False))
    dra.patch_device_class("err-gpu", {"metadata": {"labels": {"a": "b"}}})
    assert error(dra.replace_device_class, "err-gpu", stale)["reason"] == "Conflict"
    status, body, _ = api.request(
        "POST",
        f"/apis/{DRA}/deviceclasses",
        {"apiVersion": DRA, "kind": "DeviceClass", "metadata": {"name": "Bad_Name"}},
    )
    assert (status, body["reason"], body["details"]["causes"][0]["field"]) == (
        422,
        "Invalid",
        "metadata.name",
    )
    status, body, _ = api.request(
        "POST", f"/apis/{DRA}/namespaces/nowhere/resourceclaims", claim_obj("x", "nowhere")
    )
    assert (status, body["reason"], body["message"]) == (404, "NotFound", 'namespaces "nowhere" not found')
    status, body, _ = api.request(
        "POST", f"/apis/{DRA}/deviceclasses", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    )
    assert (status, body["reason"]) == (400, "BadRequest")
    status, body, _ = api.request(
        "PATCH",
        f"/apis/{DRA}/deviceclasses/err-gpu",
        {"metadata": {}},
        content_type="application/apply-patch+yaml",
    )
    assert (status, body["reason"]) == (422, "Invalid") and "fieldManager" in body["message"]
    status, body, _ = api.request(
        "PATCH", f"/apis/{DRA}/deviceclasses/err-gpu", {}, content_type="text/plain"
    )
    assert status == 415
    status, body, _ = api.request("DELETE", f"/apis/{DRA}/deviceclasses/nope")
    assert (status, body["reason"]) == (404, "NotFound")


def test_status_subresource_generation_and_noop_writes(api: StandIn, kube: client.ApiClient) -> None:
    dra = client.ResourceV1Api(kube)
    claim = claim_obj("st-1")
    claim["status"] = {"allocation": {"devices": {"results": []}}}
    created = raw(dra.create_namespaced_resource_claim("default", claim, _preload_content=False))
    assert "status" not in created and created["metadata"]["generation"] == 1  # reset on create
    assert created["metadata"]["managedFields"][0]["manager"]
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0"}]
        }
    }
    after = raw(
        dra.patch_namespaced_resource_claim_status(
            "st-1", "default", {"status": {"allocation": allocation}}, _preload_content=False
        )
    )
    assert after["status"]["allocation"] == allocation and after["metadata"]["generation"] == 1
    # the main resource keeps the status; a spec change bumps the generation
    new = {**after, "spec": {"devices": {"requests": []}}, "status": {}}
    replaced = raw(dra.replace_namespaced_resource_claim("st-1", "default", new, _preload_content=False))
    assert replaced["status"]["allocation"] == allocation and replaced["metadata"]["generation"] == 2
    again = raw(dra.replace_namespaced_resource_claim("st-1", "default", replaced, _preload_content=False))
    assert again["metadata"]["resourceVersion"] == replaced["metadata"]["resourceVersion"]


def test_server_side_apply_creates_then_updates(api: StandIn, kube: client.ApiClient) -> None:
    dra = client.ResourceV1Api(kube)
    template = {
        "apiVersion": DRA,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "ssa-gpu-2", "namespace": "default", "labels": {"app": "draguard"}},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}
            }
        },
    }

    def apply(body: dict[str, Any]) -> dict[str, Any]:
        r = dra.patch_namespaced_resource_claim_template(
            "ssa-gpu-2",
            "default",
            body,
            field_manager="draguard",
            force=True,
            _content_type="application/apply-patch+yaml",
            _preload_content=False,
        )
        return {"status": r.status, **raw(r)}

    created = apply(template)
    assert created["status"] == 201 and created["metadata"]["managedFields"][-1] == {
        **created["metadata"]["managedFields"][-1],
        "manager": "draguard",
        "operation": "Apply",
    }
    same = apply(template)
    assert (
        same["status"] == 200
        and same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    )
    more = {**template, "metadata": {**template["metadata"], "labels": {"tier": "x"}}}
    updated = apply(more)
    assert updated["metadata"]["labels"] == {"app": "draguard", "tier": "x"}  # maps merged
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    status, body, _ = api.request(
        "PATCH",
        f"/apis/{DRA}/namespaces/default/resourceclaimtemplates/ssa-dry?fieldManager=draguard&dryRun=All",
        {**template, "metadata": {"name": "ssa-dry", "namespace": "default"}},
        content_type="application/apply-patch+yaml",
    )
    assert (
        status == 201
        and api.request("GET", f"/apis/{DRA}/namespaces/default/resourceclaimtemplates/ssa-dry")[0] == 404
    )


def test_merge_and_json_patches_on_core_objects(api: StandIn, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    core.create_node(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "patch-node", "labels": {"a": "1"}}}
    )
    core.patch_node("patch-node", {"metadata": {"labels": {"b": "2", "a": None}}})
    core.patch_node("patch-node", [{"op": "add", "path": "/metadata/labels/c", "value": "3"}])
    node = raw(core.read_node("patch-node", _preload_content=False))
    assert node["metadata"]["labels"] == {"b": "2", "c": "3"}
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "patch-ns"}})
    ns = raw(core.read_namespace("patch-ns", _preload_content=False))
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "patch-ns"}


def test_injected_failures_slow_lists_and_the_request_log(api: StandIn, kube: client.ApiClient) -> None:
    api.fail(2, 429, path="/devicetaintrules", retryAfter=3)
    api.fail(1, 500, path="/devicetaintrules", method="GET")
    for code in (429, 429, 500):
        status, body, headers = api.request("GET", f"/apis/{DRA}/devicetaintrules")
        assert (status, body["code"]) == (code, code)
        assert headers.get("Retry-After") == ("3" if code == 429 else None)
    api.configure(listDelaySeconds=0.2)
    try:
        assert (
            api.request(
                "GET", f"/apis/{DRA}/devicetaintrules", token="system:serviceaccount:draguard-system:draguard"
            )[0]
            == 200
        )
    finally:
        api.configure(listDelaySeconds=0)
    log = [r for r in api.requests() if r["path"].endswith("/devicetaintrules")]
    assert [r["status"] for r in log[-4:]] == [429, 429, 500, 200]
    assert log[-1]["user"] == "system:serviceaccount:draguard-system:draguard"
    assert log[-1]["end"] - log[-1]["start"] >= 0.2  # a lower bound: the list waited


def test_https_with_a_kubeconfig(tmp_path: Path) -> None:
    with StandIn.start(tmp_path, tls=True) as api:
        kc = config.new_client_from_config(str(api.kubeconfig(tmp_path / "kubeconfig", token="alice")))
        names = [
            n["metadata"]["name"]
            for n in raw(client.CoreV1Api(kc).list_namespace(_preload_content=False))["items"]
        ]
        assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
        assert api.requests()[-1]["user"] == "alice"


def test_the_admission_hook_mutates_denies_and_warns(tmp_path: Path) -> None:
    (tmp_path / "hook_for_test.py").write_text(
        textwrap.dedent(
            """
            from tests.standin.apiserver import Denial

            def load(config):
                label = open(config).read().strip()

                def hook(request):
                    obj = request.object
                    if request.operation == "DELETE":
                        return request.old_object
                    if obj["metadata"].get("labels", {}).get("deny"):
                        return Denial(403, f"denied {request.kind['kind']} {request.name} for {request.user_info['username']}")
                    request.warnings.append(f"{request.operation} {request.resource['resource']}")
                    obj["metadata"].setdefault("labels", {})[label] = "yes"
                    return obj

                return hook
            """
        )
    )
    (tmp_path / "admission.conf").write_text("mutated\n")
    with StandIn.start(
        tmp_path,
        admission_config=tmp_path / "admission.conf",
        extra=["--admission-module", "hook_for_test"],
        pythonpath=[tmp_path],
    ) as api:
        cls = {"apiVersion": DRA, "kind": "DeviceClass", "metadata": {"name": "adm"}}
        status, body, headers = api.request("POST", f"/apis/{DRA}/deviceclasses", cls)
        assert status == 201 and body["metadata"]["labels"] == {"mutated": "yes"}
        assert headers.get_all("Warning") == ['299 - "CREATE deviceclasses"']
        denied = {**cls, "metadata": {"name": "adm-2", "labels": {"deny": "1"}}}
        status, body, _ = api.request("POST", f"/apis/{DRA}/deviceclasses", denied, token="bob")
        assert (status, body["reason"], body["message"]) == (
            403,
            "Forbidden",
            "denied DeviceClass adm-2 for bob",
        )
        api.seed([denied])  # the control API writes without admission
        assert api.request("GET", f"/apis/{DRA}/deviceclasses/adm-2")[0] == 200
