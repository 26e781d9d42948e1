"""Version-skew stripping: one field per gate, create vs update ratcheting, unknown fields in older
versions, and properties (all gates on → identity; idempotent; only guarded fields are touched)."""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.apiserver.skew import FEATURES, plan_drops, strip_disabled_fields, strip_object
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.rules.served_kinds import kind_disabled

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  partitionTypeAttribute: d.example.com/profile
  skipNodeOperations: [NodePrepareResources, NodeUnprepareResources]
  devices:
  - name: plain
    attributes: {model: {string: x}}
    capacity: {mem: {value: 8Gi}}
  - name: rich
    nodeName: n1
    taints: [{key: k, effect: NoSchedule}]
    bindsToNode: true
    bindingConditions: [example.com/ready]
    bindingFailureConditions: [example.com/failed]
    allowMultipleAllocations: true
    capacity: {mem: {value: 8Gi, requestPolicy: {default: 1Gi}}}
    attributes: {numa: {ints: [0, 1]}, profile: {string: 1g}}
    nodeAllocatableResources: {cpu: {overhead: {perPod: "1"}}}
    consumesCounters:
    - counterSet: gpu-0
      counters: {mem: {value: 1Gi}}
      compatibilityGroups: [mig]
"""

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: a
      exactly:
        deviceClassName: gpu
        adminAccess: true
        tolerations: [{key: k, operator: Exists}]
        capacity: {requests: {mem: 1Gi}}
        derivedAttributes: [{name: derived/numa, expression: "1"}]
    - name: b
      firstAvailable:
      - {name: x, deviceClassName: gpu, tolerations: [{key: k, operator: Exists}], capacity: {requests: {mem: 1Gi}}}
    constraints: [{requests: [a], distinctAttribute: d.example.com/numa}]
status:
  allocation:
    devices:
      results:
      - request: a
        driver: d.example.com
        pool: p
        device: d0
        adminAccess: true
        shareID: 8b6d2f0c-5a3e-4a1e-9c1b-3f2e1d0c9b8a
        consumedCapacity: {mem: 1Gi}
        bindingConditions: [example.com/ready]
        bindingFailureConditions: [example.com/failed]
        skipNodeOperations: ["*"]
  devices:
  - {driver: d.example.com, pool: p, device: d0, shareID: 8b6d2f0c-5a3e-4a1e-9c1b-3f2e1d0c9b8a}
"""

ALL_GATES_ON = {name: True for name, g in load_profile("1.37").gates.items() if not g.locked}


def ctx(version: str = "1.37", old: dict | None = None, **gates: bool) -> Context:
    return Context(profile=load_profile(version, gates), old=old, operation="UPDATE" if old else "CREATE")


def fields(obj: dict, context: Context) -> dict[str, str]:
    out, findings = strip_disabled_fields(obj, context)
    return {str(f.field): f.message for f in findings}


def load(text: str) -> dict:
    return yaml.safe_load(text)


def test_rule_declared() -> None:
    rule = RULES["skew.dropped-field"]
    assert (rule.severity.value, rule.tag) == ("warning", "skew")
    assert RULES["skew.kind-disabled"].severity.value == "error"


def test_defaults_137_drop_only_alpha_fields() -> None:
    got = fields(load(SLICE), ctx())
    assert set(got) == {
        "spec.partitionTypeAttribute",
        "spec.skipNodeOperations",
        "spec.devices[1].attributes[numa].ints",
        "spec.devices[1].nodeAllocatableResources",
        "spec.devices[1].consumesCounters[0].compatibilityGroups",
    }
    msg = got["spec.devices[1].consumesCounters[0].compatibilityGroups"]
    assert msg == (
        "dropped: feature gate DRADeviceCompatibilityGroups is disabled in Kubernetes 1.37 (alpha, off by "
        "default); the API server silently removes this field on create"
    )
    # a drop inferred from the other features is worded as an expectation, with no internal note
    assert got["spec.skipNodeOperations"] == (
        "dropped: feature gate DRAOptionalNodeOperations is disabled in Kubernetes 1.37 (alpha, off by "
        "default); the API server is expected to remove this field on create, as it removes the fields of "
        "other disabled features"
    )
    assert not any(w in m for m in got.values() for w in ("assumed", "confirmed", "strategy code"))


