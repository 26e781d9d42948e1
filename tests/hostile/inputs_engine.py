"""Generators of hostile inputs for the rules and the allocation engine (issue 6, §2/§4/§5).

Each `write_*` function writes one manifest file into `directory` and returns its path. The inputs are
valid for the API server unless the name says otherwise, so every finding they produce is a real one.
`bench/engine_bounds_bench.py` times them; the tests under `tests/engine`, `tests/simulate` and
`tests/cli` run small instances; the hostile corpus harness may call them at any size.

    write_slow_selector(dir, devices=10_000)       legal, costly class selector on many devices
    write_big_pod(dir, claims=4_000)                one Pod with thousands of claim references
    write_many_selectors(dir, requests=32, subrequests=8, selectors=32)   a claim full of selectors
    write_max_slices(dir, slices=8)                 slices of 128 devices x 32 attributes/capacities
    write_many_claims(dir, claims=600)              many unallocated claims, each asked on its own
    write_many_taint_rules(dir, rules=10_000)       DeviceTaintRules to match against every device
    write_huge_quantities(dir)                      capacities/counters/requests of 1e9999 and friends
    write_bad_numbers(dir)                          quantities and int64 fields the API server rejects
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(directory: Path, name: str, objs: list[dict[str, Any]]) -> Path:
    path = Path(directory) / name
    with path.open("w", encoding="utf-8") as f:  # libyaml's emitter: the pure-Python one took 17 s
        yaml.dump_all(objs, f, Dumper=_DUMPER, sort_keys=False, width=1 << 20)
    return path


def _dump_json(directory: Path, name: str, objs: list[dict[str, Any]]) -> Path:
    """A JSON List: quantity strings like 1e9999 stay strings whatever a YAML reader makes of an
    unquoted 1e9999 (kubectl's go-yaml keeps it a string: it is out of float64 range)."""
    path = Path(directory) / name
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}, indent=1)
    path.write_text(text, encoding="utf-8")
    return path


def _class(name: str = "gpu", selectors: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def _slice(
    name: str, node: str, devices: list[dict[str, Any]], pool: str | None = None, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": pool or name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
            **spec,
        },
    }


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _claim(name: str, requests: list[dict[str, Any]], ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": requests}},
    }


def slow_selector(iterations: int = 3_600) -> str:
    """A legal selector (within the cost limit) that costs `iterations` comprehension steps per device."""
    side = max(1, int(iterations**0.5))
    r = "[" + ",".join(str(i) for i in range(side)) + "]"
    return f'{r}.all(x, {r}.all(y, x + y >= 0)) && device.attributes["{DRIVER}"].idx >= 0'


def write_slow_selector(directory: Path, devices: int = 10_000, iterations: int = 3_600) -> Path:
    """One node, `devices` devices in slices of 128, a class whose selector is legal but costly, and a
    claim no device satisfies (so every device must be evaluated before the answer is known)."""
    objs: list[dict[str, Any]] = [_node("node-1"), _class("gpu", [slow_selector(iterations)])]
    n = 0
    s = 0
    while n < devices:
        devs = []
        for d in range(min(128, devices - n)):
            devs.append({"name": f"d{d}", "attributes": {"idx": {"int": n}}})
            n += 1
        objs.append(_slice(f"s{s}", "node-1", devs))
        s += 1
    never = f'device.attributes["{DRIVER}"].idx < 0'
    objs.append(
        _claim(
            "c",
            [
                {
                    "name": "r",
                    "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": never}}]},
                }
            ],
        )
    )
    return _dump(directory, "slow-selector.yaml", objs)


def write_big_pod(directory: Path, claims: int = 4_000, containers: int = 8) -> Path:
    """One Pod with `claims` resourceClaims (half by template, half by name), every container listing
    every claim; the templates, the claims and a device per claim are in the file (feasible)."""
    objs: list[dict[str, Any]] = [_node("node-1"), _class("gpu")]
    for s in range(0, claims, 128):
        objs.append(
            _slice(f"s{s // 128}", "node-1", [{"name": f"d{i}"} for i in range(min(128, claims - s))])
        )
    entries = []
    for i in range(claims):
        if i % 2:
            entries.append({"name": f"c{i}", "resourceClaimName": f"claim-{i}"})
        else:
            entries.append({"name": f"c{i}", "resourceClaimTemplateName": f"tmpl-{i % 16}"})
    for t in range(min(claims, 16)):
        objs.append(
            {
                "apiVersion": V1,
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"tmpl-{t}", "namespace": "default"},
                "spec": {
                    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}
                },
            }
        )
    for i in range(1, claims, 2):
        objs.append(_claim(f"claim-{i}", [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]))
    refs = [{"name": e["name"]} for e in entries]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "containers": [
                {"name": f"c{k}", "image": "busybox", "resources": {"claims": refs}}
                for k in range(containers)
            ],
            "resourceClaims": entries,
        },
    }
    objs.append(pod)
    return _dump(directory, "big-pod.yaml", objs)


