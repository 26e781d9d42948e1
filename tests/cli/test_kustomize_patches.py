"""A kustomization's patches are parts of objects until `kubectl kustomize` builds them into their targets:
found in a directory they are not read (one info line per kustomization names the command to run);
named on the command line (staged for the pre-commit hook) a patch is checked as an object."""

from __future__ import annotations

import json
from pathlib import Path

from tests import builders as b
from tests.cliproc import draguard

BASE = [
    b.device_class("gpu.example.com", 'device.driver == "gpu.example.com"'),
    b.claim("single-gpu", [b.request("gpu", "gpu.example.com")], ns="ml", kind="ResourceClaimTemplate"),
]
# a strategic-merge patch deleting the class, and one raising the request's count (no class of its own)
DELETE_CLASS = {**b.device_class("gpu.example.com"), "$patch": "delete"}
COUNT = b.claim(
    "single-gpu", [{"name": "gpu", "exactly": {"count": 4}}], ns="ml", kind="ResourceClaimTemplate"
)


def _repository(root: Path) -> None:
    b.write(root / "base", "objects.yaml", BASE)
    b.write(root / "base", "kustomization.yaml", "resources:\n- objects.yaml\n")
    b.write(root / "prod", "delete-class.yaml", [DELETE_CLASS])
    b.write(root / "prod", "count.yaml", [COUNT])
    b.write(
        root / "prod",
        "kustomization.yaml",
        "resources:\n- ../base\npatches:\n- path: delete-class.yaml\n- path: count.yaml\n- patch: |-\n    []\n",
    )
    b.write(root / "staging", "count.yaml", [COUNT])
    b.write(
        root / "staging",
        "kustomization.yaml",
        "resources:\n- ../base\npatchesStrategicMerge:\n- count.yaml\n",
    )


def test_patches_found_in_a_directory_are_not_read(tmp_path: Path) -> None:
    _repository(tmp_path)
    p = draguard("validate", "-o", "json", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    found = [
        (o["source"], v["rule"], v["severity"], v["message"])
        for o in json.loads(p.stdout)["objects"]
        for v in o["violations"]
    ]
    assert found == [
        (
            str(tmp_path / d / "kustomization.yaml"),
            "input.kustomize-patches",
            "info",
            f"a kustomization: its patches ({n}) are parts of objects until built and were not read; validate "
            f"what it builds with `kubectl kustomize {tmp_path / d} | draguard validate -`",
        )
        for d, n in (("prod", "2 files"), ("staging", "1 file"))
    ]
    p = draguard("simulate", "-o", "json", str(tmp_path))
    assert json.loads(p.stdout)["invalid"] == [], p.stdout  # the patches are no objects left out


def test_a_patch_named_on_the_command_line_is_checked_as_an_object(tmp_path: Path) -> None:
    _repository(tmp_path)
    p = draguard(
        "validate", str(tmp_path / "prod" / "count.yaml"), str(tmp_path / "prod" / "delete-class.yaml")
    )
    assert p.returncode == 1
    rules = {line.split(": ", 2)[1] for line in p.stdout.splitlines()}
    assert rules == {"error schema.required", "error schema.unknown-field"}, p.stdout
