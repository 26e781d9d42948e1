"""Upstream strategy tables (kubernetes/kubernetes pkg/registry/resource/{resourceslice,resourceclaim}/
strategy_test.go: TestResourceSliceStrategyCreate/Update, TestStrategyCreate/Update, TestStatusStrategyUpdate,
TestStrategy{Create,Update}WithDerivedAttributes) as manifests: which fields the API server drops or keeps
for a gate state, ratcheting on update, and the validation outcome of the stripped object (field path and
error type). Gates locked on in 1.37 are turned off with the 1.35/1.36 profile, as upstream's emulated
version does."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest
import yaml

from tests.rules.upstream_util import error_type
from webhook.apiserver.defaults import apply_defaults
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.model.violation import Severity
from webhook.validate import checked_object


def run(
    new: dict[str, Any],
    old: dict[str, Any] | None,
    version: str,
    gates: dict[str, bool],
    namespace_labels: dict[str, str] | None = None,
) -> tuple[dict[str, Any] | None, Counter[tuple[str, str]]]:
    """The object as stored and its errors as (path, type), for a create (old None) or an update."""
    profile = load_profile(version, gates)
    stored = None
    if old is not None:
        stored = defaulted(old)  # as stored: written while its fields were allowed (never re-stripped)
    op = "UPDATE" if old else "CREATE"
    ctx = Context(profile=profile, old=stored, operation=op, lint=False, namespace_labels=namespace_labels)
    obj, found = checked_object(copy.deepcopy(new), ctx, None)
    errs = Counter((v.field, error_type(v.message)) for v in found if v.severity == Severity.ERROR)
    return obj, errs


def y(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    apply_defaults(out)
    return out


def with_(base: dict[str, Any], **paths: Any) -> dict[str, Any]:
    """A copy of `base` with dotted paths set (a value of None deletes the key)."""
    out = copy.deepcopy(base)
    for dotted, value in paths.items():
        *parents, last = dotted.split("__")
        node: Any = out
        for p in parents:
            node = node[int(p)] if p.isdigit() else node.setdefault(p, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(value)
    return out


# -- ResourceSlice ---------------------------------------------------------------------------------

SLICE = y("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: valid-resource-slice}
spec:
  nodeName: valid-node-name
  driver: testdriver.example.com
  pool: {name: valid-pool-name, resourceSliceCount: 1, generation: 0}
  devices: [{name: device-0}]
""")
S_TAINTS = with_(SLICE, spec__devices__0__taints=[{"key": "example.com/tainted", "effect": "NoSchedule"}])
S_BINDING = with_(
    SLICE,
    spec__devices__0__bindingConditions=["cond1"],
    spec__devices__0__bindingFailureConditions=["fail1"],
    spec__devices__0__bindsToNode=True,
)
S_PER_DEVICE = y("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: valid-resource-slice}
spec:
  perDeviceNodeSelection: true
  driver: testdriver.example.com
  pool: {name: valid-pool-name, resourceSliceCount: 1, generation: 1}
  devices: [{name: device, nodeName: valid-node-name}]
""")
S_CONSUMES = y("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: valid-resource-slice}
spec:
  nodeName: valid-node-name
  driver: testdriver.example.com
  pool: {name: valid-pool-name, resourceSliceCount: 1, generation: 1}
  devices:
  - name: device
    consumesCounters: [{counterSet: pool-1, counters: {memory: {value: 40Gi}}}]
    attributes: {version: {string: v1}}
    capacity: {memory: {value: 40Gi}}
""")
S_SHARED = y("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: valid-resource-slice}
spec:
  nodeName: valid-node-name
  driver: testdriver.example.com
  pool: {name: valid-pool-name, resourceSliceCount: 1, generation: 1}
  sharedCounters: [{name: pool-1, counters: {memory: {value: 40Gi}}}]
""")
S_CAPACITY = with_(SLICE, spec__devices__0__capacity={"memory": {"value": "40Gi"}})
S_CONSUMABLE = with_(
    S_CAPACITY,
    spec__devices__0__allowMultipleAllocations=True,
    spec__devices__0__capacity={
        "memory": {"value": "40Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}}}
    },
)
# upstream's 1.36 table uses nodeAllocatableResourceMappings {cpu: {allocationMultiplier: 1}}; its 1.37
# successor is nodeAllocatableResources (same gate, same drop pattern)
S_NODE_ALLOC = with_(SLICE, spec__devices__0__nodeAllocatableResources={"cpu": {"overhead": {"perPod": "1"}}})
S_LIST_ATTRS = with_(
    SLICE, spec__devices__0__attributes={"list_attribute": {"strings": ["value1", "value2"]}}
)
# upstream's fixture is S_SHARED plus the attribute; v1.37 validation only allows it on a slice whose
# devices consume counters (and carry the attribute; counter sets live in another slice of the pool), so
# a counter-consuming device replaces the shared counters here
S_PARTITION_BASE = with_(
    S_CONSUMES,
    spec__devices=[
        {
            "name": "device",
            "attributes": {"profile": {"string": "1g"}},
            "consumesCounters": [{"counterSet": "pool-1", "counters": {"memory": {"value": "10Gi"}}}],
        }
    ],
)
S_PARTITION_TYPE = with_(S_PARTITION_BASE, spec__partitionTypeAttribute="testdriver.example.com/profile")

PT_ON = {"DRAPartitionableDevices": True, "DRAResourcePoolStatus": True, "DRAPartitionableDevicesType": True}
PT_OFF = {
    "DRAPartitionableDevices": True,
    "DRAResourcePoolStatus": False,
    "DRAPartitionableDevicesType": True,
}

NODE_REQUIRED = (
    "spec",
    "Required",
)  # "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection"

# (name, new, old, version, gates, expected stored object or None, expected errors)
SLICE_CASES: list[tuple[str, Any, Any, str, dict[str, bool], Any, list[tuple[str, str]]]] = [
    # TestResourceSliceStrategyCreate
    ("create/simple", SLICE, None, "1.37", {}, SLICE, []),
    (
        "create/validation error",
        with_(SLICE, metadata__name="%#@$%$"),
        None,
        "1.37",
        {},
        None,
        [("metadata.name", "Invalid")],
    ),
    ("create/drop-fields-device-taints", S_TAINTS, None, "1.35", {}, SLICE, []),
    (
        "create/drop-fields-device-taints (1.37, gate off)",
        S_TAINTS,
        None,
        "1.37",
        {"DRADeviceTaints": False},
        SLICE,
        [],
    ),
    ("create/keep-fields-device-taints", S_TAINTS, None, "1.37", {}, S_TAINTS, []),
    (
        "create/drop-fields-partitionable-devices-with-consumes-counters",
        S_CONSUMES,
        None,
        "1.37",
        {"DRAPartitionableDevices": False},
        with_(S_CONSUMES, spec__devices__0__consumesCounters=None),
        [],
    ),
    (
        "create/drop-fields-partitionable-devices-with-per-device-node-selection",
        S_PER_DEVICE,
        None,
        "1.37",
        {"DRAPartitionableDevices": False},
        None,
        [NODE_REQUIRED],
    ),
    (
        "create/drop-fields-partitionable-devices-with-shared-counters",
        S_SHARED,
        None,
        "1.37",
        {"DRAPartitionableDevices": False},
        with_(S_SHARED, spec__sharedCounters=None),
        [],
    ),
    (
        "create/keep-fields-partitionable-devices-with-consumes-counters",
        S_CONSUMES,
        None,
        "1.37",
        {},
        S_CONSUMES,
        [],
    ),
    (
        "create/keep-fields-partitionable-devices-with-per-device-node-selection",
        S_PER_DEVICE,
        None,
        "1.37",
        {},
        S_PER_DEVICE,
        [],
    ),
    (
        "create/keep-fields-partitionable-devices-with-shared-counters",
        S_SHARED,
        None,
        "1.37",
        {},
        S_SHARED,
        [],
    ),
    (
        "create/drop-fields-binding-conditions",
        S_BINDING,
        None,
        "1.35",
        {"DRAResourceClaimDeviceStatus": False},
        SLICE,
        [],
    ),
    (
        "create/drop-fields-binding-conditions-with-binding-conditions",
        S_BINDING,
        None,
        "1.37",
        {"DRADeviceBindingConditions": False},
        SLICE,
        [],
    ),
    ("create/keep-fields-binding-conditions", S_BINDING, None, "1.37", {}, S_BINDING, []),
    ("create/keep-fields-consumable-capacity", S_CONSUMABLE, None, "1.37", {}, S_CONSUMABLE, []),
    (
        "create/drop-fields-consumable-capacity-disabled-feature",
        S_CONSUMABLE,
        None,
        "1.37",
        {"DRAConsumableCapacity": False},
        S_CAPACITY,
        [],
    ),
    (
        "create/keep-fields-node-allocatable-dra-claims",
        S_NODE_ALLOC,
        None,
        "1.37",
        {"DRANodeAllocatableResources": True},
        S_NODE_ALLOC,
        [],
    ),
    (
        "create/drop-fields-node-allocatable-dra-claims-disabled-feature",
        S_NODE_ALLOC,
        None,
        "1.37",
        {},
        SLICE,
        [],
    ),
    (
        "create/keep-fields-list-type-attributes",
        S_LIST_ATTRS,
        None,
        "1.37",
        {"DRAListTypeAttributes": True},
        S_LIST_ATTRS,
        [],
    ),
    (
        "create/drop-fields-list-type-attributes",
        S_LIST_ATTRS,
        None,
        "1.37",
        {},
        None,
        [("spec.devices[0].attributes[list_attribute]", "Invalid")],
    ),
    (
        "create/keep-fields-partition-type-attribute",
        S_PARTITION_TYPE,
        None,
        "1.37",
        PT_ON,
        S_PARTITION_TYPE,
        [],
    ),
    (
        "create/drop-fields-partition-type-attribute",
        S_PARTITION_TYPE,
        None,
        "1.37",
        PT_OFF,
        S_PARTITION_BASE,
        [],
    ),
    # TestResourceSliceStrategyUpdate
    ("update/no-changes-okay", SLICE, SLICE, "1.37", {}, SLICE, []),
    (
        "update/name-change-not-allowed",
        with_(SLICE, metadata__name="valid-slice-2"),
        SLICE,
        "1.37",
        {},
        None,
        [("metadata.name", "Invalid")],
    ),
    ("update/drop-fields-device-taints", S_TAINTS, SLICE, "1.35", {}, SLICE, []),
    ("update/keep-fields-device-taints", S_TAINTS, SLICE, "1.37", {}, S_TAINTS, []),
    ("update/keep-existing-fields-device-taints", S_TAINTS, S_TAINTS, "1.37", {}, S_TAINTS, []),
    (
        "update/keep-existing-fields-device-taints-disabled-feature",
        S_TAINTS,
        S_TAINTS,
        "1.35",
        {},
        S_TAINTS,
        [],
    ),
    (
        "update/keep-existing-fields-partition-type-attribute-disabled-feature",
        S_PARTITION_TYPE,
        S_PARTITION_TYPE,
        "1.37",
        PT_OFF,
        S_PARTITION_TYPE,
        [],
    ),
    (
        "update/drop-fields-partitionable-devices-with-consumes-counters",
        S_CONSUMES,
        SLICE,
        "1.37",
        {"DRAPartitionableDevices": False},
        with_(S_CONSUMES, spec__devices__0__consumesCounters=None),
        [],
    ),
    (
        "update/drop-fields-partitionable-devices-with-per-device-node-selection",
        S_PER_DEVICE,
        SLICE,
        "1.37",
        {"DRAPartitionableDevices": False},
        None,
        [NODE_REQUIRED, ("spec.nodeName", "Invalid")],
    ),
    (
        "update/drop-fields-partitionable-devices-with-shared-counters",
        S_SHARED,
        SLICE,
        "1.37",
        {"DRAPartitionableDevices": False},
        with_(S_SHARED, spec__sharedCounters=None),
        [],
    ),
    (
        "update/keep-fields-partitionable-devices-with-consumes-counters",
        S_CONSUMES,
        SLICE,
        "1.37",
        {},
        S_CONSUMES,
        [],
    ),
    (
        "update/keep-fields-partitionable-devices-with-per-device-node-selection",
        S_PER_DEVICE,
        SLICE,
        "1.37",
        {},
        None,
        [("spec.nodeName", "Invalid")],
    ),
    (
        "update/keep-fields-partitionable-devices-with-shared-counters",
        S_SHARED,
        SLICE,
        "1.37",
        {},
        S_SHARED,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-with-consumes-counters",
        S_CONSUMES,
        S_CONSUMES,
        "1.37",
        {},
        S_CONSUMES,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-with-per-device-node-selection",
        S_PER_DEVICE,
        S_PER_DEVICE,
        "1.37",
        {},
        S_PER_DEVICE,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-with-shared-counters",
        S_SHARED,
        S_SHARED,
        "1.37",
        {},
        S_SHARED,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-consumes-counters-disabled-feature",
        S_CONSUMES,
        S_CONSUMES,
        "1.37",
        {"DRAPartitionableDevices": False},
        S_CONSUMES,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-per-device-node-selection-disabled-feature",
        S_PER_DEVICE,
        S_PER_DEVICE,
        "1.37",
        {"DRAPartitionableDevices": False},
        S_PER_DEVICE,
        [],
    ),
    (
        "update/keep-existing-fields-partitionable-devices-shared-counters-disabled-feature",
        S_SHARED,
        S_SHARED,
        "1.37",
        {"DRAPartitionableDevices": False},
        S_SHARED,
        [],
    ),
    (
        "update/drop-fields-binding-conditions",
        S_BINDING,
        SLICE,
        "1.35",
        {"DRAResourceClaimDeviceStatus": False},
        SLICE,
        [],
    ),
    (
        "update/drop-fields-binding-conditions-with-binding-conditions",
        S_BINDING,
        SLICE,
        "1.37",
        {"DRADeviceBindingConditions": False},
        SLICE,
        [],
    ),
    ("update/keep-fields-binding-conditions", S_BINDING, SLICE, "1.37", {}, S_BINDING, []),
    (
        "update/keep-existing-fields-binding-conditions-without-featuregate-enabled",
        S_BINDING,
        S_BINDING,
        "1.37",
        {"DRADeviceBindingConditions": False},
        S_BINDING,
        [],
    ),
    ("update/keep-consumable-capacity", S_CONSUMABLE, SLICE, "1.37", {}, S_CONSUMABLE, []),
    (
        "update/keep-existing-fields-consumable-capacity-disabled-feature",
        S_CONSUMABLE,
        S_CONSUMABLE,
        "1.37",
        {"DRAConsumableCapacity": False},
        S_CONSUMABLE,
        [],
    ),
    (
        "update/drop-fields-consumable-capacity-disabled-feature",
        S_CONSUMABLE,
        S_CAPACITY,
        "1.37",
        {"DRAConsumableCapacity": False},
        S_CAPACITY,
        [],
    ),
    (
        "update/drop-list-type-attributes",
        S_LIST_ATTRS,
        SLICE,
        "1.37",
        {},
        None,
        [("spec.devices[0].attributes[list_attribute]", "Invalid")],
    ),
    (
        "update/keep-fields-list-type-attributes",
        S_LIST_ATTRS,
        SLICE,
        "1.37",
        {"DRAListTypeAttributes": True},
        S_LIST_ATTRS,
        [],
    ),
    (
        "update/keep-existing-fields-list-type-attributes",
        S_LIST_ATTRS,
        S_LIST_ATTRS,
        "1.37",
        {"DRAListTypeAttributes": True},
        S_LIST_ATTRS,
        [],
    ),
    (
        "update/keep-existing-list-type-attributes-without-featuregate-enabled",
        S_LIST_ATTRS,
        S_LIST_ATTRS,
        "1.37",
        {},
        S_LIST_ATTRS,
        [],
    ),
]


@pytest.mark.parametrize(
    "new,old,version,gates,expect,errs", [c[1:] for c in SLICE_CASES], ids=[c[0] for c in SLICE_CASES]
)
def test_slice_strategy(new, old, version, gates, expect, errs) -> None:
    obj, found = run(new, old, version, gates)
    assert found == Counter(errs)
    if expect is not None:
        assert obj == defaulted(expect)


# -- ResourceClaim ---------------------------------------------------------------------------------

CLAIM = y("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: valid-claim, namespace: kube-system}
spec:
  devices:
    requests:
    - {name: req-0, exactly: {deviceClassName: class, allocationMode: All}}
""")
C_ADMIN = with_(CLAIM, spec__devices__requests__0__exactly__adminAccess=True)
C_TAINTS = with_(
    CLAIM, spec__devices__requests__0__exactly__tolerations=[{"key": "some-key", "operator": "Exists"}]
)
C_PRIO = with_(
    CLAIM,
    spec__devices__requests=[
        {
            "name": "req-0",
            "firstAvailable": [
                {"name": "subreq-0", "deviceClassName": "class", "allocationMode": "ExactCount", "count": 1}
            ],
        }
    ],
)
C_PRIO_TAINTS = with_(
    C_PRIO,
    spec__devices__requests__0__firstAvailable__0__tolerations=[{"key": "some-key", "operator": "Exists"}],
)
C_CAPACITY = with_(CLAIM, spec__devices__requests__0__exactly__capacity={"requests": {"test-capacity": "1"}})
C_DISTINCT = with_(
    CLAIM, spec__devices__constraints=[{"requests": ["req-0"], "distinctAttribute": "driver-a/attr"}]
)
C_PRIO_CAPACITY = with_(
    C_PRIO, spec__devices__requests__0__firstAvailable__0__capacity={"requests": {"test-capacity": "1"}}
)
_DERIVED = [{"name": "derived/sharedNumaNode", "expression": 'device.attributes["dra.example.com"]["numa"]'}]
_MATCH_DERIVED = [{"requests": ["req-0"], "matchAttribute": "derived/sharedNumaNode"}]
C_DERIVED = with_(
    CLAIM,
    spec__devices__requests__0__exactly__derivedAttributes=_DERIVED,
    spec__devices__constraints=_MATCH_DERIVED,
)
C_DERIVED_STRIPPED = with_(C_DERIVED, spec__devices__requests__0__exactly__derivedAttributes=None)
C_PRIO_DERIVED = with_(
    C_PRIO,
    spec__devices__requests__0__firstAvailable__0__derivedAttributes=_DERIVED,
    spec__devices__constraints=_MATCH_DERIVED,
)
C_PRIO_DERIVED_STRIPPED = with_(
    C_PRIO_DERIVED, spec__devices__requests__0__firstAvailable__0__derivedAttributes=None
)
_RESULT = {"request": "req-0", "driver": "dra.example.com", "pool": "pool-0", "device": "device-0"}
C_STATUS = with_(CLAIM, status={"allocation": {"devices": {"results": [_RESULT]}}})
C_ADMIN_STATUS = with_(
    C_ADMIN, status={"allocation": {"devices": {"results": [{**_RESULT, "adminAccess": True}]}}}
)
C_BINDING = with_(
    CLAIM,
    status={
        "allocation": {
            "devices": {
                "results": [
                    {
                        **_RESULT,
                        "bindingConditions": ["condition-1", "condition-2"],
                        "bindingFailureConditions": ["condition-3", "condition-4"],
                    }
                ]
            }
        }
    },
)
C_SKIP_OPS = with_(
    CLAIM, status={"allocation": {"devices": {"results": [{**_RESULT, "skipNodeOperations": ["*"]}]}}}
)
_SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
_DEV_STATUS = {"driver": "dra.example.com", "pool": "pool-0", "device": "device-0"}
C_CC_OLD = with_(
    with_(C_CAPACITY, spec__devices__constraints=C_DISTINCT["spec"]["devices"]["constraints"]),
    status={
        "allocation": {
            "devices": {
                "results": [{**_RESULT, "shareID": _SHARE, "consumedCapacity": {"test-capacity": "1"}}]
            }
        }
    },
)
C_CC_NEW = with_(C_CC_OLD, status__devices=[{**_DEV_STATUS, "shareID": _SHARE}])
C_DEV_STATUS_OLD = C_STATUS
C_DEV_STATUS_NEW = with_(C_STATUS, status__devices=[_DEV_STATUS])
IMMUTABLE = [("spec", "Invalid")]
ADMIN_NS = {"resource.kubernetes.io/admin-access": "true"}

