"""Budgets, deadlines and workers on the command line: bad values are usage errors (exit 2), a run
deadline leaves Pods undecided, an engine failure is reported on its Pod and the others still get
answers; decode errors for numbers the API server rejects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import claim_template, dump_yaml, obj, request
from tests.cliproc import draguard
from tests.hostile import inputs_engine as hostile
from webhook.cel.runtime import SelectorEvaluator
from webhook.cli.main import main
from webhook.simulate import SimulateOptions, feasibility_violations, simulate
from webhook.validate import usable_workers
from webhook.validate.files import TASK_BYTES, TASK_FILES, task_chunks

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "flag",
    [
        ("--budget-seconds", "nan"),
        ("--budget-seconds", "inf"),
        ("--budget-seconds", "-1"),
        ("--budget-steps", "-5"),
        ("--budget-steps", "1e3"),
        ("--deadline-seconds", "NaN"),
        ("--deadline-seconds", "-0.5"),
        ("-j", "-1"),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "validate"])
def test_bad_budget_values_are_usage_errors(tmp_path: Path, command: str, flag: tuple[str, str]) -> None:
    f = tmp_path / "empty.yaml"
    f.write_text("")
    extra = ["--feasibility"] if command == "validate" and not flag[0].startswith("-j") else []
    p = draguard(command, *extra, *flag, str(f))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and f"argument {flag[0]}" in p.stderr


def test_jobs_beyond_the_machine_and_the_input_are_capped() -> None:
    assert usable_workers(1000, 3) <= 3
    assert usable_workers(0, 1) == 1 and usable_workers(None, 0) == 1
    assert usable_workers(1000, 10_000) <= max(1, (__import__("os").cpu_count() or 1))


def test_small_files_go_to_the_workers_in_tasks_of_several_in_order() -> None:
    items = list(range(1000))
    chunks = task_chunks(items, [200] * 1000, 2)
    assert [i for c in chunks for i in c] == items  # every file once, in order
    assert 1 < max(len(c) for c in chunks) <= TASK_FILES and len(chunks) >= 16  # several tasks per worker
    assert max(len(c) for c in task_chunks(list(range(10_000)), [10] * 10_000, 2)) == TASK_FILES
    big = task_chunks([0, 1, 2, 3], [10, TASK_BYTES * 2, 10, 10], 2)
    assert [1] in big  # a large file is a task of its own
    assert task_chunks([0, 1, 2], [0, 0, 0], 2) == [[0, 1, 2]]  # empty files: one task (bounded by count)


def test_many_small_files_in_parallel_are_reported_as_one_by_one(tmp_path: Path) -> None:
    """-j 2 over 300 files (tasks of several files) reports what -j 1 reports, bad files included."""
    for i in range(300):
        cls = obj("DeviceClass", f"c-{i}", None, "resource.k8s.io/v1", spec={})
        if i % 97 == 5:
            cls["spec"] = {"selectors": [{"cel": {"expression": "device.driver =="}}]}
        (tmp_path / f"f{i:03d}.yaml").write_text(dump_yaml([cls]))
    one, two = (
        draguard("validate", "-j", j, "-o", "json", "--no-progress", str(tmp_path)) for j in ("1", "2")
    )
    assert one.returncode == two.returncode == 1, one.stderr + two.stderr
    assert json.loads(one.stdout) == json.loads(two.stdout)
    bad = [o["source"] for o in json.loads(two.stdout)["objects"] if o["violations"]]
    assert [Path(b).name for b in bad] == ["f005.yaml", "f102.yaml", "f199.yaml", "f296.yaml"]


def test_many_workers_on_one_file_just_work(tmp_path: Path) -> None:
    path = hostile.write_max_slices(tmp_path, slices=1)
    p = draguard("validate", "-j", "64", str(path))
    assert p.returncode == 0, p.stdout + p.stderr


# --- the run deadline -----------------------------------------------------------------------------

TEMPLATE = claim_template("one", [request("r", "gpu")])


def pod(name: str) -> dict[str, Any]:
    """Pod default/name: one container, one claim from template one."""
    spec = {
        "containers": [{"name": "c", "image": "busybox"}],
        "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one"}],
    }
    return obj("Pod", name, "default", "v1", spec=spec)


def cluster(tmp_path: Path, pods: int) -> Path:
    path = hostile.write_max_slices(tmp_path, slices=1)
    objs = [TEMPLATE, *(pod(f"p{i}") for i in range(pods))]
    path.write_text(path.read_text() + "\n---\n" + dump_yaml(objs))
    return path


def test_a_passed_run_deadline_leaves_the_input_unchecked_and_nothing_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The deadline covers the whole run, reading included: at 0 nothing is read, nothing is decided.
    path = cluster(tmp_path, 3)
    report = simulate([str(path)], SimulateOptions(deadline_seconds=0))
    assert report.pods == [] and report.validation.not_checked == 1
    [unread] = report.validation.objects
    assert unread.source == str(path)
    assert [v.rule for v in unread.violations] == ["input.not-checked", "input.not-checked"]
    assert "before this file was read" in unread.violations[0].message
    assert unread.violations[1].message.startswith("cross-object rules")
    assert report.exit_code == 3
    assert main(["simulate", "--deadline-seconds", "0", "-o", "json", str(path)]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["pods"] == [] and [o["source"] for o in out["notChecked"]] == [str(path)]
    assert main(["simulate", "--deadline-seconds", "60", "-o", "json", str(path)]) == 0
    assert "notChecked" not in json.loads(capsys.readouterr().out)


# --- engine failures ------------------------------------------------------------------------------


def test_an_engine_failure_is_reported_on_its_pod_and_the_next_pods_are_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = cluster(tmp_path, 3)
    original = SelectorEvaluator.matches
    calls = {"n": 0}

    def fails_once(self: Any, *args: Any) -> bool:
        if args[1][0] == "lint":  # the selector lint of the validation, before any Pod
            return original(self, *args)
        calls["n"] += 1
        if calls["n"] == 1:
            raise MemoryError()
        return original(self, *args)

    monkeypatch.setattr(SelectorEvaluator, "matches", fails_once)
    report = simulate([str(path)])
    first, *rest, unused = report.pods
    assert first.feasible is None and first.internal == "MemoryError"
    assert first.reason.startswith("internal error: draguard failed on Pod default/p0 (MemoryError)")
    assert [p.feasible for p in rest] == [True, True]
    assert unused.pod is None and unused.feasible is True  # claim "c", which no Pod uses, after the Pods
    assert report.exit_code == 1  # an internal error is an error, never "undecided"
    findings = feasibility_violations(first)
    assert [(s.kind, s.name, v.rule) for s, v in findings] == [("Pod", "p0", "internal.engine-crash")]

    calls["n"] = 0
    assert main(["validate", "--feasibility", "-o", "json", str(path)]) == 1
    objects = json.loads(capsys.readouterr().out)["objects"]
    rules = {(o["name"], v["rule"]) for o in objects for v in o["violations"]}
    assert ("p0", "internal.engine-crash") in rules
    assert not any(name in ("p1", "p2") for name, _ in rules)


# --- numbers the API server cannot decode ---------------------------------------------------------


def test_unparsable_quantities_and_out_of_range_integers_are_decode_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hostile.write_bad_numbers(tmp_path)
    assert main(["validate", "-o", "json", str(path)]) == 1
    objects = json.loads(capsys.readouterr().out)["objects"]
    found = {(o["name"], v["rule"], v["field"]): v["message"] for o in objects for v in o["violations"]}
    regex = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    for i, q in enumerate(hostile.BAD_QUANTITIES):
        key = ("bad", "schema.quantity", f"spec.devices[{i}].capacity[memory].value")
        assert key in found, (q, sorted(found))
        suffix = ("1e9223372036854775808", "5iK", "--1", "1e")
        expected = "unable to parse quantity's suffix" if q in suffix else regex
        assert found[key] == f"Invalid value: {json.dumps(q)}: {expected}"
    assert found[("bad", "schema.integer-range", "spec.pool.generation")] == (
        "Invalid value: 9223372036854775808: json: cannot unmarshal number 9223372036854775808 into Go "
        "struct field ResourcePool.spec.pool.generation of type int64"
    )
    assert found[("bad", "schema.integer-range", "spec.devices[9].attributes[n].int")].endswith(
        "into Go struct field DeviceAttribute.spec.devices.attributes.int of type int64"
    )
    assert ("bad", "schema.integer-range", "spec.devices.requests[0].exactly.count") in found
    assert ("bad", "schema.quantity", "spec.devices.requests[0].exactly.capacity.requests[m]") in found


INT32_POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  priority: 2147483648
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers:
  - name: c
    image: busybox
    ports: [{containerPort: 2147483647}, {containerPort: -2147483649}]
    resources: {limits: {memory: 1Gi, cpu: "1x"}, claims: [{name: gpu}]}
"""