@pytest.mark.parametrize(
    ("gate", "paths"),
    [
        ("DRADeviceTaints", {"spec.devices[1].taints"}),
        (
            "DRAPartitionableDevices",
            {"spec.perDeviceNodeSelection", "spec.devices[1].nodeName", "spec.devices[1].consumesCounters"},
        ),
        (
            "DRADeviceBindingConditions",
            {
                "spec.devices[1].bindsToNode",
                "spec.devices[1].bindingConditions",
                "spec.devices[1].bindingFailureConditions",
            },
        ),
        (
            "DRAConsumableCapacity",
            {"spec.devices[1].allowMultipleAllocations", "spec.devices[1].capacity[mem].requestPolicy"},
        ),
        ("DRAListTypeAttributes", {"spec.devices[1].attributes[numa].ints"}),
        ("DRANodeAllocatableResources", {"spec.devices[1].nodeAllocatableResources"}),
        ("DRAOptionalNodeOperations", {"spec.skipNodeOperations"}),
        ("DRAPartitionableDevicesType", {"spec.partitionTypeAttribute"}),
        ("DRAResourcePoolStatus", {"spec.partitionTypeAttribute"}),
        ("DRADeviceCompatibilityGroups", {"spec.devices[1].consumesCounters[0].compatibilityGroups"}),
    ],
)
def test_slice_gate_each(gate: str, paths: set[str]) -> None:
    gates = {**ALL_GATES_ON, gate: False}
    obj = load(SLICE)
    got = fields(obj, ctx(**gates))
    assert set(got) == paths
    assert all(gate in m for m in got.values())
    # update: the old object uses the feature → kept (ratcheting); old without it → dropped
    assert fields(obj, ctx(old=copy.deepcopy(obj), **gates)) == {}
    stripped_old = strip_object(obj, ctx(**gates))
    upd = fields(obj, ctx(old=stripped_old, **gates))
    assert set(upd) == paths
    assert all("on update because the stored object does not use this feature" in m for m in upd.values())


def test_overridden_beta_gate_message() -> None:
    got = fields(load(SLICE), ctx(DRADeviceTaints=False))
    assert got["spec.devices[1].taints"].startswith(
        "dropped: feature gate DRADeviceTaints is disabled in Kubernetes 1.37 (ga, on by default, turned off by --feature-gates)"
    )


def test_compatibility_groups_need_partitionable_devices_too() -> None:
    # groups gate on, partitionable off: consumesCounters (and the groups inside) go; one finding, not two
    got = fields(load(SLICE), ctx(**{**ALL_GATES_ON, "DRAPartitionableDevices": False}))
    assert "spec.devices[1].consumesCounters" in got
    assert "spec.devices[1].consumesCounters[0].compatibilityGroups" not in got


def test_compatibility_groups_empty_list_dropped_silently() -> None:
    obj = load(SLICE)
    obj["spec"]["devices"][1]["consumesCounters"][0]["compatibilityGroups"] = []
    out, findings = strip_disabled_fields(obj, ctx(**{**ALL_GATES_ON, "DRADeviceCompatibilityGroups": False}))
    assert findings == []
    assert "compatibilityGroups" not in out["spec"]["devices"][1]["consumesCounters"][0]
    # an old object with [] does not count as using the feature
    new = load(SLICE)
    got = fields(new, ctx(old=obj, **{**ALL_GATES_ON, "DRADeviceCompatibilityGroups": False}))
    assert set(got) == {"spec.devices[1].consumesCounters[0].compatibilityGroups"}


def test_ratcheting_is_per_feature_over_whole_old_object() -> None:
    old = load(SLICE)
    old["spec"]["devices"][1].pop("taints")
    old["spec"]["devices"][0]["taints"] = [{"key": "x", "effect": "None"}]  # another device uses taints
    assert fields(load(SLICE), ctx(old=old, **{**ALL_GATES_ON, "DRADeviceTaints": False})) == {}


def test_unknown_fields_in_older_versions() -> None:
    got = fields(load(SLICE), ctx("1.35"))
    assert "alpha, off by default" in got["spec.devices[1].consumesCounters"]
    assert "spec.devices[1].consumesCounters[0].compatibilityGroups" not in got  # its parent is gone
    assert "spec.devices[1].taints" in got and "alpha, off by default" in got["spec.devices[1].taints"]
    g36 = fields(load(SLICE), ctx("1.36"))
    assert g36["spec.devices[1].consumesCounters[0].compatibilityGroups"] == (
        "dropped: this field does not exist in Kubernetes 1.36 (added in 1.37 with feature gate "
        "DRADeviceCompatibilityGroups); the API server ignores unknown fields, or rejects them with "
        "fieldValidation=Strict (kubectl's default)"
    )
    assert "does not exist in Kubernetes 1.36" in g36["spec.skipNodeOperations"]
    assert "spec.devices[1].taints" not in g36  # beta, on in 1.36


