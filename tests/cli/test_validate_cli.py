"""`draguard validate` end to end: real files, every output format, exit codes."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests import forkrun

ROOT = Path(__file__).resolve().parents[2]

GOOD_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpus
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
"""

BAD_SLICE = """\
# a slice with two node selections and a bad device name
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: broken
spec:
  driver: gpu.example.com
  nodeName: node-1
  allNodes: true
  pool: {name: broken, generation: 1, resourceSliceCount: 1}
  devices:
  - name: GPU_0
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return forkrun.run(args, cwd=ROOT, input=stdin)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "good.yaml").write_text(GOOD_SLICE)
    sub = tmp_path / "nested" / "deeper"
    sub.mkdir(parents=True)
    (sub / "bad.yml").write_text(
        "---\n"
        + GOOD_SLICE.replace("node-1-gpus", "other").replace("{name: node-1,", "{name: other,")
        + "---\n"
        + BAD_SLICE
    )
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    return tmp_path


def test_text_format_is_compiler_style_with_the_line_of_each_field(tree: Path) -> None:
    p = run("validate", "-j", "2", str(tree))
    assert p.returncode == 1, p.stderr
    bad = tree / "nested" / "deeper" / "bad.yml"
    text = bad.read_text().splitlines()
    second = text.index("---", 1)  # the broken document follows the second `---`
    spec_line = text.index("spec:", second) + 1
    name_line = text.index("  - name: GPU_0", second) + 1
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(str(bad))]
    # each finding points at its field: `spec` (two node selections) and the device's name
    assert any(ln.startswith(f"{bad}:{spec_line}: error ") and ": spec: " in ln for ln in lines), p.stdout
    assert any(
        ln.startswith(f"{bad}:{name_line}: error ") and "spec.devices[0].name" in ln for ln in lines
    ), p.stdout
    assert "notes.txt" not in p.stdout


def test_json_shape_and_summary(tree: Path) -> None:
    p = run("validate", "--format", "json", str(tree))
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert set(out) == {"objects", "summary"}
    assert out["summary"]["objects"] == 3
    assert out["summary"]["skipped"] == 1
    assert out["summary"]["errors"] >= 2
    for o in out["objects"]:
        assert set(o) == {"source", "line", "apiVersion", "kind", "namespace", "name", "violations"}
        for v in o["violations"]:
            assert set(v) == {"rule", "severity", "field", "message", "line"}  # line: of the field
    broken = next(o for o in out["objects"] if o["name"] == "broken")
    assert broken["kind"] == "ResourceSlice" and broken["line"] > 1
    fields = {v["field"] for v in broken["violations"] if v["severity"] == "error"}
    assert {"spec", "spec.devices[0].name"} <= fields


def test_clean_input_exits_zero(tmp_path: Path) -> None:
    f = tmp_path / "good.yaml"
    f.write_text(GOOD_SLICE)
    p = run("validate", "--summary", str(f))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Summary: 1 objects checked, 0 errors" in p.stdout


def test_junit_parses_as_xml(tree: Path) -> None:
    p = run("validate", "-o", "junit", str(tree))
    root = ET.fromstring(p.stdout)
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 3
    failures = root.findall("./testsuite/testcase/failure")
    assert len(failures) == 1 and "spec.devices[0].name" in (failures[0].text or "")


def test_sarif_2_1_0_shape(tree: Path) -> None:
    p = run("validate", "--format", "sarif", str(tree))
    doc = json.loads(p.stdout)
    assert doc["version"] == "2.1.0"
    (run_,) = doc["runs"]
    rules = run_["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert run_["tool"]["driver"]["name"] == "draguard"
    for res in run_["results"]:
        assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith((".yaml", ".yml"))
        assert loc["region"]["startLine"] >= 1
    assert any(r["level"] == "error" for r in run_["results"])


def test_stdin(tmp_path: Path) -> None:
    p = run("validate", "-o", "json", "-", stdin=BAD_SLICE)
    assert p.returncode == 1
    (o,) = json.loads(p.stdout)["objects"]
    assert o["source"] == "<stdin>"


def test_broken_yaml_is_an_error_at_its_line_and_other_files_still_checked(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: [unclosed\n")
    (tmp_path / "b.yaml").write_text(BAD_SLICE)
    p = run("validate", "-o", "json", str(tmp_path))
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    objs = json.loads(p.stdout)["objects"]
    parse = [o for o in objs if any(v["rule"] == "input.parse" for v in o["violations"])]
    assert len(parse) == 1 and parse[0]["source"].endswith("a.yaml") and parse[0]["line"] == 3
    assert any(o["name"] == "broken" for o in objs)


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "/no/such/path.yaml"),
        ("validate", "--k8s-version", "1.20", "x.yaml"),
        ("validate", "--feature-gates", "NoSuchGate=true", "examples"),
        ("validate", "--feature-gates", "DRAAdminAccess=false", "examples"),
        ("validate", "--feature-gates", "garbage", "examples"),
        ("validate",),
        ("frobnicate",),
    ],
)
def test_usage_errors_exit_2_without_traceback(args: tuple[str, ...]) -> None:
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "error" in p.stderr


def test_policy_disables_and_regrades(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(BAD_SLICE)
    first = json.loads(run("validate", "-o", "json", str(f)).stdout)["objects"][0]["violations"]
    rule = next(v["rule"] for v in first if v["field"] == "spec")
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"rules:\n  {rule}: off\n")
    after = json.loads(run("validate", "-o", "json", "--policy", str(policy), str(f)).stdout)
    assert all(v["rule"] != rule for v in after["objects"][0]["violations"])
    policy.write_text(f"rules:\n  {rule}: warning\n")
    after = json.loads(run("validate", "-o", "json", "--policy", str(policy), str(f)).stdout)
    assert {v["severity"] for v in after["objects"][0]["violations"] if v["rule"] == rule} == {"warning"}
    policy.write_text("rules:\n  no.such.rule: off\n")
    p = run("validate", "--policy", str(policy), str(f))
    assert p.returncode == 2 and "no.such.rule" in p.stderr


def test_skip_kinds_are_counted(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(BAD_SLICE)
    out = json.loads(run("validate", "-o", "json", "--skip", "ResourceSlice", str(f)).stdout)
    assert out["summary"] == {"objects": 0, "errors": 0, "warnings": 0, "info": 0, "skipped": 1}


def test_yaml11_boolean_gets_a_quote_hint(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(GOOD_SLICE.replace("model: {string: A100}", "model: {string: y}"))
    out = json.loads(run("validate", "-o", "json", str(f)).stdout)
    (v,) = [v for v in out["objects"][0]["violations"] if v["severity"] == "error"]
    assert v["field"] == "spec.devices[0].attributes[model].string"
    assert "quote" in v["message"]


def test_examples_validate_clean() -> None:
    p = run("validate", "--summary", "examples")
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 errors" in p.stdout


def test_the_rule_page_is_what_draguard_rules_prints() -> None:
    """docs/rules.md's table is `draguard rules -o markdown` with an anchor opening each row."""
    table = run("rules", "-o", "markdown").stdout
    page = (ROOT / "docs" / "rules.md").read_text()
    body = page.split("<!-- rules:begin -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert re.sub(r'<a id="[^"]+"></a>', "", body) == table, "stale: run `python -m webhook.cli.readme`"


def test_strip_emits_the_stored_object_and_reports_drops() -> None:
    p = run("strip", "examples/compatibility-groups.yaml")
    assert p.returncode == 0, p.stderr
    import yaml

    docs = list(yaml.safe_load_all(p.stdout))
    devices = docs[1]["spec"]["devices"]
    assert all("compatibilityGroups" not in c for d in devices for c in d["consumesCounters"])
    assert "spec.devices[1].consumesCounters[0].compatibilityGroups" in p.stderr
    kept = run(
        "strip", "--feature-gates", "DRADeviceCompatibilityGroups=true", "examples/compatibility-groups.yaml"
    )
    assert list(yaml.safe_load_all(kept.stdout))[1]["spec"]["devices"][0]["consumesCounters"][0][
        "compatibilityGroups"
    ] == ["mig"]
    assert kept.stderr == ""


def test_a_file_that_is_not_utf8_is_an_error_on_that_file_only(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n")
    (tmp_path / "b.yaml").write_text(BAD_SLICE)
    p = run("validate", "-o", "json", str(tmp_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    objs = json.loads(p.stdout)["objects"]
    (bad,) = [o for o in objs if o["source"].endswith("latin1.yaml")]
    assert bad["violations"][0]["rule"] == "input.parse" and "UTF-8" in bad["violations"][0]["message"]
    assert any(o["name"] == "broken" for o in objs)
