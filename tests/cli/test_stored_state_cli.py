"""Stored state is what the API server stored: a ResourceSlice a 1.36-built driver wrote (client-go: field
validation Warn) with `nodeAllocatableResourceMappings`, which 1.37 does not know, is kept without the
field, with a warning naming it, in `--cluster`, in simulate's cluster objects and in `serve --state`;
the same slice as a manifest a person applies (kubectl: Strict) is an error, as before."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.cliproc import draguard
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.server.loader import ManifestDirectory

SLICE = (Path(__file__).parent / "data" / "versions" / "slice-1.36-mappings.yaml").read_text()
FIELD = "spec.devices[0].nodeAllocatableResourceMappings"
WORKLOAD = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: cpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "cpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: cores, namespace: default}
spec:
  devices:
    requests:
    - name: cpu
      exactly: {deviceClassName: cpu}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """(a cluster dump holding the driver's slice, the input: a class and a claim it can serve)."""
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "resourceslices.yaml").write_text(SLICE)
    (tmp_path / "workload.yaml").write_text(WORKLOAD)
    return dump, tmp_path / "workload.yaml"


def test_a_manifest_with_the_field_is_still_an_error(files: tuple[Path, Path]) -> None:
    dump, _ = files
    p = draguard("validate", str(dump / "resourceslices.yaml"))
    assert p.returncode == 1
    assert f":13: error schema.unknown-field: {FIELD}: " in p.stdout


def test_cluster_dump_keeps_the_slice_without_the_field(files: tuple[Path, Path]) -> None:
    dump, workload = files
    p = draguard("validate", "--summary", "--feasibility", "--cluster", str(dump), str(workload))
    assert p.returncode == 0, p.stdout + p.stderr  # the claim is allocated from the slice: it was kept
    (warning,) = [line for line in p.stdout.splitlines() if "schema.unknown-field-dropped" in line]
    assert warning.startswith(
        f"{dump / 'resourceslices.yaml'}:13: warning schema.unknown-field-dropped: {FIELD}: "
    )
    assert "the object is kept, the field has no effect" in warning
    assert "error" not in p.stdout.replace("0 errors", "")


def test_simulate_keeps_its_cluster_objects_without_the_field(files: tuple[Path, Path]) -> None:
    dump, workload = files
    for args in ([str(dump), str(workload)], ["--cluster", str(dump), str(workload)]):
        p = draguard("simulate", *args)
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"resourceslices.yaml:13: warning schema.unknown-field-dropped: {FIELD}: " in p.stdout
        assert "feasible now (it fits on node node-a)" in p.stdout
        out = json.loads(draguard("simulate", "-o", "json", *args).stdout)
        assert out["invalid"] == [] and [c["feasible"] for c in out["pods"]] == [True]


def test_serve_state_directory_keeps_the_slice_and_logs_the_field(
    files: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    dump, _ = files
    state = ManifestDirectory(str(dump), Context(profile=load_profile("1.37"), lint=False))
    with caplog.at_level(logging.WARNING, logger="draguard.state"):
        result = state.scan()
    assert result.invalid_total == 0
    (obj,) = state.objects()
    assert obj["metadata"]["name"] == "cpu-node-a"
    assert obj["spec"]["devices"] == [{"name": "cpu-0", "capacity": {"cores": {"value": "8"}}}]
    (record,) = caplog.records
    assert (
        f"resourceslices.yaml:2: ResourceSlice cpu-node-a kept without a field: schema.unknown-field-dropped: {FIELD}: "
        in (record.getMessage())
    )


def test_a_duplicate_field_in_stored_state_is_a_warning_and_the_last_value_counts() -> None:
    from webhook.validate import check_file_text
    from webhook.validate.clusterinput import stored_context

    text = WORKLOAD.split("---\n")[0].replace("  selectors:\n", "  selectors: []\n  selectors:\n")
    manifest = check_file_text(text, "class.yaml", Context())
    stored = check_file_text(text, "class.yaml", stored_context(Context()))
    assert [(v.rule, v.severity.value) for v in manifest.objects[0].violations] == [
        ("input.duplicate-key", "error")
    ]
    (v,) = stored.objects[0].violations
    assert (v.rule, v.severity.value, v.field) == ("input.duplicate-key", "warning", "spec.selectors")
    assert v.message.endswith("the API server keeps the last value")
    assert stored.records[0] is not None and stored.facts[0].selectors[0].expression.startswith(
        "device.driver"
    )
