"""Pod claim fields: spec.resourceClaims, container claims, claim statuses, extended-resource status."""

from __future__ import annotations

import yaml

from webhook.config.context import Context
from webhook.rules import pod

POD = """
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: single-gpu}
  - {name: nic, resourceClaimName: shared-nic}
  initContainers:
  - name: warmup
    image: busybox
    resources: {claims: [{name: gpu}]}
  containers:
  - name: main
    image: trainer
    resources:
      claims:
      - {name: gpu, request: first}
      - {name: gpu, request: second}
      - {name: nic}
status:
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: trainer-gpu-x7k2p}
  extendedResourceClaimStatus:
    resourceClaimName: trainer-extended-resources-abcde
    requestMappings:
    - {containerName: main, resourceName: example.com/gpu, requestName: container-0-request-0}
"""


def load() -> dict:
    return yaml.safe_load(POD)


def run(fn, o: dict) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(o, Context())]


def test_rule_ids() -> None:
    assert pod.resource_claims.rule.id == "pod.resource-claims"
    assert pod.container_claims.rule.id == "pod.container-claims"
    assert pod.claim_statuses.rule.id == "pod.claim-statuses"
    assert pod.extended_resource_status.rule.id == "pod.extended-resource-status"


def test_valid_pod() -> None:
    o = load()
    for fn in (pod.resource_claims, pod.container_claims, pod.claim_statuses, pod.extended_resource_status):
        assert run(fn, o) == []


def test_resource_claim_names() -> None:
    o = load()
    o["spec"]["resourceClaims"] += [
        {"name": "gpu", "resourceClaimName": "x"},
        {"name": "Bad_Name", "resourceClaimName": "x"},
        {"name": "", "resourceClaimName": "x"},
    ]
    found = run(pod.resource_claims, o)
    assert ("spec.resourceClaims[2].name", 'Duplicate value: "gpu"') in found
    assert any(
        f == "spec.resourceClaims[3].name"
        and m.startswith('Invalid value: "Bad_Name": a lowercase RFC 1123 label')
        for f, m in found
    )
    assert ("spec.resourceClaims[4].name", "Required value") in found


def test_exactly_one_source() -> None:
    o = load()
    o["spec"]["resourceClaims"] = [
        {"name": "a"},
        {"name": "b", "resourceClaimName": "c", "resourceClaimTemplateName": "t"},
        {"name": "c", "resourceClaimTemplateName": "Not.Valid_"},
    ]
    found = run(pod.resource_claims, o)
    assert any(
        f == "spec.resourceClaims[0]"
        and "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`" in m
        for f, m in found
    )
    assert any(
        f == "spec.resourceClaims[1]"
        and "at most one of `resourceClaimName` or `resourceClaimTemplateName`" in m
        for f, m in found
    )
    assert any(
        f == "spec.resourceClaims[2].resourceClaimTemplateName"
        and m.startswith('Invalid value: "Not.Valid_"')
        for f, m in found
    )


def test_container_claims() -> None:
    o = load()
    o["spec"]["containers"][0]["resources"]["claims"] += [
        {"name": "gpu", "request": "first"},  # duplicate (name, request)
        {"name": "tpu"},  # unknown claim
        {"name": "gpu", "request": "Bad_Request"},
        {"name": ""},
    ]
    found = run(pod.container_claims, o)
    p = "spec.containers[0].resources.claims"
    assert (f"{p}[3]", 'Duplicate value: "gpu/first"') in found
    assert (
        f"{p}[4]",
        'Not found: "tpu": must be one of the names in pod.spec.resourceClaims: gpu, nic',
    ) in found
    assert any(f == f"{p}[5].request" and m.startswith('Invalid value: "Bad_Request"') for f, m in found)
    assert (f"{p}[6]", "Required value") in found


def test_container_claims_without_pod_claims_and_init_containers() -> None:
    o = load()
    del o["spec"]["resourceClaims"]
    found = run(pod.container_claims, o)
    assert (
        "spec.initContainers[0].resources.claims[0]",
        'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
    ) in found


def test_pod_level_claims_forbidden() -> None:
    o = load()
    o["spec"]["resources"] = {"claims": [{"name": "gpu"}]}
    assert ("spec.resources.claims", "Forbidden: claims cannot be set for Resources at pod-level") in run(
        pod.container_claims, o
    )


def test_claim_statuses() -> None:
    o = load()
    o["status"]["resourceClaimStatuses"] += [
        {"name": "gpu"},
        {"name": "other", "resourceClaimName": "Bad_Claim"},
    ]
    found = run(pod.claim_statuses, o)
    assert ("status.resourceClaimStatuses[1].name", 'Duplicate value: "gpu"') in found
    assert (
        "status.resourceClaimStatuses[2].name",
        'Invalid value: "other": must match the name of an entry in `spec.resourceClaims`',
    ) in found
    assert any(
        f == "status.resourceClaimStatuses[2].name" and m.startswith('Invalid value: "Bad_Claim"')
        for f, m in found
    )


def test_extended_resource_status() -> None:
    o = load()
    ext = o["status"]["extendedResourceClaimStatus"]
    ext["resourceClaimName"] = "Bad_Name"
    ext["requestMappings"] += [
        {"containerName": "ghost", "resourceName": "example.com/gpu", "requestName": "r"},
        {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "Bad_Request"},
    ]
    found = run(pod.extended_resource_status, o)
    base = "status.extendedResourceClaimStatus"
    assert any(
        f == f"{base}.resourceClaimName" and m.startswith('Invalid value: "Bad_Name"') for f, m in found
    )
    assert any(f == f"{base}.requestMappings[1].containerName" and "spec.containers" in m for f, m in found)
    assert any(f == f"{base}.requestMappings[2].requestName" for f, _ in found)
    assert (f"{base}.requestMappings[2]", 'Duplicate value: "main/example.com/gpu"') in found


def test_thousands_of_claim_references_keep_their_findings_and_short_messages() -> None:
    o = load()
    o["spec"]["resourceClaims"] = [{"name": f"c{i:04d}", "resourceClaimName": f"x{i}"} for i in range(3000)]
    refs = [{"name": f"c{i:04d}", "request": "r"} for i in range(3000)]
    refs += [{"name": "c0007"}]  # the whole claim next to one of its requests
    refs += [{"name": "c0007", "request": "r"}]  # a repeated (name, request)
    refs += [{"name": "gone"}]  # not a Pod claim
    o["spec"]["containers"][0]["resources"]["claims"] = refs
    found = run(pod.container_claims, o)
    p = "spec.containers[0].resources.claims"
    assert (f"{p}[3000]", 'Duplicate value: "c0007"') in found
    assert (f"{p}[3001]", 'Duplicate value: "c0007"') in found
    missing = [m for f, m in found if f == f"{p}[3002]"]
    assert missing == [
        'Not found: "gone": must be one of the names in pod.spec.resourceClaims: '
        + ", ".join(f"c{i:04d}" for i in range(pod.LISTED_NAMES))
        + f", ... ({3000 - pod.LISTED_NAMES} more)"
    ]
    assert not [
        f for f, _ in found if f.startswith(p) and f not in (f"{p}[3000]", f"{p}[3001]", f"{p}[3002]")
    ]
