"""One deadline for a whole run (issue 6 §2): `--deadline-seconds` covers reading, validation and
allocation. What it cuts short is reported as not checked (`input.not-checked`, the object or file
named) or undecided — never as a verdict — with exit 3; plain `validate` has no deadline unless asked.
The library takes the same deadline for a request body (`check_body`, `simulate(bytes)`)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from tests import forkrun
from tests.cliproc import draguard
from tests.hostile.inputs_budget import SLOW_TRUE
from tests.hostile.k8s import claim, many_devices, pod, request, small_cluster, write
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.io.documents import Document
from webhook.model.budget import Deadline, DeadlinePassed, OutOfBudget
from webhook.simulate import SimulateOptions, simulate
from webhook.validate import RunOptions, assemble, check_body, check_documents

ROOT = Path(__file__).resolve().parents[2]

BAD_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu
        selectors: [{cel: {expression: "device.driver == 1"}}]
"""


def test_deadline_check_raises_an_out_of_budget_once_passed() -> None:
    with pytest.raises(DeadlinePassed):
        Deadline(time.monotonic() - 1).check()
    assert issubclass(DeadlinePassed, OutOfBudget)
    Deadline.after(60).check()
    Deadline.never().check()
    soon, late = Deadline.after(1), Deadline.after(60)
    assert late.earliest(soon) is soon and soon.earliest(late) is soon and soon.earliest(None) is soon


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_validate_has_no_deadline_unless_asked(tmp_path: Path, jobs: str) -> None:
    files = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    for f in files:
        f.write_text(BAD_CLAIM)
    plain = draguard("validate", "-j", jobs, "-o", "json", *map(str, files))
    assert plain.returncode == 1 and "notChecked" not in json.loads(plain.stdout)["summary"]

    cut = draguard("validate", "-j", jobs, "--deadline-seconds", "0", "-o", "json", *map(str, files))
    assert cut.returncode == 3, cut.stdout + cut.stderr  # no error found, but not everything was checked
    out = json.loads(cut.stdout)
    assert out["summary"]["notChecked"] == 2 and out["summary"]["errors"] == 0
    unread = {o["source"]: [v["message"] for v in o["violations"]] for o in out["objects"]}
    assert set(unread) == set(map(str, files))
    assert all(
        m[0].startswith("not checked: the deadline of the run passed before this file was read")
        for m in unread.values()
    )

    text = draguard("validate", "--deadline-seconds", "0", "--summary", str(files[0]))
    assert text.returncode == 3
    assert f"{files[0]}:1: warning input.not-checked: not checked:" in text.stdout
    assert "1 not checked" in text.stdout.splitlines()[-1]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_files_the_deadline_left_unread_are_one_text_line_and_each_listed_in_json(
    tmp_path: Path, jobs: str
) -> None:
    files = [tmp_path / f"f{i}.yaml" for i in range(7)]
    for f in files:
        f.write_text(BAD_CLAIM)
    text = draguard("validate", "-j", jobs, "--deadline-seconds", "0", str(tmp_path))
    assert text.returncode == 3, text.stdout + text.stderr
    unread = [
        line for line in text.stdout.splitlines() if "files not read" in line or "file was read" in line
    ]
    names = ", ".join(map(str, files[:3]))
    assert unread == [
        f"{files[0]}:1: warning input.not-checked: 7 files not read before the deadline "
        f"(--deadline-seconds 0): {names} and 4 more (-o json lists each)"
    ]
    assert len(text.stdout.splitlines()) == 2  # and the one saying no cross-object rule was run
    out = json.loads(
        draguard("validate", "-j", jobs, "--deadline-seconds", "0", "-o", "json", *map(str, files)).stdout
    )
    assert [o["source"] for o in out["objects"]] == list(map(str, files))
    sim = draguard("simulate", "-j", jobs, "--deadline-seconds", "0", str(tmp_path))
    assert sim.returncode == 3
    assert sum("files not read" in line or "file was read" in line for line in sim.stdout.splitlines()) == 1
    assert "7 files not read before the deadline (--deadline-seconds 0)" in sim.stdout


def test_validate_feasibility_and_simulate_report_what_the_deadline_left(tmp_path: Path) -> None:
    objs, cls = small_cluster(tmp_path)
    objs += [claim("c", [request("r", cls)]), pod("p", ["c"])]
    path = write(tmp_path, "cluster.yaml", objs)
    assert draguard("validate", "--feasibility", path).returncode == 0
    cut = draguard("validate", "--feasibility", "--deadline-seconds", "0", "-o", "json", path)
    assert cut.returncode == 3
    assert json.loads(cut.stdout)["summary"]["notChecked"] == 1
    sim = draguard("simulate", "--deadline-seconds", "0", path)
    assert sim.returncode == 3
    assert "warning input.not-checked" in sim.stdout and "nothing to simulate" not in sim.stdout


