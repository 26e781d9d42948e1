"""UPDATE rules: immutable fields and the write-once allocation."""

from __future__ import annotations

import copy

import yaml

from webhook.config.context import Context
from webhook.rules import updates

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices: [{name: gpu-0}]
"""

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity: {requests: {memory: 1Gi}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0, consumedCapacity: {memory: 1Gi}}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node-1]}]
  reservedFor:
  - {resource: pods, name: p1, uid: 11111111-1111-1111-1111-111111111111}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]
  containers:
  - {name: main, image: i, resources: {claims: [{name: gpu}]}}
"""


def run(fn, new: dict, old: dict | None) -> list[tuple[str, str]]:
    return [
        (str(f.field), f.message) for f in fn(new, Context(old=old, operation="UPDATE" if old else "CREATE"))
    ]


def test_rule_ids() -> None:
    assert updates.immutable.rule.id == "update.immutable"
    assert updates.allocation.rule.id == "update.allocation"


def test_create_is_never_checked() -> None:
    assert run(updates.immutable, yaml.safe_load(SLICE), None) == []
    assert run(updates.allocation, yaml.safe_load(CLAIM), None) == []


def test_slice_unchanged_and_mutable_fields() -> None:
    old = yaml.safe_load(SLICE)
    new = copy.deepcopy(old)
    new["spec"]["devices"].append({"name": "gpu-1"})
    new["spec"]["pool"]["generation"] = 2
    assert run(updates.immutable, new, old) == []


def test_slice_immutable_fields() -> None:
    old = yaml.safe_load(SLICE)
    new = copy.deepcopy(old)
    new["spec"]["driver"] = "other.example.com"
    new["spec"]["pool"]["name"] = "node-2"
    new["spec"]["nodeName"] = "node-2"
    found = run(updates.immutable, new, old)
    assert ("spec.driver", 'Invalid value: "other.example.com": field is immutable') in found
    assert ("spec.pool.name", 'Invalid value: "node-2": field is immutable') in found
    assert ("spec.nodeName", 'Invalid value: "node-2": field is immutable') in found


def test_claim_and_template_spec_immutable() -> None:
    old = yaml.safe_load(CLAIM)
    same = copy.deepcopy(old)
    same["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = (
        "1024Mi"  # same quantity
    )
    same["spec"]["devices"]["constraints"] = []  # empty list == absent
    assert run(updates.immutable, same, old) == []
    new = copy.deepcopy(old)
    new["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "other"
    found = run(updates.immutable, new, old)
    assert len(found) == 1 and found[0][0] == "spec" and found[0][1].endswith("field is immutable")
    template = {"kind": "ResourceClaimTemplate", "spec": {"spec": old["spec"]}}
    changed = {"kind": "ResourceClaimTemplate", "spec": {"spec": new["spec"]}}
    assert [f for f, _ in run(updates.immutable, changed, template)] == ["spec"]
    assert run(updates.immutable, template, copy.deepcopy(template)) == []


def test_pod_claim_fields_immutable() -> None:
    old = yaml.safe_load(POD)
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "other"  # allowed
    assert run(updates.immutable, new, old) == []
    new["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "t2"
    new["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu", "request": "r"}]
    found = run(updates.immutable, new, old)
    assert len(found) == 1 and found[0][0] == "spec"
    assert found[0][1].startswith("Forbidden: pod updates may not change fields other than")
    assert "spec.resourceClaims" in found[0][1] and "spec.containers[0].resources.claims" in found[0][1]


def test_allocation_write_once() -> None:
    old = yaml.safe_load(CLAIM)
    same = copy.deepcopy(old)
    same["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]["memory"] = "1073741824"
    assert run(updates.allocation, same, old) == []
    cleared = copy.deepcopy(old)
    del cleared["status"]["allocation"]
    cleared["status"]["reservedFor"] = []
    assert run(updates.allocation, cleared, old) == []
    changed = copy.deepcopy(old)
    changed["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    found = run(updates.allocation, changed, old)
    assert len(found) == 1 and found[0][0] == "status.allocation"
    assert "field is immutable" in found[0][1]


def test_allocation_from_nothing_is_allowed() -> None:
    new = yaml.safe_load(CLAIM)
    old = copy.deepcopy(new)
    del old["status"]
    assert run(updates.allocation, new, old) == []


def test_reserved_for_may_not_grow_while_deleting() -> None:
    old = yaml.safe_load(CLAIM)
    old["metadata"]["deletionTimestamp"] = "2026-09-01T00:00:00Z"
    shrink = copy.deepcopy(old)
    shrink["status"]["reservedFor"] = []
    assert run(updates.allocation, shrink, old) == []
    grow = copy.deepcopy(old)
    grow["status"]["reservedFor"].append(
        {"resource": "pods", "name": "p2", "uid": "22222222-2222-2222-2222-222222222222"}
    )
    assert run(updates.allocation, grow, old) == [
        (
            "status.reservedFor",
            "Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
        )
    ]
    not_deleting = copy.deepcopy(grow)
    del not_deleting["metadata"]["deletionTimestamp"]
    assert run(updates.allocation, not_deleting, old) == []
