"""Where `simulate` places Pods (`--placement spread`, the default scheduler's scores, or `pack`, first
fit by node name) and how it answers claims no Pod uses (each on its own, as admission answers a claim
CREATE) — through the real CLI on the manifests under manifests/placement and manifests/claims-alone,
and the score arithmetic against upstream's own test figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from webhook.cli.main import main
from webhook.simulate import placement as pl

HERE = Path(__file__).parent / "manifests"
PLACEMENT = HERE / "placement"
CLUSTER = str(PLACEMENT / "cluster.yaml")
ALONE = HERE / "claims-alone"


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", "-o", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def nodes(out: dict[str, Any]) -> list[tuple[str, bool | None, str | None]]:
    return [(p["pod"], p["feasible"], p["node"]) for p in out["pods"]]


def findings(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, str, str]]]:
    code = main(["validate", "-o", "json", "--feasibility", *args])
    out = json.loads(capsys.readouterr().out)
    found = [(o["name"], v["rule"], v["severity"]) for o in out["objects"] for v in o["violations"]]
    return code, found


# -- spread and pack ----------------------------------------------------------------------------------


def test_spread_leaves_no_node_whole_where_pack_does(capsys: pytest.CaptureFixture[str]) -> None:
    pods = str(PLACEMENT / "three-pods.yaml")
    code, out = simulate(capsys, CLUSTER, pods)  # spread is the default
    assert nodes(out) == [
        ("ml/first", True, "node-a"),
        ("ml/second", True, "node-b"),
        ("ml/whole-node", False, None),
    ]
    assert code == 1
    assert (
        "request gpus (allocationMode All): node-a has 2 matching devices, 1 are allocated"
        in (out["pods"][2]["reason"])
    )
    code, out = simulate(capsys, "--placement", "pack", CLUSTER, pods)
    assert nodes(out) == [
        ("ml/first", True, "node-a"),
        ("ml/second", True, "node-a"),
        ("ml/whole-node", True, "node-b"),
    ]
    assert code == 0
    # validate --feasibility places Pods the same way
    code, found = findings(capsys, CLUSTER, pods)
    assert code == 1 and found == [("whole-node", "feasibility.infeasible", "error")]
    assert findings(capsys, "--placement", "pack", CLUSTER, pods) == (0, [])


def test_ties_go_to_the_first_node_by_name_every_time(capsys: pytest.CaptureFixture[str]) -> None:
    # node-b is listed first in cluster.yaml; both nodes score the same for the first Pod
    runs = [simulate(capsys, CLUSTER, str(PLACEMENT / "three-pods.yaml"))[1] for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0]["pods"][0]["node"] == "node-a"
    assert [r["device"] for r in runs[0]["pods"][0]["claims"][0]["results"]] == ["gpu-0"]


def test_pods_that_request_nothing_count_the_non_zero_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    light = str(PLACEMENT / "best-effort.yaml")
    code, out = simulate(capsys, CLUSTER, light)
    assert code == 0 and nodes(out) == [("ml/light-1", True, "node-a"), ("ml/light-2", True, "node-b")]
    code, out = simulate(capsys, "--placement", "pack", CLUSTER, light)
    assert code == 0 and nodes(out) == [("ml/light-1", True, "node-a"), ("ml/light-2", True, "node-a")]


def test_a_running_pod_without_dra_takes_cpu_and_memory_on_its_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = simulate(capsys, CLUSTER, str(PLACEMENT / "running.yaml"))
    assert code == 0 and nodes(out) == [("ml/next", True, "node-b")]  # node-a: 3 of 4 CPUs taken


def test_dynamic_resources_scores_the_first_choice_of_a_prioritized_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = str(PLACEMENT / "prioritized.yaml")
    code, out = simulate(capsys, manifest)
    assert code == 0 and nodes(out) == [("ml/picky", True, "node-b")]
    assert out["pods"][0]["claims"][0]["results"][0]["request"] == "gpu/big"
    code, out = simulate(capsys, "--placement", "pack", manifest)
    assert code == 0 and nodes(out) == [("ml/picky", True, "node-a")]
    assert out["pods"][0]["claims"][0]["results"][0]["request"] == "gpu/small"


# -- claims no Pod uses ---------------------------------------------------------------------------------


def test_claims_in_two_namespaces_each_fitting_on_its_own_node_are_both_feasible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = simulate(capsys, str(ALONE))
    assert code == 0
    assert [(p["claim"], p["verdict"], p["node"]) for p in out["pods"]] == [
        ("team-a/wants-a100", "feasible", "node-a"),
        ("team-b/wants-h100", "feasible", "node-b"),
    ]
    assert main(["simulate", str(ALONE)]) == 0
    text = capsys.readouterr().out
    assert (
        "ResourceClaim team-b/wants-h100 (no Pod in the input uses it): feasible now (it fits on node node-b)"
        in text
    )
    assert findings(capsys, str(ALONE)) == (0, [])


# -- the score arithmetic -------------------------------------------------------------------------------


def _pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), "initContainers": list(init)}}


def _node(cpu: str, memory: str) -> dict[str, Any]:
    return {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": cpu, "memory": memory}}}


def test_scores_match_upstream_for_differently_sized_nodes() -> None:
    # upstream least_allocated_test / balanced_allocation_test: "nothing scheduled, resources requested,
    # differently sized nodes" — a Pod of 3000m and 5000 bytes on 4000m/10000 and 6000m/10000
    pod = _pod(
        {"resources": {"requests": {"cpu": "1000m", "memory": "2000"}}},
        {"resources": {"requests": {"cpu": "2000m", "memory": "3000"}}},
    )
    requested = pl.pod_requests(pod, nonzero=False)
    assert requested == pl.Resources(3000, 5000) == pl.pod_requests(pod, nonzero=True)
    small, large = pl.node_allocatable(_node("4", "10000")), pl.node_allocatable(_node("6000m", "10000"))
    assert [pl.least_allocated(requested, n) for n in (small, large)] == [37, 50]
    assert [pl.balanced_allocation(requested, n) for n in (small, large)] == [87, 100]


def test_requests_as_the_scheduler_sums_them() -> None:
    nothing = _pod({"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
    # a limit without a request is the request (API defaulting); a container without one counts 100m/200Mi
    assert pl.pod_requests(nothing, nonzero=False) == pl.Resources(1000, 1 << 30)
    assert pl.pod_requests(nothing, nonzero=True) == pl.Resources(1100, (1 << 30) + 200 * (1 << 20))
    # init containers: the largest one (with the sidecars started before it) if larger than the rest
    sidecar = {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "0"}}}
    init = ({"resources": {"requests": {"cpu": "2", "memory": "0"}}}, sidecar)
    pod = _pod({"resources": {"requests": {"cpu": "1", "memory": "0"}}}, init=init)
    assert pl.pod_requests(pod, nonzero=False) == pl.Resources(2000, 0)
    # a resource a node does not list is left out of both scores (upstream: allocatable 0)
    assert pl.least_allocated(pl.Resources(100, 0), pl.Resources(0, 0)) == 0
    assert pl.balanced_allocation(pl.Resources(100, 0), pl.Resources(0, 0)) == 100
    # over capacity: LeastAllocated 0 for that resource, BalancedAllocation caps the share at 1
    assert pl.least_allocated(pl.Resources(5000, 50), pl.Resources(4000, 100)) == 25
    assert pl.balanced_allocation(pl.Resources(5000, 50), pl.Resources(4000, 100)) == 75