def test_int32_pod_fields_and_resource_quantities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(INT32_POD)
    assert main(["validate", "-o", "json", str(f)]) == 1
    violations = json.loads(capsys.readouterr().out)["objects"][0]["violations"]
    got = {(v["rule"], v["field"]) for v in violations}
    assert got == {
        ("schema.integer-range", "spec.priority"),
        ("schema.integer-range", "spec.containers[0].ports[1].containerPort"),
        ("schema.quantity", "spec.containers[0].resources.limits[cpu]"),
    }
    ports = next(v for v in violations if v["field"].endswith("containerPort"))
    assert ports["message"].endswith(
        "into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"
    )


UNQUOTED_HUGE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices:
  - name: d0
    capacity:
      memory: {value: 1e9999}
      tiny: {value: .inf}
"""


def test_an_unquoted_quantity_beyond_float64_is_the_string_kubectl_sends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # go-yaml (kubectl) cannot read 1e9999 as a float64 and keeps the text: ParseQuantity accepts it.
    # `.inf` is a YAML float (+Inf), which no quantity can be.
    f = tmp_path / "huge.yaml"
    f.write_text(UNQUOTED_HUGE)
    assert main(["validate", "-o", "json", str(f)]) == 1
    violations = json.loads(capsys.readouterr().out)["objects"][0]["violations"]
    assert [(v["rule"], v["field"]) for v in violations] == [
        ("schema.quantity", "spec.devices[0].capacity[tiny].value")
    ]
