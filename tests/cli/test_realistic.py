"""Issue 8 on realistic folders (tests/fixtures/realistic: the public DRA drivers' demos and the Kubernetes
docs' examples in our own words, with cluster dumps): every error or warning `validate` prints is one of
the problems PROBLEMS.yaml lists, each run finds all it can decide; `simulate` explains the root causes
and is reproducible; beta manifests convert and validate. Runs are in-process (`main(argv)`), from the
fixtures directory, so the paths are those a user would type."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from webhook.cli.main import main

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "realistic"
SPEC = yaml.safe_load((HERE / "PROBLEMS.yaml").read_text())
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<sev>error|warning|info) (?P<rule>\S+): (?P<rest>.*)$")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main([*argv])
    return code, capsys.readouterr().out


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(HERE)
    return HERE


def _problem(file: str, rule: str, rest: str) -> str | None:
    for p in SPEC["problems"]:
        if p["file"] != file.removeprefix("./") or rule not in p["rules"]:
            continue
        obj = p.get("object")
        if obj is None:
            return str(p["id"])
        kind, name = obj.split(" ", 1)
        if re.search(rf"\[{kind} (?:[^/\]]+/)?{re.escape(name)}\]", rest):
            return str(p["id"])
    return None


@pytest.mark.parametrize("spec", SPEC["runs"], ids=lambda r: " ".join(r["args"])[:60])
def test_every_error_or_warning_is_a_listed_problem_and_each_is_found(
    spec: dict[str, list[str]], here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "validate", "-j", "1", *spec["args"])
    assert code in (0, 1), out
    found: set[str] = set()
    for text in out.splitlines():
        m = LINE.match(text)
        assert m is not None, text
        if m["sev"] == "info":
            continue
        hit = _problem(m["file"], m["rule"], m["rest"])
        assert hit is not None, f"not a listed problem (a false positive?): {text}"
        found.add(hit)
    assert set(spec["expect"]) <= found, sorted(set(spec["expect"]) - found)
    assert code == (1 if any(LINE.match(t)["sev"] == "error" for t in out.splitlines()) else 0)  # type: ignore[index]


def test_explanations_name_the_root_cause_per_node(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, "simulate", "amd")
    assert (
        "request gpus: the largest node, mi300x-node-2, has 8 devices of class gpu.amd.com; 9 requested"
        in out
    )
    assert (
        "constraint matchAttribute `gpu.amd.com/deviceID`: no candidate device has this attribute (8 checked on "
        "mi300x-node-1)" in out
    )
    _, out = run(capsys, "simulate", "sriov")
    assert (
        "request vfs (allocationMode All): sriov-worker-1 has 8 matching devices, 3 are allocated to claim "
        "telco/upf-0-vfs-g7h2k; All needs every one of them" in out
    )
    # the node that cannot fit eight NICs is searched all the same, as upstream does: the CEL error aborts
    _, out = run(capsys, "simulate", "dranet")
    assert (
        "claim nccl/eight-nics: CEL runtime error on device dra.net/gpu-worker-2/veth-cni0: no such key "
        '`dra.net/rdma` (selector #0: `device.attributes["dra.net"].rdma`)' in out
    )
    # a claim no Pod uses is asked on its own, and found when it can never be allocated
    _, out = run(capsys, "simulate", "e2e-test-driver")
    assert "ResourceClaim dra-8231/network-claim (no Pod in the input uses it): unsatisfiable" in out
    assert "the largest node, kind-worker, has 2 devices of class dra-8231.k8s.io matching" in out


def test_binding_conditions_shared_claims_and_multi_line_cel(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ex = "dra-example-driver"
    _, out = run(
        capsys,
        "simulate",
        "--cluster",
        f"{ex}/cluster/binding-conditions",
        f"{ex}/deploy",
        f"{ex}/examples/binding-conditions.yaml",
    )
    assert (
        "binding conditions pending on gpu.dra-example-driver.sigs.k8s.io/dra-binding-cluster-worker/gpu-0"
        in out
    )
    _, out = run(
        capsys, "simulate", "--cluster", f"{ex}/cluster/gpu", f"{ex}/deploy", f"{ex}/demo/gpu-test3.yaml"
    )
    assert (
        "Pod gpu-test3/pod1: feasible on node dra-example-driver-cluster-worker\n  claim gpu-test3/single-gpu: "
        "allocated already (shared" in out
    )
    # the partitionable demo's selector on the plain GPU profile: a runtime error, the `|` selector on one line
    _, out = run(
        capsys,
        "simulate",
        "--cluster",
        f"{ex}/cluster/gpu",
        f"{ex}/deploy",
        f"{ex}/examples/partitionable-devices.yaml",
    )
    (pod0,) = [t for t in out.splitlines() if "claim partitionable-devices/pod0-gpu-partitions" in t]
    assert (
        "no such key `gpu.dra-example-driver.sigs.k8s.io/partition` (selector #0: "
        "`device.attributes['gpu.dra-example-driver.sigs.k8s.io'].partition && "
        "device.attributes['gpu.dra-example-driver.sigs.k8s.io'].index == 0 && " in pod0
    ), out
    assert out.count("\n") == 4  # two Pods, one line each for the verdict and its reason


def test_simulate_is_byte_for_byte_reproducible(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["nvidia/deploy", "nvidia/specs/mig", "nvidia/specs/quickstart"]
    _, first = run(capsys, "simulate", "-o", "json", "--cluster", "nvidia/cluster", *args)
    _, again = run(capsys, "simulate", "-o", "json", "--cluster", "nvidia/cluster", *args)
    # the cluster's files in another order: the same state, the same answers
    _, other = run(
        capsys,
        "simulate",
        "-o",
        "json",
        "--cluster",
        "nvidia/cluster/resourceslices.yaml",
        "--cluster",
        "nvidia/cluster/nodes.yaml",
        "--cluster",
        "nvidia/cluster/allocated.yaml",
        *args,
    )
    assert first == again == other
    report = json.loads(first)
    shares = [r["device"] for p in report["pods"] for c in p["claims"] for r in c["results"]]
    assert shares and len(shares) == len(set(shares))
    dups = [
        v
        for o in report["invalid"] + report["errors"]
        for v in o["violations"]
        if v["rule"] == "input.duplicate-object"
    ]
    assert dups == []  # gpu-test1's template and namespace, defined twice identically: one object each


def test_beta_manifests_convert_and_then_validate_clean(
    tmp_path: Path, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(here / "beta", tmp_path / "beta")
    assert run(capsys, "convert", "--to", "v1", str(tmp_path / "beta"))[0] == 0
    text = (tmp_path / "beta" / "resourceslice-v1beta1.yaml").read_text()
    assert "apiVersion: resource.k8s.io/v1\n" in text and "    # what the device is\n    attributes:" in text
    code, out = run(capsys, "validate", str(tmp_path / "beta"), "nvidia/deploy")
    assert code == 0 and all(LINE.match(t)["sev"] == "info" for t in out.splitlines()), out  # type: ignore[index]


def test_a_cluster_dump_in_beta_versions_is_read_as_stored(
    tmp_path: Path, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `kubectl get` of a 1.32 cluster writes v1beta1 objects: as --cluster they are its stored state
    claim = tmp_path / "claim.yaml"
    claim.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: one, namespace: default}\n"
        "spec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n"
    )
    code, out = run(capsys, "simulate", "--cluster", "beta", str(claim))
    assert code == 0 and "feasible now (it fits on node kind-worker)" in out, out
    code, out = run(capsys, "validate", "--feasibility", "--cluster", "beta", str(claim))
    assert code == 0, out
