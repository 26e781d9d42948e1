"""`draguard test`: the bundled policy tests pass (run as CI runs them: a real `draguard` process), a wrong
expectation fails with what differs (exit 1), a bad test file is a usage error naming file, line and field
(exit 2), and the JUnit and JSON outputs read back."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from webhook.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "deploy" / "examples" / "policies"
STRICT = BUNDLED / "strict-slices"


def _expectations(folder: Path) -> int:
    """The cases a folder's test files declare: one per rule result or patched object, per resource."""
    n = 0
    for test in folder.rglob("draguard-test.yaml"):
        for entry in yaml.safe_load(test.read_text())["results"]:
            resources = entry.get("resources") or [entry["resource"]]
            n += len(resources) * (("rule" in entry) + ("patchedResource" in entry))
    return n


def _copy(tmp_path: Path) -> Path:
    where = tmp_path / "strict-slices"
    shutil.copytree(STRICT, where)
    return where


def test_the_bundled_policy_tests_pass_in_a_real_process(tmp_path: Path) -> None:
    """What CI runs (.ci/run runs pytest): every shipped policy test, a real `draguard` process."""
    junit = tmp_path / "junit.xml"
    p = subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "test", "--junit", str(junit), "deploy/examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    expected = _expectations(BUNDLED)
    assert expected >= 15
    assert p.stdout.splitlines()[-1] == f"draguard test: {expected} passed, 0 failed"
    suites = ET.parse(junit).getroot()
    cases = suites.findall("./testsuite/testcase")
    assert len(cases) == expected == int(suites.get("tests", "-1"))
    assert suites.get("failures") == "0" and not suites.findall(".//failure")
    cookbook = {"shared-gpus", "prod-dedicated", "ci-claims-only", "admin-access", "audit-first"}
    assert {s.get("name") for s in suites.findall("testsuite")} == {
        "platform-defaults",
        "strict-slices",
    } | cookbook


