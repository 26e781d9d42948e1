"""What a simulation leaves out (only what the API server rejects, and repeated names), how a Pod's reason
names a left-out object that would have served it, and claims no Pod uses — through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import builders
from tests.builders import claim_template, device_class, dump_yaml, node, obj, request, resource_slice
from webhook.cli.main import main

NODES = [node("node-a"), node("node-b")]
GPU_CLASS = device_class("gpu", 'device.driver == "gpu.example.com"')


def gpu_slice(
    name: str, node: str, devices: int, driver: str = "gpu.example.com", **spec: Any
) -> dict[str, Any]:
    """Slice `name`: the pool of `node`, `devices` GPUs gpu-0... of `driver` (more spec fields as given)."""
    gpus = [{"name": f"gpu-{i}"} for i in range(devices)]
    return resource_slice(name, gpus, pool=node, node=node, driver=driver, **spec)


def pod(name: str, gpus: int = 1, claim: str | None = None, template: bool = True) -> list[dict[str, Any]]:
    """Pod team/name whose claim g is `claim`, else made from template gpus-<gpus> (the template first,
    unless `template` is False)."""
    ref = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": f"gpus-{gpus}"}
    container = {"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}
    the_pod = obj(
        "Pod", name, "team", "v1", spec={"containers": [container], "resourceClaims": [{"name": "g", **ref}]}
    )
    if template and not claim:
        return [claim_template(f"gpus-{gpus}", [request("gpus", "gpu", count=gpus)], ns="team"), the_pod]
    return [the_pod]


def claim(name: str, gpus: int) -> dict[str, Any]:
    return builders.claim(name, [request("gpus", "gpu", count=gpus)], ns="team")


def write(tmp_path: Path, **files: str | list[dict[str, Any]]) -> Path:
    """`name=objects` as tmp_path/name.yaml (text as it is)."""
    for name, content in files.items():
        (tmp_path / f"{name}.yaml").write_text(content if isinstance(content, str) else dump_yaml(content))
    return tmp_path


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["simulate", "-o", "json", "-j", "1", *args])
    return code, json.loads(capsys.readouterr().out)


def test_a_left_out_class_is_named_in_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = device_class("gpu", 'device.driver == "gpu.example.com" &&')
    write(tmp_path, a=NODES, b=[broken, gpu_slice("s", "node-a", 2)], c=pod("p"))
    code, out = simulate(capsys, str(tmp_path))
    (sim,) = out["pods"]
    assert code == 1 and sim["feasible"] is False
    assert (
        f'DeviceClass "gpu", which its claims use ({tmp_path / "b.yaml"}:1: class.selectors: '
        in sim["reason"]
    )
    assert [o["name"] for o in out["invalid"]] == ["gpu"]


def test_a_left_out_slice_that_would_have_served_the_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = gpu_slice("both", "node-b", 4, allNodes=True)
    write(
        tmp_path,
        a=[*NODES, GPU_CLASS, gpu_slice("small", "node-a", 1)],
        b=[bad],
        c=pod("p", 2),
    )
    code, out = simulate(capsys, str(tmp_path))
    (sim,) = out["pods"]
    assert code == 1 and sim["feasible"] is False
    assert (
        f'left out of the simulation, and it could have served this: ResourceSlice "both": with it the Pod fits '
        f"({tmp_path / 'b.yaml'}:1: slice.node-selection: spec: " in sim["reason"]
    )


def test_an_undecodable_slice_is_named_only_when_its_driver_may_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # attributes as a list: the API server cannot decode the slice (an unknown field would not do: the
    # cluster's objects are read as stored, the field dropped with a warning, tests/cli/test_stored_state_cli.py)
    typo = gpu_slice("typo", "node-b", 2)
    typo["spec"]["devices"][0]["attributes"] = []
    fpga = gpu_slice("fpga-typo", "node-b", 2, driver="fpga.example.com")
    fpga["spec"]["devices"][0]["attributes"] = []
    write(tmp_path, a=[*NODES, GPU_CLASS], b=[typo], c=[fpga], d=pod("p"))
    code, out = simulate(capsys, str(tmp_path))
    reason = out["pods"][0]["reason"]
    assert 'ResourceSlice "typo", whose devices are unknown: it could not be decoded' in reason
    assert "schema.type" in reason and "fpga-typo" not in reason
    assert sorted(o["name"] for o in out["invalid"]) == ["fpga-typo", "typo"]


def test_a_left_out_class_serving_an_extended_resource(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cls = device_class(
        "gpu", 'device.driver == "gpu.example.com"', extendedResourceName="example.com/gpu", config=[{}]
    )
    container = {"name": "c", "image": "x", "resources": {"limits": {"example.com/gpu": "1"}}}
    ext_pod = obj("Pod", "legacy", "team", "v1", spec={"containers": [container]})
    write(tmp_path, a=[*NODES, gpu_slice("s", "node-a", 2)], b=[cls], c=[ext_pod])
    code, out = simulate(capsys, str(tmp_path))
    (sim,) = out["pods"]
    # no class serves example.com/gpu in the simulation, and no node's allocatable has it
    assert sim["feasible"] is False
    assert 'DeviceClass "gpu", which serves its extended resource' in sim["reason"]


def test_errors_the_api_server_does_not_make_change_no_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two slices of one pool generation repeat a device: pool.duplicate-device is an error, but the API
    # server stores both and the scheduler itself treats the pool as invalid — as the simulation does
    s1, s2 = (gpu_slice(name, "node-a", 2, count=2) for name in ("s1", "s2"))
    write(tmp_path, a=[*NODES, GPU_CLASS], b=[s1, s2], c=pod("p"))
    code, out = simulate(capsys, str(tmp_path))
    (sim,) = out["pods"]
    assert out["invalid"] == [] and [o["name"] for o in out["errors"]] == ["s2"]
    assert sim["feasible"] is False and code == 1 and "invalid resource pools" in sim["reason"]
    text_code = main(["simulate", str(tmp_path)])
    text = capsys.readouterr().out
    assert text_code == 1 and "1 object(s) with errors were simulated all the same" in text


def test_a_policy_raising_a_lint_to_an_error_changes_no_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upper = gpu_slice("s", "node-a", 1, driver="GPU.example.com")
    cls = device_class("gpu", 'device.driver == "GPU.example.com"')
    write(tmp_path, a=[*NODES, cls], b=[upper], c=pod("p"))
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n  slice.driver.uppercase: error\n")
    code = main(["validate", "-o", "json", "--feasibility", "--policy", str(policy), str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    found = [(o["name"], v["rule"], v["severity"]) for o in out["objects"] for v in o["violations"]]
    assert found == [("s", "slice.driver.uppercase", "error")]  # and no feasibility.infeasible on the Pod
    assert code == 1


def test_names_defined_twice_with_other_content_are_reported_and_never_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        a=[*NODES, GPU_CLASS, gpu_slice("s", "node-a", 2)],
        b=[claim("shared", 2)],
        c=[claim("shared", 1), NODES[0]],
        d=pod("p", claim="shared"),
    )
    code, out = simulate(capsys, str(tmp_path))
    (sim,) = out["pods"]
    # the first definition (2 GPUs) is the one simulated
    assert sim["feasible"] is True and len(sim["claims"][0]["results"]) == 2
    dup = [
        (o["kind"], o["source"].rsplit("/", 1)[1], o["line"], v["message"])
        for group in ("invalid", "errors")
        for o in out[group]
        for v in o["violations"]
        if v["rule"] == "input.duplicate-object"
    ]
    b, c = str(tmp_path / "b.yaml"), str(tmp_path / "c.yaml")
    # the claim is defined with other content: both definitions say so, naming what differs; the Node of
    # c.yaml is a.yaml's again, identical: the same object, no finding
    assert sorted(d[:3] for d in dup) == [("ResourceClaim", "b.yaml", 1), ("ResourceClaim", "c.yaml", 1)]
    messages = {(d[0], d[1]): d[3] for d in dup}
    first, later = messages[("ResourceClaim", "b.yaml")], messages[("ResourceClaim", "c.yaml")]
    assert f"defined again with different content at {c}:1" in first and "this definition is used" in first
    assert f"first at {b}:1" in later and "the first is used and this one is left out" in later
    assert "spec.devices.requests[0].exactly.count differs" in first
    assert "spec.devices.requests[0].exactly.count differs" in later
    assert sorted((o["kind"], o["name"], o["source"]) for o in out["invalid"]) == [
        ("ResourceClaim", "shared", c)
    ]
    assert code == 1


def test_a_document_that_cannot_be_read_is_left_out_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        a=[*NODES, GPU_CLASS, gpu_slice("s", "node-a", 1)],
        b=pod("p"),
        c="kind: [unclosed\n",
    )
    code, out = simulate(capsys, str(tmp_path))
    assert out["pods"][0]["feasible"] is True
    assert [(o["source"], [v["rule"] for v in o["violations"]]) for o in out["invalid"]] == [
        (str(tmp_path / "c.yaml"), ["input.parse"])
    ]
    assert code == 1  # what it held is not in the simulation


def test_objects_named_by_generate_name_are_never_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    published = [gpu_slice("x", name, 1) for name in ("node-a", "node-b")]
    for s in published:
        s["metadata"] = {"generateName": "gpu.example.com-"}
    write(
        tmp_path,
        a=[*NODES, GPU_CLASS],
        b=published,
        c=pod("p") + pod("q", template=False),
    )
    code, out = simulate(capsys, str(tmp_path))
    assert code == 0 and [p["node"] for p in out["pods"]] == ["node-a", "node-b"]


def test_claims_no_pod_uses_are_asked_one_by_one_after_the_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        a=[*NODES, GPU_CLASS, gpu_slice("s", "node-a", 3)],
        b=[*pod("p", 2), claim("never", 4), claim("later", 2)],
    )
    code, out = simulate(capsys, str(tmp_path))
    placed, never, later = out["pods"]
    assert placed["pod"] == "team/p" and placed["feasible"] is True
    # four GPUs on a node of three: never, whatever is free (as admission answers a claim CREATE)
    assert never["pod"] is None and never["claim"] == "team/never" and never["verdict"] == "unsatisfiable"
    assert never["feasible"] is False and code == 1
    assert never["reason"].startswith(
        'ResourceClaim "team/never" can never be allocated on this cluster, not even with every device free '
        "and untainted: "
    )
    # two GPUs: not now (the Pod took two of the three), but once they are freed
    assert later["claim"] == "team/later" and later["verdict"] == "busy" and later["feasible"] is False
    assert later["reason"].startswith(
        'ResourceClaim "team/later" cannot be allocated now (it will wait until devices are freed or '
        "untainted): "
    )
    # validate --feasibility: the claim that can never be satisfied is an error, the busy one a warning
    assert main(["validate", "-o", "json", "--feasibility", str(tmp_path)]) == 1
    out = json.loads(capsys.readouterr().out)
    found = [(o["name"], v["rule"], v["severity"]) for o in out["objects"] for v in o["violations"]]
    assert found == [
        ("never", "feasibility.infeasible", "error"),
        ("later", "feasibility.busy", "warning"),
    ]
    # without the claim that can never fit: a busy claim is a warning, as in admission (exit 0)
    write(tmp_path, b=[*pod("p", 2), claim("later", 2)])
    code, out = simulate(capsys, str(tmp_path))
    assert code == 0 and out["pods"][-1]["verdict"] == "busy"
    assert main(["simulate", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert (
        "ResourceClaim team/later (no Pod in the input uses it): busy (it fits once devices are freed" in text
    )
    assert main(["validate", "--feasibility", str(tmp_path)]) == 0
