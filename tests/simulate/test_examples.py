"""The bundled examples/ are one cluster — `serve`'s default state and the README's first input: no object
defined twice, no CEL runtime error, every Pod placed but the one examples/simulate explains on purpose —
through the real CLI and the state directory loader `serve` uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webhook.cli.main import main
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.server.loader import ManifestDirectory

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_simulate_examples_places_every_pod_but_the_explained_one(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "-o", "json", str(EXAMPLES)])
    out = json.loads(capsys.readouterr().out)
    assert out["invalid"] == [] and out["errors"] == []  # nothing left out, no duplicate object
    reasons = [p["reason"] for p in out["pods"]]
    assert not [r for r in reasons if "CEL runtime error" in r]
    verdicts = {p["pod"] or p["claim"]: p["feasible"] for p in out["pods"]}
    # examples/simulate: four trainers take both nodes' GPUs, the fifth is explained (exit 1)
    assert [name for name, ok in verdicts.items() if not ok] == ["default/trainer-5"] and code == 1
    assert (
        "node-1: 4 allocated to other claims; node-2: 4 allocated to other claims"
        in reasons[list(verdicts).index("default/trainer-5")]
    )
    assert verdicts["default/critical-training"] and verdicts["default/vllm-inference"]
    assert verdicts["default/model-training"]


def test_validate_examples_finds_no_duplicate_and_no_runtime_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", "-o", "json", str(EXAMPLES)]) == 0
    plain = json.loads(capsys.readouterr().out)
    rules = {v["rule"] for o in plain["objects"] for v in o["violations"]}
    assert not rules & {"input.duplicate-object", "selector.unknown-attribute"}, rules
    assert main(["validate", "-o", "json", "--feasibility", str(EXAMPLES)]) == 1
    out = json.loads(capsys.readouterr().out)
    errors = [
        (o["name"], v["rule"]) for o in out["objects"] for v in o["violations"] if v["severity"] == "error"
    ]
    assert errors == [("trainer-5", "feasibility.infeasible")]


def test_serves_default_state_loads_every_example_object() -> None:
    directory = ManifestDirectory(str(EXAMPLES), Context(profile=load_profile("1.37", {})))
    scan = directory.scan()
    assert scan.invalid_total == 0 and not scan.unparsable
    kinds = sorted({o["kind"] for o in directory.objects()})
    assert kinds == [
        "DeviceClass",
        "DeviceTaintRule",
        "Pod",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "ResourceSlice",
    ]
    classes = [o for o in directory.objects() if o["kind"] == "DeviceClass"]
    assert len(classes) == len({c["metadata"]["name"] for c in classes})
