"""The live state (reflectors + applier) in this process against the API-server stand-in process: what
the StateStore holds after lists, events, relists, dropped and silent connections, and when it is ready."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.standin import objects as o
from tests.standin.process import StandIn, wait_for
from webhook.config.profile import load_profile
from webhook.state.live import WATCHED, Backoff, KubeClient, LiveState, Observer, load_api_client, watched_for
from webhook.state.live.applier import Applier
from webhook.state.live.kinds import BY_NAME
from webhook.state.live.reflector import Change, Replace
from webhook.state.store import StateStore

PROFILE = load_profile("1.37", {})


class Recorder(Observer):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.relists: list[tuple[str, str]] = []
        self.restarts: list[tuple[str, str]] = []
        self.events: list[tuple[str, str]] = []
        self.synced_kinds: list[str] = []
        self.replaced_kinds: list[list[str]] = []

    def relist(self, kind: str, reason: str) -> None:
        with self.lock:
            self.relists.append((kind, reason))

    def restart(self, kind: str, reason: str) -> None:
        with self.lock:
            self.restarts.append((kind, reason))

    def event(self, kind: str, event_type: str) -> None:
        with self.lock:
            self.events.append((kind, event_type))

    def synced(self, kinds: list[str], all_synced: bool) -> None:
        with self.lock:
            self.synced_kinds += kinds

    def replaced(self, kinds: list[str]) -> None:
        with self.lock:
            self.replaced_kinds.append(kinds)


class Live:
    """A LiveState over the stand-in with fast backoff; `objects(kind)` reads the published snapshot."""

    def __init__(self, api: StandIn, tmp: Path, **kw: Any) -> None:
        self.api = api
        self.store = StateStore(PROFILE)
        self.observer = Recorder()
        client = KubeClient(load_api_client(str(api.kubeconfig(tmp / f"kc-{id(self)}"))))
        kw.setdefault("backoff", lambda: Backoff(initial=0.05, cap=0.5))
        kw.setdefault("page_size", 3)
        self.state = LiveState(client, self.store, observer=self.observer, **kw)
        self.state.start()

    def objects(self, kind: str) -> Any:
        return self.store.snapshot().objects(kind)

    def names(self, kind: str) -> set[str]:
        return {name for _, name in self.objects(kind)}

    def reflector(self, kind: str) -> Any:
        return next(r for r in self.state.reflectors if r.kind.kind == kind)

    def wait_names(self, kind: str, names: set[str]) -> None:
        wait_for(f"{kind} {sorted(names)}", lambda: self.names(kind) == names)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[StandIn]:
    with StandIn.start(tmp_path) as server:
        yield server


@pytest.fixture
def live_factory(api: StandIn, tmp_path: Path) -> Iterator[Any]:
    made: list[Live] = []

    def make(**kw: Any) -> Live:
        live = Live(api, tmp_path, **kw)
        made.append(live)
        return live

    yield make
    for live in made:
        live.state.stop()


def test_initial_sync_is_paginated_complete_and_stored_without_managed_fields(
    api: StandIn, live_factory: Any
) -> None:
    annotated = o.device_class("annotated.example.com")
    annotated["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{...}",
        "team": "ml",
    }
    api.seed(
        [o.node(f"node-{i}") for i in range(7)]
        + [o.resource_slice(f"node-{i}") for i in range(7)]
        + [
            o.device_class(),
            annotated,
            o.claim("c-1"),
            o.namespace("ml", **{"resource.kubernetes.io/admin-access": "true"}),
        ]
    )
    live = live_factory()
    assert live.state.ready.wait(60)
    assert live.names("ResourceSlice") == {f"node-{i}-gpu.example.com" for i in range(7)}
    assert live.observer.relists.count(("ResourceSlice", "initial")) == 1
    lists = [r for r in api.requests() if r["path"].endswith("/resourceslices") and "watch" not in r["query"]]
    assert len(lists) == 3 and lists[0]["query"]["limit"] == "3" and "continue" in lists[1]["query"]
    watch = next(r for r in api.requests() if r["path"].endswith("/resourceslices") and "watch" in r["query"])
    assert watch["query"]["allowWatchBookmarks"] == "true"
    cls = live.objects("DeviceClass")[("", "annotated.example.com")]
    assert cls["kind"] == "DeviceClass" and cls["apiVersion"] == "resource.k8s.io/v1"  # list items carry none
    assert "managedFields" not in cls["metadata"] and cls["metadata"]["annotations"] == {"team": "ml"}
    assert cls["metadata"]["uid"] and cls["metadata"]["resourceVersion"]
    node = live.objects("Node")[("", "node-0")]
    assert set(node) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert (
        set(node["status"]) == {"allocatable"}
        and node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-0"
    )
    ns = live.objects("Namespace")[("", "ml")]
    assert ns["metadata"]["labels"]["resource.kubernetes.io/admin-access"] == "true"
    assert (
        live.objects("ResourceClaim")[("default", "c-1")]["spec"]["devices"]["requests"][0]["name"] == "gpu"
    )
    assert live.state.resource_versions()["ResourceSlice"] == watch["query"]["resourceVersion"]


def test_ready_only_after_every_kind_is_listed(api: StandIn, live_factory: Any) -> None:
    api.fail(10_000, 500, path="/api/v1/nodes", method="GET")
    api.seed([o.resource_slice("node-a")])
    live = live_factory()
    wait_for("six kinds synced", lambda: len(live.state.applier.synced) == len(WATCHED) - 1)
    assert live.state.waiting_for() == ["Node"] and not live.state.ready.is_set()
    assert live.names("ResourceSlice") == {"node-a-gpu.example.com"}  # published, not ready yet
    wait_for(  # retried with backoff, not given up
        "three failed Node lists",
        lambda: len([r for r in api.requests() if r["path"] == "/api/v1/nodes" and r["status"] == 500]) >= 3,
    )
    assert not live.state.ready.is_set()
    api.clear_failures()
    assert live.state.ready.wait(60) and live.state.waiting_for() == []


def test_a_kind_the_api_server_does_not_serve_is_empty_and_checked_again(
    api: StandIn, live_factory: Any
) -> None:
    api.fail(
        10_000, 404, path="/apis/resource.k8s.io/v1/devicetaintrules", method="GET"
    )  # e.g. a 1.35 server
    live = live_factory(recheck_seconds=0.2)
    assert live.state.ready.wait(60) and live.names("DeviceTaintRule") == set()
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {"taint": {"key": "maintenance", "effect": "NoSchedule"}},
    }
    api.seed([rule])
    api.clear_failures()  # served from now on (an upgrade): the next check lists and watches it
    live.wait_names("DeviceTaintRule", {"maintenance"})
    assert ("DeviceTaintRule", "error") in live.observer.relists


def test_a_1_36_cluster_s_v1beta2_device_taint_rules_are_watched_and_kept_as_v1(
    api: StandIn, live_factory: Any
) -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "m", "effect": "NoSchedule"},
        },
    }
    api.seed([rule])
    live = live_factory(kinds=watched_for("1.36"))
    assert live.state.ready.wait(60)
    stored = live.objects("DeviceTaintRule")[("", "maintenance")]
    assert stored["apiVersion"] == "resource.k8s.io/v1" and stored["spec"] == rule["spec"]
    assert len(live.store.snapshot().state.taint_rules) == 1  # the engine sees it
    api.seed([{**rule, "metadata": {"name": "drain"}}])  # and the watch follows the v1beta2 collection
    live.wait_names("DeviceTaintRule", {"maintenance", "drain"})
    assert not [
        r for r in api.requests() if r["path"].startswith("/apis/resource.k8s.io/v1/devicetaintrules")
    ]


def test_the_taint_rule_version_follows_the_kubernetes_version() -> None:
    served = {
        v: {k.kind: k.api_version for k in watched_for(v)}["DeviceTaintRule"]
        for v in ("1.35", "1.36", "1.37")
    }
    assert served == {
        "1.35": "resource.k8s.io/v1alpha3",
        "1.36": "resource.k8s.io/v1beta2",
        "1.37": "resource.k8s.io/v1",
    }


def test_events_are_applied_in_order_and_a_republished_pool_uses_its_new_generation(
    api: StandIn, live_factory: Any
) -> None:
    api.seed([o.node("node-a"), o.device_class(), o.resource_slice("node-a", devices=2, name="a-gen1")])
    live = live_factory()
    assert live.state.ready.wait(60)
    # the driver republishes: a new slice of generation 2 with 4 devices, then the old one goes
    api.seed([o.resource_slice("node-a", devices=4, generation=2, name="a-gen2")])
    live.wait_names("ResourceSlice", {"a-gen1", "a-gen2"})
    assert _pool(live, "node-a") == (2, 4)  # the highest generation only, while both are published
    api.delete(o.ref(o.resource_slice("node-a", name="a-gen1")))
    live.wait_names("ResourceSlice", {"a-gen2"})
    assert _pool(live, "node-a") == (2, 4)
    # a claim allocated by the scheduler (status update), then deallocated
    api.seed([o.claim("c-1", count=2)])
    wait_for("the claim", lambda: ("default", "c-1") in live.objects("ResourceClaim"))
    allocated = {**o.claim("c-1", count=2), "status": o.allocation("node-a", [0, 1])}
    api.seed([allocated])
    wait_for("the allocation", lambda: "status" in live.objects("ResourceClaim")[("default", "c-1")])
    assert _free(live, "node-a") == 2
    api.seed([o.claim("c-1", count=2)])
    wait_for("the deallocation", lambda: "status" not in live.objects("ResourceClaim")[("default", "c-1")])
    assert _free(live, "node-a") == 4
    assert ("ResourceClaim", "MODIFIED") in live.observer.events and (
        "ResourceSlice",
        "DELETED",
    ) in live.observer.events
    assert [r for r in live.observer.relists if r[1] != "initial"] == []


def _pool(live: Live, node: str) -> tuple[int, int]:
    _, pools, _ = live.store.snapshot().state.node_pools[node]
    (pool,) = pools
    return pool.generation, sum(len(s.devices) for s in pool.slices)


def _free(live: Live, node: str) -> int:
    snap = live.store.snapshot()
    _, pools, _ = snap.state.node_pools[node]
    allocated = snap.state.allocated
    return sum(1 for p in pools for s in p.slices for d in s.devices if not allocated.is_allocated(d.id))


def test_an_object_deleted_while_the_watch_is_down_is_dropped_by_the_relist(
    api: StandIn, live_factory: Any
) -> None:
    api.seed([o.resource_slice(f"node-{i}") for i in range(5)])
    live = live_factory()
    assert live.state.ready.wait(60)
    api.configure(stallWatches=True)  # the deletion event is never sent on the open watch
    api.delete(o.ref(o.resource_slice("node-2")))
    api.expire(drop=True)  # the watch cannot resume from its resourceVersion: 410 → relist
    api.configure(stallWatches=False)
    live.wait_names("ResourceSlice", {f"node-{i}-gpu.example.com" for i in (0, 1, 3, 4)})
    assert ("ResourceSlice", "expired") in live.observer.relists
    # the relist's batch is reported as replacing the kind (the server then returns malloc's free pages)
    wait_for(
        "the relist's report", lambda: sum("ResourceSlice" in k for k in live.observer.replaced_kinds) >= 2
    )
    assert ("ResourceSlice", "DELETED") not in live.observer.events  # gone because the list lacked it


def test_an_object_deleted_between_the_pages_of_a_relist_is_dropped(api: StandIn, live_factory: Any) -> None:
    api.seed([o.resource_slice(f"node-{i}") for i in range(6)])
    live = live_factory(page_size=2)
    assert live.state.ready.wait(60)
    api.configure(listDelaySeconds=0.3)
    api.expire(drop=True)
    wait_for("the relist", lambda: ("ResourceSlice", "expired") in live.observer.relists)
    wait_for(
        "its first page",
        lambda: any(
            r["path"].endswith("/resourceslices") and r["query"].get("continue") is None and r["start"] > 0
            for r in api.requests()
        ),
    )
    api.delete(o.ref(o.resource_slice("node-5")))  # on a later page of the list's snapshot
    api.configure(listDelaySeconds=0)
    live.wait_names(
        "ResourceSlice", {f"node-{i}-gpu.example.com" for i in range(5)}
    )  # the watch after the list deletes it


def test_dropped_connections_reopen_the_watch_from_its_resource_version(
    api: StandIn, live_factory: Any
) -> None:
    api.seed([o.resource_slice("node-a")])
    live = live_factory()
    assert live.state.ready.wait(60)
    rv = live.reflector("ResourceSlice").resource_version
    api.drop_watches()
    wait_for("a restart", lambda: ("ResourceSlice", "error") in live.observer.restarts)
    wait_for("the watch again", lambda: any(w["resource"] == "resourceslices" for w in api.watches()))
    api.seed([o.resource_slice("node-b")])
    live.wait_names("ResourceSlice", {"node-a-gpu.example.com", "node-b-gpu.example.com"})
    rewatch = [r for r in api.requests() if r["path"].endswith("/resourceslices") and "watch" in r["query"]]
    assert rewatch[-1]["query"]["resourceVersion"] == rv
    assert (
        live.observer.relists.count(("ResourceSlice", "initial")) == 1
        and len([r for r in live.observer.relists if r[0] == "ResourceSlice"]) == 1
    )  # no relist: the watch resumed
    api.drop_watches(graceful=True)
    wait_for("a clean end", lambda: ("ResourceSlice", "closed") in live.observer.restarts)


def test_bookmarks_advance_the_resource_version(api: StandIn, live_factory: Any) -> None:
    live = live_factory()
    assert live.state.ready.wait(60)
    before = live.reflector("DeviceClass").resource_version
    rv = api.seed([o.node("node-x")])  # the global resourceVersion moves; no DeviceClass changed
    api.bookmark()
    wait_for("the bookmark", lambda: live.reflector("DeviceClass").resource_version == str(rv))
    assert int(before) < rv and ("DeviceClass", "BOOKMARK") in live.observer.events
    api.drop_watches()
    wait_for(
        "the new watch",
        lambda: any(
            r["query"].get("resourceVersion") == str(rv) and r["path"].endswith("/deviceclasses")
            for r in api.requests()
        ),
    )


def test_server_side_timeouts_and_silent_connections_restart_the_watch(
    api: StandIn, live_factory: Any
) -> None:
    live = live_factory(watch_timeout=1, read_timeout=1.0)
    assert live.state.ready.wait(60)
    wait_for("a timeout", lambda: ("Node", "timeout") in live.observer.restarts)
    watches = [r for r in api.requests() if r["path"] == "/api/v1/nodes" and "watch" in r["query"]]
    assert watches[0]["query"]["timeoutSeconds"] == "1"
    # a connection that stays open but sends nothing (no event, no bookmark) is taken for dead
    api.configure(bookmarkIntervalSeconds=3600)
    live2 = live_factory(watch_timeout=600, read_timeout=1.0)
    assert live2.state.ready.wait(60)
    api.configure(stallWatches=True)
    wait_for("a read timeout", lambda: ("Namespace", "error") in live2.observer.restarts)
    api.configure(stallWatches=False)


def test_throttled_and_failing_watches_back_off_and_recover(api: StandIn, live_factory: Any) -> None:
    live = live_factory()
    assert live.state.ready.wait(60)
    api.fail(2, 429, path="/apis/resource.k8s.io/v1/deviceclasses", method="GET", retryAfter=0)
    api.fail(1, 503, path="/apis/resource.k8s.io/v1/deviceclasses", method="GET")
    api.drop_watches()
    api.seed([o.device_class("after.example.com")])
    live.wait_names("DeviceClass", {"after.example.com"})
    statuses = [r["status"] for r in api.requests() if r["path"].endswith("/deviceclasses")]
    assert statuses[-4:-1] == [429, 429, 503]


def test_the_applier_publishes_a_burst_once() -> None:
    store = StateStore(PROFILE)
    # the time bound is not what this test is about: on a loaded machine 100 events can take longer
    # than the default 50 ms of applying, which would end the batch early
    applier = Applier(store, WATCHED, max_apply_seconds=60.0)
    kind = BY_NAME["ResourceSlice"]
    for i in range(100):
        applier.put(Change(kind, "ADDED", o.resource_slice(f"n-{i}"), str(i + 2), 0.0))
    applier.start()
    wait_for("the burst", lambda: len(store.snapshot().objects("ResourceSlice")) == 100)
    applier.stop()
    assert applier.publishes == 1 and store.snapshot().version == 1
    assert applier.resource_versions == {"ResourceSlice": "101"}


def test_the_observer_hears_of_whole_lists_only_once_they_are_published() -> None:
    """`replaced` follows the publish of a batch holding lists (the initial sync, a relist), never a
    batch of watch events alone: the server returns malloc's free pages there (webhook/server/memory.py)."""
    store = StateStore(PROFILE)

    class Versions(Recorder):
        def __init__(self) -> None:
            super().__init__()
            self.versions: list[int] = []

        def replaced(self, kinds: list[str]) -> None:
            self.versions.append(store.snapshot().version)
            super().replaced(kinds)

    observer = Versions()
    applier = Applier(store, WATCHED, observer=observer, max_apply_seconds=60.0)
    slices, claims = BY_NAME["ResourceSlice"], BY_NAME["ResourceClaim"]
    applier.put(Replace(slices, [o.resource_slice("n-0"), o.resource_slice("n-1")], "5", "initial"))
    applier.put(Replace(claims, [], "5", "initial"))
    applier.start()
    try:
        wait_for("the lists", lambda: observer.replaced_kinds)
        applier.put(Change(slices, "ADDED", o.resource_slice("n-2"), "6", 0.0))
        wait_for("the event", lambda: len(store.snapshot().objects("ResourceSlice")) == 3)
        applier.put(Replace(slices, [o.resource_slice("n-3")], "9", "expired"))
        wait_for("the relist", lambda: len(observer.replaced_kinds) == 2)
    finally:
        applier.stop()
    assert observer.replaced_kinds == [["ResourceClaim", "ResourceSlice"], ["ResourceSlice"]]
    assert set(store.snapshot().objects("ResourceSlice")) == {("", "n-3-gpu.example.com")}
    assert observer.versions == [1, 3]  # reported once the version holding the list was published
