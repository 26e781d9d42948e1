"""`draguard.io/ignore` through the real `draguard` process (issue 15 §3): silenced findings are not shown
and are not errors for the exit code, JSON lists them as `suppressed`, SARIF keeps them with an inSource
suppression; a rule id draguard does not have is a warning at the annotation's line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.builders import claim, device_class, dump_yaml, request
from tests.cliproc import draguard

MANIFESTS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: Bad_Class
  annotations:
    draguard.io/ignore: "meta.name,feasibility.infeasible,no.such-rule"
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: Also_Bad
  annotations:
    draguard.io/ignore-all: "vendored, checked upstream"
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: Still_Bad
spec: {}
"""


def _write(tmp_path: Path) -> str:
    path = tmp_path / "classes.yaml"
    path.write_text(MANIFESTS)
    return str(path)


def test_text_shows_only_what_is_not_silenced_and_the_unknown_id(tmp_path: Path) -> None:
    path = _write(tmp_path)
    p = draguard("validate", path, "--summary")
    assert p.returncode == 1  # Still_Bad has no annotation
    lines = p.stdout.splitlines()
    assert [ln.split(" ", 3)[:3] for ln in lines[:-1]] == [
        [f"{path}:6:", "warning", "input.ignore-annotation:"],  # the line of the annotation
        [f"{path}:20:", "error", "meta.name:"],
    ]
    # feasibility.infeasible is a rule of `validate --feasibility` and `simulate`: known, no warning
    assert "draguard has no rule no.such-rule: this annotation silences nothing for it" in lines[0]
    assert lines[-1] == (
        "Summary: 3 objects checked, 1 errors, 1 warnings, 0 info, 0 skipped, 2 suppressed (draguard.io/ignore)"
    )


def test_silenced_errors_do_not_fail_the_run(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(MANIFESTS.split("---\n")[1])
    p = draguard("validate", str(tmp_path / "c.yaml"))
    assert (p.returncode, p.stdout) == (0, "")


def test_json_lists_the_suppressed_findings_of_each_object(tmp_path: Path) -> None:
    p = draguard("validate", _write(tmp_path), "-o", "json")
    report = json.loads(p.stdout)
    assert report["summary"]["suppressed"] == 2
    by_name = {o["name"]: o for o in report["objects"]}
    assert [(v["rule"], v["line"]) for v in by_name["Bad_Class"]["suppressed"]] == [("meta.name", 4)]
    assert [v["rule"] for v in by_name["Also_Bad"]["suppressed"]] == ["meta.name"]
    assert by_name["Also_Bad"]["violations"] == []
    assert "suppressed" not in by_name["Still_Bad"]


def test_sarif_keeps_suppressed_results_with_an_in_source_suppression(tmp_path: Path) -> None:
    p = draguard("validate", _write(tmp_path), "-o", "sarif")
    [run] = json.loads(p.stdout)["runs"]
    silenced = [r for r in run["results"] if "suppressions" in r]
    assert [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in silenced
    ] == [
        ("meta.name", 4),
        ("meta.name", 12),
    ]
    assert silenced[1]["suppressions"] == [
        {
            "kind": "inSource",
            "status": "accepted",
            "justification": "draguard.io/ignore-all: vendored, checked upstream",
        }
    ]
    shown = [r["ruleId"] for r in run["results"] if "suppressions" not in r]
    assert shown == ["input.ignore-annotation", "meta.name"]


def ml_claim(device_class: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """Claim ml/c for one device of `device_class`, with `annotations` if given."""
    c = claim("c", [request("gpu", device_class)], ns="ml")
    if annotations:
        c["metadata"]["annotations"] = annotations
    return c


def test_simulate_uses_an_object_whose_errors_are_silenced(tmp_path: Path) -> None:
    """A claim draguard rejects (`Bad_Class` is no valid class name) is left out of a simulation; with the
    rule silenced on the claim it is simulated (a false positive must not cost the simulation)."""
    (tmp_path / "claim.yaml").write_text(dump_yaml([ml_claim("Bad_Class")]))
    left_out = draguard("simulate", str(tmp_path / "claim.yaml"), "-o", "json")
    assert left_out.returncode == 1 and json.loads(left_out.stdout)["invalid"], left_out.stdout
    ann = {"draguard.io/ignore": "claim.device-class-name"}
    (tmp_path / "claim.yaml").write_text(dump_yaml([ml_claim("Bad_Class", ann)]))
    used = draguard("simulate", str(tmp_path / "claim.yaml"), "-o", "json")
    out = json.loads(used.stdout)
    assert not out["invalid"] and out["pods"], used.stdout  # simulated (and infeasible: no class, no slice)


def test_validate_feasibility_silences_a_feasibility_finding_named_on_the_object(tmp_path: Path) -> None:
    """`feasibility.*` findings are added after validation (webhook.offline.run): silenced too."""
    # the class exists and no device can ever serve it: unsatisfiable (a missing class is only busy)
    cls = device_class("gpu.example.com", 'device.driver == "gpu.example.com"')
    (tmp_path / "claim.yaml").write_text(dump_yaml([ml_claim("gpu.example.com"), cls]))
    plain = draguard("validate", "--feasibility", str(tmp_path / "claim.yaml"))
    assert plain.returncode == 1 and " error feasibility.infeasible: " in plain.stdout
    ann = {"draguard.io/ignore": "feasibility.infeasible"}
    (tmp_path / "claim.yaml").write_text(dump_yaml([ml_claim("gpu.example.com", ann), cls]))
    p = draguard("validate", "--feasibility", str(tmp_path / "claim.yaml"), "-o", "json")
    assert p.returncode == 0, p.stdout
    [o] = [o for o in json.loads(p.stdout)["objects"] if o["kind"] == "ResourceClaim"]
    assert [v["rule"] for v in o["suppressed"]] == ["feasibility.infeasible"] and o["violations"] == []
