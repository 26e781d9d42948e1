"""Property tests of the allocation engine against an independent brute-force oracle.

Random small clusters (1-3 nodes, 1-8 devices; colours/sizes, a memory capacity, shared counters with
compatibility groups, taints, pre-allocated devices) and 1-2 claims with 1-3 requests (counts,
selectors, capacity requests, tolerations, firstAvailable, matchAttribute/distinctAttribute):
- every feasible answer satisfies every selector, constraint, counter, group, capacity and taint;
- its firstAvailable choices are the lexicographically first feasible ones on its node, and its devices
  are the first solution in upstream search order (pools by name, devices in list order, combinations);
- every infeasible answer is confirmed by exhaustive search over all device assignments on all nodes.
The oracle is a model of the upstream allocator's semantics (kubernetes/dynamic-resource-allocation `structured/`) written for these tests; it shares no code with the engine.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

engine = pytest.importorskip("webhook.engine")
state_mod = pytest.importorskip("webhook.state")

from webhook.config.profile import load_profile  # noqa: E402

DRIVER, OTHER = "dra.example.com", "other.example.com"
COLORS = ("red", "blue", "green")
PROFILE = load_profile("1.37", {"DRADeviceCompatibilityGroups": True})
GI = 1024**3

# --- the model -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dev:
    driver: str
    pool: str
    name: str
    node: str | None  # None: a node-independent (allNodes) slice
    color: str
    size: int | None  # None: the device has no `size` attribute
    mem: int  # capacity, Gi
    taint: str | None  # effect of a taint with key "k"
    consumes: int | None  # Gi of counter `mem` in set `gpu` of its pool; None: no counters
    groups: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.name)


@dataclass(frozen=True)
class Sub:
    name: str
    count: int
    selector: tuple[str, Any]  # ("any"|"color"|"size"|"mem", value)
    tolerate: bool
    capacity: int | None  # Gi requested, None: no capacity request


@dataclass(frozen=True)
class Req:
    name: str
    subs: tuple[Sub, ...]
    first_available: bool


@dataclass(frozen=True)
class Claim:
    name: str
    requests: tuple[Req, ...]
    constraints: tuple[tuple[str, str, tuple[str, ...]], ...]  # (match|distinct, attribute, requests)


@dataclass
class Scenario:
    nodes: tuple[str, ...]
    devices: tuple[Dev, ...]
    counters: dict[str, int]  # pool → value of counter mem (Gi) in set gpu
    preallocated: tuple[Dev, ...]
    claims: tuple[Claim, ...]
    order: dict[tuple[str, str, str], tuple[Any, ...]] = field(default_factory=dict)


# --- generation ------------------------------------------------------------------------------------


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    n_nodes = draw(st.integers(1, 3))
    nodes = tuple(f"node-{i}" for i in range(n_nodes))
    n_dev = draw(st.integers(1, 8))
    with_counters = {n: draw(st.booleans()) for n in nodes}
    counters = {f"pool-{n}": draw(st.sampled_from((2, 3, 4, 8))) for n in nodes if with_counters[n]}
    devices = []
    for i in range(n_dev):
        where = draw(st.sampled_from(nodes + (None,)))
        pool = f"pool-{where}" if where else "shared"
        driver = OTHER if draw(st.integers(0, 9)) == 0 else DRIVER
        if driver == OTHER:
            pool = "other"
            where = None
        counted = pool in counters
        devices.append(
            Dev(
                driver=driver,
                pool=pool,
                name=f"dev-{i}",
                node=where,
                color=draw(st.sampled_from(COLORS)),
                size=draw(st.sampled_from((1, 2, 3, None))),
                mem=draw(st.sampled_from((1, 2, 4))),
                taint=draw(st.sampled_from((None, None, None, "NoSchedule", "NoExecute", "None"))),
                consumes=draw(st.sampled_from((1, 2, 4))) if counted else None,
                groups=draw(st.sampled_from(((), (), ("a",), ("b",), ("a", "b")))) if counted else (),
            )
        )
    pre_node = draw(st.sampled_from(nodes + (None,)))
    pre_pool = [d for d in devices if d.node == pre_node and d.driver == DRIVER]
    preallocated = (
        tuple(draw(st.lists(st.sampled_from(pre_pool), max_size=2, unique=True))) if pre_pool else ()
    )
    n_requests = draw(st.integers(1, 3))
    split = draw(st.integers(1, n_requests - 1)) if n_requests > 1 and draw(st.booleans()) else n_requests
    claims = []
    req_no = 0
    for c, count in enumerate((split, n_requests - split) if split < n_requests else (n_requests,)):
        requests = []
        for _ in range(count):
            fa = draw(st.booleans())
            subs = tuple(
                Sub(
                    name=f"s{k}" if fa else f"r{req_no}",
                    count=draw(st.integers(1, 2)),
                    selector=draw(
                        st.one_of(
                            st.just(("any", None)),
                            st.tuples(st.just("color"), st.sampled_from(COLORS)),
                            st.tuples(st.just("size"), st.sampled_from((2, 3))),
                            st.tuples(st.just("mem"), st.sampled_from((2, 4))),
                        )
                    ),
                    tolerate=draw(st.booleans()),
                    capacity=draw(st.sampled_from((None, None, 2, 4))),
                )
                for k in range(draw(st.integers(2, 3)) if fa else 1)
            )
            requests.append(Req(f"r{req_no}", subs, fa))
            req_no += 1
        names = [r.name for r in requests]
        constraints = tuple(
            (
                draw(st.sampled_from(("match", "distinct"))),
                draw(st.sampled_from(("color", "size"))),
                tuple(draw(st.lists(st.sampled_from(names), max_size=2, unique=True))),
            )
            for _ in range(draw(st.integers(0, 1)))
        )
        claims.append(Claim(f"claim-{c}", tuple(requests), constraints))
    return Scenario(nodes, tuple(devices), counters, preallocated, tuple(claims))


# --- objects for the engine ------------------------------------------------------------------------


def _device_obj(d: Dev) -> dict[str, Any]:
    attrs: dict[str, Any] = {"color": {"string": d.color}}
    if d.size is not None:
        attrs["size"] = {"int": d.size}
    obj: dict[str, Any] = {"name": d.name, "attributes": attrs, "capacity": {"mem": {"value": f"{d.mem}Gi"}}}
    if d.taint:
        obj["taints"] = [{"key": "k", "value": "v", "effect": d.taint}]
    if d.consumes is not None:
        entry: dict[str, Any] = {"counterSet": "gpu", "counters": {"mem": {"value": f"{d.consumes}Gi"}}}
        if d.groups:
            entry["compatibilityGroups"] = list(d.groups)
        obj["consumesCounters"] = [entry]
    return obj


def _slice(name: str, driver: str, pool: str, node: str | None, count: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def cluster_objects(s: Scenario) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}}
        for n in s.nodes
    ]
    objs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "dev"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    )
    pools: dict[tuple[str, str], list[Dev]] = {}
    for d in s.devices:
        pools.setdefault((d.driver, d.pool), []).append(d)
    for n in s.nodes:  # a counter-only pool still exists when all its devices went elsewhere
        if f"pool-{n}" in s.counters:
            pools.setdefault((DRIVER, f"pool-{n}"), [])
    for (driver, pool), devs in sorted(pools.items()):
        node = next((d.node for d in devs), None) if devs else pool.removeprefix("pool-")
        if pool in s.counters:
            counters = _slice(f"{pool}-counters", driver, pool, node, 2)
            counters["spec"]["sharedCounters"] = [
                {"name": "gpu", "counters": {"mem": {"value": f"{s.counters[pool]}Gi"}}}
            ]
            objs.append(counters)
            sl = _slice(f"{pool}-devices", driver, pool, node, 2)
        else:
            sl = _slice(f"{pool}-devices", driver, pool, node, 1)
        sl["spec"]["devices"] = [_device_obj(d) for d in devs]
        objs.append(sl)
    if s.preallocated:
        objs.append(_preallocated_claim(s))
    return objs


def _preallocated_claim(s: Scenario) -> dict[str, Any]:
    node = s.preallocated[0].node
    allocation: dict[str, Any] = {
        "devices": {
            "results": [
                {"request": "pre", "driver": d.driver, "pool": d.pool, "device": d.name}
                for d in s.preallocated
            ]
        }
    }
    if node:
        allocation["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
    exactly = {"deviceClassName": "dev", "allocationMode": "ExactCount", "count": len(s.preallocated)}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "pre", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "pre", "exactly": exactly}]}},
        "status": {"allocation": allocation},
    }


def _selector_cel(sel: tuple[str, Any]) -> str | None:
    kind, value = sel
    attrs = f'device.attributes["{DRIVER}"]'
    if kind == "color":
        return f'{attrs}.color == "{value}"'
    if kind == "size":
        return f"has({attrs}.size) && {attrs}.size >= {value}"
    if kind == "mem":
        return f'device.capacity["{DRIVER}"].mem.compareTo(quantity("{value}Gi")) >= 0'
    return None


def _exact(sub: Sub) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": "dev", "allocationMode": "ExactCount", "count": sub.count}
    cel = _selector_cel(sub.selector)
    if cel:
        out["selectors"] = [{"cel": {"expression": cel}}]
    if sub.tolerate:
        out["tolerations"] = [{"key": "k", "operator": "Exists"}]
    if sub.capacity is not None:
        out["capacity"] = {"requests": {"mem": f"{sub.capacity}Gi"}}
    return out


def claim_objects(s: Scenario) -> list[dict[str, Any]]:
    out = []
    for c in s.claims:
        requests = []
        for r in c.requests:
            if r.first_available:
                requests.append(
                    {"name": r.name, "firstAvailable": [{"name": u.name, **_exact(u)} for u in r.subs]}
                )
            else:
                requests.append({"name": r.name, "exactly": _exact(r.subs[0])})
        devices: dict[str, Any] = {"requests": requests}
        if c.constraints:
            devices["constraints"] = [
                {
                    ("matchAttribute" if kind == "match" else "distinctAttribute"): f"{DRIVER}/{attr}",
                    **({"requests": list(reqs)} if reqs else {}),
                }
                for kind, attr, reqs in c.constraints
            ]
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": c.name, "namespace": "default"},
                "spec": {"devices": devices},
            }
        )
    return out


# --- the oracle ------------------------------------------------------------------------------------


def selected(d: Dev, sub: Sub) -> bool:
    """Class selector, request selector, capacity request and taints."""
    if d.driver != DRIVER:
        return False
    kind, value = sub.selector
    if kind == "color" and d.color != value:
        return False
    if kind == "size" and (d.size is None or d.size < value):
        return False
    if kind == "mem" and d.mem < value:
        return False
    if sub.capacity is not None and d.mem < sub.capacity:
        return False
    return not (d.taint in ("NoSchedule", "NoExecute") and not sub.tolerate)


def groups_ok(devs: list[Dev]) -> bool:
    """Per counter set: all ungrouped, or all grouped with a common group."""
    by_set: dict[tuple[str, str], list[Dev]] = {}
    for d in devs:
        if d.consumes is not None:
            by_set.setdefault((d.driver, d.pool), []).append(d)
    for members in by_set.values():
        grouped = [bool(d.groups) for d in members]
        if any(grouped) and not all(grouped):
            return False
        if all(grouped) and not set.intersection(*(set(d.groups) for d in members)):
            return False
    return True


def touched(s: Scenario, picked: list[Dev]) -> list[Dev]:
    """Pre-allocated and picked devices of the counter sets the picked devices draw on (the allocator
    checks the pools of the devices it admits, never others)."""
    sets = {(d.driver, d.pool) for d in picked if d.consumes is not None}
    return [d for d in list(s.preallocated) + picked if (d.driver, d.pool) in sets]


def counters_ok(s: Scenario, devs: list[Dev]) -> bool:
    used: dict[str, int] = {}
    for d in devs:
        if d.consumes is not None:
            used[d.pool] = used.get(d.pool, 0) + d.consumes
    return all(v <= s.counters[p] for p, v in used.items())


def _attr(d: Dev, attr: str) -> Any:
    return d.color if attr == "color" else d.size


def constraints_ok(claim: Claim, picked: list[tuple[str, Dev]]) -> bool:
    for kind, attr, reqs in claim.constraints:
        devs = [d for r, d in picked if not reqs or r in reqs]
        values = [_attr(d, attr) for d in devs]
        if any(v is None for v in values):
            return False
        if kind == "match" and len(set(values)) > 1:
            return False
        if kind == "distinct" and len(set(values)) != len(values):
            return False
    return True


def order_key(s: Scenario, d: Dev) -> tuple[Any, ...]:
    """Upstream first-fit order: pools by (driver, name); the devices slice, list order."""
    return (d.driver, d.pool, int(d.name.split("-")[1]))


def first_solution(s: Scenario, node: str) -> list[list[tuple[str, str, Dev]]] | None:
    """DFS in upstream order on one node: per claim, a list of (request, subrequest, device)."""
    avail = sorted(
        (d for d in s.devices if d.node in (node, None) and d not in s.preallocated),
        key=lambda d: order_key(s, d),
    )
    steps = [(ci, r) for ci, c in enumerate(s.claims) for r in c.requests]
    chosen: list[list[tuple[str, str, Dev]]] = [[] for _ in s.claims]

    def feasible_so_far(ci: int) -> bool:
        relevant = touched(s, [d for per in chosen for _, _, d in per])
        if not counters_ok(s, relevant) or not groups_ok(relevant):
            return False
        return constraints_ok(s.claims[ci], [(r, d) for r, _, d in chosen[ci]])

    def dfs(k: int) -> bool:
        if k == len(steps):
            return True
        ci, req = steps[k]
        taken = {d for per in chosen for _, _, d in per}
        for sub in req.subs:
            cands = [d for d in avail if d not in taken and selected(d, sub)]
            for combo in itertools.combinations(cands, sub.count):
                chosen[ci].extend((req.name, sub.name, d) for d in combo)
                if feasible_so_far(ci) and dfs(k + 1):
                    return True
                del chosen[ci][len(chosen[ci]) - sub.count :]
        return False

    return [list(per) for per in chosen] if dfs(0) else None


# --- checks ----------------------------------------------------------------------------------------


def run(s: Scenario) -> Any:
    state = state_mod.ClusterState.from_objects(cluster_objects(s), PROFILE)
    return engine.allocate(state, claim_objects(s), budget=engine.Budget(steps=1_000_000, seconds=20.0))


def check(s: Scenario) -> None:
    outcome = run(s)
    assert outcome.feasible is not None, f"undecided on a tiny cluster: {outcome.reason}"
    if not outcome.feasible:
        assert outcome.error is None, f"unexpected error outcome: {outcome.error}"
        for node in s.nodes:
            found = first_solution(s, node)
            assert found is None, f"engine says infeasible ({outcome.reason}) but node {node} fits: {found}"
        return
    devices = {d.key: d for d in s.devices}
    assert len(outcome.claims) == len(s.claims)
    node = outcome.node
    picked_all: list[Dev] = []
    got: list[list[tuple[str, str, Dev]]] = []
    for claim, result in zip(s.claims, outcome.claims, strict=True):
        assert result.name == claim.name
        per: list[tuple[str, str, Dev]] = []
        for r in result.results:
            d = devices[(r.driver, r.pool, r.device)]
            req_name, _, sub_name = r.request.partition("/")
            req = next(q for q in claim.requests if q.name == req_name)
            sub = next(u for u in req.subs if u.name == (sub_name or req_name))
            assert bool(sub_name) == req.first_available, r.request
            assert selected(d, sub), f"{d} does not satisfy {sub}"
            assert d.node in (node, None), f"{d} is not on node {node}"
            assert d not in s.preallocated, f"{d} is already allocated"
            per.append((req_name, sub.name, d))
        for req in claim.requests:
            subs = {u for q, u, _ in per if q == req.name}
            assert len(subs) == 1, f"request {req.name}: subrequests {subs}"
            sub = next(u for u in req.subs if u.name in subs)
            assert sum(1 for q, _, _ in per if q == req.name) == sub.count
        assert constraints_ok(claim, [(q, d) for q, _, d in per]), (
            f"constraints of {claim.name} violated: {per}"
        )
        picked_all.extend(d for _, _, d in per)
        got.append(per)
    assert len(set(picked_all)) == len(picked_all), "a device was allocated twice"
    everything = touched(s, picked_all)
    assert counters_ok(s, everything), "counters over-committed"
    assert groups_ok(everything), "compatibility groups violated"
    assert node is not None
    expected = first_solution(s, node)
    assert expected is not None
    assert [[(q, u) for q, u, _ in per] for per in got] == [
        [(q, u) for q, u, _ in per] for per in expected
    ], "firstAvailable: not the first feasible subrequests"
    assert [[d.name for *_, d in per] for per in got] == [[d.name for *_, d in per] for per in expected], (
        "not the first solution in upstream search order"
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_allocations_are_valid_and_infeasibility_is_exhaustive(s: Scenario) -> None:
    check(s)


def test_regression_counter_released_by_rejected_candidate() -> None:
    """A tainted candidate must give back the counters it reserved."""
    a = Dev(DRIVER, "pool-node-0", "dev-0", "node-0", "red", 1, 1, "NoSchedule", 6)
    b = Dev(DRIVER, "pool-node-0", "dev-1", "node-0", "red", 1, 1, None, 6)
    sub = Sub("r0", 1, ("any", None), False, None)
    s = Scenario(
        ("node-0",), (a, b), {"pool-node-0": 8}, (), (Claim("claim-0", (Req("r0", (sub,), False),), ()),)
    )
    check(s)
    assert run(s).claims[0].results[0].device == "dev-1"


def test_regression_distinct_attribute_compares_every_device() -> None:
    """[red, blue, red] must not pass distinctAttribute."""
    devs = tuple(
        Dev(DRIVER, "pool-node-0", f"dev-{i}", "node-0", c, 1, 1, None, None)
        for i, c in enumerate(("red", "blue", "red"))
    )
    sub = Sub("r0", 3, ("any", None), False, None)
    s = Scenario(
        ("node-0",),
        devs,
        {},
        (),
        (Claim("claim-0", (Req("r0", (sub,), False),), (("distinct", "color", ()),)),),
    )
    check(s)
    assert run(s).feasible is False
