"""One writer, many readers: reader threads run allocate() and cross-object checks on snapshots while the
writer applies random changes (hypothesis draws them) and publishes. Every answer a reader got must equal
the answer computed afterwards, single-threaded, on a fresh state holding a frozen copy of the content of
the version that reader saw."""

from __future__ import annotations

import copy
import sys
import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.profile import load_profile
from webhook.engine import Budget, allocate
from webhook.rules.crossobject import violations_for
from webhook.state import StateStore


def cross(
    snap: Any, obj: dict[str, Any], old: dict[str, Any] | None = None, namespace: str | None = None
) -> Any:
    """The cross-object rules for `obj` on a snapshot, as admission runs them."""
    return violations_for(snap.state.inventory, obj, old, namespace)


PROFILE = load_profile("1.37", {"DRADeviceTaintRules": True})
DRIVER = "gpu.example.com"
NODES = 4
BUDGET = Budget(steps=1_000_000, seconds=60.0)


def node(i: int, zone: str = "a") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": zone}}}


def gpu_slice(i: int, model: str = "A", count: int = 4) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"n{i}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": f"n{i}",
            "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}],
            "devices": [
                {
                    "name": f"gpu-{g}",
                    "attributes": {"model": {"string": model}, "numa": {"int": g // 2}},
                    "consumesCounters": [{"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}],
                }
                for g in range(count)
            ],
        },
    }


def device_class(ern: str = "example.com/gpu") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "extendedResourceName": ern,
        },
    }


def claim(name: str, count: int = 1, selector: str | None = None, numa: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    spec: dict[str, Any] = {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}
    if numa:
        spec["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/numa"}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "t"},
        "spec": spec,
    }


def allocated(k: int, i: int, g: int) -> dict[str, Any]:
    c = claim(f"held-{k}")
    c["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "r", "driver": DRIVER, "pool": f"n{i}", "device": f"gpu-{g}"}]
            }
        }
    }
    return c


def taint_rule(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {"deviceSelector": {"pool": f"n{i}"}, "taint": {"key": "m", "effect": "NoSchedule"}},
    }


def initial() -> list[dict[str, Any]]:
    return [device_class()] + [node(i) for i in range(NODES)] + [gpu_slice(i) for i in range(NODES)]


# the changes the writer draws
ops = st.one_of(
    st.tuples(st.just("hold"), st.integers(0, 5), st.integers(0, NODES - 1), st.integers(0, 3)),
    st.tuples(st.just("release"), st.integers(0, 5)),
    st.tuples(st.just("slice"), st.integers(0, NODES - 1), st.sampled_from("AB"), st.integers(1, 4)),
    st.tuples(st.just("unslice"), st.integers(0, NODES - 1)),
    st.tuples(st.just("taint"), st.integers(-1, NODES - 1)),
    st.tuples(st.just("node"), st.integers(0, NODES - 1), st.sampled_from("ab")),
    st.tuples(st.just("class"), st.sampled_from(["example.com/gpu", "example.com/other"])),
)


class Writer:
    """Applies changes to the store and keeps a plain copy of what it holds."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self.content: dict[tuple[str, str], dict[str, Any]] = {}

    def put(self, obj: dict[str, Any]) -> None:
        self.content[(obj["kind"], obj["metadata"]["name"])] = copy.deepcopy(obj)
        self.store.apply(obj)

    def drop(self, kind: str, ns: str | None, name: str) -> None:
        self.content.pop((kind, name), None)
        self.store.delete(kind, ns, name)

    def change(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "hold":
            self.put(allocated(op[1], op[2], op[3]))
        elif kind == "release":
            self.drop("ResourceClaim", "t", f"held-{op[1]}")
        elif kind == "slice":
            self.put(gpu_slice(op[1], op[2], op[3]))
        elif kind == "unslice":
            self.drop("ResourceSlice", None, f"n{op[1]}-gpus")
        elif kind == "taint":
            if op[1] < 0:
                self.drop("DeviceTaintRule", None, "maintenance")
            else:
                self.put(taint_rule(op[1]))
        elif kind == "node":
            self.put(node(op[1], op[2]))
        elif kind == "class":
            self.put(device_class(op[1]))


QUERIES = [
    [claim("one-a", 1, f'device.attributes["{DRIVER}"].model == "A"')],
    [claim("two-numa", 2, numa=True)],
    [claim("three", 3)],  # the counters (80Gi, 40Gi each) allow two per node: always infeasible
    [claim("one-b", 1, f'device.attributes["{DRIVER}"].model == "B"'), claim("one-any", 1)],
]
OBJECTS = [
    gpu_slice(0, "A", 2) | {"metadata": {"name": "n0-extra"}},  # duplicates n0-gpus' device names
    device_class("example.com/gpu")
    | {"metadata": {"name": "gpu-2", "creationTimestamp": "2026-02-01T00:00:00Z"}},
    claim("x") | {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "tpu"}}]}}},
]


def answers(state: Any, snap: Any) -> tuple[Any, ...]:
    out: list[Any] = []
    for claims in QUERIES:
        o = allocate(state, copy.deepcopy(claims), budget=BUDGET)
        out.append(
            (
                o.feasible,
                o.node,
                [[r.device for r in c.results] for c in o.claims],
                o.internal,
                o.reason,
                o.explanation,
            )
        )
    for obj in OBJECTS:
        out.append([(v.rule, v.field, v.message) for v in cross(snap, obj)])
    return tuple(out)


def frozen_answers(content: list[dict[str, Any]]) -> tuple[Any, ...]:
    store = StateStore(PROFILE)
    store.replace_all(copy.deepcopy(content))
    snap = store.publish()
    return answers(snap.state, snap)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(ops, min_size=1, max_size=4), min_size=4, max_size=12))
def test_readers_see_consistent_snapshots(batches: list[list[tuple[Any, ...]]]) -> None:
    store = StateStore(PROFILE)
    w = Writer(store)
    for obj in initial():
        w.put(obj)
    versions: dict[int, list[dict[str, Any]]] = {}
    snap = store.publish()
    versions[snap.version] = copy.deepcopy(list(w.content.values()))
    seen: list[tuple[int, tuple[Any, ...]]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    answered = threading.Condition()
    latest = [0]  # the highest version a reader has answered for

    def reader() -> None:
        try:
            while True:
                s = store.snapshot()
                seen.append((s.version, answers(s.state, s)))
                with answered:
                    latest[0] = max(latest[0], s.version)
                    answered.notify_all()
                if done.is_set():
                    return
        except BaseException as e:  # noqa: BLE001 - reported by the test thread
            errors.append(e)
            done.set()

    def writer() -> None:
        try:
            for batch in batches:
                for op in batch:
                    w.change(op)
                s = store.publish()
                versions[s.version] = copy.deepcopy(list(w.content.values()))
                with answered:  # let readers get to this version (they go on while the next batch is applied)
                    answered.wait_for(lambda v=s.version: latest[0] >= v or done.is_set(), timeout=30)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: interleave readers with the writer's steps
    try:
        threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    # the writer waits for an answer on each version it publishes before it publishes the next
    assert set(versions) - {snap.version} <= {v for v, _ in seen}
    expected: dict[int, tuple[Any, ...]] = {}
    for version, got in seen:
        if version not in expected:
            expected[version] = frozen_answers(versions[version])
        assert got == expected[version], f"version {version}"
