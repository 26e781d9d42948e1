"""Only Kubernetes objects are findings (issue 15 §3), through the real `draguard` process: a repository
with a Helm chart, docker-compose, mkdocs, OpenAPI, tsconfig, a JSON array, a playbook and valid
manifests holding `{{ }}` / `${VAR}` in strings validates clean (tests/fixtures/repo-shapes); `--exclude`
leaves paths out; the single-template finding is kept; the other commands share the discovery."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cliproc import ROOT, draguard

SHAPES = "tests/fixtures/repo-shapes"
CHART = f"{SHAPES}/charts/gpu-inference"
NOT_OBJECTS = (
    "draguard: info: 12 documents in 12 files are not Kubernetes objects (other tools' files: no apiVersion "
    "and kind, a list, a Helm Chart.yaml or index.yaml, a kind without apiVersion such as a "
    f"kustomization.yaml): skipped (the first: {SHAPES}/charts-repo/index.yaml:2)\n"
)


def test_a_repository_as_it_is_validates_clean_with_one_line_per_chart() -> None:
    p = draguard("validate", SHAPES, "--summary")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == (
        f"{CHART}/Chart.yaml:1: info input.helm-chart: a Helm chart: its templates/ (2 files) are not "
        "manifests until rendered and were not read; validate what it renders with "
        f"`helm template {CHART} | draguard validate -`\n"
        "Summary: 3 objects checked, 0 errors, 0 warnings, 1 info, 14 skipped (12 not Kubernetes objects)\n"
    )
    assert p.stderr == NOT_OBJECTS  # one line for the run, not one per file


def test_json_counts_what_was_skipped_and_lists_the_checked_objects() -> None:
    p = draguard("validate", SHAPES, "-o", "json")
    assert (p.returncode, p.stderr) == (0, "")  # the line about non-objects is for text output
    report = json.loads(p.stdout)
    # 12 non-objects (Chart.yaml, values.yaml, docker-compose, mkdocs, OpenAPI, tsconfig, the JSON array,
    # the playbook, the kustomization and kube-state-metrics' configuration, both a `kind` without
    # apiVersion, a Helm repository index and kwok's stage data, without metadata either) + the 2
    # ConfigMaps, valid whatever their data hold
    assert report["summary"] == {
        "objects": 3,
        "errors": 0,
        "warnings": 0,
        "info": 1,
        "skipped": 14,
        "notObjects": 12,
    }
    assert sorted((o["kind"], o["name"]) for o in report["objects"] if o["kind"]) == [
        ("DeviceClass", "gpu.example.com"),  # `${CI_PIPELINE_ID}` in an annotation: valid as written
        ("ResourceClaimTemplate", "inference-gpu"),  # the item of a List
    ]


def test_exclude_leaves_paths_out_unread_and_counts_them() -> None:
    p = draguard(
        "validate", SHAPES, "--exclude", "charts", "--exclude", "*.json", "--exclude", "./docs/", "-o", "json"
    )
    assert p.returncode == 0, p.stdout
    report = json.loads(p.stdout)
    # charts/ and docs/ once each, web/tsconfig.json and web/models.json: 4 paths; no chart finding; the
    # rest that are not objects: the compose file, mkdocs, the playbook, the kustomization, kube-state-metrics,
    # the chart repository's index, kwok's data
    assert report["summary"] == {
        "objects": 2,
        "errors": 0,
        "warnings": 0,
        "info": 0,
        "skipped": 9,
        "notObjects": 7,
        "excluded": 4,
    }


def test_a_file_that_does_not_parse_and_names_no_apiversion_or_kind_is_another_tools(tmp_path: Path) -> None:
    """A tsconfig.json with comments (argo-workflows' ui/), a broken CI configuration: not manifests, so
    skipped and counted, found in a directory or named (the pre-commit hook names the staged files); a
    manifest that does not parse stays the error, named or found."""
    web = tmp_path / "ui"
    web.mkdir()
    shutil.copy(ROOT / SHAPES / "web" / "tsconfig.json", web / "tsconfig.json")
    (tmp_path / "ci.yml").write_text("name: ci\non:\n  push:\n jobs: [\n")
    (tmp_path / "broken.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: {}\n"
    )
    found = draguard("validate", str(tmp_path), "--summary")
    assert found.returncode == 1, found.stdout + found.stderr
    assert found.stdout == (
        f"{tmp_path}/broken.yaml:5: error input.parse: YAML syntax error: while parsing a block mapping; "
        "did not find expected key\n"
        "Summary: 1 objects checked, 1 errors, 0 warnings, 0 info, 2 skipped (2 not Kubernetes objects)\n"
    )
    named = draguard("validate", "--summary", str(web / "tsconfig.json"), str(tmp_path / "ci.yml"))
    assert named.returncode == 0, named.stdout + named.stderr
    assert (
        named.stdout
        == "Summary: 0 objects checked, 0 errors, 0 warnings, 0 info, 2 skipped (2 not Kubernetes objects)\n"
    )
    assert "2 documents in 2 files are not Kubernetes objects" in named.stderr
    # refused at a bound of the reader (nesting past the limit), not for its syntax: an error all the same
    (tmp_path / "deep.json").write_text('{"a": ' * 12_000 + "1" + "}" * 12_000)  # MAX_DEPTH: 10,000
    deep = draguard("validate", str(tmp_path / "deep.json"))
    assert deep.returncode == 1 and "deep.json:1: error input.parse: " in deep.stdout, deep.stdout
    # with a `kind:` anywhere it could be a manifest: the syntax error is reported
    (tmp_path / "ci.yml").write_text("kind: Pod\nname: ci\n jobs: [\n")
    assert (
        "ci.yml:3: error input.parse: YAML syntax error"
        in draguard("validate", str(tmp_path / "ci.yml")).stdout
    )


def test_exclude_skips_a_broken_file_that_would_be_an_error(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "broken.yaml").write_text("kind: Pod\nmetadata: {name: p}\n")  # no apiVersion
    assert draguard("validate", str(tmp_path)).returncode == 1
    p = draguard("validate", str(tmp_path), "--exclude", "vendor", "--summary")
    assert (p.returncode, p.stdout) == (
        0,
        "Summary: 0 objects checked, 0 errors, 0 warnings, 0 info, 0 skipped, 1 path excluded (--exclude)\n",
    )


def test_a_single_template_passed_alone_keeps_its_finding() -> None:
    p = draguard("validate", f"{CHART}/templates/deployment.yaml")
    assert p.returncode == 1
    assert p.stdout == (
        f"{CHART}/templates/deployment.yaml:4: error input.template: this file is a Helm template "
        '({{ include "gpu-inference.fullname" . }} on line 4), not a manifest: render it first, e.g. '
        "`helm template RELEASE CHART | draguard validate -`; its document was not checked\n"
    )


def test_a_document_with_only_one_of_apiversion_and_kind_is_a_broken_manifest(tmp_path: Path) -> None:
    """...when it has metadata, as every object does; without it, it is another tool's file (a Helm
    repository's index.yaml, kwok's stage data)."""
    (tmp_path / "pod.yaml").write_text("kind: Pod\nmetadata: {name: p}\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nmetadata: {name: c}\ndata: {}\n")
    (tmp_path / "index.yaml").write_text("apiVersion: v1\nentries: {}\n")
    (tmp_path / "stage.yaml").write_text("kind: Node\napiGroup: v1\nname: n\n")
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1
    assert [ln.split(" ")[0] + " " + ln.split(" ")[2] for ln in p.stdout.splitlines()] == [
        f"{tmp_path / 'cm.yaml'}:1: input.kind:",
        f"{tmp_path / 'pod.yaml'}:1: input.kind:",
    ]
    assert "leave the file out with --exclude" in p.stdout
    assert p.stderr.startswith("draguard: info: 2 documents in 2 files are not Kubernetes objects")


def test_simulate_strip_and_convert_share_the_discovery(tmp_path: Path) -> None:
    sim = draguard("simulate", SHAPES, "--exclude", "deploy")
    assert (sim.returncode, sim.stdout) == (
        0,
        "nothing to simulate: the input has no Pods, workloads or unallocated ResourceClaims\n",
    )
    strip = draguard("strip", SHAPES)
    assert strip.returncode == 0, strip.stderr
    assert "replicaCount" not in strip.stdout and "compilerOptions" not in strip.stdout  # not objects
    assert "kind: DeviceClass" in strip.stdout and "inference-gpu" in strip.stdout
    assert strip.stderr.startswith(f"{CHART}/Chart.yaml:1: info input.helm-chart: ")
    assert "kind: DeviceClass" not in draguard("strip", SHAPES, "--exclude", "deviceclass.yaml").stdout
    conv = draguard("convert", "--stdout", SHAPES, "--exclude", "deploy", "--exclude", "charts")
    assert conv.returncode == 0, conv.stderr
    assert conv.stderr == "draguard convert: 0 objects in 0 of 9 files converted\n"


def test_convert_in_place_leaves_a_charts_templates_alone(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(ROOT / CHART, chart)
    template = chart / "templates" / "claim-template.yaml"
    template.write_text(template.read_text().replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1"))
    before = template.read_text()
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\nspec: {}\n"
    )
    p = draguard("convert", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert f"{chart / 'Chart.yaml'}: note: a Helm chart: its templates/ (2 files) were not read" in p.stderr
    assert "resource.k8s.io/v1\n" in (tmp_path / "class.yaml").read_text()  # converted
    assert template.read_text() == before  # a template is not rewritten


def test_a_kind_of_the_api_server_without_apiversion_is_still_a_broken_manifest(tmp_path: Path) -> None:
    """Only another tool's kind may leave apiVersion out (kustomize's, kube-state-metrics'): a DRA kind, a
    Pod or a list of them without one is a manifest kubectl rejects."""
    for n, kind in enumerate(("ResourceClaim", "Pod", "DeviceClassList", "Kustomization")):
        (tmp_path / f"{n}.yaml").write_text("kind: " + kind + "\nmetadata: {name: x}\n")
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1
    assert [ln.split(" [")[0] for ln in p.stdout.splitlines()] == [
        f"{tmp_path / f'{n}.yaml'}:1: error input.kind: apiVersion: Required value: every Kubernetes object "
        "needs apiVersion and kind (not a Kubernetes manifest? leave the file out with --exclude)"
        for n in range(3)
    ]
    assert "1 document is not a Kubernetes object" in p.stderr


def test_a_file_named_and_found_in_a_directory_is_read_once_as_named(tmp_path: Path) -> None:
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: Bad_Name}\nspec: {}\n"
    )
    p = draguard("validate", str(tmp_path), str(tmp_path / "class.yaml"), f"{tmp_path}/./class.yaml")
    assert p.returncode == 1
    assert len(p.stdout.splitlines()) == 1, p.stdout  # one finding, not three
