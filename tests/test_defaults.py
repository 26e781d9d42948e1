"""v1 defaulting: allocationMode/count, toleration operator, taint timeAdded (only when asked)."""

from __future__ import annotations

import copy

import yaml

from webhook.apiserver.defaults import apply_defaults

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: plain
      exactly:
        deviceClassName: gpu
        tolerations: [{key: k, effect: NoSchedule}, {operator: Exists}]
    - name: zero
      exactly: {deviceClassName: gpu, count: 0}
    - name: all
      exactly: {deviceClassName: gpu, allocationMode: All}
    - name: three
      exactly: {deviceClassName: gpu, allocationMode: ExactCount, count: 3}
    - name: alt
      firstAvailable:
      - {name: a, deviceClassName: gpu, tolerations: [{key: k}]}
      - {name: b, deviceClassName: gpu, allocationMode: All}
status:
  allocation:
    devices:
      results:
      - {request: plain, driver: d.example.com, pool: p, device: d0, tolerations: [{key: k}]}
"""


def test_claim_requests_and_tolerations() -> None:
    obj = yaml.safe_load(CLAIM)
    apply_defaults(obj)
    reqs = obj["spec"]["devices"]["requests"]
    assert reqs[0]["exactly"]["allocationMode"] == "ExactCount" and reqs[0]["exactly"]["count"] == 1
    assert [t["operator"] for t in reqs[0]["exactly"]["tolerations"]] == ["Equal", "Exists"]
    assert reqs[1]["exactly"]["count"] == 1  # count 0 with ExactCount becomes 1
    assert reqs[2]["exactly"]["allocationMode"] == "All" and "count" not in reqs[2]["exactly"]
    assert reqs[3]["exactly"]["count"] == 3
    sub_a, sub_b = reqs[4]["firstAvailable"]
    assert (sub_a["allocationMode"], sub_a["count"], sub_a["tolerations"][0]["operator"]) == (
        "ExactCount",
        1,
        "Equal",
    )
    assert sub_b["allocationMode"] == "All" and "count" not in sub_b
    result = obj["status"]["allocation"]["devices"]["results"][0]
    assert result["tolerations"][0]["operator"] == "Equal"


def test_template_spec_spec() -> None:
    obj = yaml.safe_load("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: r, exactly: {deviceClassName: gpu}}]
""")
    apply_defaults(obj)
    assert obj["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 1,
    }


def test_taint_time_added_only_with_now() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices: [{name: d0, taints: [{key: k, effect: NoSchedule}, {key: j, effect: None, timeAdded: "2020-01-01T00:00:00Z"}]}]
"""
    obj = yaml.safe_load(text)
    apply_defaults(obj)
    assert "timeAdded" not in obj["spec"]["devices"][0]["taints"][0]  # offline: reproducible output
    apply_defaults(obj, now="2026-09-03T10:00:00Z")
    taints = obj["spec"]["devices"][0]["taints"]
    assert [t["timeAdded"] for t in taints] == ["2026-09-03T10:00:00Z", "2020-01-01T00:00:00Z"]
    rule = {"kind": "DeviceTaintRule", "spec": {"taint": {"key": "k", "effect": "NoExecute"}}}
    apply_defaults(rule, now="2026-09-03T10:00:00Z")
    assert rule["spec"]["taint"]["timeAdded"] == "2026-09-03T10:00:00Z"


def test_other_kinds_and_malformed_input_untouched() -> None:
    for obj in (
        {"kind": "DeviceClass", "spec": {"selectors": []}},
        {"kind": "ResourceClaim", "spec": "nonsense"},
        {"kind": "ResourceClaim", "spec": {"devices": {"requests": ["x", {"name": "r", "exactly": None}]}}},
        {"kind": "Pod", "spec": {"containers": []}},
    ):
        before = copy.deepcopy(obj)
        apply_defaults(obj)
        assert obj == before


def test_idempotent() -> None:
    obj = yaml.safe_load(CLAIM)
    apply_defaults(obj)
    once = copy.deepcopy(obj)
    apply_defaults(obj)
    assert obj == once
