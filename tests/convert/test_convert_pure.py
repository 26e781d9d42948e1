"""The pure conversion functions: v1beta1 shapes to v1 and back as kube-apiserver converts them (Go zero
values decide whether a request gets `exactly`), paths mapped back, the caller's object never changed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from webhook.convert import convertible, from_v1, source_path, to_v1

V1BETA1 = "resource.k8s.io/v1beta1"


def claim(*requests: dict[str, Any], api: str = V1BETA1) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": list(requests)}},
    }


def requests_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["devices"]["requests"]


def test_request_fields_move_under_exactly_in_place_of_the_first() -> None:
    beta = claim(
        {"name": "gpu", "deviceClassName": "gpu", "count": 2, "selectors": [{"cel": {"expression": "true"}}]}
    )
    before = copy.deepcopy(beta)
    out = to_v1(beta)
    assert beta == before  # pure
    assert out.obj["apiVersion"] == "resource.k8s.io/v1" and out.findings == []
    assert requests_of(out.obj) == [
        {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu", "count": 2, "selectors": [{"cel": {"expression": "true"}}]},
        }
    ]
    assert list(requests_of(out.obj)[0]) == ["name", "exactly"]


@pytest.mark.parametrize(
    ("fields", "exactly"),
    [
        ({"count": 0}, None),  # Go zero values: not "set"
        ({"deviceClassName": ""}, None),
        ({"allocationMode": ""}, None),
        ({"selectors": None, "adminAccess": None, "tolerations": None, "capacity": None}, None),
        ({"selectors": []}, {"selectors": []}),  # a non-nil empty list is set
        ({"adminAccess": False}, {"adminAccess": False}),
        ({"tolerations": []}, {}),  # set, but copied by an append loop: absent in v1
        ({"capacity": {}}, {"capacity": {}}),
        ({"count": 0, "adminAccess": False}, {"count": 0, "adminAccess": False}),  # zero values go along
        ({"count": "2"}, {"count": "2"}),  # a wrong type is "set": validation reports it
    ],
)
def test_exactly_exists_when_a_main_field_is_set_in_gos_sense(fields: dict[str, Any], exactly: Any) -> None:
    request = {"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}], **fields}
    out = requests_of(to_v1(claim(request)).obj)[0]
    assert out.get("exactly") == exactly
    assert out["firstAvailable"] == [{"name": "a", "deviceClassName": "gpu"}]


def test_unknown_request_fields_go_under_exactly_where_strict_decoding_finds_them() -> None:
    out = requests_of(to_v1(claim({"name": "r", "deviceClass": "gpu"})).obj)[0]
    assert out == {"name": "r", "exactly": {"deviceClass": "gpu"}}
    assert source_path(V1BETA1, "ResourceClaim", "spec.devices.requests[0].exactly.deviceClass") == (
        "spec.devices.requests[0].deviceClass"
    )


def test_exactly_in_a_v1beta1_request_is_an_unknown_field() -> None:
    out = to_v1(claim({"name": "r", "exactly": {"deviceClassName": "gpu"}}))
    assert [(str(f.field), f.message.split(" (")[0]) for f in out.findings] == [
        ("spec.devices.requests[0].exactly", 'unknown field "exactly"')
    ]


def slice_(devices: list[Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1BETA1,
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "pool": {"name": "p", "resourceSliceCount": 1},
            **spec,
            "devices": devices,
        },
    }


def test_basic_device_fields_move_up() -> None:
    beta = slice_(
        [
            {
                "name": "a",
                "basic": {"attributes": {"x": {"int": 1}}, "capacity": {}, "taints": [], "allNodes": True},
            },
            {"name": "b"},
            {"name": "c", "basic": None},
        ],
        nodeName="",
        allNodes=False,
        perDeviceNodeSelection=True,
    )
    out = to_v1(beta).obj
    # empty maps/lists become absent; v1beta1's "" / false node fields are absent in v1
    assert out["spec"]["devices"] == [
        {"name": "a", "attributes": {"x": {"int": 1}}, "allNodes": True},
        {"name": "b"},
        {"name": "c"},
    ]
    assert "nodeName" not in out["spec"] and "allNodes" not in out["spec"]


def test_fields_outside_basic_and_a_basic_that_is_not_an_object_are_decoding_errors() -> None:
    out = to_v1(
        slice_(
            [
                {"name": "a", "attributes": {}},
                {"name": "b", "basic": [1]},
                {"name": "c", "basic": {"name": "x"}},
            ]
        )
    )
    assert [str(f.field) for f in out.findings] == [
        "spec.devices[0].attributes",
        "spec.devices[1].basic",
        "spec.devices[2].basic.name",
    ]


@pytest.mark.parametrize(
    ("kind", "v1_path", "beta_path"),
    [
        (
            "ResourceSlice",
            "spec.devices[3].attributes[model].string",
            "spec.devices[3].basic.attributes[model].string",
        ),
        ("ResourceSlice", "spec.devices[3].name", "spec.devices[3].name"),
        ("ResourceSlice", "spec.devices[3]", "spec.devices[3]"),
        ("ResourceSlice", "spec.devices[3].nameless", "spec.devices[3].basic.nameless"),
        ("ResourceSlice", "spec.sharedCounters[0].name", "spec.sharedCounters[0].name"),
        ("ResourceClaim", "spec.devices.requests[1].exactly.count", "spec.devices.requests[1].count"),
        ("ResourceClaim", "spec.devices.requests[1].exactly", "spec.devices.requests[1]"),
        ("ResourceClaim", "spec.devices.requests[1].exactlyX", "spec.devices.requests[1].exactlyX"),
        (
            "ResourceClaim",
            "spec.devices.requests[1].firstAvailable[0].count",
            "spec.devices.requests[1].firstAvailable[0].count",
        ),
        (
            "ResourceClaimTemplate",
            "spec.spec.devices.requests[0].exactly.selectors[2]",
            "spec.spec.devices.requests[0].selectors[2]",
        ),
        (
            "ResourceClaim",
            "status.allocation.devices.results[0].request",
            "status.allocation.devices.results[0].request",
        ),
        ("DeviceClass", "spec.selectors[0].cel.expression", "spec.selectors[0].cel.expression"),
    ],
)
def test_paths_map_back_to_v1beta1(kind: str, v1_path: str, beta_path: str) -> None:
    assert source_path(V1BETA1, kind, v1_path) == beta_path
    assert source_path("resource.k8s.io/v1beta2", kind, v1_path) == v1_path


def test_v1beta1_round_trips_through_v1() -> None:
    beta = claim(
        {
            "name": "a",
            "deviceClassName": "gpu",
            "count": 1,
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]},
    )
    assert from_v1(to_v1(beta).obj, V1BETA1) == beta
    sl = slice_(
        [{"name": "a", "basic": {"attributes": {"x": {"int": 1}}}}, {"name": "b", "basic": {}}], nodeName="n"
    )
    assert from_v1(to_v1(sl).obj, V1BETA1) == sl


def test_v1beta2_and_v1alpha3_change_only_their_api_version() -> None:
    obj = claim({"name": "a", "exactly": {"deviceClassName": "gpu"}}, api="resource.k8s.io/v1beta2")
    out = to_v1(obj)
    assert out.obj == {**obj, "apiVersion": "resource.k8s.io/v1"} and out.findings == []
    assert convertible("resource.k8s.io/v1alpha3", "DeviceTaintRule")
    assert not convertible("resource.k8s.io/v1alpha3", "ResourceClaim")
    assert not convertible("resource.k8s.io/v1beta1", "DeviceTaintRule")
    assert not convertible("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest")
