"""Precise invalidation: a publish re-gathers or re-counts the pools of exactly the nodes a change
touches (their pools stamps change), and no other node's."""

from __future__ import annotations

import copy
from typing import Any

from webhook.profile import load_profile
from webhook.state import StateStore

DRIVER = "gpu.example.com"
N = 6


def node(i: int, zone: str = "a") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": zone}}}


def gpus(i: int, model: str = "A") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"n{i}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": f"n{i}",
            "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{g}", "attributes": {"model": {"string": model}}} for g in range(2)],
        },
    }


def shared(selector: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": "nic.example.com",
        "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "nic-0"}],
    }
    if selector is None:
        spec["allNodes"] = True
    else:
        spec["nodeSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "fabric"},
        "spec": spec,
    }


def holder(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"held-{i}", "namespace": "t"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "r", "driver": DRIVER, "pool": f"n{i}", "device": "gpu-0"}]
                }
            }
        },
    }


def stamps(store: StateStore) -> dict[str | None, int]:
    view = store.snapshot().state
    return {n.name: view.node_stamp(n) for n in view.candidate_nodes()}  # type: ignore[misc]


def changed(before: dict[str | None, int], after: dict[str | None, int]) -> set[str | None]:
    return {n for n in after if before.get(n) != after[n]}


def store() -> StateStore:
    s = StateStore(load_profile("1.37"))
    s.replace_all([node(i) for i in range(N)] + [gpus(i) for i in range(N)])
    s.publish()
    return s


def test_a_claim_recounts_only_the_node_of_its_devices() -> None:
    s = store()
    before = stamps(s)
    s.apply(holder(3))
    s.publish()
    assert changed(before, stamps(s)) == {"n3"}
    assert (s.last_publish.nodes_gathered, s.last_publish.nodes_recounted) == (0, 1)
    view = s.snapshot().state
    assert [p.id for p in view.pools_for(view.node("n3"))] == [(DRIVER, "n3")]
    before = stamps(s)
    s.delete("ResourceClaim", "t", "held-3")
    s.publish()
    assert changed(before, stamps(s)) == {"n3"}


def test_a_republished_slice_regathers_only_its_node() -> None:
    s = store()
    before = stamps(s)
    s.apply(gpus(5, "B"))
    s.publish()
    assert changed(before, stamps(s)) == {"n5"}
    assert (s.last_publish.nodes_gathered, s.last_publish.nodes_recounted) == (1, 0)
    before = stamps(s)
    s.apply(gpus(5, "B"))  # the same content again: no new version at all
    assert s.publish().version == s.snapshot().version and stamps(s) == before


def test_node_independent_slices_touch_the_nodes_they_are_for() -> None:
    s = store()
    before = stamps(s)
    s.apply(
        shared(
            {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
                ]
            }
        )
    )
    s.publish()
    assert changed(before, stamps(s)) == set()  # no node is in zone b
    before = stamps(s)
    s.apply(node(2, "b"))  # n2 moves to zone b: it sees the fabric pool now
    s.publish()
    assert changed(before, stamps(s)) == {"n2"}
    view = s.snapshot().state
    assert ("nic.example.com", "fabric") in [p.id for p in view.pools_for(view.node("n2"))]
    before = stamps(s)
    s.apply(shared(None))  # now for all nodes
    s.publish()
    assert changed(before, stamps(s)) == {f"n{i}" for i in range(N)}
    before = stamps(s)
    updated = copy.deepcopy(shared(None))
    updated["spec"]["devices"].append({"name": "nic-1"})
    s.apply(updated)
    s.publish()
    assert changed(before, stamps(s)) == {f"n{i}" for i in range(N)}  # every node sees that pool


def test_a_node_status_update_that_changes_no_label_changes_nothing() -> None:
    s = store()
    before = stamps(s)
    n = node(1)
    n["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    s.apply(n)
    s.publish()
    assert stamps(s) == before
