"""A DeviceTaintRule's blast radius (webhook/engine/blastradius.py): counts on generated small clusters
against a brute-force count written here from upstream's eviction rules, and the cases that name them."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.profile import load_profile
from webhook.engine.blastradius import blast_radius, toleration_delay
from webhook.state.store import StateStore

PROFILE = load_profile("1.37")
DRIVERS = ("a.example.com", "b.example.com")
POOLS = ("p0", "p1", "p2")
DEVICES = ("d0", "d1", "d2")
KEYS = ("k1", "k2")
NAMESPACES = ("n1", "n2")


def _slice(name: str, driver: str, pool: str, gen: int, count: int, devices: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
            "allNodes": True,
            "devices": [{"name": d} for d in devices],
        },
    }


tolerations = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(KEYS),
            "operator": st.sampled_from(("Exists", "Equal")),
            "value": st.sampled_from(("v", "w")),
            "effect": st.sampled_from(("NoExecute", "NoSchedule")),
            "tolerationSeconds": st.integers(-5, 600),
        },
    ),
    max_size=3,
)
device_ids = st.tuples(st.sampled_from(DRIVERS), st.sampled_from(POOLS), st.sampled_from(DEVICES))


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    slices: list[dict[str, Any]] = []
    for driver in DRIVERS:
        for pool in draw(st.lists(st.sampled_from(POOLS), unique=True, max_size=3)):
            n = draw(st.integers(1, 2))  # a second slice: the same generation or an older one
            gens = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
            free = list(DEVICES)
            for i, gen in enumerate(gens):
                mine = draw(st.lists(st.sampled_from(free), unique=True, max_size=len(free))) if free else []
                free = [d for d in free if d not in mine]
                slices.append(_slice(f"{driver}-{pool}-{i}", driver, pool, gen, n, mine))
    claims: list[dict[str, Any]] = []
    pods: dict[tuple[str, str], dict[str, Any]] = {}
    for i in range(draw(st.integers(0, 6))):
        ns = draw(st.sampled_from(NAMESPACES))
        results = [
            {
                "request": "r",
                "driver": d,
                "pool": p,
                "device": dev,
                **({"adminAccess": True} if draw(st.booleans()) and j == 0 else {}),
                "tolerations": draw(tolerations),
            }
            for j, (d, p, dev) in enumerate(draw(st.lists(device_ids, min_size=1, max_size=3, unique=True)))
        ]
        users = draw(st.lists(st.sampled_from(("pa", "pb", "pc")), unique=True, max_size=2))
        claims.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"c{i}", "namespace": ns},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}},
                "status": {
                    "allocation": {"devices": {"results": results}},
                    "reservedFor": [{"resource": "pods", "name": u, "uid": f"{ns}-{u}"} for u in users],
                },
            }
        )
        for u in users:
            pod = pods.setdefault(
                (ns, u),
                {
                    "kind": "Pod",
                    "metadata": {"name": u, "namespace": ns, "uid": f"{ns}-{u}"},
                    "spec": {
                        "nodeName": "n" if draw(st.booleans()) or u != "pc" else None,
                        "resourceClaims": [],
                    },
                },
            )
            pod["spec"]["resourceClaims"].append({"name": f"c{i}", "resourceClaimName": f"c{i}"})
    return slices + claims, pods


selectors = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "driver": st.sampled_from(DRIVERS),
            "pool": st.sampled_from(POOLS),
            "device": st.sampled_from(DEVICES),
        },
    ),
)
taints = st.fixed_dictionaries(
    {"key": st.sampled_from(KEYS), "effect": st.sampled_from(("NoExecute", "NoSchedule", "None"))},
    optional={"value": st.sampled_from(("v", "w"))},
)


def _brute(
    objs: list[dict[str, Any]], pods: dict[Any, Any] | None, sel: Any, taint: dict[str, Any]
) -> dict[str, int]:
    """Upstream's rules, one object at a time, without the index."""

    def hit(driver: str, pool: str, device: str) -> bool:
        if sel is None:
            return False
        return all(
            sel.get(k) in (None, v) for k, v in (("driver", driver), ("pool", pool), ("device", device))
        )

    newest: dict[tuple[str, str], int] = {}
    for o in objs:
        if o["kind"] == "ResourceSlice":
            s = o["spec"]
            key = (s["driver"], s["pool"]["name"])
            newest[key] = max(newest.get(key, 0), s["pool"]["generation"])
    devices = 0
    for o in objs:
        if o["kind"] == "ResourceSlice":
            s = o["spec"]
            if s["pool"]["generation"] == newest[(s["driver"], s["pool"]["name"])]:
                devices += sum(1 for d in s["devices"] if hit(s["driver"], s["pool"]["name"], d["name"]))
    out = {"devices": devices, "claims": 0, "now": 0, "later": 0, "never": 0}
    if taint["effect"] != "NoExecute":
        return out
    forever = float("inf")
    per_pod: dict[tuple[str, str], float] = {}
    for o in objs:
        if o["kind"] != "ResourceClaim":
            continue
        when = None
        for r in o["status"]["allocation"]["devices"]["results"]:
            if not hit(r["driver"], r["pool"], r["device"]):
                continue
            t_when: float = 0
            ok = [
                t
                for t in r["tolerations"]
                if t.get("effect") == "NoExecute"
                and t.get("key", taint["key"]) == taint["key"]
                and (t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""))
            ]
            if any("tolerationSeconds" not in t for t in ok):
                t_when = forever
            elif ok:
                t_when = min(max(t["tolerationSeconds"], 0) for t in ok)
            when = t_when if when is None else min(when, t_when)
        if when is None:
            continue
        out["claims"] += 1
        ns = o["metadata"]["namespace"]
        for ref in o["status"]["reservedFor"]:
            pod = pods.get((ns, ref["name"])) if pods is not None else None
            if pods is not None and (pod is None or not pod["spec"].get("nodeName")):
                continue
            key = (ns, ref["name"])
            per_pod[key] = min(per_pod.get(key, forever), when)
    for when in per_pod.values():
        out["now" if when == 0 else ("never" if when == forever else "later")] += 1
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), selectors, taints, st.booleans())
def test_counts_match_a_brute_force_count(
    cluster: tuple[list[dict[str, Any]], dict[Any, Any]], sel: Any, taint: dict[str, Any], with_pods: bool
) -> None:
    objs, pods = cluster
    store = StateStore(PROFILE)
    store.replace_all(objs)
    snap = store.publish()
    rule = {"kind": "DeviceTaintRule", "metadata": {"name": "r"}, "spec": {"taint": taint}}
    if sel is not None:
        rule["spec"]["deviceSelector"] = sel
    known = pods if with_pods else None
    r = blast_radius(rule, snap.state.inventory, snap.objects("ResourceClaim"), known, snap.state.memo())
    want = _brute(objs, known, sel, taint)
    c = r.counts()
    assert (c["devices"], c["claims"]) == (want["devices"], want["claims"])
    assert (c["podsEvicted"], c["podsDelayed"], c["podsTolerating"]) == (
        want["now"],
        want["later"],
        want["never"],
    )
    assert r.every_device == (sel == {})
    # the same answer again from the version's index
    again = blast_radius(rule, snap.state.inventory, snap.objects("ResourceClaim"), known, snap.state.memo())
    assert again == r


