"""`draguard validate` checks feasibility by default (issue 15 §2): real files through the real CLI — a claim
its devices cannot serve is an error without a flag, `--no-feasibility` turns it off, what the input does
not hold (classes, devices, claims) is counted in one info line and never infeasible, an input of devices
alone never loads the allocator, and a name defined twice is one object when the copies are identical,
else reported with what differs (a warning across files, as kustomize bases and overlays have)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import builders
from tests.builders import claim_template, device_class, dump_yaml, line_of, obj, request, resource_slice
from webhook.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

GPU_CLASS = device_class("gpu.example.com", 'device.driver == "gpu.example.com"')
NIC_CLASS = device_class("nic.example.com", 'device.driver == "nic.example.com"')


def gpu_slice(node: str, count: int) -> dict[str, Any]:
    return resource_slice(f"{node}-gpus", [{"name": f"gpu-{i}"} for i in range(count)], pool=node, node=node)


def claim(name: str, count: int, device_class: str = "gpu.example.com") -> dict[str, Any]:
    return builders.claim(name, [request("gpus", device_class, count=count)], ns="ml")


def pod(name: str, claim_name: str) -> dict[str, Any]:
    spec = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "dev"}]}}],
        "resourceClaims": [{"name": "dev", "resourceClaimName": claim_name}],
    }
    return obj("Pod", name, "ml", "v1", spec=spec)


def write(root: Path, **files: list[dict[str, Any]]) -> Path:
    """`name=objects` as root/name.yaml (`a__b`: a/b.yaml)."""
    for name, objs in files.items():
        path = root / (name.replace("__", "/") + ".yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(objs))
    return root


def validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and every finding as {kind, name, source, line, rule, field, severity, message}."""
    capsys.readouterr()
    code = main(["validate", "-o", "json", "-j", "1", *args])
    out = json.loads(capsys.readouterr().out)
    found = [
        {"kind": o["kind"], "name": o["name"], "source": o["source"], **v}
        for o in out["objects"]
        for v in o["violations"]
    ]
    return code, found


def rules(found: list[dict[str, Any]], prefix: str) -> list[tuple[str, str]]:
    return [(f["name"], f["rule"]) for f in found if f["rule"].startswith(prefix)]


def test_a_claim_for_five_gpus_on_nodes_of_two_is_found_without_a_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, cluster=[GPU_CLASS, gpu_slice("node-a", 2), gpu_slice("node-b", 2)])
    write(tmp_path, claims=[claim("five", 5), claim("two", 2)])
    code, found = validate(capsys, str(tmp_path))
    # open world: the input's devices stand for the cluster's, so a warning (the safe side of doubt)
    assert code == 0
    (infeasible,) = [f for f in found if f["rule"] == "feasibility.infeasible"]
    assert (infeasible["name"], infeasible["field"], infeasible["severity"]) == (
        "five",
        "spec.devices.requests[0]",
        "warning",
    )
    assert "2 devices of class gpu.example.com; 5 requested" in infeasible["message"]
    assert (
        "--cluster DIR with the cluster's objects, or --feasibility, to make it an error"
        in infeasible["message"]
    )
    # the claim for two fits on its own: never an error for sharing the input with another claim
    assert not [f for f in found if f["name"] == "two" and f["severity"] != "info"]
    # --no-feasibility turns the checks off; --feasibility is still accepted
    code, found = validate(capsys, "--no-feasibility", str(tmp_path))
    assert code == 0 and rules(found, "feasibility.") == []
    code, found = validate(capsys, "--feasibility", str(tmp_path))
    assert code == 1 and ("five", "feasibility.infeasible") in rules(found, "feasibility.")


def test_independent_claims_are_decided_each_on_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one GPU, two claims for one each and no Pod: each fits; they are not applied together by default
    write(
        tmp_path,
        cluster=[GPU_CLASS, gpu_slice("node-a", 1)],
        claims=[claim("a", 1), claim("b", 1)],
    )
    code, found = validate(capsys, str(tmp_path))
    assert code == 0 and rules(found, "feasibility.") == []
    # two Pods sharing nothing, each for the one GPU: the same
    write(
        tmp_path,
        claims=[claim("a", 1), claim("b", 1), pod("pa", "a"), pod("pb", "b")],
    )
    code, found = validate(capsys, str(tmp_path))
    assert code == 0 and rules(found, "feasibility.") == []