def write_many_selectors(
    directory: Path, requests: int = 32, subrequests: int = 8, selectors: int = 32, expr_len: int = 300
) -> Path:
    """A claim of `requests` requests x `subrequests` subrequests x `selectors` selectors of about
    `expr_len` bytes each (the defaults make a ~2.9 MB object), plus a small cluster."""
    pad = "x" * max(0, expr_len - 80)
    reqs = []
    for r in range(requests):
        subs = []
        for s in range(subrequests):
            sels = [
                {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{pad}{r}-{s}-{k}" || true'}}
                for k in range(selectors)
            ]
            subs.append({"name": f"s{s}", "deviceClassName": "gpu", "selectors": sels})
        reqs.append({"name": f"r{r}", "firstAvailable": subs})
    objs = [
        _node("node-1"),
        _class("gpu"),
        _slice(
            "s0",
            "node-1",
            [{"name": f"d{i}", "attributes": {"model": {"string": "A100"}}} for i in range(64)],
        ),
        _claim("many-selectors", reqs),
    ]
    return _dump(directory, "many-selectors.yaml", objs)


def write_max_slices(directory: Path, slices: int = 8) -> Path:
    """Slices of 128 devices, each with 16 attributes and 16 capacities (the 32 maximum), on one node."""
    objs: list[dict[str, Any]] = [_node("node-1"), _class("gpu", [f'device.driver == "{DRIVER}"'])]
    for s in range(slices):
        devs = []
        for d in range(128):
            attrs: dict[str, Any] = {f"a{k:02d}": {"string": f"value-{k}-{d % 7}"} for k in range(12)}
            attrs.update({f"i{k:02d}": {"int": d * k} for k in range(4)})
            caps = {f"c{k:02d}": {"value": f"{k + 1}Gi"} for k in range(16)}
            devs.append({"name": f"d{d}", "attributes": attrs, "capacity": caps})
        objs.append(_slice(f"s{s}", "node-1", devs, pool=f"p{s}"))
    objs.append(_claim("c", [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 4}}]))
    return _dump(directory, "max-slices.yaml", objs)


def write_many_claims(directory: Path, claims: int = 600) -> Path:
    """`claims` unallocated claims of one device each and enough devices: without Pods, simulate
    asks each on its own (as admission answers a claim CREATE), `claims` allocations on one state."""
    objs: list[dict[str, Any]] = [_node("node-1"), _class("gpu")]
    n = 0
    s = 0
    while n < claims:
        k = min(128, claims - n)
        objs.append(_slice(f"s{s}", "node-1", [{"name": f"d{i}"} for i in range(k)]))
        n += k
        s += 1
    for i in range(claims):
        objs.append(_claim(f"c{i}", [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]))
    return _dump(directory, "many-claims.yaml", objs)


def write_many_taint_rules(directory: Path, rules: int = 10_000, devices: int = 2_048) -> Path:
    """`rules` DeviceTaintRules, each naming one device of the cluster (every device ends up tainted
    NoSchedule), over `devices` devices, and a claim of 32 devices that cannot tolerate them: every
    device is matched against the rules (needs --feature-gates DRADeviceTaintRules=true)."""
    objs: list[dict[str, Any]] = [_node("node-1"), _class("gpu")]
    for s in range(0, devices, 128):
        objs.append(
            _slice(f"s{s // 128}", "node-1", [{"name": f"d{i}"} for i in range(min(128, devices - s))])
        )
    for r in range(rules):
        objs.append(
            {
                "apiVersion": V1,
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"rule-{r}"},
                "spec": {
                    "deviceSelector": {
                        "driver": DRIVER,
                        "pool": f"s{(r // 128) % max(1, -(-devices // 128))}",
                        "device": f"d{r % 128}",
                    },
                    "taint": {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"},
                },
            }
        )
    objs.append(_claim("c", [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 32}}]))
    return _dump(directory, "many-taint-rules.yaml", objs)


HUGE = "1e9999"


def write_huge_quantities(directory: Path) -> Path:
    """Quantities the API server accepts however large: capacities, counters, capacity requests and
    request policies of 1e9999 next to ordinary ones. Feasible: the claim fits."""
    slice_obj = _slice(
        "huge",
        "node-1",
        [
            {
                "name": "d0",
                "allowMultipleAllocations": True,
                "capacity": {
                    "memory": {
                        "value": HUGE,
                        "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "1"}},
                    },
                    "small": {"value": "1"},
                },
                "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1e9990"}}}],
            }
        ],
        sharedCounters=[{"name": "set", "counters": {"mem": {"value": HUGE}}}],
    )
    # A slice cannot hold both devices and sharedCounters: split them into two slices of one pool.
    counters = _slice(
        "huge-counters", "node-1", [], pool="huge", sharedCounters=slice_obj["spec"].pop("sharedCounters")
    )
    del counters["spec"]["devices"]
    for s in (slice_obj, counters):
        s["spec"]["pool"] = {"name": "huge", "generation": 1, "resourceSliceCount": 2}
    claim = _claim(
        "c",
        [
            {
                "name": "r",
                "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1e9998"}}},
            }
        ],
    )
    objs = [_node("node-1"), _class("gpu"), slice_obj, counters, claim]
    return _dump_json(directory, "huge-quantities.json", objs)


BAD_QUANTITIES = ("abc", ".inf", ".nan", "1e9223372036854775808", "1Qi", "5iK", "--1", "1e", "")


def write_bad_numbers(directory: Path) -> Path:
    """Quantities upstream's ParseQuantity rejects in every quantity field, and int64 fields out of
    range; every object here is rejected by the API server at decode time."""
    devs = []
    for i, q in enumerate(BAD_QUANTITIES):
        devs.append({"name": f"d{i}", "capacity": {"memory": {"value": q}}})
    devs.append({"name": "big-int", "attributes": {"n": {"int": 1 << 63}}})
    bad_slice = _slice("bad", "node-1", devs)
    bad_slice["spec"]["pool"]["generation"] = 1 << 63
    claim = _claim(
        "bad",
        [
            {
                "name": "r",
                "exactly": {
                    "deviceClassName": "gpu",
                    "count": 1 << 64,
                    "capacity": {"requests": {"m": "abc"}},
                },
            }
        ],
    )
    return _dump_json(directory, "bad-numbers.json", [bad_slice, claim])
