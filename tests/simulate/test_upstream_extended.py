"""The scheduler's special extended-resource claim, ported from upstream's tables.

Source: kubernetes/kubernetes `pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go`
(Test_createRequestsAndMappings_requests, Test_createRequestsAndMappings_mappings; 08832ffe). Upstream's pods
are built with the scheduler's test wrapper: `Res` appends a container `con<n>`, `InitReq` an init container
`init-con<n>`, `SidecarReq` an init container `sidecar-con<n>` with `restartPolicy: Always` (n = the list's
length so far). `extendedResources` (the Pod's requested DRA-backed names) becomes our `dra_resources`;
the mock DeviceClass resolver becomes our resource → class mapping. Upstream compares after sorting by
name (requests) and by (request, container) (mappings); so do we.
"""

from __future__ import annotations

from typing import Any

import pytest

from webhook.simulate import extended as ext

ERN = "example.com/gpu"
IMPLICIT = ext.IMPLICIT_PREFIX + "classInit"


class PodBuilder:
    """The scheduler test wrapper's container helpers, as plain manifests."""

    def __init__(self) -> None:
        self.containers: list[dict[str, Any]] = []
        self.init: list[dict[str, Any]] = []

    def res(self, requests: dict[str, str]) -> PodBuilder:
        self.containers.append(_ctr(f"con{len(self.containers)}", requests))
        return self

    def init_req(self, requests: dict[str, str]) -> PodBuilder:
        self.init.append(_ctr(f"init-con{len(self.init)}", requests))
        return self

    def sidecar_req(self, requests: dict[str, str]) -> PodBuilder:
        c = _ctr(f"sidecar-con{len(self.init)}", requests)
        c["restartPolicy"] = "Always"
        self.init.append(c)
        return self

    def obj(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": self.containers}
        if self.init:
            spec["initContainers"] = self.init
        meta = {"name": "my-pod", "namespace": "default", "uid": "1234"}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _ctr(name: str, requests: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "image": "pause", "resources": {"requests": dict(requests)}}


def pod1() -> dict[str, Any]:
    return PodBuilder().res({ERN: "1", ERN + "1": "2"}).obj()


def pod2() -> dict[str, Any]:
    return PodBuilder().res({ERN: "1"}).res({ERN + "1": "2"}).obj()


def pod_init() -> dict[str, Any]:
    return PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "2"}).obj()


def pod_init2() -> dict[str, Any]:
    return PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "1"}).init_req({ERN + "init": "2"}).obj()


def pod_init3() -> dict[str, Any]:
    b = PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "1"})
    return b.sidecar_req({ERN + "init": "1"}).init_req({ERN + "init": "2"}).obj()


def pod1_init_implicit() -> dict[str, Any]:
    return PodBuilder().init_req({ERN + "init": "1", IMPLICIT: "2"}).obj()


def pod_init_implicit() -> dict[str, Any]:
    b = PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "1"})
    return b.init_req({IMPLICIT: "2"}).obj()


RES1 = {ERN}
RES2 = {ERN, ERN + "1"}
RES_INIT = {ERN, ERN + "init"}
RES_INIT_IMPLICIT = {ERN, ERN + "init", IMPLICIT}
DEV_MAP = {ERN: "class"}
DEV_MAP2 = {ERN: "class", ERN + "1": "class1"}
DEV_MAP_INIT = {ERN: "class", ERN + "init": "classInit"}
DEV_MAP_INIT_IMPLICIT = {**DEV_MAP_INIT, IMPLICIT: "classInit"}

