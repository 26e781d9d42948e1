"""`--cluster DIR` with simulate (the cluster's objects are the state; its own Pods and pending claims are
not simulated) and the text output of pending binding conditions (issue 8 §5, §6)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cliproc import draguard

DEMOS = Path(__file__).resolve().parents[1] / "fixtures" / "demos"

RUNNING = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: pending-in-cluster, namespace: hpc}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: dranet, count: 9}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: hpc}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims: [{name: nic, resourceClaimName: pending-in-cluster}]
"""


def test_simulate_against_the_cluster_schedules_only_the_input(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (cluster / "slices.yaml").write_text((DEMOS / "nic" / "cluster" / "dranet-slices.yaml").read_text())
    (cluster / "workloads.yaml").write_text(RUNNING)
    app = tmp_path / "app.yaml"
    app.write_text(
        (DEMOS / "nic" / "manifests" / "deviceclass.yaml").read_text()
        + "---\n"
        + (DEMOS / "nic" / "manifests" / "rdma-job.yaml").read_text()
    )
    p = draguard("simulate", "-o", "json", "--cluster", str(cluster), str(app))
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout)
    assert [(x["pod"], x["feasible"]) for x in out["pods"]] == [("hpc/mpi-worker-0", True)]
    assert out["invalid"] == []
    # without --cluster the same files are all input: the cluster's Pod is simulated (and cannot fit)
    p = draguard("simulate", "-o", "json", str(cluster), str(app))
    pods = {x["pod"]: x["feasible"] for x in json.loads(p.stdout)["pods"]}
    assert pods == {"hpc/running": False, "hpc/mpi-worker-0": True}


def test_stdin_is_not_a_cluster(tmp_path: Path) -> None:
    p = draguard("validate", "--cluster", "-", str(tmp_path))
    assert p.returncode == 2 and "--cluster takes files or directories" in p.stderr


BINDING = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-node-a}
spec:
  driver: fabric.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    bindingConditions: [fabric.example.com/attached]
    bindingFailureConditions: [fabric.example.com/attach-failed]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric-gpu}
spec:
  selectors: [{cel: {expression: "device.driver == 'fabric.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: attached, namespace: team}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: fabric-gpu}}]
"""


def test_text_output_mentions_pending_binding_conditions(tmp_path: Path) -> None:
    (tmp_path / "fabric.yaml").write_text(BINDING)
    p = draguard("simulate", str(tmp_path))
    assert p.returncode == 0, p.stdout
    lines = p.stdout.splitlines()
    assert (
        "    binding conditions pending on fabric.example.com/node-a/gpu-0: fabric.example.com/attached "
        "(failure conditions: fabric.example.com/attach-failed)"
    ) in lines
    assert any(
        ln.startswith("    the scheduler waits in PreBind until every binding condition is True")
        for ln in lines
    )
