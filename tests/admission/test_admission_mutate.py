"""The mutating endpoint: version-skew stripping as an RFC 6902 JSON Patch (remove ops only, JSON Pointer
escaping, a warning per removed field), no patch when nothing changes or for DELETE/CONNECT, and a
property test that applies the patch with the `jsonpatch` library: the result is exactly the stripped
object, and every field draguard does not own is preserved byte for byte."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import jsonpatch
import pytest
from admission_fixtures import admission_review, claim, cluster_objects, exactly, find, served, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.admission import AdmissionConfig, review
from webhook.admission.patch import PatchError, apply_ops, pointer, remove_ops
from webhook.apiserver.skew import strip_disabled_fields
from webhook.config.context import Context
from webhook.config.profile import load_profile

SNAP = snapshot()
MUTATE = AdmissionConfig(endpoint="mutate")
OBJS = cluster_objects()
GATE_OFF = (
    "dropped: feature gate DRAListTypeAttributes is disabled in Kubernetes 1.37 (alpha, off by default)"
)
LIST_ATTR_MSG = f"{GATE_OFF}; the API server silently removes this field on create"


def _mutate(obj: dict[str, Any] | None, config: AdmissionConfig = MUTATE, **kw: Any) -> dict[str, Any]:
    ar = admission_review(obj, **kw)
    out = review(ar, SNAP, config)
    response = out["response"]
    assert response["uid"] == ar["request"]["uid"]
    return response


def _ops(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


def _slice_with_list_attribute() -> dict[str, Any]:
    s = find(OBJS, "ResourceSlice", "gpu-node-2-gpu.example.com-q9w4z")
    s["spec"]["devices"][1]["attributes"]["example.com/cores"] = {"ints": [0, 1, 2, 3]}
    return s


def test_a_disabled_field_is_removed_with_a_warning() -> None:
    response = _mutate(_slice_with_list_attribute())
    assert response["allowed"] is True
    assert _ops(response) == [{"op": "remove", "path": "/spec/devices/1/attributes/example.com~1cores/ints"}]
    assert response["warnings"] == [f"spec.devices[1].attributes[example.com/cores].ints: {LIST_ATTR_MSG}"]


def test_nothing_to_strip_means_no_patch_fields() -> None:
    for obj in (
        find(OBJS, "ResourceSlice", "gpu-node-1-gpu.example.com-7x2kp"),
        claim("c", [exactly("g", "gpu.example.com")]),
    ):
        response = _mutate(obj)
        assert response == {"uid": response["uid"], "allowed": True}


def test_the_mutating_endpoint_does_not_validate() -> None:
    response = _mutate(claim("c", [exactly("BAD_", "gpu.example.com")]))
    assert response == {"uid": response["uid"], "allowed": True}


def test_update_keeps_a_field_the_stored_object_already_uses() -> None:
    stored = served(_slice_with_list_attribute())
    new = copy.deepcopy(stored)
    new["spec"]["devices"][0]["attributes"]["example.com/cores"] = {"ints": [4, 5]}
    response = _mutate(new, operation="UPDATE", old=stored)
    assert response == {"uid": response["uid"], "allowed": True}
    plain = copy.deepcopy(stored)
    del plain["spec"]["devices"][1]["attributes"]["example.com/cores"]
    response = _mutate(new, operation="UPDATE", old=plain)
    assert _ops(response) == [
        {"op": "remove", "path": "/spec/devices/1/attributes/example.com~1cores/ints"},
        {"op": "remove", "path": "/spec/devices/0/attributes/example.com~1cores/ints"},
    ]
    on_update = f"{GATE_OFF}; the API server silently removes this field on update because the stored object does not use this feature"
    assert response["warnings"] == [
        f"spec.devices[0].attributes[example.com/cores].ints: {on_update}",
        f"spec.devices[1].attributes[example.com/cores].ints: {on_update}",
    ]


def test_never_a_patch_on_delete_or_connect() -> None:
    response = _mutate(None, operation="DELETE", old=_slice_with_list_attribute())
    assert response == {"uid": response["uid"], "allowed": True}
    ar = admission_review(
        {"apiVersion": "v1", "kind": "PodExecOptions"}, operation="CONNECT", kind=("", "v1", "Pod")
    )
    assert review(ar, SNAP, MUTATE)["response"] == {"uid": ar["request"]["uid"], "allowed": True}


def test_dry_run_gets_the_same_patch() -> None:
    wet = _mutate(_slice_with_list_attribute())
    dry = _mutate(_slice_with_list_attribute(), dry_run=True)
    assert dry["patch"] == wet["patch"] and dry["warnings"] == wet["warnings"]


def _claim_with_skipped_operations() -> dict[str, Any]:
    c = served(find(OBJS, "ResourceClaim", "shared-h100"))
    c["spec"]["devices"]["requests"][0]["exactly"]["derivedAttributes"] = [
        {"name": "example.com/numa", "expression": 'device.attributes["gpu.example.com"].numa'}
    ]
    return c


def test_status_subresource_touches_status_only_and_the_main_resource_spec_only() -> None:
    old = _claim_with_skipped_operations()
    new = copy.deepcopy(old)
    new["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": "gpu-node-2",
                        "device": "gpu-0",
                        "skipNodeOperations": ["Prepare"],
                    }
                ]
            }
        }
    }
    response = _mutate(new, operation="UPDATE", old=old, sub_resource="status")
    assert _ops(response) == [
        {"op": "remove", "path": "/status/allocation/devices/results/0/skipNodeOperations"}
    ]
    fresh = copy.deepcopy(new)
    del fresh["metadata"]["uid"]
    response = _mutate(fresh)  # CREATE of the main resource: spec only (the API server empties status)
    assert _ops(response) == [{"op": "remove", "path": "/spec/devices/requests/0/exactly/derivedAttributes"}]


def test_remove_ops_order_and_escaping() -> None:
    doc = {"a": [{"x/y": {"~k": 1}, "b": [1, 2, 3]}, {"c": 2}, {"d": 3}], "e": {"f": 1}}
    ops = remove_ops(
        doc,
        [
            ("a", 0, "x/y", "~k"),
            ("a", 2),
            ("a", 0, "b", 1),
            ("a", 0, "b"),
            ("e", "missing"),
            ("a", 1),
            ("e", "f"),
        ],
    )
    assert ops == [
        {"op": "remove", "path": "/e/f"},
        {"op": "remove", "path": "/a/2"},
        {"op": "remove", "path": "/a/1"},
        {"op": "remove", "path": "/a/0/x~1y/~0k"},
        {"op": "remove", "path": "/a/0/b"},
    ]
    assert jsonpatch.apply_patch(doc, ops) == {"a": [{"x/y": {}}], "e": {}}
    assert pointer(("a~/b", 3, "")) == "/a~0~1b/3/"


def test_apply_ops_agrees_with_a_json_patch_library() -> None:
    """`draguard test` applies the mutating endpoint's patch itself (no library at run time): add, remove
    and replace as RFC 6902 says, escapes and list ends included; what does not apply is an error."""
    doc = {"a": [{"x/y": {"~k": 1}}, 2], "s": {"sel": [{"cel": "x"}]}}
    ops = [
        {"op": "add", "path": "/s/sel/-", "value": {"cel": "y"}},
        {"op": "add", "path": "/s/sel/0", "value": {"cel": "w"}},
        {"op": "replace", "path": "/a/0/x~1y/~0k", "value": 2},
        {"op": "remove", "path": "/a/1"},
        {"op": "add", "path": "/new", "value": {}},
    ]
    assert apply_ops(copy.deepcopy(doc), ops) == jsonpatch.apply_patch(doc, ops)
    for bad in (
        {"op": "remove", "path": "/missing"},
        {"op": "replace", "path": "/a/5", "value": 1},
        {"op": "add", "path": "/a/x", "value": 1},
        {"op": "move", "from": "/a", "path": "/b"},
    ):
        with pytest.raises(PatchError):
            apply_ops(copy.deepcopy(doc), [bad])


# -- property: the patch applied by a JSON Patch library is the stripped object ---------------------

_KEYS = st.sampled_from(["example.com/model", "example.com/cores", "a~b", "x/y/z", "plain", "~1", "numa"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def _attribute(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["int", "string", "ints", "strings", "bools", "both"]))
    if kind == "int":
        return {"int": draw(st.integers(0, 9))}
    if kind == "string":
        return {"string": draw(st.text(max_size=5))}
    if kind == "both":  # invalid, but the skew layer must still drop exactly the list part
        return {"int": 1, "ints": [1, 2]}
    return {kind: draw(st.lists(st.integers(0, 3) if kind == "ints" else st.booleans(), max_size=3))}


@st.composite
def _device(draw: Any, i: int) -> dict[str, Any]:
    d: dict[str, Any] = {"name": f"dev-{i}"}
    if draw(st.booleans()):
        d["attributes"] = draw(st.dictionaries(_KEYS, _attribute(), max_size=4))
    if draw(st.booleans()):
        d["consumesCounters"] = [
            {
                "counterSet": "set-0",
                "counters": {"mem": {"value": "1Gi"}},
                **(
                    {"compatibilityGroups": draw(st.lists(st.sampled_from(["g1", "g2"]), max_size=2))}
                    if draw(st.booleans())
                    else {}
                ),
            }
        ]
    if draw(st.booleans()):
        d["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    if draw(st.booleans()):
        d["bindsToNode"] = draw(st.booleans())
    if draw(st.booleans()):
        d["x-unowned"] = draw(_JSON)
    return d


@st.composite
def _slice(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(0, 4))
    spec: dict[str, Any] = {
        "driver": "gpu.example.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [draw(_device(i)) for i in range(n)],
    }
    if draw(st.booleans()):
        spec["sharedCounters"] = [{"name": "set-0", "counters": {"mem": {"value": "8Gi"}}}]
    if draw(st.booleans()):
        spec["x-unowned"] = draw(_JSON)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": "s",
            "annotations": draw(st.dictionaries(_KEYS, st.text(max_size=5), max_size=2)),
        },
        "spec": spec,
    }


_GATES = st.fixed_dictionaries(
    {
        g: st.booleans()
        for g in (
            "DRAListTypeAttributes",
            "DRADeviceCompatibilityGroups",
            "DRADeviceTaints",
            "DRAPartitionableDevices",
            "DRADeviceBindingConditions",
        )
    }
)


def _unowned(doc: Any, removed: set[str], here: str = "") -> list[tuple[str, str]]:
    """(pointer, exact JSON) of every leaf not under a removed path."""
    if here in removed:
        return []
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in _unowned(v, removed, here + pointer((k,)))]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in _unowned(v, removed, f"{here}/{i}")]
    return [(here, json.dumps(doc))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_slice(), gates=_GATES, update=st.booleans(), old=_slice())
def test_patch_applied_by_a_library_equals_the_stripped_object(
    obj: dict[str, Any], gates: dict[str, bool], update: bool, old: dict[str, Any]
) -> None:
    config = AdmissionConfig(endpoint="mutate", profile=load_profile("1.37", gates))
    ar = admission_review(
        copy.deepcopy(obj),
        operation="UPDATE" if update else "CREATE",
        old=copy.deepcopy(old) if update else None,
    )
    response = review(ar, SNAP, config)["response"]
    ctx = Context(
        profile=config.profile,
        old=copy.deepcopy(old) if update else None,
        operation="UPDATE" if update else "CREATE",
    )
    if update:
        from webhook.apiserver.defaults import apply_defaults

        apply_defaults(ctx.old)  # type: ignore[arg-type]
    stripped, _ = strip_disabled_fields(copy.deepcopy(obj), ctx)
    if "patch" not in response:
        assert "patchType" not in response
        assert stripped == obj
        return
    ops = _ops(response)
    assert ops and all(op["op"] == "remove" for op in ops)
    patched = jsonpatch.apply_patch(obj, ops)
    assert json.dumps(patched) == json.dumps(stripped)  # same content, same key order
    removed = {op["path"] for op in ops}
    assert _unowned(patched, removed) == _unowned(obj, removed)
    assert len(response["warnings"]) <= len(ops) + 1
