"""Upstream conformance: ResourceSlice cases of kubernetes/kubernetes, translated into our own manifests.

Sources (translated case by case, names kept so a failure can be traced back):
- `pkg/apis/resource/validation/validation_resourceslice_test.go`: TestValidateResourceSlice (CREATE) and
  TestValidateResourceSliceUpdate (UPDATE);
- `pkg/registry/resource/resourceslice/declarative_validation_test.go`: TestDeclarativeValidate and
  TestDeclarativeValidateUpdate (v1 only).

Every case goes through the public pipeline (`webhook.validate.object_violations`) with every DRA gate on (so
no field is stripped) and the gates the upstream case sets. We compare the multiset of
(field path, error type) of every *error* with upstream's expected `field.ErrorList`; warnings (lint)
are not part of the API server's answer and are ignored.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.validate import object_violations

DRIVER = "test.example.com"
GOOD = "foo"
BAD = "!@#$%^"
MAX_INT64 = 2**63 - 1

GATES = {
    "DRAListTypeAttributes": True,
    "DRANodeAllocatableResources": True,
    "DRAOptionalNodeOperations": True,
    "DRADeviceCompatibilityGroups": True,
    "DRAPartitionableDevicesType": True,
    "DRAResourcePoolStatus": True,
    "DRAConsumableCapacity": True,
    "DRAFractionalCapacityRange": False,  # upstream tests default every gate they toggle to off
}

_TYPES = {
    "Required value": "Required",
    "Invalid value": "Invalid",
    "Too long": "TooLong",
    "Too many": "TooMany",
    "Duplicate value": "Duplicate",
    "Unsupported value": "NotSupported",
    "Forbidden": "Forbidden",
    "Not found": "NotFound",
}


def error_type(message: str) -> str:
    for prefix, name in _TYPES.items():
        if message.startswith(prefix):
            return name
    return "Other"


# --- builders (our own equivalents of the upstream test helpers) -----------------------------------


def attributes() -> dict[str, Any]:
    return {
        "int": {"int": 42},
        "string": {"string": "hello world"},
        "version": {"version": "1.2.3"},
        "bool": {"bool": True},
    }


def counters(n: int | None = None) -> dict[str, Any]:
    if n is None:
        return {"memory": {"value": "1Gi"}}
    return {f"memory-{i}": {"value": "1Gi"} for i in range(n)}


def consumes(n: int) -> list[dict[str, Any]]:
    return [{"counterSet": f"counterset-{i}", "counters": counters()} for i in range(n)]


def counter_sets(n: int) -> list[dict[str, Any]]:
    return [{"name": f"counterset-{i}", "counters": counters()} for i in range(n)]


def slice_(name: str = GOOD, node: str = GOOD, driver: str = DRIVER, n: int = 1) -> dict[str, Any]:
    """`testResourceSlice`: n devices with four attributes and one capacity."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "driver": driver,
            "pool": {"name": node, "resourceSliceCount": 1, "generation": 0},
            "devices": [
                {"name": f"device-{d}", "attributes": attributes(), "capacity": {"memory": {"value": "1Gi"}}}
                for d in range(n)
            ],
        },
    }


def shared_counters_slice(n: int) -> dict[str, Any]:
    s = slice_()
    del s["spec"]["devices"]
    s["spec"]["sharedCounters"] = counter_sets(n)
    return s


def binding_slice(conds: list[str] | None, fails: list[str] | None) -> dict[str, Any]:
    s = slice_()
    d = s["spec"]["devices"][0]
    if conds is not None:
        d["bindingConditions"] = conds
    if fails is not None:
        d["bindingFailureConditions"] = fails
    return s


def node_allocatable_slice() -> dict[str, Any]:
    s = slice_()
    d = s["spec"]["devices"][0]
    d["capacity"] = {"dra.example.com/cpu": {"value": "100"}, "dra.example.com/memory": {"value": "100Gi"}}
    mapping = {"mapping": {"capacityMultiplier": "1", "capacityKey": "dra.example.com/cpu"}}
    d["nodeAllocatableResources"] = {"cpu": copy.deepcopy(mapping), "memory": copy.deepcopy(mapping)}
    return s


def with_nar(resources: dict[str, Any], base: Callable[[], dict[str, Any]] = node_allocatable_slice):
    s = base()
    s["spec"]["devices"][0]["nodeAllocatableResources"] = resources
    return s


def consumable_slice(name: str = GOOD, n: int = 1) -> dict[str, Any]:
    """`testResourceSliceWithConsumableCapacity`: capacity `a` with a validValues policy."""
    s = slice_(name, name, DRIVER if name == GOOD else name, n)
    for d in s["spec"]["devices"]:
        del d["attributes"]
        d["allowMultipleAllocations"] = True
        d["capacity"] = {
            "a": {"value": "100", "requestPolicy": {"default": "10", "validValues": ["5", "10", "100"]}}
        }
    return s


def cap(s: dict[str, Any], i: int) -> dict[str, Any]:
    return s["spec"]["devices"][i]["capacity"]["a"]


def policy(s: dict[str, Any], i: int) -> dict[str, Any]:
    return cap(s, i)["requestPolicy"]


