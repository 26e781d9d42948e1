"""`draguard explain pod NS/NAME --cluster DIR` as a real process: the text a person reads (headings, the
holder, the verified change), JSON valid against the documented schema (docs/explain-pod.schema.json) for
every status, and the exit codes: 0 fits (or not pending), 1 does not fit, 2 usage, 3 undecided."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests import builders as b
from tests import forkrun
from tests.cliproc import ROOT, draguard

REALISTIC = ROOT / "tests" / "fixtures" / "realistic"
SRIOV = str(REALISTIC / "sriov")
SCHEMA = json.loads((ROOT / "docs" / "explain-pod.schema.json").read_text())


def explained(*args: str) -> tuple[int, dict[str, Any]]:
    p = draguard("explain", "pod", *args, "-o", "json")
    assert p.stderr == "", p.stderr
    out = json.loads(p.stdout)
    Draft202012Validator(SCHEMA).validate(out)
    return p.returncode, out


def test_text_names_the_cause_the_holder_and_the_verified_change() -> None:
    p = draguard("explain", "pod", "telco/trex", "--cluster", SRIOV)
    assert p.returncode == 1 and p.stderr == "", p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Pod telco/trex: does not fit (busy)"
    for heading in (
        "Why",
        "Claims",
        "Changes that make it fit (each verified by running the allocator again; smallest first)",
    ):
        assert heading in lines
    assert "        held by claim telco/upf-0-vfs-g7h2k: 3 device(s), reserved for Pod telco/upf-0" in lines
    assert (
        "  1. release claim telco/upf-0-vfs-g7h2k (3 devices; reserved for Pod telco/upf-0): then it fits on "
        "node sriov-worker-1" in lines
    )
    assert lines[-1] == "  (2 allocator run(s), 1 change(s) fit)"


def test_json_follows_the_schema_for_every_status(tmp_path: Path) -> None:
    code, out = explained("telco/trex", "--cluster", SRIOV)
    assert (code, out["status"], out["verdict"]) == (1, "does-not-fit", "busy")
    assert out["changes"][0] | {} == {
        "kind": "release-claim",
        "claim": "telco/upf-0-vfs-g7h2k",
        "request": None,
        "target": 'ResourceClaim "telco/upf-0-vfs-g7h2k"',
        "description": "release claim telco/upf-0-vfs-g7h2k (3 devices; reserved for Pod telco/upf-0)",
        "node": "sriov-worker-1",
        "devices": 3,
        "reservedFor": ["Pod telco/upf-0"],
    }
    assert out["search"] == {"tried": 2, "fits": 1, "undecided": 0, "untried": 0, "cutShort": None}
    code, out = explained("telco/pod0", "--cluster", SRIOV)
    assert (code, out["status"], out["node"]) == (0, "fits", "sriov-worker-1")
    code, out = explained("telco/trex", "--cluster", SRIOV, "--budget-steps", "0", "--budget-seconds", "0")
    assert (code, out["status"], out["verdict"]) == (3, "undecided", None)
    bound = b.pod("bound", ["all-vfs-pf0"], "telco", template=True)
    bound["spec"]["nodeName"] = "sriov-worker-1"
    code, out = explained(
        "telco/bound", "--cluster", SRIOV, "--cluster", b.write(tmp_path, "bound.yaml", [bound])
    )
    assert (code, out["status"]) == (0, "not-pending")
    ex = REALISTIC / "dra-example-driver"
    cluster = ["--cluster", str(ex / "cluster" / "gpu"), "--cluster", str(ex / "deploy")]
    code, out = explained(
        "device-taints/pod-not-scheduled",
        *cluster,
        "--cluster",
        str(ex / "examples" / "device-taint-noschedule.yaml"),
    )
    assert (code, [c["kind"] for c in out["changes"]]) == (1, ["tolerate-taint"])
    code, out = explained("nccl/all-reduce", "--cluster", str(REALISTIC / "dranet"), "--search-runs", "1")
    assert code == 1 and out["search"]["cutShort"].startswith("the bound of 1 allocator runs was reached")


def test_left_out_objects_are_named_with_their_file_and_line(tmp_path: Path) -> None:
    bad = b.write(tmp_path, "bad.yaml", [b.node("node-z"), b.device_class("Bad_Class")])
    line = b.line_of(Path(bad).read_text(), "kind: DeviceClass") - 1  # its document starts at apiVersion
    code, out = explained("telco/trex", "--cluster", SRIOV, "--cluster", bad)
    (lo,) = out["leftOut"]
    assert (lo["kind"], lo["name"], lo["source"], lo["line"]) == ("DeviceClass", "Bad_Class", bad, line)
    assert lo["why"].startswith(f"{bad}:{line}: ")
    p = draguard("explain", "pod", "telco/trex", "--cluster", SRIOV, "--cluster", bad)
    assert "Objects left out (invalid: draguard cannot use them)" in p.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["telco/nope", "--cluster", SRIOV], 'Pod "telco/nope" not found in the --cluster files'),
        (["a/b/c", "--cluster", SRIOV], "'a/b/c': expected NS/NAME (one slash)"),
        (["Telco/trex", "--cluster", SRIOV], "'Telco/trex': the namespace 'Telco' is not valid"),
        (["telco/trex", "--cluster", SRIOV, "--kubeconfig", "kc"], "--cluster reads the cluster from files"),
        (["telco/trex", "--cluster", "no-such-dir"], "no-such-dir"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    p = draguard("explain", "pod", *args)
    assert p.returncode == 2 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line.startswith("draguard: error: ") and message in line, line


def test_no_cluster_to_read_says_what_to_pass(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)
    p = forkrun.run(["explain", "pod", "default/x"], cwd=ROOT, env=env)
    assert p.returncode == 2, p.stderr
    assert "no cluster to read" in p.stderr and "--kubeconfig PATH, or --cluster DIR" in p.stderr
    p = forkrun.run(
        ["explain", "pod", "default/x", "--kubeconfig", str(tmp_path / "none")], cwd=ROOT, env=env
    )
    assert p.returncode == 2 and "no such file" in p.stderr