def test_a_toleration_without_effect_does_not_stop_the_eviction_controller() -> None:
    taint = {"key": "k", "effect": "NoExecute"}
    assert toleration_delay([{"operator": "Exists"}], taint) == 0  # upstream counts NoExecute ones only
    assert toleration_delay([{"operator": "Exists", "effect": "NoExecute"}], taint) is None
    both = [
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -3},
    ]
    assert toleration_delay(both, taint) == 0  # the smallest, negative = now
    assert toleration_delay(both[:1], taint) == 60


def test_absent_and_empty_selectors() -> None:
    store = StateStore(PROFILE)
    store.replace_all([_slice("s", "a.example.com", "p0", 1, 1, ["d0", "d1"])])
    snap = store.publish()
    base: dict[str, Any] = {"kind": "DeviceTaintRule", "metadata": {"name": "r"}}
    absent = {**base, "spec": {"taint": {"key": "k", "effect": "NoExecute"}}}
    empty = {**base, "spec": {"deviceSelector": {}, "taint": {"key": "k", "effect": "NoExecute"}}}
    r0 = blast_radius(absent, snap.state.inventory, {})
    r1 = blast_radius(empty, snap.state.inventory, {})
    assert (r0.devices, r0.selector) == (0, "absent")
    assert (r1.devices, r1.every_device) == (2, True)
    assert "taints every device of the cluster" in r1.summary()