def mutate(obj: dict[str, Any], *fns: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    for fn in fns:
        fn(obj)
    return obj


def cc(path: int) -> str:
    return f"spec.devices[{path}].capacity[a]"


# --- the table -------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    obj: dict[str, Any]
    want: list[tuple[str, str]] = field(default_factory=list)
    gates: dict[str, bool] = field(default_factory=dict)
    old: dict[str, Any] | None = None
    note: str = ""


CASES: list[Case] = []


def case(name: str, obj: dict[str, Any], *want: tuple[str, str], **kw: Any) -> None:
    CASES.append(Case(name, obj, list(want), **kw))


def D(i: int) -> str:  # noqa: N802 - short path helper
    return f"spec.devices[{i}]"


# TestValidateResourceSlice -------------------------------------------------------------------------

case("good", slice_(n=128))
case("too-large", slice_(driver=GOOD, n=129), ("spec.devices", "TooMany"))


def _taint_all(s: dict[str, Any]) -> dict[str, Any]:
    for d in s["spec"]["devices"]:
        d["taints"] = [{"key": "example.com/taint", "effect": "NoExecute"}]
    return s


case("good-taints", _taint_all(slice_(driver=GOOD, n=64)))
case("too-large-taints", _taint_all(slice_(driver=GOOD, n=65)), ("spec.devices", "TooMany"))


def _pta(s: dict[str, Any], name: str, consuming: tuple[int, ...] = (0,)) -> dict[str, Any]:
    for i in consuming:
        s["spec"]["devices"][i]["consumesCounters"] = consumes(1)
    s["spec"]["partitionTypeAttribute"] = name
    return s


case("good-partition-type-attribute", _pta(slice_(), DRIVER + "/string"))
_exempt = _pta(slice_(n=2), DRIVER + "/string")
del _exempt["spec"]["devices"][1]["attributes"]
case("good-partition-type-attribute-with-exempt-device", _exempt)
case(
    "partition-type-attribute-without-partitionable-devices",
    _pta(slice_(), DRIVER + "/string", ()),
    ("spec.partitionTypeAttribute", "Invalid"),
)
_on_shared = shared_counters_slice(1)
_on_shared["spec"]["partitionTypeAttribute"] = DRIVER + "/string"
case(
    "partition-type-attribute-on-shared-counters-slice",
    _on_shared,
    ("spec.partitionTypeAttribute", "Invalid"),
)
case(
    "partition-type-attribute-missing-on-partitionable-device",
    _pta(slice_(), "gpu.example.com/profile"),
    ("spec.devices[0].attributes[gpu.example.com/profile]", "Required"),
)
case(
    "partition-type-attribute-not-a-string",
    _pta(slice_(), DRIVER + "/int"),
    (f"spec.devices[0].attributes[{DRIVER}/int]", "Invalid"),
)
_explicit = _pta(slice_(), DRIVER + "/string")
_explicit["spec"]["devices"][0]["attributes"][DRIVER + "/string"] = {"int": 1}
case(
    "partition-type-attribute-explicit-form-wins",
    _explicit,
    (f"spec.devices[0].attributes[{DRIVER}/string]", "Invalid"),
)

case("missing-name", slice_(name=""), ("metadata.name", "Required"))
case("bad-name", slice_(name=BAD), ("metadata.name", "Invalid"))
case("generate-name", mutate(slice_(), lambda s: s["metadata"].update(generateName="prefix-")))
_META: dict[str, Any] = {
    "uid": {"uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"},
    "resource-version": {"resourceVersion": "1"},
    "generation": {"generation": 100},
    "creation-timestamp": {"creationTimestamp": "2025-01-02T03:04:05Z"},
    "deletion-grace-period-seconds": {"deletionGracePeriodSeconds": 10},
    "owner-references": {
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "pod", "name": "foo", "uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"}
        ]
    },
    "finalizers": {"finalizers": ["example.com/foo"]},
    "managed-fields": {
        "managedFields": [
            {"fieldsType": "FieldsV1", "operation": "Apply", "apiVersion": "apps/v1", "manager": "foo"}
        ]
    },
    "good-labels": {"labels": {"apps.kubernetes.io/name": "test"}},
    "good-annotations": {"annotations": {"foo": "bar"}},
}
for _name, _meta in _META.items():
    case(_name, mutate(slice_(), lambda s, m=_meta: s["metadata"].update(m)))
case(
    "bad-labels",
    mutate(slice_(), lambda s: s["metadata"].update(labels={"hello-world": "spaces not allowed"})),
    ("metadata.labels", "Invalid"),
)
case(
    "bad-annotations",
    mutate(slice_(), lambda s: s["metadata"].update(annotations={BAD: "hello world"})),
    ("metadata.annotations", "Invalid"),
)
case("bad-nodename", slice_(node=BAD), ("spec.pool.name", "Invalid"), ("spec.nodeName", "Invalid"))
case(
    "bad-multi-pool-name",
    slice_(node=BAD + "/" + BAD),
    ("spec.pool.name", "Invalid"),
    ("spec.pool.name", "Invalid"),
    ("spec.nodeName", "Invalid"),
)
case("good-pool-name", mutate(slice_(), lambda s: s["spec"]["pool"].update(name="x" * 253)))
case(
    "bad-pool",
    mutate(
        slice_(),
        lambda s: s["spec"]["pool"].update(name="x/" * 126 + "xy", resourceSliceCount=0, generation=-1),
    ),
    ("spec.pool.name", "TooLong"),
    ("spec.pool.resourceSliceCount", "Invalid"),
    ("spec.pool.generation", "Invalid"),
)
case(
    "missing-pool-name",
    mutate(slice_(), lambda s: s["spec"]["pool"].update(name="")),
    ("spec.pool.name", "Required"),
)


def _selector_only(s: dict[str, Any], selector: dict[str, Any]) -> dict[str, Any]:
    del s["spec"]["nodeName"]
    s["spec"]["nodeSelector"] = selector
    return s


case(
    "bad-empty-node-selector",
    _selector_only(slice_(), {}),
    ("spec.nodeSelector.nodeSelectorTerms", "Required"),
    ("spec.nodeSelector.nodeSelectorTerms", "Invalid"),
)
_match_worker = {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]
}
case(
    "bad-node-selection",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="worker", nodeSelector=_match_worker)),
    ("spec", "Invalid"),
)
case(
    "bad-node-selection-all-nodes",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="worker", allNodes=True)),
    ("spec", "Invalid"),
)
case("empty-node-selection", mutate(slice_(), lambda s: s["spec"].pop("nodeName")), ("spec", "Required"))
case("bad-drivername", slice_(driver=BAD), ("spec.driver", "Invalid"))
case(
    "both-shared-counters-and-devices",
    mutate(
        slice_(), lambda s: s["spec"].update(sharedCounters=[{"name": "counterset", "counters": counters()}])
    ),
    ("spec", "Invalid"),
)
case(
    "bad-devices",
    mutate(slice_(driver=GOOD, n=3), lambda s: s["spec"]["devices"][1].update(name=BAD)),
    ("spec.devices[1].name", "Invalid"),
)


def _attrs(s: dict[str, Any], per_device: dict[int, dict[str, Any]]) -> dict[str, Any]:
    for i, a in per_device.items():
        s["spec"]["devices"][i]["attributes"] = a
    return s


