"""The scale benchmark's cluster is one a v1.37 API server would hold: `draguard validate` and `simulate`
on a small one find no error or warning, and a claim of the request mix fits (an earlier version put 72
devices consuming counters in one slice, more than the API server takes: offline, that slice was left out
and every pool incomplete, while the server fed by the stand-in, which does not validate, held it)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from tests.cliproc import ROOT, draguard

sys.path.insert(0, str(ROOT / "bench"))

import engine_bench as eb  # noqa: E402
import scale_bench as sb  # noqa: E402


def test_the_cluster_is_valid_and_a_claim_of_the_mix_fits(tmp_path: Path) -> None:
    objs = sb.cluster(3)
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    assert [len(o["spec"].get("devices") or []) for o in slices[:3]] == [0, 64, 0]  # counters, partitions
    assert sum(len(o["spec"].get("devices") or []) for o in slices) == 3 * 72
    probe = eb.claim_for("probe", "gpu", None, 1)
    probe["metadata"]["namespace"] = "bench"
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*objs, probe]))
    p = draguard("validate", str(path))
    assert p.returncode == 0, p.stdout
    assert not [ln for ln in p.stdout.splitlines() if " error " in ln or " warning " in ln], p.stdout
    p = draguard("simulate", str(path))
    assert "ResourceClaim bench/probe (no Pod in the input uses it): feasible now" in p.stdout, p.stdout