def test_what_the_input_does_not_hold_is_counted_once_and_never_infeasible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a partial repository: the GPU driver's devices, the NIC driver's class but none of its devices, a
    # claim whose class is installed elsewhere, a Pod whose claim is elsewhere
    write(
        tmp_path,
        cluster=[GPU_CLASS, NIC_CLASS, gpu_slice("node-a", 2)],
        claims=[
            claim("gpu", 1),
            claim("nic", 8, "nic.example.com"),
            claim("fpga", 1, "fpga.example.com"),
            pod("uses-elsewhere", "kept-in-the-cluster"),
        ],
    )
    code, found = validate(capsys, str(tmp_path))
    assert code == 0, found
    assert rules(found, "feasibility.") == [("nic", "feasibility.open-world")]
    (line,) = [f for f in found if f["rule"] == "feasibility.open-world"]
    assert line["severity"] == "info"
    assert line["message"].startswith("2 claims and 1 Pod or workload not checked for feasibility")
    assert "--cluster DIR" in line["message"]
    # with the cluster given, the world is closed: the claim for 8 NICs is decided (no NIC anywhere)
    cluster = write(tmp_path / "cluster-dump", nics=[gpu_slice("node-a", 2)])
    code, found = validate(
        capsys, "--cluster", str(cluster), str(tmp_path / "claims.yaml"), str(tmp_path / "cluster.yaml")
    )
    assert ("nic", "feasibility.infeasible") in rules(found, "feasibility.") and code == 1


