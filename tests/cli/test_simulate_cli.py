"""`draguard simulate` and `draguard validate --feasibility` end to end: real manifests, the JSON
shape, Pods placed one after another, template and extended-resource claims, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from webhook.cli.main import main

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status:
  allocatable: {example.com/gpu: "4"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: A100}}
  - name: gpu-1
    attributes: {model: {string: A100}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: H100}}
"""

TEMPLATE_PODS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: team}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu, count: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: team}
spec:
  containers:
  - {name: main, image: busybox, resources: {claims: [{name: gpus}]}}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two-gpus}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer-2, namespace: team}
spec:
  containers:
  - {name: main, image: busybox, resources: {claims: [{name: gpus}]}}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two-gpus}
"""

CLAIMS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: small, namespace: team}
spec:
  devices:
    requests:
    - name: one
      exactly: {deviceClassName: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: team}
spec:
  devices:
    requests:
    - name: any
      exactly: {deviceClassName: gpu}
    - name: h100s
      exactly:
        deviceClassName: gpu
        count: 2
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "H100"'}
"""


def simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *docs: str, args: tuple[str, ...] = ()
) -> tuple[int, Any]:
    for i, text in enumerate(docs):
        (tmp_path / f"{i}.yaml").write_text(text)
    code = main(["simulate", "-o", "json", "-j", "1", *args, str(tmp_path)])
    return code, json.loads(capsys.readouterr().out)


def test_pods_are_placed_in_file_order_and_fill_the_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = simulate(tmp_path, capsys, CLUSTER, TEMPLATE_PODS)
    assert code == 1
    first, second = out["pods"]
    assert set(first) >= {"pod", "feasible", "node", "claims", "reason"}
    assert first["pod"] == "team/trainer" and first["feasible"] is True and first["node"] == "node-a"
    claim = first["claims"][0]
    assert (
        claim["namespace"] == "team"
        and claim["name"].startswith("trainer-gpus-")
        and len(claim["name"]) == 18
    )
    assert claim["results"] == [
        {
            "request": "gpus",
            "driver": "gpu.example.com",
            "pool": "node-a",
            "device": f"gpu-{i}",
            "adminAccess": None,
            "consumedCapacity": None,
            "shareID": None,
        }
        for i in range(2)
    ]
    # the whole allocation, as stored in status.allocation: node-local devices pin the node
    assert claim["allocation"]["nodeSelector"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
        ]
    }
    assert [r["device"] for r in claim["allocation"]["devices"]["results"]] == ["gpu-0", "gpu-1"]
    assert second["pod"] == "team/trainer-2" and second["feasible"] is False and second["claims"] == []
    assert "request gpus" in second["reason"] and "allocated" in second["reason"]


def test_claims_without_pods_are_each_asked_on_their_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = simulate(tmp_path, capsys, CLUSTER, CLAIMS)
    small, big = out["pods"]
    assert small["pod"] is None and small["claim"] == "team/small" and small["verdict"] == "feasible"
    assert small["feasible"] is True and small["node"] == "node-a"
    assert big["claim"] == "team/big" and big["verdict"] == "unsatisfiable"  # two H100s exist nowhere
    assert code == 1 and big["feasible"] is False and "h100s" in big["reason"]
    # each claim alone on the cluster: both fit on node-a's first GPU (neither sees the other's)
    just_one = CLAIMS.replace("count: 2", "count: 1").replace("H100", "A100")
    just_one = just_one.replace("    - name: any\n      exactly: {deviceClassName: gpu}\n", "")
    code, out = simulate(tmp_path, capsys, CLUSTER, just_one)
    assert code == 0 and [p["verdict"] for p in out["pods"]] == ["feasible", "feasible"]
    assert [(p["node"], [r["device"] for c in p["claims"] for r in c["results"]]) for p in out["pods"]] == [
        ("node-a", ["gpu-0"]),
        ("node-a", ["gpu-0"]),
    ]


def test_undecided_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = simulate(tmp_path, capsys, CLUSTER, TEMPLATE_PODS, args=("--budget-steps", "0"))
    assert code == 3 and [p["feasible"] for p in out["pods"]] == [None, None]
    assert out["pods"][0]["feasible"] is None and out["pods"][0]["reason"].startswith("undecided")


def test_extended_resources_use_dra_only_where_no_device_plugin_serves_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = """\
apiVersion: v1
kind: Pod
metadata: {name: ext, namespace: team}
spec:
  nodeSelector: {kubernetes.io/hostname: node-a}
  containers:
  - name: main
    image: busybox
    resources: {limits: {example.com/gpu: "2"}}
"""
    (tmp_path / "nodes.yaml").write_text(
        CLUSTER.replace(
            "metadata: {name: node-a}", "metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}"
        )
    )
    code, out = simulate(tmp_path, capsys, pod)
    (sim,) = out["pods"]
    assert code == 0 and sim["node"] == "node-a"
    (claim,) = sim["claims"]
    assert claim["name"].startswith("ext-extended-resources-")
    assert [(r["request"], r["device"]) for r in claim["results"]] == [
        ("container-0-request-0", "gpu-0"),
        ("container-0-request-0", "gpu-1"),
    ]
    # node-b serves the resource through its device plugin: no DRA claim at all
    (tmp_path / "0.yaml").write_text(pod.replace("node-a}", "node-b}"))
    code = main(["simulate", "-o", "json", str(tmp_path)])
    (sim,) = json.loads(capsys.readouterr().out)["pods"]
    assert code == 0 and sim["node"] == "node-b" and sim["claims"] == []