def test_a_wrong_result_fails_with_expected_and_actual(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    test = where / "draguard-test.yaml"
    text = test.read_text()
    wrong = text.replace(
        "  rule: skew.dropped-field              # a warning by default; an error here\n  result: fail",
        "  rule: skew.dropped-field\n  result: warn",
    )
    assert wrong != text
    test.write_text(wrong)
    junit = tmp_path / "out.xml"
    assert main(["test", "--junit", str(junit), str(where)]) == 1
    out = capsys.readouterr().out
    line = wrong.splitlines().index("- resource: ResourceSlice/gpu-devices") + 1
    assert (
        f"FAIL  ResourceSlice/gpu-devices skew.dropped-field: expected warn, got fail ({test}:{line})" in out
    )
    assert "error skew.dropped-field: spec.devices[0].consumesCounters[0].compatibilityGroups: dropped" in out
    assert out.splitlines()[-1] == f"draguard test: {_expectations(where) - 1} passed, 1 failed"
    (failure,) = ET.parse(junit).getroot().findall(".//failure")
    assert failure.get("message") == "expected warn, got fail"


def test_a_wrong_patched_resource_fails_with_a_unified_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    patched = where / "patched.yaml"
    patched.write_text(
        patched.read_text().replace(
            "memory: {value: 4Gi}", "memory: {value: 4Gi}\n      compatibilityGroups: [mig]"
        )
    )
    assert main(["test", "-o", "json", str(where)]) == 1
    out = json.loads(capsys.readouterr().out)
    (bad,) = [c for t in out["tests"] for c in t["results"] if not c["ok"]]
    assert (bad["resource"], bad["rule"], bad["expected"], bad["actual"]) == (
        "ResourceSlice/gpu-devices",
        "patchedResource",
        "patched.yaml",
        "patched",
    )
    diff = bad["diff"].splitlines()
    assert diff[:2] == ["--- expected (patched.yaml)", "+++ actual"]
    # keys sorted: the expected object has the field the webhook drops, the actual one has not
    assert [d for d in diff[3:] if d[:1] in "+-"] == [
        "-    - compatibilityGroups:",
        "-      - mig",
        "-      counterSet: gpu-0-memory",
        "+    - counterSet: gpu-0-memory",
    ]
    assert out["summary"] == {"passed": _expectations(where) - 1, "failed": 1, "errors": 0}


def test_a_patched_resource_that_is_not_yaml_names_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CEL expression left unquoted in a flow mapping (`{expression: a["b"]}`) is a YAML error: said
    at the patched file's line, and at the test file's entry, not as "holds no object"."""
    where = _copy(tmp_path)
    patched = where / "patched.yaml"
    lines = patched.read_text().splitlines()
    lines.insert(3, 'bad: {expression: device.attributes["x"].y}')
    patched.write_text("\n".join(lines) + "\n")
    assert main(["test", str(where)]) == 2
    err = capsys.readouterr().err
    test_file = where / "draguard-test.yaml"
    entry = next(
        i + 1
        for i, line in enumerate(test_file.read_text().splitlines())
        if "patchedResource: patched.yaml" in line
    )
    assert f"{test_file}:{entry - 1}: results[1].patchedResource: {patched}:4: not valid YAML:" in err
    assert "Traceback" not in err


BROKEN = """\
apiVersion: cli.draguard.io/v1alpha1
kind: Test
metadata: {name: broken}
policies: [policy.yaml]
resourcs: [resources.yaml]
results:
- resource: ResourceSlice/gpu-devices
  rule: skew.droped-field
  result: fail
- resource: ResourceSlice/worker/gpu-devices
  rule: skew.dropped-field
  result: fail
"""


def test_a_bad_test_file_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    test = where / "draguard-test.yaml"
    test.write_text(BROKEN)
    assert main(["test", str(where)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{test}:5: resourcs: unknown field \"resourcs\" (did you mean 'resources'?)" in err
    assert (
        f"{test}:8: results[0].rule: Unsupported value: 'skew.droped-field': no such rule id (did you mean 'skew.dropped-field'?)"
        in err
    )
    assert (
        f"{test}:10: results[1].resource: Invalid value: 'ResourceSlice/worker/gpu-devices': a ResourceSlice has no namespace"
        in err
    )


def test_a_resource_not_among_the_objects_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    test = where / "draguard-test.yaml"
    test.write_text(
        test.read_text().replace(
            "- resource: ResourceSlice/nic-devices", "- resource: ResourceSlice/nic-device"
        )
    )
    assert main(["test", str(where)]) == 2
    err = capsys.readouterr().err
    assert (
        "results[3].resource: Not found: 'ResourceSlice/nic-device' is not among the objects of resources (did you mean 'ResourceSlice/nic-devices'?)"
        in err
    )


def test_an_invalid_policy_is_a_usage_error_at_its_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    (where / "policy.yaml").write_text("rules:\n  skew.dropped-field: fatal\n")
    assert main(["test", str(where)]) == 2
    err = capsys.readouterr().err
    assert f"{where / 'draguard-test.yaml'}:7: policies[0]:" in err
    assert "skew.dropped-field" in err and "fatal" in err


def test_discovery_finds_test_files_by_name_and_skips_hidden_directories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _copy(tmp_path)
    nested = tmp_path / "more" / "deeper"
    nested.mkdir(parents=True)
    (where / "draguard-test.yaml").rename(nested / "slices.draguard-test.yaml")
    text = (
        (nested / "slices.draguard-test.yaml")
        .read_text()
        .replace(": policy.yaml", ": ../../strict-slices/policy.yaml")
    )
    for name in ("policy.yaml", "resources.yaml", "patched.yaml", "gpu-counters.yaml"):
        text = text.replace(f"- {name}", f"- ../../strict-slices/{name}").replace(
            f"patchedResource: {name}", f"patchedResource: ../../strict-slices/{name}"
        )
    (nested / "slices.draguard-test.yaml").write_text(text)
    hidden = tmp_path / ".git"
    hidden.mkdir()
    (hidden / "draguard-test.yaml").write_text(BROKEN)  # never read
    (tmp_path / "other.yaml").write_text(BROKEN)  # not a test file's name
    assert main(["test", "--fail-only", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{nested / 'slices.draguard-test.yaml'}: strict-slices: {_expectations(STRICT)}/{_expectations(STRICT)} passed",
        f"draguard test: {_expectations(STRICT)} passed, 0 failed",
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["test", str(empty)]) == 2
    assert "no test files under" in capsys.readouterr().err
