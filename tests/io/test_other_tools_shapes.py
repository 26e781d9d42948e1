"""Files of other tools met in public repositories (istio's, rook's, VS Code's) that are no Kubernetes objects,
named on the command line as the pre-commit hook names staged files: skipped and counted, exit 0 — while
the same shapes holding manifests keep their findings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cliproc import draguard


def _run(path: Path) -> tuple[int, str, str]:
    p = draguard("validate", str(path))
    return p.returncode, p.stdout, p.stderr


def test_a_template_that_names_no_apiversion_or_kind_is_another_tools(tmp_path: Path) -> None:
    bootstrap = tmp_path / "envoy_bootstrap.json"  # an Envoy bootstrap a program fills in
    bootstrap.write_text(
        '{\n  "node": {\n    "id": "{{ .nodeID }}",\n    "cluster": "{{ .cluster }}"\n  }\n}\n'
    )
    config = tmp_path / "config.yaml"  # an operator's own configuration template
    config.write_text("namespacesToCheck: [default]\nhostCheckOnly: {{ .HostCheckOnly }}\n")
    extensions = tmp_path / "extensions.json"  # VS Code's JSON with comments
    extensions.write_text('{\n  // extension ids: ${publisher}.${name}\n  "recommendations": []\n}\n')
    for path in (bootstrap, config, extensions):
        code, out, err = _run(path)
        assert (code, out) == (0, ""), (path.name, out, err)
        assert "1 document is not a Kubernetes object" in err
    manifest = tmp_path / "claim.yaml"  # a template of a manifest names its kind: still a template
    manifest.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: {{ .Name }}\n"
    )
    code, out, _ = _run(manifest)
    assert code == 1 and " error input.template: " in out


def test_a_list_of_another_tools_items_with_a_kind_is_no_list_of_objects(tmp_path: Path) -> None:
    topology = tmp_path / "topology.json"  # istio's test topologies: items with a `kind` of their own
    topology.write_text(json.dumps([{"kind": "Kubernetes", "clusterName": "primary", "network": "n1"}]))
    code, out, err = _run(topology)
    assert (code, out) == (0, ""), out + err
    objects = tmp_path / "objects.json"  # a bare list of manifests: kubectl wants a List
    objects.write_text(json.dumps([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]))
    code, out, _ = _run(objects)
    assert code == 1 and "document is a list of Kubernetes objects" in out


def test_a_kind_left_empty_counts_as_absent(tmp_path: Path) -> None:
    notes = tmp_path / "template.yaml"  # istio's release-notes template: `kind:` with no value, no metadata
    notes.write_text("apiVersion: release-notes/v2\nkind:\narea: traffic-management\nreleaseNotes: []\n")
    code, out, err = _run(notes)
    assert (code, out) == (0, ""), out + err
    broken = tmp_path / "broken.yaml"  # with metadata it is a manifest missing its kind
    broken.write_text("apiVersion: resource.k8s.io/v1\nkind:\nmetadata:\n  name: x\n")
    code, out, _ = _run(broken)
    assert code == 1 and " error input.kind: " in out
