"""`draguard taint preview RULE.yaml --cluster DIR` on real YAML files (tests/fixtures/taints/): the devices
a rule taints, the claims holding them, the Pods evicted at once, after their tolerationSeconds, or
tolerating it, as text and JSON; usage errors exit 2."""

from __future__ import annotations

import json

from tests.cliproc import ROOT, draguard

FIXTURES = ROOT / "tests" / "fixtures" / "taints"
CLUSTER = str(FIXTURES / "cluster")


def test_text_lists_devices_claims_and_pods() -> None:
    p = draguard(
        "taint", "preview", str(FIXTURES / "node-a-maintenance.yaml"), "--cluster", CLUSTER, "--list", "2"
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("DeviceTaintRule node-a-maintenance (NoExecute): taints 4 device(s); 3 allocated")
    assert "  gpu.example.com/node-a/gpu-1\n  ... and 2 more\n" in out
    assert "Pods evicted now: 1\n  ml/train-0: claim(s) train-0-gpu\n" in out
    assert (
        "Pods evicted after their tolerationSeconds: 1\n  ml/serve-0 (after 300s): claim(s) serve-0-gpu\n"
        in out
    )
    assert "Pods tolerating the taint: 1\n  ml/batch-0: claim(s) batch-0-gpu\n" in out
    assert "other-0" not in out  # node-b's


def test_json_for_an_empty_selector() -> None:
    p = draguard("taint", "preview", str(FIXTURES / "everything.yaml"), "--cluster", CLUSTER, "-o", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["everyDevice"] is True and out["selector"] == "empty"
    assert out["devices"]["count"] == 8
    assert out["counts"] == {
        "devices": 8,
        "claims": 4,
        "claimsEvicting": 3,
        "podsEvicted": 2,
        "podsDelayed": 1,
        "podsTolerating": 1,
    }
    assert [(x["name"], x["outcome"], x["seconds"]) for x in out["pods"]] == [
        ("batch-0", "tolerating", None),
        ("other-0", "evicted", 0),
        ("serve-0", "delayed", 300),
        ("train-0", "evicted", 0),
    ]


def test_usage_errors_exit_2() -> None:
    p = draguard("taint", "preview", str(FIXTURES / "policy.yaml"), "--cluster", CLUSTER)
    assert p.returncode == 2
    assert "expected one DeviceTaintRule, found 0" in p.stderr
    p = draguard("taint", "preview", str(FIXTURES / "no-such.yaml"), "--cluster", CLUSTER)
    assert p.returncode == 2
    p = draguard("taint", "evict", str(FIXTURES / "everything.yaml"))
    assert p.returncode == 2