case(
    "bad-attribute",
    _attrs(
        slice_(driver=GOOD, n=5),
        {
            1: {BAD: {}},
            2: {GOOD: {"string": "x", "version": "1.2.3"}},
            3: {GOOD: {"version": "x" * 65}},
            4: {GOOD: {"string": "x" * 65}},
        },
    ),
    ("spec.devices[1].attributes", "Invalid"),
    (f"spec.devices[1].attributes[{BAD}]", "Invalid"),
    ("spec.devices[2].attributes[foo]", "Invalid"),
    ("spec.devices[3].attributes[foo].version", "Invalid"),
    ("spec.devices[3].attributes[foo].version", "TooLong"),
    ("spec.devices[4].attributes[foo].string", "TooLong"),
)
case(
    "good-list-attribute",
    _attrs(
        slice_(driver=GOOD, n=4),
        {
            0: {GOOD: {"bools": [True]}},
            1: {GOOD: {"ints": [1]}},
            2: {GOOD: {"strings": ["x"]}},
            3: {GOOD: {"versions": ["1.2.3"]}},
        },
    ),
)
case(
    "bad-list-attribute",
    _attrs(
        slice_(driver=GOOD, n=8),
        {
            0: {GOOD: {"ints": [1], "bools": [True]}},
            1: {GOOD: {"ints": [1], "bools": [True], "strings": []}},
            2: {GOOD: {"strings": ["x" * 65]}},
            3: {GOOD: {"versions": ["x" * 65]}},
            4: {GOOD: {"bools": []}},
            5: {GOOD: {"ints": []}},
            6: {GOOD: {"strings": []}},
            7: {GOOD: {"versions": []}},
        },
    ),
    ("spec.devices[0].attributes[foo]", "Invalid"),
    ("spec.devices[1].attributes[foo].strings", "Invalid"),
    ("spec.devices[1].attributes[foo]", "Invalid"),
    ("spec.devices[2].attributes[foo].strings[0]", "TooLong"),
    ("spec.devices[3].attributes[foo].versions[0]", "Invalid"),
    ("spec.devices[3].attributes[foo].versions[0]", "TooLong"),
    ("spec.devices[4].attributes[foo].bools", "Invalid"),
    ("spec.devices[5].attributes[foo].ints", "Invalid"),
    ("spec.devices[6].attributes[foo].strings", "Invalid"),
    ("spec.devices[7].attributes[foo].versions", "Invalid"),
)
for _kind, _values in (
    ("ints", [1, 2, 3]),
    ("bools", [True, False, True]),
    ("strings", ["a", "b", "c"]),
    ("versions", ["1.0.0", "2.0.0", "3.0.0"]),
):
    _max = slice_(driver=GOOD, n=64)
    for _d in _max["spec"]["devices"]:
        _d["attributes"][_kind] = {_kind: list(_values)}
    case(f"max-devices-with-list-of-{_kind[:-1]}-attributes", _max)
    _over = slice_(driver=GOOD, n=65)
    _over["spec"]["devices"][0]["attributes"][_kind] = {_kind: list(_values)}
    case(f"too-many-devices-with-list-of-{_kind[:-1]}-attributes", _over, ("spec.devices", "TooMany"))

case(
    "good-attribute-names",
    _attrs(
        slice_(driver=GOOD, n=2),
        {1: {"x" * 32: {"string": "y"}, "x" * 63 + "/" + "y" * 32: {"string": "z"}}},
    ),
)
case(
    "bad-attribute-c-identifier",
    _attrs(slice_(driver=GOOD, n=2), {1: {"." * 33: {"string": "y"}}}),
    ("spec.devices[1].attributes", "TooLong"),
    ("spec.devices[1].attributes", "Invalid"),
)
case(
    "bad-attribute-domain",
    _attrs(slice_(driver=GOOD, n=2), {1: {"_" * 64 + "/y": {"string": "z"}}}),
    ("spec.devices[1].attributes", "TooLong"),
    ("spec.devices[1].attributes", "Invalid"),
)
case(
    "bad-key-too-long",
    _attrs(slice_(driver=GOOD, n=2), {1: {"x" * 64 + "/" + "y" * 33: {"string": "z"}}}),
    ("spec.devices[1].attributes", "TooLong"),
    ("spec.devices[1].attributes", "TooLong"),
)
case(
    "bad-attribute-empty-domain-and-c-identifier",
    _attrs(slice_(driver=GOOD, n=2), {1: {"/": {"string": "z"}}}),
    ("spec.devices[1].attributes", "Invalid"),
    ("spec.devices[1].attributes", "Invalid"),
)


def _combined() -> dict[str, Any]:
    s = slice_(driver=GOOD, n=5)
    devs = s["spec"]["devices"]
    many_attrs = {f"attr_{i}": {"string": "x"} for i in range(32)}
    devs[0]["attributes"] = copy.deepcopy(many_attrs)
    del devs[0]["capacity"]
    devs[1]["attributes"] = {}
    devs[1]["capacity"] = {f"cap_{i}": {"value": "1Gi"} for i in range(32)}
    devs[3]["attributes"] = copy.deepcopy(many_attrs)
    devs[3]["capacity"] = {"cap": {"value": "1Gi"}}
    return s


case("combined-attributes-capacity-length", _combined(), ("spec.devices[3]", "Invalid"))


def _string_lists(total: int) -> dict[str, Any]:
    """31 list attributes holding `total` strings together (the first one takes the surplus)."""
    out: dict[str, Any] = {}
    for i in range(31):
        out[f"list_attr_{i}"] = {"strings": ["x"] * (total - 30 if i == 0 else 1)}
    return out


def _max_values() -> dict[str, Any]:
    s = slice_(driver=GOOD, n=14)
    devs = s["spec"]["devices"]
    extras: list[tuple[int, dict[str, Any]]] = [
        (48, {}),
        (48, {"int": 1}),
        (48, {"bool": True}),
        (48, {"string": "x"}),
        (48, {"version": "1.0.0"}),
        (48, {"ints": [1]}),
        (48, {"bools": [True]}),
        (48, {"strings": ["extra"]}),
        (48, {"versions": ["1.0.0"]}),
    ]
    for i, (total, extra) in enumerate(extras):
        devs[i]["attributes"] = _string_lists(total)
        if extra:
            devs[i]["attributes"]["extra_attr"] = extra
        del devs[i]["capacity"]
    devs[9]["attributes"] = {
        "mixed_list_attrs": {"strings": ["x"] * 46, "ints": [1], "bools": [True], "versions": ["1.0.0"]}
    }
    del devs[9]["capacity"]
    for i, extra in (
        (10, {"bools": [True, False]}),
        (11, {"ints": [1, 2]}),
        (12, {"strings": ["a", "b"]}),
        (13, {"versions": ["1.0.0", "1.0.1"]}),
    ):
        devs[i]["attributes"] = _string_lists(47)
        devs[i]["attributes"]["extra_attr"] = extra
        del devs[i]["capacity"]
    return s


