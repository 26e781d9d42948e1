"""Precise invalidation: a publish re-gathers or re-counts the pools of exactly the nodes a change
touches (their pools stamps change), and no other node's; the engine then looks again at exactly those
nodes, and its answers equal those on a fresh state."""

from __future__ import annotations

import copy
import importlib
from collections import Counter
from typing import Any

import pytest

from webhook.config.profile import load_profile
from webhook.engine import allocate, eligibility, warm_up
from webhook.state import StateStore

DRIVER = "gpu.example.com"
N = 6
allocate_module = importlib.import_module("webhook.engine.allocate")  # the package's name is the function
explain_module = importlib.import_module("webhook.engine.explain")


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


# --- what the engine recomputes after a change -------------------------------------------------------
# The engine keeps per node, with the node's pools stamp, how many devices could serve a request shape
# and that node's part of the explanation of a request that fits nowhere (plus their sums over the
# node list). `blocker` is the eligibility check of one selected device: counting its calls per pool
# shows which nodes the engine looked at again; the evaluator's `evaluations` counter shows whether a
# selector ran at all (it remembers results by the values an expression reads).


class Looked:
    """Devices checked for eligibility by the engine, per pool (the real check runs underneath)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pools: Counter[str] = Counter()
        real = eligibility.blocker

        def counting(state: Any, alt: Any, pool: Any, d: Any, f: Any) -> str | None:
            self.pools[d.id[1]] += 1
            return real(state, alt, pool, d, f)

        monkeypatch.setattr(allocate_module, "blocker", counting)
        monkeypatch.setattr(explain_module, "blocker", counting)

    def take(self) -> set[str]:
        out = set(self.pools)
        self.pools.clear()
        return out


def gpu_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def request(name: str, count: int, selector: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "t"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
    }


def full(i: int) -> dict[str, Any]:
    c = holder(i)
    c["metadata"]["name"] = f"full-{i}"
    c["status"]["allocation"]["devices"]["results"] = [
        {"request": "r", "driver": DRIVER, "pool": f"n{i}", "device": f"gpu-{g}"} for g in range(2)
    ]
    return c


def engine_store(extra: list[dict[str, Any]] = ()) -> StateStore:  # type: ignore[assignment]
    s = StateStore(load_profile("1.37"))
    s.replace_all([gpu_class()] + [node(i) for i in range(N)] + [gpus(i) for i in range(N)] + list(extra))
    s.publish()
    return s


def answer(s: StateStore, claim: dict[str, Any]) -> tuple[Any, ...]:
    o = allocate(s.snapshot().state, [copy.deepcopy(claim)])
    return o.feasible, o.node, [r.device for c in o.claims for r in c.results], o.reason, o.explanation


def fresh(s: StateStore, claim: dict[str, Any], looked: Looked) -> tuple[Any, ...]:
    """The answer on a new store holding the same objects (nothing cached; not counted as looked at)."""
    other = StateStore(load_profile("1.37"))
    other.replace_all(copy.deepcopy(list(s._objects.values())))
    other.publish()
    before = Counter(looked.pools)
    out = answer(other, claim)
    looked.pools = before
    return out


def test_after_warm_up_a_request_that_fits_nowhere_looks_again_only_at_changed_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = engine_store()
    warm_up(s.snapshot().state)
    looked = Looked(monkeypatch)
    ev = s.snapshot().state.evaluator
    three = request("three", 3)  # nodes of 2 GPUs: fits nowhere
    runs = ev.evaluations
    got = answer(s, three)
    assert got[0] is False and "6 node(s) considered, 6 pruned by device counts" in got[3], got
    # warm-up counted every node exactly; the explanation reads each node's counts from the caches
    # (no node has 3 devices: no node is looked at for a counter check)
    assert looked.take() == set() and ev.evaluations == runs
    assert answer(s, three) == got and looked.take() == set()
    assert got == fresh(s, three, looked)
    s.apply(holder(3))  # a claim allocated on n3
    s.publish()
    got = answer(s, three)
    assert looked.take() == {"n3"} and ev.evaluations == runs  # re-counted n3; no selector ran
    assert got == fresh(s, three, looked)
    s.delete("ResourceClaim", "t", "held-3")  # released
    s.publish()
    assert answer(s, three) == fresh(s, three, looked) and looked.take() == {"n3"}
    s.apply(gpus(5, "B"))  # a slice republished on n5
    s.publish()
    got = answer(s, three)
    assert looked.take() == {"n5"}  # its devices (new versions) are selected and checked again
    assert got == fresh(s, three, looked)
    assert answer(s, request("nine", 9)) == fresh(s, request("nine", 9), looked)  # any count: the same counts
    assert looked.pools["n5"] == 0 and len(looked.take()) <= 1  # at most the best node's counter check


def test_a_request_that_fits_stops_at_the_first_node_that_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    s = engine_store([full(0), full(1)])
    looked = Looked(monkeypatch)
    one = request("one", 1, f'device.attributes["{DRIVER}"].model == "A"')
    got = answer(s, one)
    assert got[:3] == (True, "n2", ["gpu-0"]), got
    assert looked.take() == {"n0", "n1", "n2"}  # the nodes in order up to the first that fits
    assert got == fresh(s, one, looked)
    s.apply(gpus(4, "B"))  # a change on a node after the answer's: nothing to look at again
    s.publish()
    assert answer(s, one) == got and looked.take() == set()
    s.apply(gpus(2, "B"))  # the answer's node has no model A now: the next node in order
    s.publish()
    got = answer(s, one)
    assert got[:3] == (True, "n3", ["gpu-0"])
    # nodes are bounded in runs of 1, 2, 4, ...: n3 to n5 together; n2 and n4 select no device now
    assert looked.take() == {"n3", "n5"}
    assert got == fresh(s, one, looked)


def test_the_empty_cluster_mode_is_primed_and_looks_again_only_at_changed_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # admission asks "would it fit with nothing allocated?" when a request fits nowhere now
    s = engine_store([holder(1)])
    warm_up(s.snapshot().state)
    looked = Looked(monkeypatch)
    three = request("three", 3)

    def empty() -> tuple[Any, ...]:
        o = allocate(s.snapshot().state, [copy.deepcopy(three)], ignore_allocations=True, ignore_taints=True)
        return o.feasible, o.reason, o.explanation

    got = empty()
    assert got[0] is False and looked.take() <= {"n0"}  # at most the best node's counter check
    assert empty() == got and looked.take() == set()
    s.apply(holder(3))
    s.publish()
    assert empty() == got and looked.take() == {"n3"}  # n3's stamp changed (its allocation did)
    s.apply(gpus(5, "B"))
    s.publish()
    assert empty() == got and looked.take() == {"n5"}


def test_what_the_engine_keeps_across_versions_does_not_grow_with_changes() -> None:
    # Entries are put once per key and refilled in place: thousands of changes neither grow the byte
    # account of the shared count cache nor make it empty itself (which would recount every node).
    s = engine_store()
    warm_up(s.snapshot().state)
    three = request("three", 3)
    counts = s.shared.counts
    for n in range(400):
        if n % 2:
            s.delete("ResourceClaim", "t", f"held-{(n // 2) % N}")
        else:
            s.apply(holder((n // 2) % N))
        s.publish()
        allocate(s.snapshot().state, [copy.deepcopy(three)])
        allocate(s.snapshot().state, [copy.deepcopy(three)], ignore_allocations=True, ignore_taints=True)
        if n == 10:
            settled = counts.nbytes
    assert counts.clears == 0 and counts.nbytes == settled
