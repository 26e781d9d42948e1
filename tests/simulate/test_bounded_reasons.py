"""Explanations that list things (missing claims, requests that cannot be served, nodes) name the first
few and "and N more", and `validate --feasibility` reports each Pod entry with its own problem: reports
stay linear in the input (issue 6 §5; a Pod with 5,000 missing claims took 13 s and 4 GB)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cliproc import draguard
from tests.hostile.k8s import claim, node, pod, request, small_cluster, write
from webhook.model.text import listing
from webhook.simulate import feasibility_violations, simulate

ROOT = Path(__file__).resolve().parents[2]


def test_listing_names_a_few_and_counts_the_rest() -> None:
    assert listing([]) == ""
    assert listing(["a", "b"], "; ") == "a; b"
    assert listing([str(i) for i in range(5)]) == "0, 1, 2, 3, 4"
    assert listing([str(i) for i in range(1000)], " | ") == "0 | 1 | 2 | 3 | 4 | and 995 more"


def test_a_pod_with_thousands_of_missing_claims_gets_one_short_finding_per_entry(tmp_path: Path) -> None:
    n = 2000
    path = write(tmp_path, "pod.yaml", [pod("p", [f"claim-{i}" for i in range(n)])], flow=True)
    p = draguard("validate", "--feasibility", "-o", "json", path)
    assert p.returncode == 1, p.stderr
    [obj] = json.loads(p.stdout)["objects"]
    found = [v for v in obj["violations"] if v["rule"] == "feasibility.infeasible"]
    assert [v["field"] for v in found] == [f"spec.resourceClaims[{i}]" for i in range(n)]
    assert all(
        v["message"] == f'ResourceClaim "default/claim-{i}" not found in the input'
        for i, v in enumerate(found)
    )
    assert len(p.stdout) < n * 400  # linear: each finding carries its own claim, not all of them

    [sim] = simulate([path]).pods
    assert sim.feasible is False
    assert sim.reason.endswith(f"; and {n - 5} more") and len(sim.reason) < 400


def test_many_infeasible_claims_make_a_bounded_reason(tmp_path: Path) -> None:
    objs, cls = small_cluster(tmp_path, devices=1)
    names = [f"c{i}" for i in range(40)]
    objs += [claim(c, [request("r", cls, count=2)]) for c in names]  # one device: none can have two
    objs.append(pod("p", names))
    path = write(tmp_path, "cluster.yaml", objs, flow=True)
    [sim] = simulate([path]).pods
    assert sim.feasible is False
    assert sim.reason.count("request r:") == 5 and "| and 35 more" in sim.reason
    assert len(sim.explanation) == 40  # the structured explanation keeps every request
    findings = feasibility_violations(sim)
    assert len(findings) == 40 and {s.name for s, _ in findings} == set(names)
    assert all(v.message == sim.reason for _, v in findings)


def test_nodes_that_cannot_serve_an_extended_resource_are_listed_briefly(tmp_path: Path) -> None:
    gpu_class: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"extendedResourceName": "example.com/gpu"},
    }
    p = pod("p", [])
    p["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": "1", "other.example.com/x": "1"}
    }
    path = write(tmp_path, "cluster.yaml", [*(node(f"n{i:02}") for i in range(30)), gpu_class, p], flow=True)
    [sim] = simulate([path]).pods
    assert sim.feasible is False
    assert sim.reason.endswith(
        "on n00 (other.example.com/x), n01 (other.example.com/x), n02 (other.example.com/x), "
        "n03 (other.example.com/x), n04 (other.example.com/x), and 25 more"
    )