def test_claim_spec_and_status() -> None:
    got = fields(load(CLAIM), ctx())
    assert set(got) == {
        "spec.devices.requests[0].exactly.derivedAttributes",
        "status.allocation.devices.results[0].skipNodeOperations",
    }
    got35 = fields(load(CLAIM), ctx("1.35"))
    assert set(got35) == {
        "spec.devices.requests[0].exactly.tolerations",
        "spec.devices.requests[1].firstAvailable[0].tolerations",
        "spec.devices.requests[0].exactly.capacity",
        "spec.devices.requests[1].firstAvailable[0].capacity",
        "spec.devices.constraints[0].distinctAttribute",
        "spec.devices.requests[0].exactly.derivedAttributes",
        "status.allocation.devices.results[0].shareID",
        "status.allocation.devices.results[0].consumedCapacity",
        "status.allocation.devices.results[0].bindingConditions",
        "status.allocation.devices.results[0].bindingFailureConditions",
        "status.allocation.devices.results[0].skipNodeOperations",
        "status.devices[0].shareID",
    }


def test_claim_prioritized_list_drops_before_tolerations() -> None:
    gates = {"DRAPrioritizedList": False, "DRADeviceTaints": False}
    got = fields(load(CLAIM), ctx("1.36", **gates))
    assert "spec.devices.requests[1].firstAvailable" in got
    assert "spec.devices.requests[1].firstAvailable[0].tolerations" not in got
    assert "spec.devices.requests[0].exactly.tolerations" in got


def test_claim_status_ratchets_on_old_spec() -> None:
    old = load(CLAIM)
    old["status"] = {}
    # spec uses consumable capacity, so status shareID/consumedCapacity are kept on the status update
    got = fields(load(CLAIM), ctx("1.35", old=old))
    assert not any(k.startswith("status.allocation.devices.results[0].shareID") for k in got)
    assert "status.allocation.devices.results[0].bindingConditions" in got


