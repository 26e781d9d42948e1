"""Cross-object references: clashing extendedResourceNames, unknown DeviceClasses, unknown Pod claims."""

from __future__ import annotations

import yaml

from webhook.config.context import Context
from webhook.rules import classes
from webhook.state.inventory import ClassRec, Inventory, extract_record

CLASSES = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-b, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {extendedResourceName: example.com/gpu}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {extendedResourceName: example.com/gpu}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec: {extendedResourceName: example.com/nic}
"""

CLAIMS = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, namespace: team}
spec:
  devices:
    requests:
    - {name: a, exactly: {deviceClassName: gpu-a}}
    - name: b
      firstAvailable: [{name: x, deviceClassName: gpu-a}, {name: y, deviceClassName: tpu}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t1, namespace: team}
spec:
  spec:
    devices:
      requests: [{name: a, exactly: {deviceClassName: fpga}}]
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims:
  - {name: one, resourceClaimName: c1}
  - {name: two, resourceClaimTemplateName: t1}
  - {name: three, resourceClaimName: missing}
  - {name: four, resourceClaimTemplateName: t-missing}
"""


def inventory(*texts: str) -> Inventory:
    docs = [d for t in texts for d in yaml.safe_load_all(t) if d]
    return Inventory([extract_record(d, i) for i, d in enumerate(docs)])


def run(fn, inv: Inventory) -> list[tuple[int, str, str]]:
    return [(f.index, str(f.field), f.message) for f in fn(inv, Context())]


def test_rule_ids() -> None:
    assert classes.extended_resource_name_clash.rule.id == "class.extended-resource-name-clash"  # type: ignore[attr-defined]
    assert classes.unknown_device_class.rule.id == "claim.unknown-device-class"  # type: ignore[attr-defined]
    assert classes.unknown_claim.rule.id == "pod.unknown-claim"  # type: ignore[attr-defined]
    assert {
        f.rule.severity.value
        for f in (
            classes.extended_resource_name_clash,
            classes.unknown_device_class,  # type: ignore[attr-defined]
            classes.unknown_claim,
        )
    } == {"warning"}


def test_extended_resource_name_clash_newest_wins() -> None:
    got = run(classes.extended_resource_name_clash, inventory(CLASSES))
    assert [(i, p) for i, p, _ in got] == [(0, "spec.extendedResourceName"), (1, "spec.extendedResourceName")]
    assert got[0][2].startswith(
        'extendedResourceName "example.com/gpu" is also declared by DeviceClass "gpu-a": this class wins'
    )
    assert 'DeviceClass "gpu-b" wins' in got[1][2]


def test_extended_resource_name_tie_goes_to_smaller_name_and_unknown_time() -> None:
    same = [
        ClassRec("zeta", "e.com/x", "2026-01-01T00:00:00Z"),
        ClassRec("alpha", "e.com/x", "2026-01-01T00:00:00Z"),
    ]
    assert classes.winner(same).name == "alpha"  # type: ignore[union-attr]
    assert (
        classes.winner([ClassRec("a", "e.com/x", None), ClassRec("b", "e.com/x", "2026-01-01T00:00:00Z")])
        is None
    )
    text = CLASSES.replace('creationTimestamp: "2026-01-02T00:00:00Z"', "labels: {}")
    got = run(classes.extended_resource_name_clash, inventory(text))
    assert "depends on creation time" in got[0][2]


def test_no_clash_for_distinct_names() -> None:
    assert (
        run(
            classes.extended_resource_name_clash,
            inventory(CLASSES.replace("example.com/gpu}\n---", "example.com/gpu2}\n---", 1)),
        )
        == []
    )


def test_unknown_device_class() -> None:
    got = run(classes.unknown_device_class, inventory(CLASSES, CLAIMS))
    assert [(i, p) for i, p, _ in got] == [
        (3, "spec.devices.requests[1].firstAvailable[1].deviceClassName"),
        (4, "spec.spec.devices.requests[0].exactly.deviceClassName"),
    ]
    assert got[0][2].startswith('DeviceClass "tpu" is not in the input (it has "gpu-a", "gpu-b", "nic")')


def test_unknown_device_class_needs_classes_in_the_input() -> None:
    assert run(classes.unknown_device_class, inventory(CLAIMS)) == []


def test_pod_unknown_claims() -> None:
    got = run(classes.unknown_claim, inventory(CLAIMS, POD))
    assert [(i, p) for i, p, _ in got] == [
        (2, "spec.resourceClaims[2].resourceClaimName"),
        (2, "spec.resourceClaims[3].resourceClaimTemplateName"),
    ]
    assert got[0][2].startswith('ResourceClaim "missing" is not in namespace "team"')
    assert got[1][2].startswith('ResourceClaimTemplate "t-missing" is not in namespace "team"')


def test_pod_claim_in_another_namespace() -> None:
    other = CLAIMS.replace("namespace: team", "namespace: other")
    got = run(classes.unknown_claim, inventory(other, POD))
    assert (2, "spec.resourceClaims[0].resourceClaimName") == got[0][:2]
    assert 'ResourceClaim "c1" is not in namespace "team" (found in namespace "other")' in got[0][2]


def test_pod_without_namespace_matches_any_and_no_claims_means_no_check() -> None:
    pod = POD.replace("namespace: team", "labels: {}")
    got = run(classes.unknown_claim, inventory(CLAIMS, pod))
    assert [p for _, p, _ in got] == [
        "spec.resourceClaims[2].resourceClaimName",
        "spec.resourceClaims[3].resourceClaimTemplateName",
    ]
    assert run(classes.unknown_claim, inventory(POD)) == []