case(
    "max-attribute-values-with-list",
    _max_values(),
    *[(D(i), "Invalid") for i in range(1, 14)],
    ("spec.devices[9].attributes[mixed_list_attrs]", "Invalid"),
)


def _policy_dev1(multi: bool, request_policy: dict[str, Any]) -> dict[str, Any]:
    s = slice_(driver=GOOD, n=2)
    d = s["spec"]["devices"][1]
    if multi:
        d["allowMultipleAllocations"] = True
    d["capacity"] = {"cap": {"value": "1Gi", "requestPolicy": request_policy}}
    return s


case(
    "forbidden-request-policy-on-single-allocatable-capacity",
    _policy_dev1(False, {"default": "1Mi", "validRange": {"min": "1Mi"}}),
    ("spec.devices[1].capacity[cap].requestPolicy", "Forbidden"),
)
for _name, _step in (("zero", "0"), ("negative", "-1Mi")):
    case(
        f"invalid-request-policy-{_name}-step",
        _policy_dev1(True, {"default": "10Mi", "validRange": {"min": "1Mi", "max": "100Mi", "step": _step}}),
        ("spec.devices[1].capacity[cap].requestPolicy.validRange.step", "Invalid"),
    )

MAX_MILLI = f"{MAX_INT64}m"


def _consumable_table(fractional: bool) -> dict[str, Any]:
    s = consumable_slice(n=12)
    cap(s, 1)["value"] = "-1"
    policy(s, 2)["default"] = "-1"
    del policy(s, 3)["validValues"]
    policy(s, 4)["validRange"] = {"min": "10"}
    policy(s, 5).update(validRange={"min": "1"})
    del policy(s, 5)["validValues"]
    policy(s, 6).update(default="10.1", validValues=["5.1", "10.1", "100"])
    policy(s, 7).update(default="1.05", validRange={"min": "1.1"})
    del policy(s, 7)["validValues"]
    policy(s, 8)["validValues"][0] = "9.9"
    cap(s, 9)["value"] = str(MAX_INT64)
    policy(s, 9).clear()
    policy(s, 9).update(default=str(MAX_INT64), validRange={"min": "0", "step": "1", "max": str(MAX_INT64)})
    cap(s, 10)["value"] = MAX_MILLI
    policy(s, 10).clear()
    policy(s, 10).update(default=MAX_MILLI, validRange={"min": "0", "step": "1m", "max": MAX_MILLI})
    cap(s, 11)["value"] = str(MAX_INT64)
    policy(s, 11).clear()
    policy(s, 11).update(default=str(MAX_INT64), validRange={"min": "0", "step": "1m", "max": str(MAX_INT64)})
    return s


_CONSUMABLE_COMMON = [
    (cc(1) + ".requestPolicy.validValues[0]", "Invalid"),
    (cc(1) + ".requestPolicy.validValues[1]", "Invalid"),
    (cc(1) + ".requestPolicy.validValues[2]", "Invalid"),
    (cc(2) + ".requestPolicy.validValues", "Invalid"),
    (cc(4) + ".requestPolicy", "Forbidden"),
    (cc(7) + ".requestPolicy.validRange.default", "Invalid"),
]
case(
    "consumable-capacity-integer",
    _consumable_table(False),
    *_CONSUMABLE_COMMON,
    (cc(8) + ".requestPolicy.validValues[1]", "Duplicate"),
    gates={"DRAFractionalCapacityRange": False},
)
case(
    "consumable-capacity-fractional",
    _consumable_table(True),
    *_CONSUMABLE_COMMON,
    (cc(11) + ".requestPolicy.validRange.default", "Invalid"),
    (cc(11) + ".requestPolicy.validRange.max", "Invalid"),
    gates={"DRAFractionalCapacityRange": True},
)
case(
    "invalid-node-selecor-label-value",
    _selector_only(
        slice_(driver=GOOD, n=3),
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-1"]}]}]},
    ),
    ("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "Invalid"),
)
_T = "spec.devices[0].taints"
case(
    "taints",
    mutate(
        slice_(driver=GOOD, n=3),
        lambda s: s["spec"]["devices"][0].update(
            taints=[
                {"key": "example.com/taint", "effect": "NoExecute"},
                {
                    "key": "taint",
                    "value": "tainted",
                    "effect": "NoSchedule",
                    "timeAdded": "2025-01-02T03:04:05Z",
                },
                {"key": "", "effect": ""},
                {"key": BAD, "value": BAD, "effect": "some-other-effect"},
            ]
        ),
    ),
    (f"{_T}[2].key", "Invalid"),
    (f"{_T}[2].key", "Invalid"),
    (f"{_T}[2].effect", "Required"),
    (f"{_T}[3].key", "Invalid"),
    (f"{_T}[3].value", "Invalid"),
    (f"{_T}[3].effect", "NotSupported"),
)
case(
    "too-many-taints",
    mutate(
        slice_(),
        lambda s: s["spec"]["devices"][0].update(
            taints=[{"key": "example.com/taint", "effect": "NoExecute"} for _ in range(17)]
        ),
    ),
    (_T, "TooMany"),
)
case(
    "bad-PerDeviceNodeSelection",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="worker", perDeviceNodeSelection=True)),
    ("spec", "Invalid"),
    ("spec.devices[0]", "Required"),
)
case(
    "invalid-false-PerDeviceNodeSelection",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="worker", perDeviceNodeSelection=False)),
    ("spec.perDeviceNodeSelection", "Invalid"),
)
case(
    "invalid-false-AllNodes",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="worker", allNodes=False)),
    ("spec.allNodes", "Invalid"),
)
case(
    "invalid-empty-NodeName",
    mutate(slice_(), lambda s: s["spec"].update(nodeName="", allNodes=True)),
    ("spec.nodeName", "Invalid"),
)


def _per_device(node_name: str, all_nodes: bool) -> dict[str, Any]:
    s = slice_()
    del s["spec"]["nodeName"]
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0].update(nodeName=node_name, allNodes=all_nodes)
    return s


case(
    "invalid-node-selector-in-basicdevice",
    _per_device("", False),
    ("spec.devices[0].nodeName", "Invalid"),
    ("spec.devices[0].allNodes", "Invalid"),
    ("spec.devices[0]", "Required"),
)
case("bad-node-selector-in-basicdevice", _per_device("worker", True), ("spec.devices[0]", "Invalid"))


