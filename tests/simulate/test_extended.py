"""Extended resources backed by DRA: class mapping, the special claim's requests (upstream
createRequestsAndMappings cases), and the per-node device-plugin/DRA split."""

from __future__ import annotations

from typing import Any

from webhook.simulate import extended as ext

R, RINIT = "example.com/gpu", "example.com/gpuinit"
MAPPING = {R: "class", RINIT: "classInit", ext.IMPLICIT_PREFIX + "classInit": "classInit"}


def container(name: str, requests: dict[str, Any], sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x", "resources": {"requests": requests}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}


def requests_of(p: dict[str, Any], resources: set[str]) -> list[tuple[str, str, int]]:
    reqs, _ = ext.special_requests(p, frozenset(resources), MAPPING)
    return [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in reqs]


def test_one_container_two_resources_sorted_by_resource_index() -> None:
    p = pod([container("con0", {R: "1", R + "1": "2"})])
    mapping = {**MAPPING, R + "1": "class1"}
    reqs, maps = ext.special_requests(p, frozenset({R, R + "1"}), mapping)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 1),
        ("container-0-request-1", 2),
    ]
    assert [(m.container_name, m.resource, m.request) for m in maps] == [
        ("con0", R, "container-0-request-0"),
        ("con0", R + "1", "container-0-request-1"),
    ]


def test_unmapped_resource_gets_no_request() -> None:
    p = pod([container("con0", {R: "1", "other.com/x": "2"})])
    assert requests_of(p, {R, "other.com/x"}) == [("container-0-request-0", "class", 1)]


def test_init_container_indices_come_first() -> None:
    p = pod([container("con0", {R: "1"})], init=[container("init-con0", {RINIT: "2"})])
    assert requests_of(p, {R, RINIT}) == [
        ("container-0-request-0", "classInit", 2),
        ("container-1-request-0", "class", 1),
    ]


def test_plain_init_containers_keep_only_the_largest_request() -> None:
    p = pod(
        [container("con0", {R: "1"})],
        init=[container("init-con0", {RINIT: "1"}), container("init-con1", {RINIT: "2"})],
    )
    reqs, maps = ext.special_requests(p, frozenset({R, RINIT}), MAPPING)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-1-request-0", 2),
        ("container-2-request-0", 1),
    ]
    init_maps = [(m.container_name, m.request) for m in maps if m.resource == RINIT]
    assert init_maps == [("init-con0", "container-1-request-0"), ("init-con1", "container-1-request-0")]


def test_init_container_reuses_a_later_sidecar_request() -> None:
    p = pod(
        [container("con0", {R: "1"})],
        init=[
            container("init-con0", {RINIT: "1"}),
            container("sidecar-con1", {RINIT: "1"}, sidecar=True),
            container("init-con2", {RINIT: "2"}),
        ],
    )
    reqs, maps = ext.special_requests(p, frozenset({R, RINIT}), MAPPING)
    assert [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in reqs] == [
        ("container-1-request-0", "classInit", 1),
        ("container-2-request-0", "classInit", 2),
        ("container-3-request-0", "class", 1),
    ]
    assert ("init-con0", "container-1-request-0") in [(m.container_name, m.request) for m in maps]


def test_limits_default_requests_and_zero_or_fractional_are_ignored() -> None:
    p = pod([{"name": "c", "image": "x", "resources": {"limits": {R: 2}}}, container("d", {R: "0"})])
    assert requests_of(p, {R}) == [("container-0-request-0", "class", 2)]
    assert requests_of(pod([container("c", {R: "500m"})]), {R}) == []


def test_class_mapping_newest_class_wins_then_smaller_name() -> None:
    def cls(name: str, ts: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if ts:
            meta["creationTimestamp"] = ts
        return {"metadata": meta, "spec": {"extendedResourceName": R}}

    mapping = ext.class_mapping([cls("b", "2026-01-02T00:00:00Z"), cls("a", "2026-01-01T00:00:00Z")])
    assert mapping[R] == "b"
    assert mapping[ext.IMPLICIT_PREFIX + "a"] == "a"
    assert ext.class_mapping([cls("b", None), cls("a", None)])[R] == "a"


def test_trigger_needs_a_mapped_nonzero_request() -> None:
    assert ext.needs_special_claim(pod([container("c", {R: "1"})]), MAPPING)
    assert not ext.needs_special_claim(pod([container("c", {"other.com/x": "1"})]), MAPPING)
    assert not ext.needs_special_claim(pod([container("c", {"cpu": "1"})]), {"cpu": "x"})


def test_node_variant_device_plugin_dra_or_unfit() -> None:
    wanted = {R, "vendor.com/fpga"}
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {R: "0", "vendor.com/fpga": "1"}}}
    assert ext.node_variant(wanted, MAPPING, node).dra == frozenset({R})
    node["status"]["allocatable"] = {R: "4"}
    v = ext.node_variant(wanted, MAPPING, node)
    assert v.unfit == "vendor.com/fpga"
    assert ext.node_variant({R}, MAPPING, node).dra == frozenset()
    assert ext.node_variant({R}, MAPPING, None).dra == frozenset({R})