CLAIM_CASES: list[tuple[str, Any, Any, str, dict[str, bool], Any, list[tuple[str, str]]]] = [
    # TestStrategyCreate
    ("create/simple", CLAIM, None, "1.37", {}, CLAIM, []),
    (
        "create/validation-error",
        with_(CLAIM, metadata__name="%#@$%$"),
        None,
        "1.37",
        {},
        None,
        [("metadata.name", "Invalid")],
    ),
    ("create/drop-fields-admin-access", C_ADMIN, None, "1.35", {"DRAAdminAccess": False}, CLAIM, []),
    ("create/keep-fields-admin-access", C_ADMIN, None, "1.37", {}, C_ADMIN, []),
    ("create/drop-fields-device-taints", C_TAINTS, None, "1.35", {}, CLAIM, []),
    ("create/keep-fields-device-taints", C_TAINTS, None, "1.37", {}, C_TAINTS, []),
    ("create/drop-fields-device-taints-in-prioritized-list", C_PRIO_TAINTS, None, "1.35", {}, C_PRIO, []),
    (
        "create/keep-fields-device-taints-in-prioritized-list",
        C_PRIO_TAINTS,
        None,
        "1.37",
        {},
        C_PRIO_TAINTS,
        [],
    ),
    (
        "create/drop-fields-prioritized-list",
        C_PRIO,
        None,
        "1.36",
        {"DRAPrioritizedList": False},
        None,
        [("spec.devices.requests[0]", "Required")],
    ),
    ("create/keep-fields-prioritized-list", C_PRIO, None, "1.37", {}, C_PRIO, []),
    ("create/keep-fields-consumable-capacity", C_CAPACITY, None, "1.37", {}, C_CAPACITY, []),
    (
        "create/drop-fields-consumable-capacity-disabled-feature",
        C_CAPACITY,
        None,
        "1.37",
        {"DRAConsumableCapacity": False},
        CLAIM,
        [],
    ),
    (
        "create/drop-fields-consumable-capacity-disabled-feature-with-distinct-attribute",
        C_DISTINCT,
        None,
        "1.37",
        {"DRAConsumableCapacity": False},
        None,
        [("spec.devices.constraints[0].matchAttribute", "Required")],
    ),
    (
        "create/drop-fields-consumable-capacity-disabled-feature-with-prioritized-list",
        C_PRIO_CAPACITY,
        None,
        "1.37",
        {"DRAConsumableCapacity": False},
        C_PRIO,
        [],
    ),
    # TestStrategyCreateWithDerivedAttributes
    ("create/drop-derived-attributes", C_DERIVED, None, "1.37", {}, C_DERIVED_STRIPPED, []),
    (
        "create/keep-derived-attributes",
        C_DERIVED,
        None,
        "1.37",
        {"DRADerivedAttributes": True},
        C_DERIVED,
        [],
    ),
    (
        "create/drop-derived-attributes-in-prioritized-list",
        C_PRIO_DERIVED,
        None,
        "1.37",
        {},
        C_PRIO_DERIVED_STRIPPED,
        [],
    ),
    (
        "create/keep-derived-attributes-in-prioritized-list",
        C_PRIO_DERIVED,
        None,
        "1.37",
        {"DRADerivedAttributes": True},
        C_PRIO_DERIVED,
        [],
    ),
    # TestStrategyUpdate
    ("update/no-changes-okay", CLAIM, CLAIM, "1.37", {}, CLAIM, []),
    (
        "update/name-change-not-allowed",
        with_(CLAIM, metadata__name="valid-claim-2"),
        CLAIM,
        "1.37",
        {},
        None,
        [("metadata.name", "Invalid")],
    ),
    ("update/drop-fields-admin-access", C_ADMIN, CLAIM, "1.35", {"DRAAdminAccess": False}, CLAIM, []),
    ("update/keep-fields-admin-access", C_ADMIN, CLAIM, "1.37", {}, None, IMMUTABLE),
    ("update/keep-existing-fields-admin-access", C_ADMIN, C_ADMIN, "1.37", {}, C_ADMIN, []),
    (
        "update/drop-fields-prioritized-list",
        C_PRIO,
        CLAIM,
        "1.36",
        {"DRAPrioritizedList": False},
        None,
        IMMUTABLE,
    ),
    ("update/keep-fields-prioritized-list", C_PRIO, CLAIM, "1.37", {}, None, IMMUTABLE),
    ("update/keep-existing-fields-prioritized-list", C_PRIO, C_PRIO, "1.37", {}, C_PRIO, []),
    (
        "update/keep-existing-fields-prioritized-list-disabled-feature",
        C_PRIO,
        C_PRIO,
        "1.36",
        {"DRAPrioritizedList": False},
        C_PRIO,
        [],
    ),
    ("update/keep-existing-fields-consumable-capacity", C_CAPACITY, C_CAPACITY, "1.37", {}, C_CAPACITY, []),
    (
        "update/keep-existing-fields-consumable-capacity-disabled-feature",
        C_CAPACITY,
        C_CAPACITY,
        "1.37",
        {"DRAConsumableCapacity": False},
        C_CAPACITY,
        [],
    ),
    (
        "update/drop-fields-consumable-capacity-disabled-feature",
        C_CAPACITY,
        CLAIM,
        "1.37",
        {"DRAConsumableCapacity": False},
        CLAIM,
        [],
    ),
    (
        "update/drop-fields-consumable-capacity-disabled-feature-with-prioritized-list",
        C_PRIO_CAPACITY,
        C_PRIO,
        "1.37",
        {"DRAConsumableCapacity": False},
        C_PRIO,
        [],
    ),
    ("update/drop-fields-device-taints", C_TAINTS, CLAIM, "1.35", {}, CLAIM, []),
    ("update/keep-fields-device-taints", C_TAINTS, CLAIM, "1.37", {}, None, IMMUTABLE),
    ("update/keep-existing-fields-device-taints", C_TAINTS, C_TAINTS, "1.37", {}, C_TAINTS, []),
    (
        "update/keep-existing-fields-device-taints-disabled-feature",
        C_TAINTS,
        C_TAINTS,
        "1.35",
        {},
        C_TAINTS,
        [],
    ),
    ("update/drop-fields-device-taints-in-prioritized-list", C_PRIO_TAINTS, C_PRIO, "1.35", {}, C_PRIO, []),
    (
        "update/keep-fields-device-taints-in-prioritized-list",
        C_PRIO_TAINTS,
        C_PRIO,
        "1.37",
        {},
        None,
        IMMUTABLE,
    ),
    (
        "update/keep-existing-fields-device-taints-in-prioritized-list",
        C_PRIO_TAINTS,
        C_PRIO_TAINTS,
        "1.37",
        {},
        C_PRIO_TAINTS,
        [],
    ),
    (
        "update/keep-existing-fields-device-taints-in-prioritized-list-disabled-feature",
        C_PRIO_TAINTS,
        C_PRIO_TAINTS,
        "1.35",
        {},
        C_PRIO_TAINTS,
        [],
    ),
    # TestStrategyUpdateWithDerivedAttributes
    (
        "update/drop-derived-attributes-not-in-use",
        C_DERIVED,
        C_DERIVED_STRIPPED,
        "1.37",
        {},
        C_DERIVED_STRIPPED,
        [],
    ),
    (
        "update/derived-attributes-spec-immutable",
        C_DERIVED,
        C_DERIVED_STRIPPED,
        "1.37",
        {"DRADerivedAttributes": True},
        None,
        IMMUTABLE,
    ),
    (
        "update/keep-derived-attributes-in-use",
        C_DERIVED,
        C_DERIVED,
        "1.37",
        {"DRADerivedAttributes": True},
        C_DERIVED,
        [],
    ),
    (
        "update/keep-derived-attributes-in-use-disabled-feature",
        C_DERIVED,
        C_DERIVED,
        "1.37",
        {},
        C_DERIVED,
        [],
    ),
    # TestStatusStrategyUpdate (the status subresource keeps the old spec: the new objects here carry it)
    (
        "status/drop-fields-admin-access",
        with_(C_STATUS, status=C_ADMIN_STATUS["status"]),
        CLAIM,
        "1.35",
        {"DRAAdminAccess": False},
        C_STATUS,
        [],
    ),
    (
        "status/keep-fields-admin-access",
        with_(C_STATUS, status=C_ADMIN_STATUS["status"]),
        CLAIM,
        "1.37",
        {},
        with_(C_STATUS, status=C_ADMIN_STATUS["status"]),
        [],
    ),
    (
        "status/keep-fields-admin-access-because-of-spec",
        C_ADMIN_STATUS,
        C_ADMIN,
        "1.35",
        {"DRAAdminAccess": False},
        C_ADMIN_STATUS,
        [],
    ),
    (
        "status/keep-fields-admin-access-because-of-status",
        with_(C_ADMIN_STATUS, spec__devices__requests__0__exactly__adminAccess=False),
        with_(C_ADMIN_STATUS, spec__devices__requests__0__exactly__adminAccess=False),
        "1.35",
        {"DRAAdminAccess": False},
        with_(C_ADMIN_STATUS, spec__devices__requests__0__exactly__adminAccess=False),
        [],
    ),
    (
        "status/drop-fields-devices-status",
        C_DEV_STATUS_NEW,
        C_DEV_STATUS_OLD,
        "1.36",
        {"DRAResourceClaimDeviceStatus": False},
        C_DEV_STATUS_OLD,
        [],
    ),
    (
        "status/keep-fields-devices-status-disable-feature-gate",
        C_DEV_STATUS_NEW,
        C_DEV_STATUS_NEW,
        "1.36",
        {"DRAResourceClaimDeviceStatus": False},
        C_DEV_STATUS_NEW,
        [],
    ),
    (
        "status/keep-fields-devices-status",
        C_DEV_STATUS_NEW,
        C_DEV_STATUS_OLD,
        "1.37",
        {},
        C_DEV_STATUS_NEW,
        [],
    ),
    ("status/keep-fields-binding-conditions", C_BINDING, CLAIM, "1.37", {}, C_BINDING, []),
    (
        "status/keep-exist-fields-disable-bindingconditions-feature-gate",
        C_BINDING,
        C_BINDING,
        "1.37",
        {"DRADeviceBindingConditions": False},
        C_BINDING,
        [],
    ),
    (
        "status/drop-fields-binding-conditions",
        C_BINDING,
        CLAIM,
        "1.37",
        {"DRADeviceBindingConditions": False},
        C_STATUS,
        [],
    ),
    (
        "status/drop-fields-binding-conditions-disable-feature-gate",
        C_BINDING,
        CLAIM,
        "1.36",
        {"DRADeviceBindingConditions": False, "DRAResourceClaimDeviceStatus": False},
        C_STATUS,
        [],
    ),
    (
        "status/keep-fields-optional-node-operations",
        C_SKIP_OPS,
        CLAIM,
        "1.37",
        {"DRAOptionalNodeOperations": True},
        C_SKIP_OPS,
        [],
    ),
    (
        "status/keep-existing-fields-disable-optional-node-operations-feature-gate",
        C_SKIP_OPS,
        C_SKIP_OPS,
        "1.37",
        {},
        C_SKIP_OPS,
        [],
    ),
    ("status/drop-fields-optional-node-operations", C_SKIP_OPS, CLAIM, "1.37", {}, C_STATUS, []),
    (
        "status/keep-fields-consumable-capacity-with-device-status",
        C_CC_NEW,
        C_CC_OLD,
        "1.36",
        {"DRAPrioritizedList": False},
        C_CC_NEW,
        [],
    ),
    (
        "status/keep-fields-consumable-capacity-disabled-feature-gate-with-device-status",
        C_CC_NEW,
        C_CC_OLD,
        "1.37",
        {"DRAConsumableCapacity": False},
        C_CC_NEW,
        [],
    ),
    (
        "status/keep-fields-consumable-capacity-with-device-status-disabled-feature-gate",
        C_CC_NEW,
        C_CC_OLD,
        "1.36",
        {"DRAResourceClaimDeviceStatus": False},
        C_CC_OLD,
        [],
    ),
    (
        "status/drop-fields-consumable-capacity-disabled-feature-gate-with-device-status",
        with_(C_CC_NEW, spec=CLAIM["spec"]),
        CLAIM,
        "1.37",
        {"DRAConsumableCapacity": False},
        with_(C_DEV_STATUS_NEW, spec=CLAIM["spec"]),
        [],
    ),
    (
        "status/drop-fields-consumable-capacity-disabled-feature-gate-with-device-status-default-shareid",
        C_DEV_STATUS_NEW,
        CLAIM,
        "1.37",
        {"DRAConsumableCapacity": False},
        C_DEV_STATUS_NEW,
        [],
    ),
]


@pytest.mark.parametrize(
    "new,old,version,gates,expect,errs", [c[1:] for c in CLAIM_CASES], ids=[c[0] for c in CLAIM_CASES]
)
def test_claim_strategy(new, old, version, gates, expect, errs) -> None:
    obj, found = run(new, old, version, gates, ADMIN_NS)
    assert found == Counter(errs)
    if expect is not None:
        assert obj == defaulted(expect)
