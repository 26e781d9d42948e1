"""StateStore and Snapshot: one writer, immutable published versions, and the cross-object rules for an
object under admission (it replaces its old version), against real manifests."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from webhook.config.profile import load_profile
from webhook.engine import allocate
from webhook.rules.crossobject import violations_for
from webhook.state import StateStore


def cross(
    snap: Any, obj: dict[str, Any], old: dict[str, Any] | None = None, namespace: str | None = None
) -> Any:
    """The cross-object rules for `obj` on a snapshot, as admission runs them."""
    return violations_for(snap.state.inventory, obj, old, namespace)


PROFILE = load_profile("1.37")

POOL = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 8Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: devices}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: half
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: 4Gi}}
  - name: whole
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: 8Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  extendedResourceName: example.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: team}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: team}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu}}
"""


def docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def store_of(text: str = POOL) -> StateStore:
    store = StateStore(PROFILE)
    store.replace_all(docs(text))
    store.publish()
    return store


def by_kind(kind: str, name: str, text: str = POOL) -> dict:
    return next(copy.deepcopy(d) for d in docs(text) if d["kind"] == kind and d["metadata"]["name"] == name)


def found(violations: list) -> list[tuple[str, str, str]]:
    return [(v.rule, v.severity.value, v.field) for v in violations]


def test_an_unchanged_object_under_update_has_no_findings() -> None:
    snap = store_of().snapshot()
    devices = by_kind("ResourceSlice", "devices")
    # the slice replaces itself: its devices are not duplicates of its stored version
    assert cross(snap, devices, copy.deepcopy(devices)) == []
    assert cross(snap, devices, None) == []  # CREATE of a name the state already has


def test_a_new_slice_is_checked_against_its_pool() -> None:
    snap = store_of().snapshot()
    bad = by_kind("ResourceSlice", "devices")
    bad["spec"]["devices"][0]["consumesCounters"][0]["counterSet"] = "gpu-9"
    got = cross(snap, bad, by_kind("ResourceSlice", "devices"))
    assert found(got) == [("pool.counter-set-ref", "error", "spec.devices[0].consumesCounters[0].counterSet")]
    assert 'Invalid value: "gpu-9": no slice of pool "node-1" of driver gpu.example.com' in got[0].message

    third = by_kind("ResourceSlice", "devices")
    third["metadata"]["name"] = "devices-b"
    got = cross(snap, third)
    rules = [(v.rule, v.field) for v in got]
    # the same device names as slice "devices" of the same pool generation, and one slice too many
    assert ("pool.duplicate-device", "spec.devices[0].name") in rules
    assert ("pool.duplicate-device", "spec.devices[1].name") in rules
    assert any(v.rule == "pool.duplicate-device" and 'slice "devices" of pool' in v.message for v in got)
    assert ("pool.completeness", "spec.pool.resourceSliceCount") not in rules  # reported on the first slice


def test_a_partial_pool_reads_the_cluster_state() -> None:
    snap = store_of().snapshot()
    lone = by_kind("ResourceSlice", "devices")
    lone["spec"]["pool"]["name"] = "node-2"
    got = cross(snap, lone)
    assert {v.rule for v in got} == {"pool.unchecked", "pool.completeness"}
    assert any("the cluster state holds 1 of 2 slices" in v.message for v in got)


def test_device_class_clash_and_claims_and_pods() -> None:
    snap = store_of().snapshot()
    other = by_kind("DeviceClass", "gpu")
    other["metadata"]["name"] = "gpu-2"
    other["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    got = cross(snap, other)
    assert found(got) == [("class.extended-resource-name-clash", "warning", "spec.extendedResourceName")]
    assert "this class wins" in got[0].message
    # updating the class itself is no clash
    assert cross(snap, by_kind("DeviceClass", "gpu"), by_kind("DeviceClass", "gpu")) == []

    claim = by_kind("ResourceClaim", "shared")
    claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "tpu"
    got = cross(snap, claim)
    assert found(got) == [
        ("claim.unknown-device-class", "warning", "spec.devices.requests[0].exactly.deviceClassName")
    ]
    assert got[0].message.startswith('DeviceClass "tpu" is not in the cluster state (it has "gpu")')

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": [
                {"name": "a", "resourceClaimName": "shared"},
                {"name": "b", "resourceClaimTemplateName": "one-gpu"},
                {"name": "c", "resourceClaimName": "missing"},
            ]
        },
    }
    got = cross(snap, pod, None, namespace="team")
    assert found(got) == [("pod.unknown-claim", "warning", "spec.resourceClaims[2].resourceClaimName")]
    got = cross(snap, pod, None, namespace="elsewhere")
    assert [v.field for v in got] == [
        "spec.resourceClaims[0].resourceClaimName",
        "spec.resourceClaims[1].resourceClaimTemplateName",
        "spec.resourceClaims[2].resourceClaimName",
    ]
    assert (
        'ResourceClaim "shared" is not in namespace "elsewhere" (found in namespace "team")' in got[0].message
    )


def test_snapshots_are_immutable_versions() -> None:
    store = store_of()
    first = store.snapshot()
    assert first.version == 1
    assert first.counts() == {
        "ResourceSlice": 2,
        "DeviceClass": 1,
        "ResourceClaim": 1,
        "ResourceClaimTemplate": 1,
        "DeviceTaintRule": 0,
        "Node": 0,
        "Namespace": 0,
    }
    assert store.publish() is first  # nothing changed
    store.replace_all(docs(POOL))
    assert store.publish() is first  # equal content: nothing changed either
    store.delete("ResourceSlice", "any-namespace", "counters")  # slices have none: the name decides
    second = store.publish()
    assert second.version == 2 and second.counts()["ResourceSlice"] == 1
    assert first.counts()["ResourceSlice"] == 2  # the old version still holds it
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "team"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    # the pool is incomplete in the new version only
    assert allocate(first.state, [claim]).feasible is True
    assert allocate(second.state, [claim]).feasible is False