def test_devices_alone_never_load_the_simulation(tmp_path: Path) -> None:
    write(tmp_path, classes=[GPU_CLASS])
    for n in range(3):
        write(tmp_path, **{f"slices-{n}": [gpu_slice(f"node-{n}", 4)]})
    script = (
        "import sys\n"
        "from webhook.cli.main import main\n"
        f"code = main(['validate', '-j', '2', '--no-progress', {str(tmp_path)!r}])\n"
        "print('loaded' if 'webhook.simulate' in sys.modules or 'webhook.engine.allocate' in sys.modules else 'not loaded')\n"
        "sys.exit(code)\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1] == "not loaded"
    # a claim among them: the same run simulates (a second pass in the workers when the input is large)
    write(tmp_path, claim=[claim("nine", 9)])
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0 and "feasibility.infeasible" in p.stdout and "loaded" in p.stdout  # a warning


def test_identical_copies_are_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same class in two files, once with server-set metadata and keys in another order (a dump)
    dumped = {**GPU_CLASS, "metadata": {"resourceVersion": "42", "name": "gpu.example.com", "uid": "5d0e"}}
    write(
        tmp_path,
        a=[GPU_CLASS, gpu_slice("node-a", 2)],
        b=[dumped, gpu_slice("node-a", 2), claim("one", 1)],
    )
    code, found = validate(capsys, str(tmp_path))
    assert code == 0, found
    assert [f for f in found if f["severity"] != "info"] == []


def test_copies_with_other_content_name_what_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = device_class("gpu.example.com", 'device.driver == "gpu.example.org"')
    write(tmp_path, a=[GPU_CLASS], b=[other])
    # in two files (kustomize overlays do that): a warning on both definitions
    code, found = validate(capsys, str(tmp_path))
    dups = [f for f in found if f["rule"] == "input.duplicate-object"]
    assert code == 0 and sorted((Path(f["source"]).name, f["severity"]) for f in dups) == [
        ("a.yaml", "warning"),
        ("b.yaml", "warning"),
    ]
    assert all("spec.selectors[0].cel.expression differs" in f["message"] for f in dups)
    assert f"first at {tmp_path / 'a.yaml'}:1" in next(
        f["message"] for f in dups if f["source"].endswith("b.yaml")
    )
    # --feasibility takes the input as one cluster: an error wherever the copies are
    code, found = validate(capsys, "--feasibility", str(tmp_path))
    assert code == 1 and {f["severity"] for f in found if f["rule"] == "input.duplicate-object"} == {"error"}
    # in one file: an error for plain validate too
    (tmp_path / "b.yaml").unlink()
    write(tmp_path, a=[GPU_CLASS, other])
    code, found = validate(capsys, str(tmp_path))
    assert code == 1 and {f["severity"] for f in found if f["rule"] == "input.duplicate-object"} == {"error"}


def test_an_invalid_definition_is_never_the_one_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invalid = claim("big", -1)  # the API server rejects it
    write(tmp_path, a=[GPU_CLASS, gpu_slice("node-a", 2)], b=[invalid, claim("big", 3)])
    code, found = validate(capsys, str(tmp_path))
    assert code == 1
    infeasible = [f for f in found if f["rule"] == "feasibility.infeasible"]
    # the valid one: its request, in the second document
    written = (tmp_path / "b.yaml").read_text()
    request_line = line_of(written, "- name: gpus", start=line_of(written, "---"))
    assert [(f["name"], f["line"]) for f in infeasible] == [("big", request_line)]
    assert "3 requested" in infeasible[0]["message"]
    assert not [
        f for f in found if f["rule"] == "input.duplicate-object"
    ]  # the invalid one has its own error
    # and `simulate` takes the valid one too
    capsys.readouterr()
    assert main(["simulate", "-o", "json", str(tmp_path)]) == 1
    (sim,) = json.loads(capsys.readouterr().out)["pods"]
    assert sim["feasible"] is False and "3 requested" in sim["reason"]


def test_a_kustomize_base_and_overlay_stay_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    container = {"name": "c", "image": "trainer:1", "resources": {"claims": [{"name": "gpu"}]}}
    deployment = obj(
        "Deployment",
        "trainer",
        "ml",
        "apps/v1",
        spec={
            "replicas": 1,
            "selector": {"matchLabels": {"app": "trainer"}},
            "template": {
                "metadata": {"labels": {"app": "trainer"}},
                "spec": {
                    "containers": [container],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                },
            },
        },
    )

    def template(count: int) -> dict[str, Any]:
        return claim_template("one-gpu", [request("gpu", "gpu.example.com", count=count)], ns="ml")

    prod_class = device_class(
        "gpu.example.com",
        'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "H100"',
    )
    patches = [{"path": "deviceclass.yaml"}, {"path": "template.yaml"}, {"path": "replicas.yaml"}]
    write(
        tmp_path,
        base__kustomization=[{"resources": ["deviceclass.yaml", "template.yaml", "deployment.yaml"]}],
        base__deviceclass=[GPU_CLASS],
        base__template=[template(1)],
        base__deployment=[deployment],
        # the overlay replaces the class's selectors, raises the count and scales the Deployment (a patch
        # without a Pod template: no DRA in it)
        overlays__prod__kustomization=[{"resources": ["../../base"], "patches": patches}],
        overlays__prod__deviceclass=[prod_class],
        overlays__prod__template=[template(2)],
        overlays__prod__replicas=[obj("Deployment", "trainer", "ml", "apps/v1", spec={"replicas": 4})],
        # and the repository keeps a sample node's devices for its docs
        samples__node=[gpu_slice("node-a", 1)],
    )
    code, found = validate(capsys, str(tmp_path))
    assert code == 0, [f for f in found if f["severity"] == "error"]
    # the overlay's patches are parts of objects until built: not read, one line for the kustomization
    assert [(f["rule"], f["severity"]) for f in found if f["rule"].startswith("input.")] == [
        ("input.kustomize-patches", "info")
    ]
    # the base alone is what the repository's objects are: the trainer fits on the sample node's device
    assert rules(found, "feasibility.") == []


def test_the_default_check_stays_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 401 claims against 1,000 devices: more pairs than the default check takes on (400,000)
    claims = [claim(f"c{i}", 1) for i in range(401)]
    slices = [gpu_slice(f"node-{n}", 125) for n in range(8)]
    write(tmp_path, cluster=[GPU_CLASS, *slices], claims=claims)
    code, found = validate(capsys, str(tmp_path))
    assert code == 0 and rules(found, "feasibility.") == [("c0", "feasibility.open-world")]
    (line,) = [f for f in found if f["rule"] == "feasibility.open-world"]
    assert line["message"].startswith(
        "401 claims, Pods and workloads not checked for feasibility: against 1000"
    )


def test_undecided_answers_are_counted_by_default_and_warnings_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        cluster=[GPU_CLASS, gpu_slice("node-a", 2)],
        claims=[claim("a", 1), claim("b", 1)],
    )
    code, found = validate(capsys, "--budget-steps", "0", str(tmp_path))
    assert code == 0 and rules(found, "feasibility.") == [("a", "feasibility.open-world")]
    (line,) = [f for f in found if f["rule"] == "feasibility.open-world"]
    assert line["severity"] == "info"
    assert line["message"].startswith(
        "2 claims, Pods and workloads not decided within the default check's budget"
    )
    code, found = validate(capsys, "--feasibility", "--budget-steps", "0", str(tmp_path))
    assert code == 0 and {r for _, r in rules(found, "feasibility.")} == {"feasibility.undecided"}