def test_allocated_claims_pin_the_pod_and_invalid_objects_are_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: team}
spec:
  devices:
    requests:
    - name: one
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results:
      - {request: one, driver: gpu.example.com, pool: node-b, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node-b]}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: broken, namespace: team}
spec:
  devices:
    requests:
    - name: zero
      exactly: {deviceClassName: gpu, allocationMode: Bogus}
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: team}
spec:
  containers: [{name: c, image: x}]
  resourceClaims:
  - {name: held, resourceClaimName: held}
  - {name: more, resourceClaimTemplateName: one-more}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-more, namespace: team}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: uses-broken, namespace: team}
spec:
  containers: [{name: c, image: x}]
  resourceClaims:
  - {name: b, resourceClaimName: broken}
"""
    code, out = simulate(tmp_path, capsys, CLUSTER, work)
    pinned, broken = out["pods"]
    # node-b's only GPU is held: the Pod must go to node-b, where nothing is left
    assert pinned["feasible"] is False and "node-b" in pinned["reason"]
    assert broken["feasible"] is False
    assert broken["reason"].startswith('ResourceClaim "team/broken" was left out of the simulation:')
    assert "spec.devices.requests[0].exactly.allocationMode" in broken["reason"]
    assert [o["name"] for o in out["invalid"]] == ["broken"]
    assert code == 1


def test_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(CLUSTER + "---\n" + TEMPLATE_PODS)
    assert main(["simulate", str(tmp_path)]) == 1
    text = capsys.readouterr().out
    assert "Pod team/trainer: feasible on node node-a\n  claim team/trainer-gpus-" in text
    assert "    gpus: gpu.example.com/node-a/gpu-0\n" in text
    assert "    node selector: metadata.name In ['node-a']\n" in text
    assert "Pod team/trainer-2: infeasible\n  request gpus:" in text


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(tmp_path / "nope.yaml")]) == 2
    assert main(["simulate", "--feature-gates", "NoSuchGate=true", str(tmp_path)]) == 2
    with pytest.raises(SystemExit) as e:
        main(["simulate", "--format", "sarif", str(tmp_path)])
    assert e.value.code == 2
    capsys.readouterr()


def test_validate_feasibility_reports_at_the_failing_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "claims.yaml").write_text(CLAIMS)
    assert main(["validate", "-o", "json", "-j", "1", "--no-feasibility", str(tmp_path)]) == 0
    capsys.readouterr()
    # on by default (the input holds the class and the devices): a warning in the open world, an error
    # with --feasibility (the input is the whole cluster)
    for flags, code, severity in ((["--feasibility"], 1, "error"), ([], 0, "warning")):
        assert main(["validate", "-o", "json", "-j", "1", *flags, str(tmp_path)]) == code
        out = json.loads(capsys.readouterr().out)
        found = [(o["name"], v) for o in out["objects"] for v in o["violations"]]
        assert [(name, v["rule"], v["field"], v["severity"]) for name, v in found] == [
            ("big", "feasibility.infeasible", "spec.devices.requests[1]", severity)
        ]
        assert "h100s" in found[0][1]["message"]


def test_validate_feasibility_on_pods_and_undecided_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "all.yaml").write_text(CLUSTER + "---\n" + TEMPLATE_PODS)
    assert main(["validate", "-o", "json", "-j", "1", "--feasibility", str(tmp_path)]) == 1
    out = json.loads(capsys.readouterr().out)
    found = [(o["kind"], o["name"], v["rule"], v["field"]) for o in out["objects"] for v in o["violations"]]
    assert found == [("Pod", "trainer-2", "feasibility.infeasible", "spec.resourceClaims[0]")]
    assert main(["validate", "-o", "json", "--feasibility", "--budget-steps", "0", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    rules = {(o["name"], v["rule"], v["severity"]) for o in out["objects"] for v in o["violations"]}
    assert ("trainer", "feasibility.undecided", "warning") in rules


def test_rules_list_the_feasibility_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "-o", "json"]) == 0
    ids = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert ids["feasibility.infeasible"]["severity"] == "error"
    assert ids["feasibility.undecided"]["severity"] == "warning"


def test_the_bundled_cluster_example(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    assert main(["simulate", "-o", "json", str(root / "examples" / "simulate")]) == 1
    pods = json.loads(capsys.readouterr().out)["pods"]
    assert [p["feasible"] for p in pods] == [True, True, True, True, False]
    used = {(r["pool"], r["device"]) for p in pods[:4] for c in p["claims"] for r in c["results"]}
    assert len(used) == 8  # every GPU once, two per PCIe root
    reason = pods[4]["reason"]
    assert reason.startswith(
        "request gpus: node-1 has 4 matching devices, 4 allocated to claims default/trainer-"
    )
    assert "; 0 left, 2 requested; other nodes: node-2: 4 allocated to other claims (2 node(s)" in reason
