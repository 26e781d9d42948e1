"""Per-device ResourceSlice rules (device.py): names, attributes, capacity keys, size, node selection,
taints, binding conditions."""

from __future__ import annotations

from slice_fixtures import device_slice, load, only, run

from webhook.config.context import Context
from webhook.model.catalogue import RULES


def test_rule_ids_are_registered() -> None:
    for rid in (
        "device.name",
        "device.size",
        "device.attributes",
        "device.attribute-value",
        "device.capacity",
        "device.node-selection",
        "device.taints",
        "device.binding-conditions",
    ):
        assert RULES[rid].kinds == ("ResourceSlice",)


# --- name -----------------------------------------------------------------------------------------


def test_device_name() -> None:
    assert only(run(device_slice({"name": "gpu-0"})), "device.name") == []
    [(field, msg)] = only(run(device_slice({"name": "ok"}, {"name": "GPU_1"})), "device.name")
    assert field == "spec.devices[1].name"
    assert msg.startswith('Invalid value: "GPU_1"') and "RFC 1123 label" in msg


# --- attributes -----------------------------------------------------------------------------------


def test_attribute_keys() -> None:
    dev = {
        "name": "d",
        "attributes": {
            "ok_name": {"bool": True},
            "gpu.example.com/ok": {"bool": True},
            "9lives": {"bool": True},
            "a/b/c": {"bool": True},
            "x" * 33: {"bool": True},
            "Bad_Domain/x": {"bool": True},
        },
    }
    found = only(run(device_slice(dev)), "device.attributes")
    assert {f for f, _ in found} == {"spec.devices[0].attributes"}
    msgs = [m for _, m in found]
    assert any(m.startswith('Invalid value: "9lives"') and "C identifier" in m for m in msgs)
    assert not any('"a/b/c"' in m for m in msgs)  # accepted by the API server (upstream TODO)
    assert any(m.startswith("Too long") and "32" in m for m in msgs)
    # Upper case in the domain is accepted (driver-name rules lower-case first); "_" is not.
    assert any(m.startswith('Invalid value: "Bad_Domain"') for m in msgs)
    assert len(found) == 3
    slashes = only(run(device_slice(dev)), "device.qualified-name-slashes")
    assert [f for f, _ in slashes] == ["spec.devices[0].attributes"]
    assert '"a/b/c"' in slashes[0][1]


def test_attribute_values_valid() -> None:
    dev = {
        "name": "d",
        "attributes": {
            "a": {"int": 1},
            "b": {"bool": False},
            "c": {"string": "x" * 64},
            "d": {"version": "1.2.3-rc.1+build.5"},
            "e": {"ints": [1, 2]},
            "f": {"strings": ["x", "y"]},
            "g": {"versions": ["1.0.0"]},
            "h": {"bools": [True]},
        },
    }
    assert run(device_slice(dev)) == []


def test_attribute_values_invalid() -> None:
    dev = {
        "name": "d",
        "attributes": {
            "two": {"string": "x", "int": 1},
            "none": {},
            "long": {"string": "é" * 33},
            "ver": {"version": "v1.2"},
            "lead": {"version": "01.2.3"},
            "empty": {"ints": []},
            "vers": {"versions": ["1.0.0", "1.0"]},
            "strs": {"strings": ["ok", "y" * 65]},
        },
    }
    found = dict(only(run(device_slice(dev)), "device.attribute-value"))
    base = "spec.devices[0].attributes"
    assert (
        found[f"{base}[two]"].startswith("Invalid value: ")
        and "exactly one value must be specified" in found[f"{base}[two]"]
    )
    assert found[f"{base}[none]"] == 'Invalid value: "": exactly one value must be specified'
    assert found[f"{base}[long].string"].startswith("Too long") and "64" in found[f"{base}[long].string"]
    assert "semver.org spec 2.0.0" in found[f"{base}[ver].version"]
    assert "semver.org spec 2.0.0" in found[f"{base}[lead].version"]
    assert found[f"{base}[empty].ints"].endswith("must not be empty if specified")
    assert found[f"{base}[vers].versions[1]"].startswith('Invalid value: "1.0"')
    assert found[f"{base}[strs].strings[1]"].startswith("Too long")
    assert len(found) == 8


def test_attribute_key_in_path_is_truncated_when_long() -> None:
    key = "a" * 50 + ".example.com/" + "b" * 40  # 103 > 96 bytes: the path shows a shortened key
    dev = {"name": "d", "attributes": {key: {"string": "x", "int": 1}}}
    [(field, _)] = only(run(device_slice(dev), direct=True), "device.attribute-value")
    assert "..." in field and len(field) < len(f"spec.devices[0].attributes[{key}]")


# --- size -----------------------------------------------------------------------------------------


def test_size_attributes_and_capacities() -> None:
    attrs = {f"a{i}": {"int": i} for i in range(20)}
    caps = {f"c{i}": {"value": "1"} for i in range(12)}
    assert only(run(device_slice({"name": "d", "attributes": attrs, "capacity": caps})), "device.size") == []
    caps["c12"] = {"value": "1"}
    found = only(run(device_slice({"name": "d", "attributes": attrs, "capacity": caps})), "device.size")
    assert found == [
        (
            "spec.devices[0]",
            "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
        )
    ]


def test_size_attribute_values() -> None:
    attrs = {"ids": {"ints": list(range(40))}, "more": {"strings": ["a"] * 8}}
    assert only(run(device_slice({"name": "d", "attributes": attrs})), "device.size") == []
    attrs["one"] = {"int": 1}
    found = only(run(device_slice({"name": "d", "attributes": attrs})), "device.size")
    assert found == [
        ("spec.devices[0]", "Invalid value: 49: the total number of attribute values must not exceed 48")
    ]