def test_a_deadline_passing_inside_an_object_names_it_and_runs_no_cross_object_rule() -> None:
    # 8,192 distinct selectors (never compiled before: a fresh token) take far longer than 50 ms to
    # compile; the deadline passes before or while the claim is validated, never after.
    token = uuid.uuid4().hex
    reqs = [
        {
            "name": f"r{r}",
            "firstAvailable": [
                {
                    "name": f"s{s}",
                    "deviceClassName": "gpu",
                    "selectors": [
                        {"cel": {"expression": f"device.driver == '{token}-{r}-{s}-{k}.example.com'"}}
                        for k in range(32)
                    ],
                }
                for s in range(8)
            ],
        }
        for r in range(32)
    ]
    big = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "big", "namespace": "team"},
        "spec": {"devices": {"requests": reqs}},
    }
    after = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}}
    docs = [Document("in.yaml", 1, big), Document("in.yaml", 999, after)]
    ctx = Context(profile=load_profile("1.37"), deadline=Deadline.after(0.05))
    fr = check_documents(docs, "in.yaml", ctx)
    assert fr.not_checked == 1
    [cut] = fr.objects
    assert (cut.line, cut.kind, cut.namespace, cut.name) == (1, "ResourceClaim", "team", "big")
    [v] = cut.violations
    assert v.rule == "input.not-checked" and v.severity.value == "warning"
    assert v.message.startswith("not checked: the deadline of the run passed ")
    assert v.message.endswith("this object was validated; nothing after it in this file was read either")
    report = assemble([fr], ctx, None)
    assert report.not_checked == 1 and not report.complete and report.errors == 0
    assert cut.violations[-1].message.startswith("cross-object rules")


def test_pods_are_undecided_when_the_deadline_passes_after_loading(tmp_path: Path) -> None:
    # Loading ~0.4 MB takes well under the deadline; allocating two Pods whose selector costs ~10,000
    # CEL steps on each of 2,000 devices takes far longer. Whichever phase the deadline ends, nothing is
    # decided and nothing is infeasible.
    objs, cls = many_devices(tmp_path, 2000)
    objs += [claim(f"c{i}", [request("r", cls, [SLOW_TRUE], allocationMode="All")]) for i in (1, 2)]
    objs += [pod("p1", ["c1"]), pod("p2", ["c2"])]
    path = write(tmp_path, "cluster.yaml", objs, flow=True)
    budget = ("--budget-seconds", "1000", "--budget-steps", str(10**12))  # only the deadline can stop it
    p = draguard("simulate", *budget, "--deadline-seconds", "3", "-o", "json", path)
    assert p.returncode == 3, p.stdout[-2000:] + p.stderr
    out = json.loads(p.stdout)
    assert [x["feasible"] for x in out["pods"]] == [None, None]
    assert all("deadline of the run" in x["reason"] for x in out["pods"])
    if "notChecked" not in out:  # loaded in time: the second Pod was never tried
        assert (
            out["pods"][1]["reason"] == "undecided: the deadline of the run passed before this Pod was tried"
        )


def test_a_request_body_is_parsed_validated_and_simulated_within_one_deadline(tmp_path: Path) -> None:
    objs, cls = small_cluster(tmp_path)
    objs += [claim("c", [request("r", cls)])]
    body = Path(write(tmp_path, "body.yaml", objs)).read_bytes()
    report = check_body(body, RunOptions(deadline=Deadline.after(60)))
    assert report.complete and report.errors == 0 and len(report.objects) == 3 and report.skipped == 1
    late = check_body(body, RunOptions(deadline=Deadline(time.monotonic() - 1)))
    assert late.not_checked == 1 and [o.source for o in late.objects] == ["<request>"]
    sim = simulate(body, SimulateOptions(), deadline=Deadline.after(60))
    assert [p.feasible for p in sim.pods] == [True] and sim.exit_code == 0
    late_sim = simulate(body, SimulateOptions(), deadline=Deadline(time.monotonic() - 1))
    assert late_sim.pods == [] and late_sim.exit_code == 3


def test_the_deadline_stops_the_parser_between_empty_documents(tmp_path: Path) -> None:
    """700,000 `---` lines yield no document: the parser itself asks the deadline between them."""
    f = tmp_path / "empty.yaml"
    f.write_text("---\n" * 700_000)
    p = forkrun.run(["simulate", "--deadline-seconds", "0.3", str(f)], cwd=ROOT, timeout=60)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "input.not-checked" in p.stdout and "Traceback" not in p.stderr


def test_parse_ends_with_a_cut_short_error_once_expired() -> None:
    from webhook.io.documents import CUT_SHORT, DocumentError, parse

    docs = list(parse("---\n" * 10 + "kind: Pod\napiVersion: v1\n", "f.yaml", expired=lambda: True))
    assert len(docs) == 1 and isinstance(docs[0], DocumentError) and docs[0].rule == CUT_SHORT
