"""ClusterState: incremental updates, pool gathering (generation, completeness, validity), allocated
state, taint rules, nodes and extended-resource classes."""

from __future__ import annotations

import yaml

from webhook.config.profile import load_profile
from webhook.state import ClusterState, NodeInfo


def slice_(
    name: str,
    node: str | None,
    devices: list[str],
    gen: int = 1,
    count: int = 1,
    pool: str = "p",
    **spec: object,
) -> dict:
    s: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "d.example.com",
            "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
            "devices": [{"name": d} for d in devices],
            **spec,
        },
    }
    if node:
        s["spec"]["nodeName"] = node
    elif not spec:
        s["spec"]["allNodes"] = True
    return s


def state(*objs: dict, gates: dict[str, bool] | None = None) -> ClusterState:
    return ClusterState.from_objects(objs, load_profile("1.37", gates or {}))


def names(st: ClusterState, node: str | None) -> list[tuple[str, bool, str, list[str]]]:
    info = st.node(node) if node else NodeInfo(None)
    return [
        (p.id[1], p.incomplete, p.invalid, [d.name for s in p.slices for d in s.devices])
        for p in st.pools_for(info)
    ]


def test_highest_generation_wins_and_completeness() -> None:
    st = state(slice_("a", "n1", ["x"], gen=1), slice_("b", "n1", ["y"], gen=2))
    assert names(st, "n1") == [("p", False, "", ["y"])]
    st.apply(slice_("c", "n1", ["z"], gen=2, count=2))
    # the first slice by name ("b", count 1) decides the expected count: 2 slices != 1 => incomplete
    assert names(st, "n1") == [("p", True, "", ["y", "z"])]
    st = state(slice_("a", "n1", ["x"], count=2))
    assert names(st, "n1") == [("p", True, "", ["x"])]
    st.apply(slice_("b", None, ["y"], count=2, perDeviceNodeSelection=True))
    # the second slice of the pool does not target n1 (no device matches) but completes the pool
    assert names(st, "n1") == [("p", False, "", ["x"])]


def test_obsolete_generation_elsewhere_hides_the_pool() -> None:
    st = state(slice_("a", "n1", ["x"], count=2), slice_("b", "n2", ["y"], gen=2, count=2))
    assert names(st, "n1") == []


def test_invalid_pools() -> None:
    st = state(slice_("a", "n1", ["x"], count=2), slice_("b", "n1", ["x"], count=2))
    assert names(st, "n1")[0][2] == "duplicate device name x"
    bad = slice_("c", "n1", [])
    bad["spec"]["devices"] = [
        {"name": "d", "consumesCounters": [{"counterSet": "nope", "counters": {"m": {"value": "1"}}}]}
    ]
    assert "unknown counter set nope" in names(state(bad), "n1")[0][2]


def test_incremental_updates_bump_version_and_refresh_caches() -> None:
    st = state(slice_("a", "n1", ["x"]))
    v = st.version
    assert names(st, "n1")[0][3] == ["x"]
    st.apply(slice_("a", "n1", ["x", "y"]))
    assert st.version == v + 1 and names(st, "n1")[0][3] == ["x", "y"]
    st.delete("ResourceSlice", None, "a")
    assert names(st, "n1") == [] and st.version == v + 2
    st.apply(slice_("s", None, ["shared"]))
    assert names(st, "n1")[0][3] == ["shared"]


def test_device_keys_change_with_the_slice() -> None:
    st = state(slice_("a", "n1", ["x"]))
    k1 = st.slices["a"].devices[0].key
    st.apply(slice_("a", "n1", ["x"]))  # the same content again: nothing changes, caches stay valid
    assert st.slices["a"].devices[0].key == k1
    changed = slice_("a", "n1", ["x"])
    changed["spec"]["devices"][0]["attributes"] = {"model": {"string": "b"}}
    st.apply(changed)
    assert st.slices["a"].devices[0].key != k1