# --- capacity keys --------------------------------------------------------------------------------


def test_capacity_keys() -> None:
    ok = {"name": "d", "capacity": {"memory": {"value": "1Gi"}, "gpu.example.com/sm": {"value": 108}}}
    assert run(device_slice(ok)) == []
    bad = {"name": "d", "capacity": {"mem-ory": {"value": "1Gi"}}}
    [(field, msg)] = only(run(device_slice(bad)), "device.capacity")
    assert field == "spec.devices[0].capacity" and msg.startswith('Invalid value: "mem-ory"')


def test_capacity_unchanged_on_update_is_not_rechecked() -> None:
    bad = {"name": "d", "capacity": {"mem-ory": {"value": "1Gi"}}}
    new, old = device_slice(bad), device_slice(bad)
    context = Context(old=old, operation="UPDATE")
    assert only(run(new, context, direct=True), "device.capacity") == []
    new["spec"]["devices"][0]["capacity"]["mem-ory"]["value"] = "2Gi"
    assert only(run(new, context, direct=True), "device.capacity") != []


# --- per-device node selection ---------------------------------------------------------------------


def _per_device(*devices: dict) -> dict:
    return device_slice(*devices, nodeName=None, perDeviceNodeSelection=True)


def test_per_device_node_selection_valid() -> None:
    sel = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    obj = _per_device(
        {"name": "a", "nodeName": "n1"}, {"name": "b", "allNodes": True}, {"name": "c", "nodeSelector": sel}
    )
    assert run(obj) == []


def test_per_device_node_selection_exactly_one() -> None:
    obj = _per_device(
        {"name": "a"}, {"name": "b", "nodeName": "n1", "allNodes": True}, {"name": "c", "allNodes": False}
    )
    found = only(run(obj), "device.node-selection")
    assert found[0][0] == "spec.devices[0]" and found[0][1].startswith(
        "Required value: exactly one of `nodeName`"
    )
    assert found[1][0] == "spec.devices[1]" and found[1][1].startswith(
        'Invalid value: "{`nodeName`, `allNodes`}"'
    )
    assert ("spec.devices[2].allNodes", "Invalid value: false: must be either unset or set to true") in found
    assert ("spec.devices[2]", found[-1][1]) == found[-1] and found[-1][1].startswith("Required value")


def test_per_device_node_fields_need_per_device_selection() -> None:
    obj = device_slice({"name": "a", "allNodes": True})
    [(field, msg)] = only(run(obj), "device.node-selection")
    assert field == "spec.devices[0]"
    assert msg.startswith('Invalid value: "null"') and "can only be set if `perDeviceNodeSelection`" in msg


def test_per_device_empty_node_name() -> None:
    [(field, msg)] = only(run(_per_device({"name": "a", "nodeName": ""})), "device.node-selection")[:1]
    assert field == "spec.devices[0].nodeName" and msg == 'Invalid value: "": must not be empty'


# --- taints ---------------------------------------------------------------------------------------


def test_taints_valid() -> None:
    taints = [
        {"key": "example.com/unhealthy", "value": "ecc", "effect": "NoExecute"},
        {"key": "k", "effect": "None"},
    ]
    assert run(device_slice({"name": "d", "taints": taints})) == []


def test_taints_invalid() -> None:
    taints = [{"key": "bad key", "value": "no way!", "effect": "PreferNoSchedule"}]
    found = dict(only(run(device_slice({"name": "d", "taints": taints})), "device.taints"))
    base = "spec.devices[0].taints[0]"
    assert found[base + ".key"].startswith('Invalid value: "bad key"')
    assert found[base + ".value"].startswith('Invalid value: "no way!"')
    assert found[base + ".effect"] == (
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'
    )


def test_taints_max_16() -> None:
    taints = [{"key": f"k{i}", "effect": "NoSchedule"} for i in range(17)]
    found = only(run(device_slice({"name": "d", "taints": taints})), "device.taints")
    assert found == [("spec.devices[0].taints", "Too many: 17: must have at most 16 items")]


# --- binding conditions ---------------------------------------------------------------------------


def test_binding_conditions_valid() -> None:
    dev = {
        "name": "d",
        "bindsToNode": True,
        "bindingConditions": ["example.com/ready"],
        "bindingFailureConditions": ["failed"],
    }
    assert run(device_slice(dev)) == []


def test_binding_conditions_need_each_other() -> None:
    found = only(
        run(device_slice({"name": "d", "bindingConditions": ["ready"]})), "device.binding-conditions"
    )
    assert found == [
        (
            "spec.devices[0].bindingFailureConditions",
            "Invalid value: []: bindingFailureConditions are required to use bindingConditions",
        )
    ]
    found = only(
        run(device_slice({"name": "d", "bindingFailureConditions": ["x"]})), "device.binding-conditions"
    )
    assert [f for f, _ in found] == ["spec.devices[0].bindingConditions"]


def test_binding_conditions_duplicates_overlap_and_limits() -> None:
    dev = {
        "name": "d",
        "bindingConditions": ["a", "a", "bad cond"],
        "bindingFailureConditions": ["a", "f1", "f2", "f3", "f4"],
    }
    found = only(run(device_slice(dev)), "device.binding-conditions")
    assert ("spec.devices[0].bindingConditions[1]", 'Duplicate value: "a"') in found
    assert any(
        f == "spec.devices[0].bindingConditions[2]" and m.startswith('Invalid value: "bad cond"')
        for f, m in found
    )
    assert ("spec.devices[0].bindingFailureConditions", "Too many: 5: must have at most 4 items") in found
    assert any(
        f == "spec.devices[0].bindingFailureConditions[0]" and "must not overlap" in m for f, m in found
    )


def test_base_slice_is_valid() -> None:
    assert run(load()) == []
