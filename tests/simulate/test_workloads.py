"""Workloads expanded as their controllers would (counts, names, DaemonSet nodes), simulated Pod by Pod
and reported per workload — on a realistic cluster and rendered Helm chart, through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cliproc import draguard
from webhook.cli.main import main
from webhook.simulate import daemonset as ds
from webhook.simulate.workloads import expand, indexed_prefix, template_hash

CHART = Path(__file__).parent / "manifests" / "gpu-cluster-and-chart"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
POD_SPEC: dict[str, Any] = {
    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
}


def workload(kind: str, name: str = "web", **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}}, "spec": POD_SPEC}
    meta = {"name": name, "namespace": "team"}
    if kind == "CronJob":
        job = {"template": template, **spec.pop("job", {})}
        return {
            "apiVersion": "batch/v1",
            "kind": kind,
            "metadata": meta,
            "spec": {"jobTemplate": {"spec": job}, **spec},
        }
    if kind == "PodTemplate":
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "template": template}
    api = {"Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": {"template": template, **spec}}


def names(obj: dict[str, Any], nodes: list[dict[str, Any]] | None = None) -> list[str]:
    e = expand(obj, nodes or [], [])
    return [e.pod(i)["metadata"]["name"] for i in range(e.count)]


# --- how many Pods, named how -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "spec", "count"),
    [
        ("Deployment", {}, 1),
        ("Deployment", {"replicas": 3}, 3),
        ("Deployment", {"replicas": 0}, 0),
        ("ReplicaSet", {"replicas": 2}, 2),
        ("ReplicationController", {}, 1),
        ("StatefulSet", {"replicas": 4}, 4),
        ("Job", {}, 1),
        ("Job", {"parallelism": 5}, 5),
        ("Job", {"parallelism": 5, "completions": 2}, 2),
        ("Job", {"completions": 7}, 1),
        ("Job", {"parallelism": 0, "completions": 3}, 0),
        ("Job", {"parallelism": 3, "suspend": True}, 0),
        ("CronJob", {"job": {"parallelism": 3, "completions": 10}}, 3),
        ("CronJob", {"suspend": True, "job": {"parallelism": 3}}, 0),
        ("PodTemplate", {}, 0),
    ],
)
def test_how_many_pods_each_controller_creates(kind: str, spec: dict[str, Any], count: int) -> None:
    assert expand(workload(kind, **spec), [], []).count == count


def test_pod_names_as_the_controllers_give_them() -> None:
    deploy = names(workload("Deployment", replicas=2))
    rs_hash = template_hash(workload("Deployment")["spec"]["template"])
    assert re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]{1,10}", rs_hash)
    assert all(re.fullmatch(f"web-{rs_hash}-{SUFFIX}", n) for n in deploy) and len(set(deploy)) == 2
    assert names(workload("ReplicaSet"))[0][:4] == "web-" and re.fullmatch(
        f"web-{SUFFIX}", names(workload("ReplicaSet"))[0]
    )
    assert names(workload("StatefulSet", replicas=3, ordinals={"start": 5})) == ["web-5", "web-6", "web-7"]
    indexed = names(workload("Job", completionMode="Indexed", completions=3, parallelism=3))
    assert [n[: -len("xxxxx")] for n in indexed] == ["web-0-", "web-1-", "web-2-"]
    (cron,) = names(workload("CronJob"))
    assert re.fullmatch(f"web-[0-9]{{8}}-{SUFFIX}", cron)
    # the same input names the same Pods; another template gets another ReplicaSet
    assert names(workload("Deployment", replicas=2)) == deploy
    other = workload("Deployment")
    other["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert template_hash(other["spec"]["template"]) != rs_hash


def test_long_names_are_cut_as_the_api_server_and_job_controller_cut_them() -> None:
    long = "a" * 70
    (pod,) = names(workload("ReplicaSet", name=long))
    assert len(pod) == 63 and pod.startswith("a" * 58)
    assert indexed_prefix("j" * 60, 12) == "j" * 54 + "-12-"
    assert len(indexed_prefix("j" * 60, 12)) == 58


def test_pods_carry_their_template_and_controller() -> None:
    e = expand(workload("Job", completionMode="Indexed", completions=2, parallelism=2), [], [])
    pod = e.pod(1)
    assert pod["spec"] == POD_SPEC and pod["spec"] is not POD_SPEC
    assert pod["metadata"]["namespace"] == "team" and pod["metadata"]["labels"] == {"app": "web"}
    assert pod["metadata"]["annotations"] == {"batch.kubernetes.io/job-completion-index": "1"}
    assert pod["metadata"]["ownerReferences"][0] | {} == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "web",
        "controller": True,
        "blockOwnerDeletion": True,
    }


# --- DaemonSets: the nodes the controller picks ---------------------------------------------------


def node(
    name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
    }
    if taints:
        obj["spec"] = {"taints": taints}
    return obj


@pytest.mark.parametrize(
    ("tol", "taint", "tolerated"),
    [
        ({"operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        (
            {"key": "k", "operator": "Equal", "value": "w"},
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            False,
        ),
        (
            {"key": "k", "operator": "Exists", "effect": "NoExecute"},
            {"key": "k", "effect": "NoSchedule"},
            False,
        ),
        ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerations_match_taints_as_core_v1_does(
    tol: dict[str, str], taint: dict[str, str], tolerated: bool
) -> None:
    assert ds.tolerates(tol, taint) is tolerated


def test_daemonset_nodes_follow_selectors_affinity_and_taints() -> None:
    nodes = [
        node("a", {"gpu": "yes"}),
        node("b", {"gpu": "yes"}, [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]),
        node("c", {"gpu": "no"}),
        node("d", {"gpu": "yes"}, [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
        node("e", {"gpu": "yes"}, [{"key": "soft", "effect": "PreferNoSchedule"}]),
        node(
            "f", {"gpu": "yes"}, [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]
        ),
    ]
    spec = {**POD_SPEC, "nodeSelector": {"gpu": "yes"}}
    found = ds.daemon_nodes(spec, nodes, [])
    assert found.eligible == ["a", "d", "e"]
    assert found.skipped == [
        ("b", "taint dedicated=ml:NoSchedule is not tolerated"),
        ("c", "spec.nodeSelector gpu=yes does not match the node's labels"),
        ("f", "taint node.kubernetes.io/network-unavailable:NoSchedule is not tolerated"),
    ]
    assert ds.daemon_nodes({**spec, "hostNetwork": True}, nodes, []).eligible == ["a", "d", "e", "f"]
    tolerant = {**spec, "tolerations": [{"key": "dedicated", "operator": "Exists"}]}
    assert ds.daemon_nodes(tolerant, nodes, []).eligible == ["a", "b", "d", "e"]
    required = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["yes"]}]}]
    }
    affine = {
        **POD_SPEC,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}},
    }
    assert ds.daemon_nodes(affine, nodes, []).eligible == ["c"]
    assert ds.daemon_nodes({**POD_SPEC, "nodeName": "e"}, nodes, []).eligible == ["e"]


def test_daemon_pods_are_pinned_to_their_node() -> None:
    required = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
    spec = {
        **POD_SPEC,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}},
    }
    e = expand(workload("DaemonSet"), [node("b"), node("a")], [])
    e.template["spec"] = spec
    pod = e.pod(1)
    assert e.nodes == ["a", "b"] and pod["metadata"]["name"].startswith("web-")
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]
    }
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "spec"
    ]["tolerations"]
    assert (
        "tolerations" not in POD_SPEC
        and spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] is required
    )


def test_without_node_objects_the_slices_nodes_stand_for_the_nodes() -> None:
    e = expand(workload("DaemonSet"), [], ["n2", "n1"])
    assert e.nodes == ["n1", "n2"] and "no Node objects" in e.how
    assert expand(workload("DaemonSet"), [], []).count == 0


# --- through the CLI, on a cluster and a rendered chart ------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "-o", "json", "-j", "1"])
    return code, json.loads(capsys.readouterr().out)


def test_a_rendered_chart_on_a_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "simulate", str(CHART))
    assert code == 1 and out["invalid"] == [] and out["errors"] == []
    got = [
        (w["kind"], w["name"], w["pods"], w["feasible"], w["infeasible"], w["sameAsLast"])
        for w in out["workloads"]
    ]
    # file order; the redis Deployment, the Service, HPA, Ingress, ... and the helm test Pod use no DRA
    assert got == [
        ("CronJob", "inference-nightly-eval", 1, 1, 0, 0),
        ("DaemonSet", "inference-gpu-probe", 2, 2, 0, 0),
        ("Deployment", "inference", 4, 1, 3, 2),
        ("Job", "inference-warmup", 2, 0, 2, 1),
        ("StatefulSet", "inference-embedder", 2, 1, 1, 0),
    ]
    daemon = out["workloads"][1]
    assert daemon["nodes"] == ["gpu-a", "gpu-b"]
    assert daemon["skippedNodes"] == [
        {"node": "cpu-c", "reason": "the required node affinity does not match the node"}
    ]
    placed = {
        p["pod"]: [(r["pool"], r["device"]) for c in p["claims"] for r in c["results"]]
        for p in out["pods"]
        if p["feasible"]
    }
    # gpu-a's gpu-3 is held by research/trainer-gpu; the embedder wants zone-2 (gpu-b); 40Gi+ GPUs are on gpu-a
    assert sorted(placed.values()) == [
        [("gpu-a", "gpu-0")],
        [("gpu-a", "gpu-1")],
        [("gpu-a", "gpu-2")],
        [("gpu-b", "gpu-0")],
        [("gpu-b", "gpu-1")],
    ]
    assert [p["pod"] for p in out["pods"] if p["workload"] and p["workload"]["kind"] == "StatefulSet"] == [
        "ml/inference-embedder-1",
        "ml/inference-embedder-2",
    ]
    assert all(p["workload"] is not None for p in out["pods"])
    failed = next(p for p in out["pods"] if p["feasible"] is False)
    assert failed["pod"].startswith("ml/inference-") and "request gpu" in failed["reason"]


def test_the_chart_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(CHART)]) == 1
    text = capsys.readouterr().out
    deployment = str(CHART / "rendered" / "inference" / "templates" / "deployment.yaml")
    assert (
        f"Deployment ml/inference ({deployment}:3): 4 Pod(s) (spec.replicas 4): 1 feasible, 3 infeasible\n"
        in text
    )
    assert "\n  Pod ml/inference-" in text and "\n    claim ml/inference-" in text
    assert "\n  2 more Pod(s) like the last one: infeasible (the same Pod under another name" in text
    assert "\n  no Pod on node cpu-c: the required node affinity does not match the node\n" in text
    assert "redis" not in text and "test-connection" not in text


def test_validate_feasibility_reports_once_per_place_in_the_template(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "validate", "--feasibility", str(CHART))
    assert code == 1
    found = {
        (o["kind"], o["name"], v["field"]): v["message"] for o in out["objects"] for v in o["violations"]
    }
    assert sorted(found) == [
        ("Deployment", "inference", "spec.template.spec.resourceClaims[0]"),
        ("Job", "inference-warmup", "spec.template.spec.resourceClaims[0]"),
        ("StatefulSet", "inference-embedder", "spec.template.spec.resourceClaims[0]"),
    ]
    message = found[("Deployment", "inference", "spec.template.spec.resourceClaims[0]")]
    assert re.match(
        r"3 of 4 Pod\(s\) of Deployment ml/inference \(ml/inference-\S+, 2 more like the last\): request gpu",
        message,
    )
    assert found[("StatefulSet", "inference-embedder", "spec.template.spec.resourceClaims[0]")].startswith(
        "1 of 2 Pod(s) of StatefulSet ml/inference-embedder (ml/inference-embedder-2): "
    )


def test_cron_job_findings_point_into_its_job_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 9}}]
                }
            }
        },
    }
    (tmp_path / "work.yaml").write_text(yaml.safe_dump_all([template, workload("CronJob")]))
    code, out = run(capsys, "validate", "--feasibility", str(CHART / "cluster"), str(tmp_path))
    found = [(o["kind"], v["rule"], v["field"]) for o in out["objects"] for v in o["violations"]]
    assert code == 1 and found == [
        ("CronJob", "feasibility.infeasible", "spec.jobTemplate.spec.template.spec.resourceClaims[0]")
    ]


def test_huge_replica_counts_stop_once_the_cluster_stops_changing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team"},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
            }
        },
    }
    big = workload("Deployment", replicas=2**31 - 1)
    (tmp_path / "work.yaml").write_text(yaml.safe_dump_all([template, big]))
    code, out = run(capsys, "simulate", str(CHART / "cluster"), str(tmp_path))
    (w,) = out["workloads"]
    # five free GPUs: five Pods fit, the sixth does not, and every later one is the same Pod on the same cluster
    assert (w["pods"], w["feasible"], w["infeasible"], len(w["simulated"]), w["sameAsLast"]) == (
        2**31 - 1,
        5,
        2**31 - 1 - 5,
        6,
        2**31 - 1 - 6,
    )
    assert code == 1


def test_a_claim_every_daemon_pod_shares_is_reported_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "team"},
        "spec": {
            "devices": {
                "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 5}}]
            }
        },
    }
    daemon = workload("DaemonSet")
    daemon["spec"]["template"]["spec"] = {
        "tolerations": [{"operator": "Exists"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}],
        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
    }
    (tmp_path / "work.yaml").write_text(yaml.safe_dump_all([shared, daemon]))
    code, out = run(capsys, "simulate", str(CHART / "cluster"), str(tmp_path))
    assert code == 1 and [p["feasible"] for p in out["pods"]] == [False, False, False]  # one per node
    code, out = run(capsys, "validate", "--feasibility", str(CHART / "cluster"), str(tmp_path))
    found = [
        (o["kind"], o["name"], v["field"], v["message"]) for o in out["objects"] for v in o["violations"]
    ]
    assert code == 1 and [f[:3] for f in found] == [("ResourceClaim", "shared", "spec.devices.requests[0]")]
    assert found[0][3].startswith("3 of 3 Pod(s) of DaemonSet team/web (team/web-")


def test_replicas_that_keep_fitting_are_bounded_by_the_deadline(tmp_path: Path) -> None:
    # every Pod takes 1 of 10^15 shares of one device: each one fits and changes the cluster, so nothing
    # ends the workload but the run's deadline; what it leaves is undecided, never an unbounded run
    device = {
        "name": "eth0",
        "allowMultipleAllocations": True,
        "capacity": {
            "bandwidth": {"value": "1P", "requestPolicy": {"default": "1", "validRange": {"min": "1"}}}
        },
    }
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.nvidia.com"},
            "spec": {"selectors": [{"cel": {"expression": "true"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "nic.example.com",
                "nodeName": "node-1",
                "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "devices": [device],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "team"},
            "spec": {
                "spec": {
                    "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
                }
            },
        },
        workload("Deployment", replicas=2**31 - 1),
    ]
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all(objs))
    p = draguard(
        "simulate",
        "-o",
        "json",
        "--deadline-seconds",
        "3",
        "--feature-gates",
        "DRAConsumableCapacity=true",
        str(tmp_path),
    )
    assert p.returncode == 3, p.stderr
    (w,) = json.loads(p.stdout)["workloads"]
    assert w["feasible"] >= 1 and w["undecided"] == 2**31 - 1 - w["feasible"] and w["infeasible"] == 0
