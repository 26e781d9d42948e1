"""Flags whose value would silently do nothing are usage errors (exit 2, one clear line, no traceback):
`--skip` with a kind draguard does not check (the closest known kind suggested), `-j 0` (leaving `-j`
out is what means "all usable cores")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cliproc import draguard

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: "Bad_Name"}]
"""


@pytest.fixture
def slice_file(tmp_path: Path) -> Path:
    f = tmp_path / "s.yaml"
    f.write_text(SLICE)
    return f


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("resourceslice", "did you mean ResourceSlice?"),
        ("ResourceSlise", "did you mean ResourceSlice?"),
        ("Pod,Deploymnt", "did you mean Deployment?"),
        ("Frobnicator", "--skip takes kinds draguard checks: ResourceSlice"),
    ],
)
def test_skip_with_an_unknown_kind_is_a_usage_error(slice_file: Path, value: str, hint: str) -> None:
    p = draguard("validate", "--skip", value, str(slice_file))
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert "argument --skip: unknown kind" in p.stderr and hint in p.stderr


def test_skip_with_known_kinds_skips_them(slice_file: Path) -> None:
    p = draguard("validate", "-o", "json", "--skip", "Pod, ResourceSlice", str(slice_file))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["summary"]["skipped"] == 1
    unset = draguard("validate", "--skip", "", str(slice_file))  # an empty variable: nothing skipped
    assert unset.returncode == 1 and "error device.name: spec.devices[0].name" in unset.stdout


@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_zero_jobs_is_a_usage_error_and_no_flag_means_every_core(slice_file: Path, command: str) -> None:
    p = draguard(command, "-j", "0", str(slice_file))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "argument -j/-n/--jobs: '0' is not a number of workers >= 1" in p.stderr
    default = draguard(command, "-o", "json", str(slice_file), str(slice_file))
    assert default.returncode == 1, default.stderr  # the slice's error, with the default workers