def test_template_prefix() -> None:
    tpl = load("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ns}
spec:
  spec:
    devices:
      requests: [{name: a, exactly: {deviceClassName: gpu, tolerations: [{operator: Exists}]}}]
""")
    assert set(fields(tpl, ctx("1.35"))) == {"spec.spec.devices.requests[0].exactly.tolerations"}


def test_device_class_and_pod() -> None:
    cls = {"kind": "DeviceClass", "spec": {"extendedResourceName": "example.com/gpu"}}
    assert set(fields(cls, ctx("1.35"))) == {"spec.extendedResourceName"}
    assert fields(cls, ctx("1.36")) == {}
    pod = {"kind": "Pod", "spec": {}, "status": {"extendedResourceClaimStatus": {"resourceClaimName": "x"}}}
    assert set(fields(pod, ctx("1.35"))) == {"status.extendedResourceClaimStatus"}


def test_device_taint_rule_kind() -> None:
    rule = {"kind": "DeviceTaintRule", "spec": {"taint": {"key": "k", "effect": "NoSchedule"}}}
    got = [(str(f.field), f.message) for f in kind_disabled(rule, ctx("1.36"))]
    assert (
        got
        and got[0][0] == "kind"
        and "DRADeviceTaintRules is disabled in Kubernetes 1.36 (beta, off by default)" in got[0][1]
    )
    assert list(kind_disabled(rule, ctx("1.37"))) == []


def test_no_copy_when_nothing_dropped_and_input_untouched() -> None:
    obj = load(CLAIM)
    before = copy.deepcopy(obj)
    out, findings = strip_disabled_fields(obj, ctx(**ALL_GATES_ON))
    assert out is obj and findings == []
    out, findings = strip_disabled_fields(obj, ctx("1.35"))
    assert out is not obj and obj == before


# -- properties -----------------------------------------------------------------------------------

GUARDED = {
    "taints",
    "sharedCounters",
    "perDeviceNodeSelection",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "bindingConditions",
    "bindingFailureConditions",
    "bindsToNode",
    "allowMultipleAllocations",
    "requestPolicy",
    "nodeAllocatableResources",
    "ints",
    "bools",
    "strings",
    "versions",
    "partitionTypeAttribute",
    "skipNodeOperations",
    "compatibilityGroups",
}

leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text("ab", max_size=2), st.just([]))
device = st.fixed_dictionaries(
    {"name": st.text("ab", min_size=1, max_size=3)},
    optional={
        "taints": st.lists(st.fixed_dictionaries({"key": st.just("k")}), max_size=2) | st.none(),
        "nodeName": leaf,
        "allNodes": leaf,
        "bindsToNode": leaf,
        "bindingConditions": st.lists(st.just("c"), max_size=2),
        "allowMultipleAllocations": leaf,
        "attributes": st.dictionaries(
            st.sampled_from(["a", "b"]),
            st.fixed_dictionaries(
                {}, optional={"int": leaf, "ints": st.lists(st.integers(0, 2), max_size=2), "string": leaf}
            ),
        ),
        "capacity": st.dictionaries(
            st.sampled_from(["m"]),
            st.fixed_dictionaries(
                {"value": st.just("1")}, optional={"requestPolicy": st.just({"default": "1"})}
            ),
        ),
        "consumesCounters": st.lists(
            st.fixed_dictionaries(
                {"counterSet": st.just("c")},
                optional={"compatibilityGroups": st.lists(st.just("g"), max_size=2) | st.none()},
            ),
            max_size=2,
        ),
        "nodeAllocatableResources": st.just({"cpu": {}}),
    },
)
slices = st.fixed_dictionaries(
    {
        "kind": st.just("ResourceSlice"),
        "spec": st.fixed_dictionaries(
            {"driver": st.just("d.example.com")},
            optional={
                "devices": st.lists(device, max_size=3),
                "sharedCounters": st.lists(
                    st.just({"name": "c", "counters": {"m": {"value": "1"}}}), max_size=1
                ),
                "perDeviceNodeSelection": leaf,
                "partitionTypeAttribute": leaf,
                "skipNodeOperations": st.lists(st.just("*"), max_size=1),
            },
        ),
    }
)
gate_sets = st.dictionaries(st.sampled_from(sorted(ALL_GATES_ON)), st.booleans())
versions = st.sampled_from(["1.35", "1.36", "1.37"])


def _leaves(obj: object, prefix: tuple = ()) -> set[tuple]:
    if isinstance(obj, dict):
        out = {prefix} if not obj else set()
        for k, v in obj.items():
            out |= _leaves(v, (*prefix, k))
        return out
    if isinstance(obj, list):
        out = {prefix} if not obj else set()
        for i, v in enumerate(obj):
            out |= _leaves(v, (*prefix, i))
        return out
    return {prefix}


@settings(max_examples=150, deadline=None)
@given(slices)
def test_all_gates_on_is_identity(obj: dict) -> None:
    out, findings = strip_disabled_fields(obj, ctx(**ALL_GATES_ON))
    assert out is obj and findings == []


@settings(max_examples=150, deadline=None)
@given(slices, versions, gate_sets)
def test_idempotent_and_only_guarded_fields(obj: dict, version: str, gates: dict[str, bool]) -> None:
    gates = {g: v for g, v in gates.items() if load_profile(version).known(g)}
    context = ctx(version, **gates)
    before = copy.deepcopy(obj)
    out, _ = strip_disabled_fields(obj, context)
    assert obj == before  # pure
    again, findings = strip_disabled_fields(out, context)
    assert again == out and findings == []  # idempotent
    removed = _leaves(before) - _leaves(out)
    for path in removed:
        # every removed leaf lies under a guarded field name
        assert any(isinstance(step, str) and step in GUARDED for step in path), path
    # and every guarded field whose gates are all on survives
    for loc, _ in plan_drops(before, context):
        assert loc[-1] in GUARDED


BY_GATE = {
    "DRADeviceTaints": {"taints"},
    "DRAPartitionableDevices": {
        "sharedCounters",
        "perDeviceNodeSelection",
        "consumesCounters",
        "nodeName",
        "nodeSelector",
        "allNodes",
        "compatibilityGroups",
    },
    "DRADeviceBindingConditions": {"bindingConditions", "bindingFailureConditions", "bindsToNode"},
    "DRAResourceClaimDeviceStatus": {"bindingConditions", "bindingFailureConditions", "bindsToNode"},
    "DRAConsumableCapacity": {"allowMultipleAllocations", "requestPolicy"},
    "DRANodeAllocatableResources": {"nodeAllocatableResources"},
    "DRAListTypeAttributes": {"ints", "bools", "strings", "versions"},
    "DRAPartitionableDevicesType": {"partitionTypeAttribute"},
    "DRAResourcePoolStatus": {"partitionTypeAttribute"},
    "DRAOptionalNodeOperations": {"skipNodeOperations"},
    "DRADeviceCompatibilityGroups": {"compatibilityGroups"},
}


@settings(max_examples=100, deadline=None)
@given(slices, st.sampled_from(sorted(ALL_GATES_ON)))
def test_one_gate_off_touches_only_its_fields(obj: dict, gate: str) -> None:
    out, _ = strip_disabled_fields(obj, ctx(**{**ALL_GATES_ON, gate: False}))
    for path in _leaves(obj) - _leaves(out):
        assert any(isinstance(step, str) and step in BY_GATE.get(gate, set()) for step in path), (gate, path)


def test_feature_tables_cover_every_kind() -> None:
    assert set(FEATURES) == {"ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "Pod"}
