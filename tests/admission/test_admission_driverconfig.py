"""config.driver-schema at admission: a real AdmissionReview of the NVIDIA quickstart's claim is allowed;
the same claim with an interval the driver rejects is denied at the field inside the opaque parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from admission_fixtures import admission_review, causes, snapshot

from webhook.admission import AdmissionConfig, review

NVIDIA_TS = Path(__file__).resolve().parents[1] / "fixtures/realistic/nvidia/specs/quickstart/gpu-test3.yaml"
PARAMS = "spec.devices.config[0].opaque.parameters"


def _template() -> dict[str, Any]:
    docs = yaml.safe_load_all(NVIDIA_TS.read_text())
    return next(d for d in docs if d and d.get("kind") == "ResourceClaim")


def test_webhook_denies_a_bad_interval_and_allows_the_real_config() -> None:
    template = _template()
    ok = review(admission_review(template), snapshot(), AdmissionConfig())["response"]
    assert ok["allowed"] is True, ok
    template["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]["timeSlicingConfig"][
        "interval"
    ] = "Longest"
    denied = review(admission_review(template), snapshot(), AdmissionConfig())["response"]
    assert denied["allowed"] is False
    assert [(f, r) for f, r, _ in causes(denied)] == [
        (f"{PARAMS}.sharing.timeSlicingConfig.interval", "FieldValueNotSupported")
    ]
