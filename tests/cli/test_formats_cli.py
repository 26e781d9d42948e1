"""SARIF and JUnit as CI systems read them: every SARIF rule links to its row of the rule reference
(`helpUri`, absolute), relative inputs give relative URIs against `%SRCROOT%` (the directory draguard ran
in), absolute ones `file://` URIs; JUnit names a finding on no object (a parse error) by its file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree import ElementTree as ET

from tests import forkrun
from webhook.cli.formats import PROJECT_URL, RULES_DOC

ROOT = Path(__file__).resolve().parents[2]

BAD_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: "Bad_Name"}]
"""
BROKEN_JSON = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}}\n'


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return forkrun.run(args, cwd=cwd, env=env, timeout=300)


def inputs(tmp_path: Path) -> Path:
    d = tmp_path / "manifests"
    d.mkdir()
    (d / "slice.yaml").write_text(BAD_SLICE)
    (d / "broken.json").write_text(BROKEN_JSON)
    return d


def test_sarif_rules_link_to_their_row_of_the_rule_reference(tmp_path: Path) -> None:
    inputs(tmp_path)
    p = run(tmp_path, "validate", "-o", "sarif", "manifests")
    assert p.returncode == 1, p.stderr
    driver = json.loads(p.stdout)["runs"][0]["tool"]["driver"]
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {"device.name", "input.parse"}
    table = (ROOT / RULES_DOC).read_text()  # the rule reference the link points into
    for rid, rule in rules.items():
        uri = urlsplit(rule["helpUri"])
        assert uri.scheme == "https" and uri.netloc  # absolute, as SARIF 2.1.0 requires
        assert rule["helpUri"] == f"{PROJECT_URL}/blob/main/{RULES_DOC}#{rid}"
        assert f'<a id="{uri.fragment}"></a>`{rid}`' in table  # the anchor exists in the generated table


def test_sarif_uris_are_relative_to_srcroot_for_relative_inputs(tmp_path: Path) -> None:
    d = inputs(tmp_path)
    run_ = json.loads(run(tmp_path, "validate", "-o", "sarif", "manifests").stdout)["runs"][0]
    base = run_["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    assert unquote(urlsplit(base).path) == f"{tmp_path}/"
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run_["results"]]
    assert {loc["uri"] for loc in locations} == {"manifests/slice.yaml", "manifests/broken.json"}
    for loc in locations:
        assert loc["uriBaseId"] == "%SRCROOT%"
        assert Path(unquote(urlsplit(urljoin(base, loc["uri"])).path)).is_file()  # resolves to the input

    absolute = json.loads(run(tmp_path, "validate", "-o", "sarif", str(d)).stdout)["runs"][0]
    for r in absolute["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert "uriBaseId" not in loc and loc["uri"].startswith(f"file://{tmp_path}/manifests/")


def test_sarif_and_junit_name_a_finding_on_no_object_by_its_file(tmp_path: Path) -> None:
    inputs(tmp_path)
    sarif = json.loads(run(tmp_path, "validate", "-o", "sarif", "manifests").stdout)["runs"][0]
    (parse,) = [r for r in sarif["results"] if r["ruleId"] == "input.parse"]
    assert "logicalLocations" not in parse["locations"][0]  # no "? ?" object

    junit = ET.fromstring(run(tmp_path, "validate", "-o", "junit", "manifests").stdout)
    names = {c.get("classname"): c.get("name") for c in junit.iter("testcase")}
    assert names == {
        "manifests/broken.json": "manifests/broken.json (line 1)",
        "manifests/slice.yaml": "ResourceSlice s (line 1)",
    }
    failures = {f.text for f in junit.iter("failure")}
    assert any(t and t.startswith("line 1: input.parse: JSON syntax error") for t in failures), failures
    assert not any("?" in (n or "") for n in names.values())