def test_objects_are_version_scoped_persistent_maps() -> None:
    """`Snapshot.objects(kind)`: (namespace or "", name) → the stored object, per version; a publish
    changes only the kinds it touched (the other kinds' maps are the very same objects), an old version
    keeps what it had, and nothing can write through the mapping."""
    store = store_of()
    first = store.snapshot()
    claims = first.objects("ResourceClaim")
    assert set(claims) == {("team", "shared")} and claims[("team", "shared")]["kind"] == "ResourceClaim"
    assert set(first.objects("ResourceSlice")) == {("", "counters"), ("", "devices")}
    assert set(first.objects("ResourceClaimTemplate")) == {("team", "one-gpu")}
    assert set(first.objects("DeviceClass")) == {("", "gpu")}
    assert len(first.objects("Node")) == 0 and len(first.objects("Pod")) == 0
    assert first.objects("ResourceClaim") is claims  # O(1): the published map itself, no copy

    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"a": "b"}}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
    claim = copy.deepcopy(claims[("team", "shared")])
    claim["metadata"]["labels"] = {"changed": "yes"}
    for obj in (namespace, node, claim):
        store.apply(obj)
    second = store.publish()
    assert second.objects("Namespace")[("", "team")] is namespace
    assert second.objects("Node")[("", "node-1")] is node
    assert second.objects("ResourceClaim")[("team", "shared")] is claim
    assert second.objects("ResourceSlice") is first.objects("ResourceSlice")  # untouched kinds are shared
    assert second.counts()["Namespace"] == 1 and first.counts()["Namespace"] == 0
    assert "labels" not in first.objects("ResourceClaim")[("team", "shared")]["metadata"]  # old version
    assert ("", "team") not in first.objects("Namespace")

    store.delete("Namespace", None, "team")
    store.delete("ResourceClaim", "team", "shared")
    third = store.publish()
    assert len(third.objects("Namespace")) == 0 and len(third.objects("ResourceClaim")) == 0
    assert second.objects("Namespace")[("", "team")] is namespace
    with pytest.raises(TypeError):
        third.objects("ResourceClaim")[("team", "x")] = claim  # type: ignore[index]


def test_warm_up_fills_caches_that_later_versions_share() -> None:
    from webhook.engine import warm_up

    store = store_of()
    snap = store.snapshot()
    outcomes = warm_up(snap.state)
    assert [o.feasible for o in outcomes] == [True]  # one claim per DeviceClass
    ev = snap.state.evaluator
    ran = ev.evaluations
    claim = by_kind("ResourceClaim", "shared")
    assert allocate(snap.state, [claim]).feasible is True
    assert ev.evaluations == ran  # the class's selector results were computed by warm_up
    held = copy.deepcopy(claim)
    held["metadata"]["name"] = "held"
    held["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "whole"}
                ]
            }
        }
    }
    store.apply(held)
    later = store.publish()
    assert later.version == snap.version + 1
    out = allocate(later.state, [claim])
    assert out.feasible is False  # "whole" holds all of gpu-0's memory: "half" cannot fit beside it
    assert ev.evaluations == ran  # a claim change re-counts the pool, it evaluates no selector again


def test_malformed_objects_never_stop_the_writer_or_a_reader() -> None:
    store = store_of()
    bad: list[dict] = []
    for kind in (
        "ResourceSlice",
        "DeviceClass",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceTaintRule",
        "Node",
    ):
        for junk in ("text", 7, ["a"], {"x": [1]}, None):
            bad.append(
                {
                    "kind": kind,
                    "metadata": {"name": f"bad-{kind}", "labels": junk},
                    "spec": junk,
                    "status": junk,
                }
            )
            bad.append({"kind": kind, "metadata": junk})
    bad.append(
        {
            "kind": "ResourceSlice",
            "metadata": {"name": "odd"},
            "spec": {
                "driver": "d",
                "pool": {"name": "p", "generation": "x", "resourceSliceCount": None},
                "nodeName": 5,
                "devices": [
                    None,
                    {
                        "name": 3,
                        "consumesCounters": [{"counterSet": 1, "counters": {"c": {"value": [1]}}}],
                        "capacity": {"m": "80Gi"},
                    },
                ],
                "sharedCounters": ["x"],
            },
        }
    )
    bad.append(
        {
            "kind": "ResourceClaim",
            "metadata": {"name": "odd", "namespace": "t"},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [None, {"driver": 1, "shareID": "s", "consumedCapacity": {"m": "x"}}]
                    }
                }
            },
        }
    )
    for obj in bad:
        store.apply(obj)
        snap = store.publish()
        cross(snap, obj)
        assert allocate(snap.state, [by_kind("ResourceClaim", "shared")]).internal is None
    store.replace_all(docs(POOL))
    assert store.publish().counts()["ResourceSlice"] == 2


def test_building_a_state_stops_at_the_deadline() -> None:
    import pytest

    from webhook.model.budget import Deadline, OutOfBudget
    from webhook.state import ClusterState

    objs: list[dict] = []
    for i in range(100):  # fewer objects than the loader's check interval: the gathering must check
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}})
        devices = by_kind("ResourceSlice", "devices")
        devices["metadata"]["name"] = f"s{i}"
        devices["spec"]["nodeName"] = f"n{i}"
        devices["spec"]["pool"] = {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1}
        objs.append(devices)
    with pytest.raises(OutOfBudget):
        ClusterState.from_objects(objs, PROFILE, Deadline.after(0))
    assert len(ClusterState.from_objects(objs, PROFILE, Deadline.after(60)).candidate_nodes()) == 100
