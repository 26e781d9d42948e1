"""The same input gives byte-identical output — whatever the hash seed of the process, and whatever the
order of the files that describe the cluster — share IDs, generated names and all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CHART = Path(__file__).parent / "manifests" / "gpu-cluster-and-chart"
ROOT = Path(__file__).resolve().parents[2]

NETWORK = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel: {expression: 'device.driver == "nic.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {generateName: cpu-c-nic.example.com-}
spec:
  driver: nic.example.com
  nodeName: cpu-c
  pool: {name: cpu-c, generation: 1, resourceSliceCount: 1}
  devices:
  - name: eth1
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 100G
        requestPolicy: {default: 10G, validRange: {min: 1G, step: 1G}}
"""

ROUTERS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: bandwidth, namespace: net}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 30G}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: router, namespace: net}
spec:
  replicas: 4
  serviceName: router
  selector: {matchLabels: {app: router}}
  template:
    metadata: {labels: {app: router}}
    spec:
      resourceClaims: [{name: nic, resourceClaimTemplateName: bandwidth}]
      containers: [{name: r, image: router:1, resources: {claims: [{name: nic}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: unused, namespace: net}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 5G}}}
"""


def simulate(seed: str, *paths: Path, fmt: str = "json") -> bytes:
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "webhook.cli.main",
            "simulate",
            "-o",
            fmt,
            "--feature-gates",
            "DRAConsumableCapacity=true",
            *map(str, paths),
        ],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
        timeout=300,  # a hang guard, not a speed check
    )
    assert p.returncode == 1, p.stderr  # some Pods do not fit
    return p.stdout


def test_byte_identical_across_hash_seeds_and_file_orders(tmp_path: Path) -> None:
    (tmp_path / "network.yaml").write_text(NETWORK)
    (tmp_path / "routers.yaml").write_text(ROUTERS)
    cluster = sorted((CHART / "cluster").iterdir())
    chart = CHART / "rendered"
    network, routers = tmp_path / "network.yaml", tmp_path / "routers.yaml"
    first = simulate("1", *cluster, network, chart, routers)
    assert first == simulate("2", *cluster, network, chart, routers)
    # the objects that describe the cluster, in another order: the same answers, byte for byte
    assert first == simulate("3", network, *reversed(cluster), chart, routers)
    out = json.loads(first)
    shares = [r["shareID"] for p in out["pods"] for c in p["claims"] for r in c["results"] if r["shareID"]]
    assert len(shares) == 4 and len(set(shares)) == 4  # three routers and the unused claim share eth1
    assert out["pods"][-1]["pod"] is None and out["pods"][-1]["feasible"] is True
    text = simulate("4", *cluster, network, chart, routers, fmt="text")
    assert text == simulate("5", network, *reversed(cluster), chart, routers, fmt="text")
    assert all(s.encode() in text for s in shares)
