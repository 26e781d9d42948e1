"""Allocation built to backtrack and selectors built to be slow (issue §2): one budget covers selector
evaluation, compilation and search, per Pod and per run. With `--budget-seconds 2` (per Pod) and
`--deadline-seconds 5` (the whole run, reading included) every run ends within 6 s, and when the budget
runs out the answer is undecided, never a wrong "infeasible" (or "feasible")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hostile.corpus import ENGINE, Run, feasibility, register, simulate
from tests.hostile.corpus import Case as _Case
from tests.hostile.harness import Outcome
from tests.hostile.k8s import DRIVER, V1, claim, many_devices, node, pod, request, uid, write

UNDECIDED_OR_FEASIBLE = (0, 3)
UNDECIDED_OR_INFEASIBLE = (1, 3)
L99 = "[" + ",".join(str(i) for i in range(99)) + "]"
# legal upstream (within the cost estimate), ~10,000 comprehension steps per device, and it reads the
# device's own index so no two devices can share an evaluation
SLOW_TRUE = f"{L99}.all(x, {L99}.all(y, device.attributes['{DRIVER}'].index + x + y >= 0))"
SLOW_FALSE = f"{L99}.all(x, {L99}.all(y, device.attributes['{DRIVER}'].index + x + y < 0))"


def never(verdict: bool) -> Any:
    """A check on `simulate -o json`: no Pod got `verdict` (True: feasible, False: infeasible)."""

    def check(o: Outcome) -> str | None:
        try:
            pods = json.loads(o.stdout)["pods"]
        except (ValueError, KeyError):
            return "simulate -o json output is not JSON"
        wrong = [p for p in pods if p.get("feasible") is verdict]
        if wrong:
            return f"{len(wrong)} Pod(s) answered {'feasible' if verdict else 'infeasible'}: {wrong[0].get('reason', '')[:200]}"
        return None

    return check


def sim_json(exit: tuple[int, ...], not_verdict: bool, **kw: Any) -> Run:
    return simulate("-o", "json", exit=exit, check=never(not_verdict), **kw)


def _devices_claim(
    d: Path,
    n: int,
    expr: str,
    *,
    mode_all: bool = False,
    count: int | None = None,
    attrs: Any = None,
    constraints: Any = (),
    per_slice: int = 128,
) -> list[str]:
    objs, cls = many_devices(d, n, per_slice=per_slice, attrs=attrs)
    extra: dict[str, Any] = {"allocationMode": "All"} if mode_all else {}
    objs.append(claim(f"{uid(d)}-c", [request("r", cls, [expr], count=count, **extra)], constraints))
    return [write(d, "cluster.yaml", objs, flow=True)]


def _reg(name: str, build: Any, runs: tuple[Run, ...], note: str, large: bool = False) -> None:
    register(_Case(f"budget.{name}", "budget", ENGINE, build, runs, large=large, note=note))


_reg(
    "slow-selector-10000-devices-all",
    lambda d: _devices_claim(d, 10_000, SLOW_TRUE, mode_all=True),
    # --feasibility: undecided is a warning (exit 0); 3 if the deadline passed while 2 MB were read
    (sim_json(UNDECIDED_OR_FEASIBLE, False), feasibility(exit=(0, 3), absent=("feasibility.infeasible",))),
    "a legal ~10,000-step selector over 10,000 devices, allocationMode All (53 s under a 2 s budget today)",
)
_reg(
    "slow-selector-10000-devices-none-match",
    lambda d: _devices_claim(d, 10_000, SLOW_FALSE),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "the same selector false on every device: infeasible only if every device was evaluated",
)
_reg(
    "slow-selector-10000-devices-budget-1s",
    lambda d: _devices_claim(d, 10_000, SLOW_FALSE),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True, budget=1.0),),
    "as above under --budget-seconds 1",
)


def _group_attrs(size: int) -> Any:
    return lambda i: {"group": {"int": i // size}, "index": {"int": i}}


_reg(
    "match-attribute-fails-late-1000",
    lambda d: _devices_claim(
        d,
        1000,
        "true",
        count=4,
        attrs=_group_attrs(3),
        constraints=[{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
    ),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "1,000 devices in groups of 3, 4 devices with one matchAttribute value wanted: infeasible, found late",
)
_reg(
    "match-attribute-groups-of-7-want-8",
    lambda d: _devices_claim(
        d,
        1008,
        "true",
        count=8,
        attrs=_group_attrs(7),
        constraints=[{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
    ),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "144 groups of 7, 8 wanted from one group: every group searched to the end",
)
_reg(
    "match-attribute-all-mode",
    lambda d: _devices_claim(
        d,
        5000,
        "true",
        mode_all=True,
        attrs=_group_attrs(2),
        constraints=[{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
    ),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "allocationMode All over 5,000 devices whose matchAttribute values differ",
)


def _multi_request(d: Path, n: int, requests: int, count: int) -> list[str]:
    objs, cls = many_devices(d, n, attrs=_group_attrs(count * requests - 1))
    reqs = [request(f"r{i}", cls, ["true"], count=count) for i in range(requests)]
    cons = [{"requests": [r["name"] for r in reqs], "matchAttribute": f"{DRIVER}/group"}]
    objs.append(claim(f"{uid(d)}-c", reqs, cons))
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "match-attribute-across-8-requests",
    lambda d: _multi_request(d, 1024, 8, 2),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "8 requests × 2 devices sharing one attribute value, groups one device too small",
)


def _distinct(d: Path) -> list[str]:
    objs, cls = many_devices(d, 512, attrs=lambda i: {"slot": {"int": i % 15}, "index": {"int": i}})
    reqs = [request(f"r{i}", cls, ["true"], count=1) for i in range(16)]
    cons = [{"requests": [r["name"] for r in reqs], "distinctAttribute": f"{DRIVER}/slot"}]
    objs.append(claim(f"{uid(d)}-c", reqs, cons))
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "distinct-attribute-pigeonhole",
    _distinct,
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "16 requests wanting distinct values of an attribute with 15 values (pigeonhole) over 512 devices",
)


def _counters(d: Path, devices: int, counter: int, want: int) -> list[str]:
    u = uid(d)
    spec = {
        "driver": DRIVER,
        "nodeName": f"{u}-node",
        "pool": {"name": f"{u}-pool", "generation": 1, "resourceSliceCount": 2},
    }
    devs = [
        {
            "name": f"gpu-{i}",
            "attributes": {"index": {"int": i}},
            "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1"}}}],
        }
        for i in range(devices)
    ]
    objs: list[Any] = [
        node(f"{u}-node"),
        {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": f"{u}-gpu"}, "spec": {}},
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-counters"},
            "spec": {
                **spec,
                "sharedCounters": [{"name": "set", "counters": {"mem": {"value": str(counter)}}}],
            },
        },
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-devices"},
            "spec": {**spec, "devices": devs},
        },
        claim(f"{u}-c", [request("r", f"{u}-gpu", ["true"], count=want)]),
    ]
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "counters-exhausted-at-the-end",
    lambda d: _counters(d, 64, 31, 32),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "64 partitionable devices sharing a counter of 31, 32 wanted: C(64,32) subsets if searched blindly",
)


def _first_available(d: Path) -> list[str]:
    objs, cls = many_devices(d, 256, attrs=_group_attrs(1))
    reqs = [
        {
            "name": f"r{i}",
            "firstAvailable": [{"name": f"s{j}", "deviceClassName": cls, "count": j + 1} for j in range(8)],
        }
        for i in range(8)
    ]
    cons = [{"requests": [r["name"] for r in reqs], "matchAttribute": f"{DRIVER}/group"}]
    objs.append(claim(f"{uid(d)}-c", reqs, cons))
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "first-available-8x8-constraint",
    _first_available,
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "8 requests × 8 subrequests (8^8 combinations) under a matchAttribute no two devices share",
)


def _pods_backtracking(d: Path, pods: int) -> list[str]:
    objs, cls = many_devices(d, 1000, attrs=_group_attrs(3))
    u = uid(d)
    objs.append(
        claim(
            f"{u}-t",
            [request("r", cls, ["true"], count=4)],
            [{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
            kind="ResourceClaimTemplate",
        )
    )
    objs += [pod(f"{u}-p{i}", [f"{u}-t"], template=True) for i in range(pods)]
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "pods-40-each-backtracking",
    lambda d: _pods_backtracking(d, 40),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True, deadline=2.0),),
    "40 Pods each needing the late-failing search: the per-run deadline, not 40 × the per-Pod budget",
)


def _claims_in_pod(d: Path) -> list[str]:
    objs, cls = many_devices(d, 1000, attrs=_group_attrs(3))
    u = uid(d)
    names = []
    for i in range(32):
        names.append(f"{u}-c{i}")
        objs.append(
            claim(
                names[-1],
                [request("r", cls, ["true"], count=4)],
                [{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
            )
        )
    objs.append(pod(f"{u}-p", names))
    return [write(d, "cluster.yaml", objs, flow=True)]


_reg(
    "claims-32-in-one-pod",
    _claims_in_pod,
    (sim_json(UNDECIDED_OR_INFEASIBLE, True),),
    "one Pod with 32 claims, each a late-failing matchAttribute search",
)
_reg(
    "slow-selector-50000-devices",
    lambda d: _devices_claim(d, 50_000, SLOW_FALSE),
    (sim_json(UNDECIDED_OR_INFEASIBLE, True, mem=2 << 30),),
    "large: the slow selector over 50,000 devices (7 MB of slices)",
    large=True,
)