def _sets(*sets: dict[str, Any]) -> dict[str, Any]:
    s = shared_counters_slice(0)
    s["spec"]["sharedCounters"] = list(sets)
    return s


case(
    "missing-name-shared-counters",
    _sets({"name": "", "counters": counters()}),
    ("spec.sharedCounters[0].name", "Required"),
)
case(
    "bad-name-shared-counters",
    _sets({"name": BAD, "counters": counters()}),
    ("spec.sharedCounters[0].name", "Invalid"),
)
case(
    "missing-counter-shared-counters",
    _sets({"name": GOOD}),
    ("spec.sharedCounters[0].counters", "Required"),
)
case(
    "bad-countername-shared-counters",
    _sets({"name": GOOD, "counters": {BAD: {"value": "1Gi"}}}),
    ("spec.sharedCounters[0].counters", "Invalid"),
)
case(
    "duplicate-shared-counters",
    _sets({"name": GOOD, "counters": counters()}, {"name": GOOD, "counters": counters()}),
    ("spec.sharedCounters[1]", "Duplicate"),
)
case("max-shared-counters", _sets(*counter_sets(8)))
case("too-many-shared-counters", _sets(*counter_sets(9)), ("spec.sharedCounters", "TooMany"))
case("max-counters-in-counter-set", _sets({"name": "counterset-0", "counters": counters(32)}))
case(
    "too-many-counters-in-counter-set",
    _sets({"name": "counterset-0", "counters": counters(33)}),
    ("spec.sharedCounters[0].counters", "TooMany"),
)


def _consuming(consumptions: list[dict[str, Any]], bare: bool = False) -> dict[str, Any]:
    s = slice_()
    d = s["spec"]["devices"][0]
    if bare:
        del d["attributes"], d["capacity"]
    d["consumesCounters"] = consumptions
    return s


_CC = "spec.devices[0].consumesCounters"
case(
    "missing-name-counterset-consumes-counter",
    _consuming([{"counterSet": "", "counters": counters()}]),
    (f"{_CC}[0].counterSet", "Required"),
)
case(
    "bad-name-counterset-consumes-counter",
    _consuming([{"counterSet": BAD, "counters": counters()}]),
    (f"{_CC}[0].counterSet", "Invalid"),
)
case(
    "duplicate-counterset-consumes-counter",
    _consuming([{"counterSet": GOOD, "counters": counters()}, {"counterSet": GOOD, "counters": counters()}]),
    (f"{_CC}[1]", "Duplicate"),
)
case(
    "missing-counter-consumes-counter",
    _consuming([{"counterSet": "counterset-0"}]),
    (f"{_CC}[0].counters", "Required"),
)
case("max-device-counter-consumption-for-device", _consuming(consumes(2), bare=True))
case(
    "too-many-device-counter-consumption-for-device",
    _consuming(consumes(3), bare=True),
    (_CC, "TooMany"),
)
case(
    "max-counters-in-device-counter-consumption",
    _consuming([{"counterSet": "counterset-0", "counters": counters(32)}], bare=True),
)
case(
    "too-many-counters-in-device-counter-consumption",
    _consuming([{"counterSet": "counterset-0", "counters": counters(33)}], bare=True),
    (f"{_CC}[0].counters", "TooMany"),
)
_all_consume = slice_(driver=GOOD, n=64)
for _d in _all_consume["spec"]["devices"]:
    _d["consumesCounters"] = consumes(1)
case("max-number-of-devices-with-consumes-counters", _all_consume)
_one_consumes = slice_(driver=GOOD, n=65)
_one_consumes["spec"]["devices"][0]["consumesCounters"] = consumes(1)
case("too-many-devices-with-consumes-counters", _one_consumes, ("spec.devices", "TooMany"))

_BC, _BF = "spec.devices[0].bindingConditions", "spec.devices[0].bindingFailureConditions"
case(
    "good-binding-conditions",
    binding_slice(["example.com/condition1", "condition2"], ["example.com/condition3", "condition4"]),
)
case(
    "too-many-binding-conditions",
    binding_slice([f"condition{i}" for i in range(1, 6)], ["condition6", "condition7"]),
    (_BC, "TooMany"),
)
case(
    "too-many-binding-failure-conditions",
    binding_slice(["condition1", "condition2"], [f"condition{i}" for i in range(3, 8)]),
    (_BF, "TooMany"),
)
case(
    "invalid-binding-conditions",
    binding_slice(["condition1", "condition2!"], ["condition3", "condition4"]),
    (f"{_BC}[1]", "Invalid"),
)
case(
    "invalid-binding-failure-conditions",
    binding_slice(["condition1", "condition2"], ["condition3!", "condition4"]),
    (f"{_BF}[0]", "Invalid"),
)
case(
    "invalid-slice-has-binding-failure-but-no-binding-conditions",
    binding_slice(None, ["condition1", "condition2"]),
    (_BC, "Invalid"),
)
case(
    "invalid-slice-has-binding-conditions-but-no-binding-failure-conditions",
    binding_slice(["condition1", "condition2"], None),
    (_BF, "Invalid"),
)
case(
    "duplicate-binding-conditions",
    binding_slice(["condition1", "condition1"], ["condition2", "condition3"]),
    (f"{_BC}[1]", "Duplicate"),
)
case(
    "duplicate-binding-failure-conditions",
    binding_slice(["condition1", "condition2"], ["condition3", "condition3"]),
    (f"{_BF}[1]", "Duplicate"),
)
case(
    "overlapping-binding-conditions",
    binding_slice(["condition1", "condition2"], ["condition1", "condition3"]),
    (f"{_BF}[0]", "Invalid"),
)

_NAR = "spec.devices[0].nodeAllocatableResources"


def _map(**fields: Any) -> dict[str, Any]:
    return {"mapping": dict(fields)}