def test_allocated_state() -> None:
    claim = yaml.safe_load(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: d.example.com, pool: p, device: x}
      - {request: r, driver: d.example.com, pool: p, device: y, adminAccess: true}
      - {request: r, driver: d.example.com, pool: p, device: z, shareID: 11111111-2222-4333-8444-555555555555,
         consumedCapacity: {bw: 1Gi}}
"""
    )
    st = state(claim)
    a = st.allocated
    assert ("d.example.com", "p", "x") in a.exclusive
    assert not a.is_allocated(("d.example.com", "p", "y"))
    assert a.is_allocated(("d.example.com", "p", "z")) and a.capacity[("d.example.com", "p", "z")] == {
        "bw": 2**30 * 10**9
    }
    st.delete("ResourceClaim", "ns", "c")
    after = st.allocated  # a new version: the one read before is immutable and still holds the claim
    assert not after.exclusive and not after.capacity and not after.shared
    assert ("d.example.com", "p", "x") in a.exclusive


def test_taint_rules_and_nodes() -> None:
    rule = {
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {"deviceSelector": {"pool": "p"}, "taint": {"key": "k", "effect": "NoSchedule"}},
    }
    st = state(slice_("a", "n1", ["x"]), rule)
    dev = st.slices["a"].devices[0]
    assert st.device_taints(dev) == ({"key": "k", "effect": "NoSchedule"},)
    st.delete("DeviceTaintRule", None, "r")
    assert st.device_taints(dev) == ()
    st.apply({"kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}}})
    assert [n.name for n in st.candidate_nodes()] == ["n1"] and st.nodes["n1"].labels["a"] == "b"


def test_candidate_nodes_without_node_objects() -> None:
    st = state(slice_("a", "n1", ["x"]), slice_("b", "n2", ["y"], pool="q"))
    assert [n.name for n in st.candidate_nodes()] == ["n1", "n2"]
    st.apply(slice_("s", None, ["z"], pool="shared"))
    assert [n.name for n in st.candidate_nodes()] == ["n1", "n2", None]


def test_extended_resource_class_resolution() -> None:
    def cls(name: str, created: str) -> dict:
        return {
            "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"extendedResourceName": "example.com/gpu"},
        }

    st = state(
        cls("b", "2026-01-01T00:00:00Z"), cls("a", "2026-01-01T00:00:00Z"), cls("old", "2025-01-01T00:00:00Z")
    )
    assert st.class_for_extended_resource("example.com/gpu") == "a"
    assert st.class_for_extended_resource("deviceclass.resource.kubernetes.io/old") == "old"
    assert st.class_for_extended_resource("example.com/none") is None


def test_device_taint_rules_index_matches_every_selector_shape() -> None:
    import itertools

    from webhook.config.profile import load_profile
    from webhook.state import ClusterState

    state = ClusterState(load_profile("1.37", {"DRADeviceTaintRules": True}))
    state.apply(
        {
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "a.example.com",
                "nodeName": "n",
                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "d0"}, {"name": "d1"}],
            },
        }
    )
    shapes = []
    for n, (driver, pool, device) in enumerate(
        itertools.product(["a.example.com", "b.example.com", ""], ["p", "q", ""], ["d0", "d9", ""])
    ):
        sel = {k: v for k, v in (("driver", driver), ("pool", pool), ("device", device)) if v}
        name = f"rule-{26 - n:02d}"  # names in reverse order of creation: the result is in name order
        state.apply(
            {
                "kind": "DeviceTaintRule",
                "metadata": {"name": name},
                "spec": {"deviceSelector": sel, "taint": {"key": name, "effect": "NoSchedule"}},
            }
        )
        shapes.append((name, driver, pool, device))
    state.apply(
        {"kind": "DeviceTaintRule", "metadata": {"name": "no-selector"}, "spec": {"taint": {"key": "x"}}}
    )
    d0 = state.slices["s"].devices[0]
    expected = sorted(
        name
        for name, driver, pool, device in shapes
        if driver in ("", "a.example.com") and pool in ("", "p") and device in ("", "d0")
    )
    assert [t["key"] for t in state.device_taints(d0)] == expected
