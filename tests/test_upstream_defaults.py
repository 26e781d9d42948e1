"""Upstream v1 defaulting table (kubernetes/kubernetes pkg/apis/resource/v1/defaults_test.go) on manifests:
allocationMode/count defaults of `exactly` and `firstAvailable[]`, and values that must not change."""

from __future__ import annotations

import pytest
import yaml

from webhook.apiserver.defaults import apply_defaults

# TestSetDefaultAllocationMode, TestSetDefaultAllocationModeWithSubRequests
CASES = [
    ("exactly defaulted", "{exactly: {}}", "exactly", {"allocationMode": "ExactCount", "count": 1}),
    (
        "exactly unchanged",
        "{exactly: {allocationMode: ExactCount, count: 10}}",
        "exactly",
        {"allocationMode": "ExactCount", "count": 10},
    ),
    (
        "subrequests defaulted",
        "{name: req-1, firstAvailable: [{name: subReq-1}, {name: subReq-2}]}",
        "firstAvailable",
        [
            {"name": "subReq-1", "allocationMode": "ExactCount", "count": 1},
            {"name": "subReq-2", "allocationMode": "ExactCount", "count": 1},
        ],
    ),
    (
        "subrequests unchanged",
        "{name: req-1, firstAvailable: [{name: subReq-1, allocationMode: ExactCount, count: 10},"
        " {name: subReq-2, allocationMode: ExactCount, count: 10}]}",
        "firstAvailable",
        [
            {"name": "subReq-1", "allocationMode": "ExactCount", "count": 10},
            {"name": "subReq-2", "allocationMode": "ExactCount", "count": 10},
        ],
    ),
]


@pytest.mark.parametrize("request_yaml,key,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_allocation_mode_defaults(request_yaml: str, key: str, want: object) -> None:
    request = yaml.safe_load(request_yaml)
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "spec": {"devices": {"requests": [request]}},
    }
    apply_defaults(claim)
    out = claim["spec"]["devices"]["requests"][0]
    assert out[key] == want
    if key == "firstAvailable":
        assert "exactly" not in out  # the exactly field is not set


def test_template_gets_the_same_defaults() -> None:
    tmpl = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {}}]}}},
    }
    apply_defaults(tmpl)
    assert tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "allocationMode": "ExactCount",
        "count": 1,
    }


# TestSetDefaultDeviceTaint uses ResourceSlice spec.taints[] (SliceDeviceTaint), a field the v1.37 API we
# model does not have; the device-level taint timeAdded stamp (same defaulter) is covered in test_defaults.py.