case("correct-node-allocatable-resource-mappings", node_allocatable_slice())
case(
    "node-allocatable-resources-both-quantityfrom",
    with_nar({"cpu": _map(capacityKey="dra.example.com/cpu", capacityMultiplier="1")}),
)
case(
    "bad-node-allocatable-resources-capacityKey-empty",
    with_nar({"cpu": _map(capacityKey="", capacityMultiplier="1")}),
    (f"{_NAR}[cpu].mapping.capacityKey", "Invalid"),
)
case(
    "bad-node-allocatable-resources-capacity-key-not-found",
    with_nar({"cpu": _map(capacityKey="nonexistent", capacityMultiplier="1")}),
    (f"{_NAR}[cpu].mapping.capacityKey", "NotFound"),
)
for _value, _label in (("-1", "negative"), ("0", "zero")):
    case(
        f"bad-node-allocatable-resources-invalid-device-multiplier-{_label}",
        with_nar({"cpu": _map(deviceMultiplier=_value)}, slice_),
        (f"{_NAR}[cpu].mapping.deviceMultiplier", "Invalid"),
    )
    case(
        f"bad-node-allocatable-resources-invalid-capacity-multiplier-{_label}",
        with_nar({"cpu": _map(capacityKey="dra.example.com/cpu", capacityMultiplier=_value)}),
        (f"{_NAR}[cpu].mapping.capacityMultiplier", "Invalid"),
    )
case(
    "capacity key not in spec.devices[].capacity",
    with_nar({"memory": _map(capacityKey="dra.example.com/hugepages", capacityMultiplier="1")}),
    (f"{_NAR}[memory].mapping.capacityKey", "NotFound"),
)
case(
    "mapped resource is not a node allocatable resource",
    with_nar({"dra.example.com/gpu": _map(capacityKey="dra.example.com/cpu", capacityMultiplier="1")}),
    (f"{_NAR}[dra.example.com/gpu]", "Invalid"),
)
for _res, _per_pod, _label in (
    ("abc", "1", "non standard resource name"),
    ("kubernetes.io/foo", "1", "kubernetes.io namespace is rejected"),
    ("ephemeral-storage", "2Gi", "ephemeral-storage is rejected"),
):
    case(_label, with_nar({_res: {"overhead": {"perPod": _per_pod}}}), (f"{_NAR}[{_res}]", "Invalid"))
case("valid hugepages resource", with_nar({"hugepages-2Mi": {"overhead": {"perPod": "2Mi"}}}))
case(
    "bad-node-allocatable-resources-overhead-neither-perpod-nor-percontainer-set",
    with_nar({"memory": {"overhead": {}}}),
    (f"{_NAR}[memory].overhead", "Invalid"),
)
case(
    "bad-node-allocatable-resources-overhead-negative-perpod",
    with_nar({"memory": {"overhead": {"perPod": "-1Gi"}}}),
    (f"{_NAR}[memory].overhead.perPod", "Invalid"),
)
case(
    "bad-node-allocatable-resources-overhead-negative-percontainer",
    with_nar({"memory": {"overhead": {"perContainer": "-500Mi"}}}),
    (f"{_NAR}[memory].overhead.perContainer", "Invalid"),
)
case(
    "good-node-allocatable-resources-overhead",
    with_nar({"memory": {"overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}),
)
case(
    "good-node-allocatable-resources-both-mapping-and-overhead-set",
    with_nar(
        {
            "cpu": {
                **_map(capacityKey="dra.example.com/cpu", capacityMultiplier="1"),
                "overhead": {"perPod": "1Gi"},
            }
        }
    ),
)
case(
    "bad-node-allocatable-resources-neither-mapping-nor-overhead-set",
    with_nar({"cpu": {}}),
    (f"{_NAR}[cpu]", "Required"),
)
case(
    "bad-node-allocatable-resources-capacity-key-set-without-multiplier",
    with_nar({"cpu": _map(capacityKey="dra.example.com/cpu")}),
    (f"{_NAR}[cpu].mapping.capacityMultiplier", "Required"),
)
case(
    "bad-node-allocatable-resources-multiplier-set-without-capacity-key",
    with_nar({"cpu": _map(capacityMultiplier="1")}),
    (f"{_NAR}[cpu].mapping.capacityKey", "Required"),
    # Not in the handwritten upstream table: capacityKey/deviceMultiplier are declarative
    # `+k8s:unionMember`s, so the declarative layer also reports "must specify one of" here.
    (f"{_NAR}[cpu].mapping", "Invalid"),
    note="union error is declarative-only (not in the handwritten table)",
)
for _ops, _label, _want in (
    (["*", "NodePrepareResources"], "valid: skipNodeOperations All and Prepare", ()),
    (
        ["NodePrepareResources", "NodeUnprepareResources"],
        "valid: skipNodeOperations Prepare and Unprepare",
        (),
    ),
    (
        ["NodePrepareResources"],
        "invalid: skipNodeOperations Prepare only",
        (("spec.skipNodeOperations", "Invalid"),),
    ),
):
    case(_label, mutate(slice_(), lambda s, o=_ops: s["spec"].update(skipNodeOperations=list(o))), *_want)


# TestValidateResourceSliceUpdate ------------------------------------------------------------------

_VALID = slice_("valid", "valid", "valid")
_VALID["metadata"]["resourceVersion"] = "1"


def _upd(name: str, old: dict[str, Any], fn: Callable[[dict[str, Any]], Any], *want, **kw) -> None:
    old = copy.deepcopy(old)
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    fn(new)
    case("update: " + name, new, *want, old=old, **kw)


_upd("valid-no-op-update", _VALID, lambda s: None)
_upd(
    "invalid-name-update",
    _VALID,
    lambda s: s["metadata"].update(name="valid-update"),
    ("metadata.name", "Invalid"),
)
_upd(
    "invalid-update-nodename",
    _VALID,
    lambda s: s["spec"].update(nodeName="valid-updated"),
    ("spec.nodeName", "Invalid"),
)
_upd(
    "invalid-update-drivername",
    _VALID,
    lambda s: s["spec"].update(driver="valid-updated"),
    ("spec.driver", "Invalid"),
)
_upd(
    "invalid-update-pool",
    _VALID,
    lambda s: s["spec"]["pool"].update(name="valid-updated"),
    ("spec.pool.name", "Invalid"),
)


def _selector(value: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [value]}]}]
    }


