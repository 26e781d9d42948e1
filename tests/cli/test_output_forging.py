"""Output that input cannot forge or break: one text line per finding whatever names and messages hold,
JUnit that is valid XML 1.0, SARIF locations that are valid percent-encoded URIs (spaces, `#`, `%`,
non-ASCII, names that are not UTF-8)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlsplit
from xml.etree import ElementTree as ET

import pytest

from tests import forkrun
from tests.hostile.inputs_io import forged_output
from webhook.cli.formats import artifact_uri
from webhook.model.text import one_line, xml_text

ROOT = Path(__file__).resolve().parents[2]
BAD_CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: Bad_Name, namespace: ns}\n"


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return forkrun.run(
        args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, text=False
    )  # timeout: a hang guard, not a speed check


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return forged_output(tmp_path_factory.mktemp("forged"))


# ASCII controls other than the line break itself, DEL, C1 controls, LS/PS, bidi controls
_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_text_output_is_one_line_per_finding(forged: Path) -> None:
    text = run("validate", str(forged))
    as_json = run("validate", "-o", "json", str(forged))
    findings = [v for o in json.loads(as_json.stdout)["objects"] for v in o["violations"]]
    out = text.stdout.decode("utf-8")
    lines = out.splitlines()
    assert len(findings) >= 6 and len(lines) == len(findings), out
    assert all(line.startswith(f"{forged}:") for line in lines), out
    assert not _RAW.search(out), out
    # the injected text is there, visibly escaped
    assert "\\nforged.yaml:1: error fake.rule: injected\\r\\x1b[2J" in out


def test_simulate_and_strip_text_stay_one_line_per_finding(forged: Path) -> None:
    sim = run("simulate", str(forged)).stdout.decode("utf-8")
    findings, rest = sim.split("1 object(s) with validation errors were left out", 1)
    assert not _RAW.search(sim) and len(findings.splitlines()) >= 6, sim
    assert all(line.startswith(f"{forged}:") for line in findings.splitlines()), sim
    strip = run("strip", str(forged))
    assert strip.returncode == 0 and not _RAW.search(strip.stderr.decode("utf-8"))


def test_junit_is_valid_xml_whatever_the_input(forged: Path) -> None:
    p = run("validate", "-o", "junit", str(forged))
    root = ET.fromstring(p.stdout)  # a parser error would fail here
    failure = root.find(".//failure")
    assert failure is not None and failure.text is not None
    assert "\\x1b[2J" in failure.text and "\\ufffe" in failure.text
    assert len(failure.text.splitlines()) == int(failure.get("message", "0").split()[0])


@pytest.mark.parametrize("name", ["a b#c%d é.yaml", "naïve?x=1&y.yaml", "C:colon.yaml"])
def test_sarif_uris_are_percent_encoded(tmp_path: Path, name: str) -> None:
    d = tmp_path / "dir with space"
    d.mkdir()
    f = d / name
    f.write_text(BAD_CLAIM)
    for target in (str(f), os.path.relpath(f, ROOT)):
        p = run("validate", "-o", "sarif", target)
        doc = json.loads(p.stdout)
        uris = {
            loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]
            for loc in r["locations"]
        }
        assert len(uris) == 1
        uri = uris.pop()
        assert re.fullmatch(r"[A-Za-z0-9\-._~%!$&'()*+,;=:@/]+", uri), uri  # only URI characters
        parts = urlsplit(uri)
        assert parts.fragment == "" and parts.query == ""
        if os.path.isabs(target):
            assert parts.scheme == "file" and unquote_to_bytes(parts.path) == os.fsencode(target)
        else:
            assert parts.scheme == "" and unquote_to_bytes(uri) == os.fsencode(target)


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/bad-\xff-name.yaml"
    with open(raw, "w") as f:
        f.write(BAD_CLAIM)
    text = run("validate", str(tmp_path)).stdout.decode("utf-8")
    assert "bad-\\xff-name.yaml:3: error meta.name" in text  # the line of metadata.name
    sarif = json.loads(run("validate", "-o", "sarif", str(tmp_path)).stdout)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("/bad-%FF-name.yaml")
    ET.fromstring(run("validate", "-o", "junit", str(tmp_path)).stdout)


def test_escapers() -> None:
    assert (
        one_line("a\nb\r\tc\x1b\x85\u2028\u202e\udcff\ud800")
        == "a\\nb\\r\\tc\\x1b\\x85\\u2028\\u202e\\xff\\ud800"
    )
    assert one_line("plain é 日本 \\n") == "plain é 日本 \\n"
    assert xml_text("a\x00b\ufffe\ufffdc\n") == "a\\x00b\\ufffe\ufffdc\n"
    assert artifact_uri("<stdin>") == "%3Cstdin%3E"
    assert artifact_uri("/x/a b.yaml") == "file:///x/a%20b.yaml"