# (name, class, count) of each expected request, sorted by name as upstream compares them.
REQUEST_CASES: list[tuple[str, Any, set[str], dict[str, str], list[tuple[str, str, int]]]] = [
    ("nil", pod1, set(), {}, []),
    ("one resource match", pod1, RES1, DEV_MAP, [("container-0-request-0", "class", 1)]),
    (
        "one resource match, one resource not match",
        pod1,
        RES2,
        DEV_MAP,
        [("container-0-request-0", "class", 1)],
    ),
    (
        "two resources match",
        pod1,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
    ),
    (
        "two containers match",
        pod2,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
    ),
    (
        "one init container, one regular container",
        pod_init,
        RES_INIT,
        DEV_MAP_INIT,
        [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
    ),
    (
        "two init containers, one regular container",
        pod_init2,
        RES_INIT,
        DEV_MAP_INIT,
        [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
    ),
    (
        "three init containers, one sidecar, one regular container",
        pod_init3,
        RES_INIT,
        DEV_MAP_INIT,
        [
            ("container-1-request-0", "classInit", 1),
            ("container-2-request-0", "classInit", 2),
            ("container-3-request-0", "class", 1),
        ],
    ),
]


@pytest.mark.parametrize(
    "pod,resources,mapping,want",
    [c[1:] for c in REQUEST_CASES],
    ids=[c[0] for c in REQUEST_CASES],
)
def test_requests(pod: Any, resources: set[str], mapping: dict[str, str], want: list[Any]) -> None:
    reqs, _ = ext.special_requests(pod(), frozenset(resources), mapping)
    got = sorted(
        (r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"])
        for r in reqs
        if r["exactly"]["allocationMode"] == "ExactCount"
    )
    assert len(got) == len(reqs)
    assert got == want


# (container, resource, request) of each expected mapping, sorted by (request, container) as upstream does.
MAPPING_CASES: list[tuple[str, Any, set[str], dict[str, str], list[tuple[str, str, str]]]] = [
    (
        "one container, two requests",
        pod1,
        RES2,
        DEV_MAP2,
        [("con0", ERN, "container-0-request-0"), ("con0", ERN + "1", "container-0-request-1")],
    ),
    (
        "one container, one explicit and one implicit request",
        pod1_init_implicit,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [
            ("init-con0", IMPLICIT, "container-0-request-0"),
            ("init-con0", ERN + "init", "container-0-request-1"),
        ],
    ),
    (
        "two containers, two requests",
        pod2,
        RES2,
        DEV_MAP2,
        [("con0", ERN, "container-0-request-0"), ("con1", ERN + "1", "container-1-request-0")],
    ),
    (
        "one init container, one regular container, one request",
        pod_init,
        RES_INIT,
        DEV_MAP_INIT_IMPLICIT,
        [("init-con0", ERN + "init", "container-0-request-0"), ("con0", ERN, "container-1-request-0")],
    ),
    (
        "three containers (two are init container), two requests",
        pod_init2,
        RES_INIT,
        DEV_MAP_INIT_IMPLICIT,
        [
            ("init-con0", ERN + "init", "container-1-request-0"),
            ("init-con1", ERN + "init", "container-1-request-0"),
            ("con0", ERN, "container-2-request-0"),
        ],
    ),
    (
        "three containers (two are init container), both explicit and implicit resources",
        pod_init_implicit,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [
            ("init-con0", ERN + "init", "container-0-request-0"),
            ("init-con1", IMPLICIT, "container-1-request-0"),
            ("con0", ERN, "container-2-request-0"),
        ],
    ),
    (
        "four containers (two are init container, one sidecar), three requests",
        pod_init3,
        RES_INIT,
        DEV_MAP_INIT_IMPLICIT,
        [
            ("init-con0", ERN + "init", "container-1-request-0"),
            ("sidecar-con1", ERN + "init", "container-1-request-0"),
            ("init-con2", ERN + "init", "container-2-request-0"),
            ("con0", ERN, "container-3-request-0"),
        ],
    ),
]


@pytest.mark.parametrize(
    "pod,resources,mapping,want",
    [c[1:] for c in MAPPING_CASES],
    ids=[c[0] for c in MAPPING_CASES],
)
def test_mappings(pod: Any, resources: set[str], mapping: dict[str, str], want: list[Any]) -> None:
    _, maps = ext.special_requests(pod(), frozenset(resources), mapping)
    got = sorted(((m.container_name, m.resource, m.request) for m in maps), key=lambda t: (t[2], t[0]))
    assert got == want