_upd(
    "invalid-update-to-invalid-nodeselector-label-value",
    _selector_only(copy.deepcopy(_VALID), _selector("bar")),
    lambda s: s["spec"].update(nodeSelector=_selector("-1")),
    ("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "Invalid"),
)
_BAD_TAINTS = [
    {"key": "unhealthy-power", "effect": "NoExecute"},
    {"key": "unhealthy-mem", "effect": "some-other-effect"},
]
_TAINTED = copy.deepcopy(_VALID)
_TAINTED["spec"]["devices"][0]["taints"] = copy.deepcopy(_BAD_TAINTS)
_upd(
    "invalid-new-effect-in-old-device",
    _VALID,
    lambda s: s["spec"]["devices"][0].update(taints=copy.deepcopy(_BAD_TAINTS)),
    ("spec.devices[0].taints[1].effect", "NotSupported"),
)
_upd(
    "valid-old-effect",
    _TAINTED,
    lambda s: s["spec"]["devices"][0]["attributes"].update(foo={"string": "bar"}),
)


def _append_copy(s: dict[str, Any]) -> None:
    d = copy.deepcopy(s["spec"]["devices"][0])
    d["name"] += "-other"
    s["spec"]["devices"].append(d)


_upd(
    "invalid-new-effect-in-new-device",
    _TAINTED,
    _append_copy,
    ("spec.devices[1].taints[1].effect", "NotSupported"),
)

_CONSUMABLE = consumable_slice("valid")
_FRAC_ON = {"DRAFractionalCapacityRange": True}
_FRAC_OFF = {"DRAFractionalCapacityRange": False}


def _dup_by_rounding(s: dict[str, Any]) -> None:
    policy(s, 0)["validValues"][0] = "9.9"


def _spell_twice(s: dict[str, Any]) -> None:
    policy(s, 0).update(default="5")
    policy(s, 0)["validValues"][1] = "5.0"


def _negative_min(s: dict[str, Any]) -> None:
    cap(s, 0)["requestPolicy"] = {"default": "0", "validRange": {"min": "-1", "step": "1"}}


def _huge_milli_range(s: dict[str, Any]) -> None:
    cap(s, 0)["value"] = str(MAX_INT64)
    cap(s, 0)["requestPolicy"] = {
        "default": str(MAX_INT64),
        "validRange": {"min": "0", "step": "1m", "max": str(MAX_INT64)},
    }


def _stored(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    s = copy.deepcopy(_CONSUMABLE)
    fn(s)
    return s


_VV = cc(0) + ".requestPolicy.validValues[1]"
_upd(
    "consumable-capacity-valid-values-integer",
    _CONSUMABLE,
    _dup_by_rounding,
    (_VV, "Duplicate"),
    gates=_FRAC_OFF,
)
_upd(
    "consumable-capacity-valid-values-integer-okay-if-stored",
    _stored(_dup_by_rounding),
    lambda s: None,
    gates=_FRAC_OFF,
)
_upd(
    "consumable-capacity-valid-values-spelling-fractional-gate",
    _CONSUMABLE,
    _spell_twice,
    (_VV, "Duplicate"),
    gates=_FRAC_ON,
)
_upd(
    "consumable-capacity-valid-values-spelling-fractional-gate-okay-if-stored",
    _stored(_spell_twice),
    lambda s: s["metadata"].update(labels={"updated": "true"}),
    gates=_FRAC_ON,
)
_upd(
    "consumable-capacity-valid-values-spelling-fractional-gate-rechecked",
    _stored(_spell_twice),
    lambda s: s["spec"]["devices"][0]["capacity"].update(b={"value": "1"}),
    (_VV, "Duplicate"),
    gates=_FRAC_ON,
)
_upd(
    "consumable-capacity-valid-range-out-of-int64-bound",
    _CONSUMABLE,
    _negative_min,
    (cc(0) + ".requestPolicy.validRange.min", "Invalid"),
    gates=_FRAC_OFF,
)
_upd(
    "consumable-capacity-valid-range-out-of-int64-bound-okay-if-stored",
    _stored(_negative_min),
    lambda s: None,
    gates=_FRAC_OFF,
)
_upd("consumable-capacity-valid-values-milli-values", _CONSUMABLE, _dup_by_rounding, gates=_FRAC_ON)
_upd("consumable-capacity-valid-range-integer", _CONSUMABLE, _huge_milli_range, gates=_FRAC_OFF)
_upd(
    "consumable-capacity-valid-range-integer-okay-if-stored",
    _stored(_huge_milli_range),
    lambda s: None,
    gates=_FRAC_ON,
)
_upd(
    "consumable-capacity-valid-range-milli-values",
    _CONSUMABLE,
    _huge_milli_range,
    (cc(0) + ".requestPolicy.validRange.default", "Invalid"),
    (cc(0) + ".requestPolicy.validRange.max", "Invalid"),
    gates=_FRAC_ON,
)


# TestDeclarativeValidate / TestDeclarativeValidateUpdate (v1) ---------------------------------------


def dv_devices() -> dict[str, Any]:
    """`mkResourceSliceWithDevices`."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "test-slice"},
        "spec": {
            "driver": "test.driver.io",
            "nodeName": "test-node",
            "pool": {"name": "test-pool", "resourceSliceCount": 5, "generation": 0},
            "devices": [
                {"name": "device-1", "taints": [{"key": "key1", "value": "value1", "effect": "NoSchedule"}]}
            ],
        },
    }


def dv_counters() -> dict[str, Any]:
    """`mkResourceSliceWithSharedCounters`."""
    s = dv_devices()
    del s["spec"]["devices"]
    s["spec"]["sharedCounters"] = [{"name": "shared-counter-set", "counters": {"valid-key": {"value": "0"}}}]
    return s


def _dv_conds(n: int, failure: bool) -> Callable[[dict[str, Any]], None]:
    def fn(s: dict[str, Any]) -> None:
        d = s["spec"]["devices"][0]
        mine, other = (
            ("bindingFailureConditions", "bindingConditions")
            if failure
            else ("bindingConditions", "bindingFailureConditions")
        )
        d.setdefault(other, ["failure-conditions" if not failure else "conditions"])
        prefix = "failure-condition" if failure else "condition"
        d[mine] = [f"{prefix}-{i}" for i in range(n)]

    return fn


def _dv_effect(effect: str) -> Callable[[dict[str, Any]], None]:
    return lambda s: s["spec"]["devices"][0]["taints"][0].update(effect=effect)


def _dv_attr(name: str, value: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda s: s["spec"]["devices"][0].setdefault("attributes", {}).update({name: value})


def _dv_set_names(*names: str) -> Callable[[dict[str, Any]], None]:
    return lambda s: s["spec"].update(
        sharedCounters=[{"name": n, "counters": {"valid-key": {"value": "0"}}} for n in names]
    )


def _dv_sets(n: int) -> Callable[[dict[str, Any]], None]:
    return _dv_set_names(*[f"shared-counter-set-{i}" for i in range(n)])


def _dv_consume_names(*names: str) -> Callable[[dict[str, Any]], None]:
    return lambda s: s["spec"]["devices"][0].update(
        consumesCounters=[{"counterSet": n, "counters": {"valid-key": {"value": "0"}}} for n in names]
    )


def _dv_consumes(n: int) -> Callable[[dict[str, Any]], None]:
    return _dv_consume_names(*[f"shared-counter-set-{i}" for i in range(n)])


_DV_D0 = "spec.devices[0]"
# (name, base builder, tweak, expected errors)
DV_CASES: list[tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], Any], tuple]] = [
    ("valid", dv_devices, lambda s: None, ()),
    ("valid: one binding condition", dv_devices, _dv_conds(1, False), ()),
    ("valid: at limit binding conditions", dv_devices, _dv_conds(4, False), ()),
    (
        "invalid: too many binding conditions",
        dv_devices,
        _dv_conds(5, False),
        ((f"{_DV_D0}.bindingConditions", "TooMany"),),
    ),
    ("valid: one binding failure conditions", dv_devices, _dv_conds(1, True), ()),
    ("valid: at limit binding failure conditions", dv_devices, _dv_conds(4, True), ()),
    (
        "invalid: too many binding failure conditions",
        dv_devices,
        _dv_conds(5, True),
        ((f"{_DV_D0}.bindingFailureConditions", "TooMany"),),
    ),
    ("valid: taint NoSchedule", dv_devices, _dv_effect("NoSchedule"), ()),
    ("valid: taint NoExecute", dv_devices, _dv_effect("NoExecute"), ()),
    (
        "invalid: taint Invalid",
        dv_devices,
        _dv_effect("Invalid"),
        ((f"{_DV_D0}.taints[0].effect", "NotSupported"),),
    ),
    ("invalid: taint empty", dv_devices, _dv_effect(""), ((f"{_DV_D0}.taints[0].effect", "Required"),)),
    ("valid: device attribute int", dv_devices, _dv_attr("test.io/int", {"int": 123}), ()),
    ("valid: device attribute bool", dv_devices, _dv_attr("test.io/bool", {"bool": True}), ()),
    ("valid: device attribute string", dv_devices, _dv_attr("test.io/string", {"string": "value"}), ()),
    ("valid: device attribute version", dv_devices, _dv_attr("test.io/version", {"version": "1.2.3"}), ()),
    (
        "invalid: device attribute with multiple values",
        dv_devices,
        _dv_attr("test.io/multiple", {"int": 123, "bool": True}),
        ((f"{_DV_D0}.attributes[test.io/multiple]", "Invalid"),),
    ),
    (
        "invalid: device attribute no value",
        dv_devices,
        _dv_attr("test.io/multiple", {}),
        ((f"{_DV_D0}.attributes[test.io/multiple]", "Invalid"),),
    ),
    ("valid: at limit shared counters", dv_counters, _dv_sets(8), ()),
    (
        "invalid: too many shared counters",
        dv_counters,
        _dv_sets(9),
        (("spec.sharedCounters", "TooMany"),),
    ),
    ("valid: at limit device consumes counters", dv_devices, _dv_consumes(2), ()),
    (
        "invalid: too many device consumes counters",
        dv_devices,
        _dv_consumes(3),
        ((f"{_DV_D0}.consumesCounters", "TooMany"),),
    ),
    ("valid: counter set name", dv_counters, _dv_set_names("valid-key"), ()),
    (
        "invalid: counter set name",
        dv_counters,
        _dv_set_names("InvalidKey"),
        (("spec.sharedCounters[0].name", "Invalid"),),
    ),
    (
        "invalid: counter set name not set",
        dv_counters,
        _dv_set_names(""),
        (("spec.sharedCounters[0].name", "Required"),),
    ),
    ("valid: device consumes counters counter set name", dv_devices, _dv_consume_names("valid-key"), ()),
    (
        "invalid: device consumes counters counter set name",
        dv_devices,
        _dv_consume_names("InvalidKey"),
        ((f"{_DV_D0}.consumesCounters[0].counterSet", "Invalid"),),
    ),
    (
        "invalid: device consumes counters counter set name not set",
        dv_devices,
        _dv_consume_names(""),
        ((f"{_DV_D0}.consumesCounters[0].counterSet", "Required"),),
    ),
    (
        "valid: distinct names for shared counters",
        dv_counters,
        _dv_set_names("valid-key-1", "valid-key-2"),
        (),
    ),
    (
        "invalid: duplicate names for shared counters",
        dv_counters,
        _dv_set_names("duplicate-key", "duplicate-key"),
        (("spec.sharedCounters[1]", "Duplicate"),),
    ),
    (
        "valid: distinct names for counter set in device counter consumption",
        dv_devices,
        _dv_consume_names("valid-key-1", "valid-key-2"),
        (),
    ),
    (
        "invalid: duplicate names for counter set in device counter consumption",
        dv_devices,
        _dv_consume_names("duplicate-key", "duplicate-key"),
        ((f"{_DV_D0}.consumesCounters[1]", "Duplicate"),),
    ),
]
for _name, _base, _tweak, _want in DV_CASES:
    case("declarative: " + _name, mutate(_base(), _tweak), *_want)
    # TestDeclarativeValidateUpdate: the same tweaks as updates of the untweaked object.
    _old = _base()
    _old["metadata"]["resourceVersion"] = "1"
    _new = mutate(copy.deepcopy(_old), _tweak)
    case("declarative update: " + _name, _new, *_want, old=_old)
_dv_old = dv_devices()
_dv_old["metadata"]["resourceVersion"] = "1"
mutate(_dv_old, _dv_attr("test.io/int", {"int": 123}))
case(
    "declarative update: valid update: device attribute",
    mutate(copy.deepcopy(_dv_old), _dv_attr("test.io/int", {"bool": True})),
    old=_dv_old,
)


# --- runner ----------------------------------------------------------------------------------------


def findings(c: Case) -> list[tuple[str, str, str, str]]:
    gates = {**GATES, **c.gates}
    ctx = Context(
        profile=load_profile("1.37", gates),
        old=copy.deepcopy(c.old) if c.old is not None else None,
        operation="UPDATE" if c.old is not None else "CREATE",
    )
    out = []
    for v in object_violations(copy.deepcopy(c.obj), ctx):
        if str(v.severity) != "error":
            continue
        out.append((v.field, error_type(v.message), v.rule, v.message))
    return out


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_upstream_case(c: Case) -> None:
    got = findings(c)
    assert Counter((f, t) for f, t, _, _ in got) == Counter(c.want), "\n".join(
        f"{f} {t} [{r}] {m[:160]}" for f, t, r, m in got
    )
