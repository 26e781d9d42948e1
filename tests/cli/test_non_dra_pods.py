"""A Pod that uses no DRA is not a DRA object, as a workload whose template uses none: `validate` skips and
counts it (a repository's test fixtures, an operator's assets with placeholders), `simulate` still
counts a valid one where it runs and leaves an invalid one out without a word. The same Pod with a
claim is checked in full."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cliproc import draguard

# a policy engine's test resource: no container name, no namespace, nothing of DRA
FIXTURE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: good-pod
spec:
  containers:
  - image: nginx
"""

WITH_A_CLAIM = """\
apiVersion: v1
kind: Pod
metadata:
  name: good-pod
  namespace: ml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimName: gpu
  containers:
  - image: nginx
    resources:
      claims:
      - name: gpu
"""

CLUSTER = Path(__file__).resolve().parents[1] / "simulate" / "manifests" / "placement" / "cluster.yaml"


def test_a_pod_that_uses_no_dra_is_skipped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(FIXTURE_POD)
    p = draguard("validate", "--summary", str(tmp_path))
    assert (p.returncode, p.stdout) == (
        0,
        "Summary: 0 objects checked, 0 errors, 0 warnings, 0 info, 1 skipped\n",
    ), p.stdout + p.stderr
    p = draguard("simulate", "-o", "json", str(CLUSTER), str(tmp_path / "pod.yaml"))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["invalid"] == []  # not reported as left out: not a DRA object


def test_the_same_pod_with_a_claim_is_checked_in_full(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(WITH_A_CLAIM)
    p = draguard("validate", "-o", "json", "--no-feasibility", str(tmp_path))
    assert p.returncode == 1, p.stdout
    [obj] = json.loads(p.stdout)["objects"]
    found = {(v["rule"], v["field"]) for v in obj["violations"] if v["severity"] == "error"}
    assert found == {("schema.required", "spec.containers[0].name")}
