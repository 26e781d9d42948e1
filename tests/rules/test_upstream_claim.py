"""ResourceClaim / ResourceClaimTemplate cases ported from upstream's unit tests.

Source: kubernetes/kubernetes `pkg/apis/resource/validation/validation_resourceclaim_test.go` (TestValidateClaim,
TestValidateClaimUpdate, TestValidateClaimStatusUpdate; version 045b4933) and
`validation_resourceclaimtemplate_test.go` (030880a5). Expected outcomes are upstream's, adjusted where the
v1.37 validation code (`validation.go` 009801d9) differs from those older test files:
- duplicates are reported at the list index (`requests[5]`), not at `.name` / `.uid` / `.deviceID`;
- a too-long list short-circuits (no item errors next to `Too many`);
- a constraint with neither matchAttribute nor distinctAttribute is `Required` at the constraint
  (DRAConsumableCapacity is on in 1.37);
- v1 defaulting runs before validation (an unset allocationMode is ExactCount, count 1);
- a driver name "" is only `Required`; raw JSON that is not JSON cannot be written in a manifest (left out).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.rules.upstream_util import VALID_META, errors, want

GOOD, GOOD2, BAD, NS = "foo", "bar", "!@#$%^", "ns"
BAD_SUB = "&^%$"
REQ = "spec.devices.requests"
CONS = "spec.devices.constraints"
CONF = "spec.devices.config"
RES = "status.allocation.devices.results"
ACONF = "status.allocation.devices.config"
DEV = "status.devices"
OPAQUE = {"driver": "dra.example.com", "parameters": {"kind": "foo", "apiVersion": "dra.example.com/v1"}}
COST = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
    "10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, "
    "6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)


def exact(name: str = GOOD, **kw: Any) -> dict[str, Any]:
    return {
        "name": name,
        "exactly": {"deviceClassName": GOOD, "allocationMode": "ExactCount", "count": 1, **kw},
    }


def sub(name: str) -> dict[str, Any]:
    return {"name": name, "deviceClassName": GOOD, "allocationMode": "ExactCount", "count": 1}


def claim(
    requests: list[Any] | None = None, name: str = GOOD, ns: str = NS, **devices: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if not name:
        del meta["name"]
    if not ns:
        del meta["namespace"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": requests if requests is not None else [exact()], **devices}},
    }


def first_available_claim() -> dict[str, Any]:
    return claim([{"name": GOOD, "firstAvailable": [sub(GOOD), sub(GOOD2)]}])


def with_meta(**meta: Any) -> dict[str, Any]:
    c = claim()
    c["metadata"].update(meta)
    return c


def params_of_size(extra: int = 0) -> dict[str, Any]:
    """`{"str": "xxx..."}` of exactly 10240 bytes (+extra) when serialized compactly."""
    return {"str": "x" * (10 * 1024 - 10 + extra)}


def config(**opaque: Any) -> dict[str, Any]:
    return {"opaque": {**OPAQUE, **opaque}}


def long_selector(extra: int) -> dict[str, Any]:
    expr = 'device.driver == ""'
    return {"cel": {"expression": expr.replace('""', '"' + "x" * (10 * 1024 - len(expr) + extra) + '"')}}


LABEL = "Invalid"  # an invalid DNS label / subdomain / label value is an `Invalid` error


def _invalid_request() -> dict[str, Any]:
    reqs = [exact()] + [exact(f"{GOOD}{i}") for i in range(1, 33)]
    cons = [{"requests": [GOOD, BAD], "matchAttribute": "missing-domain"}, {"matchAttribute": ""}, {}]
    cons += [{"matchAttribute": "foo/bar"}] * (33 - len(cons))
    conf = [{"requests": [GOOD, BAD], **config()}] + [config()] * 32
    return claim(reqs, constraints=cons, config=conf)


def _valid_request() -> dict[str, Any]:
    reqs = [exact()] + [exact(f"{GOOD}{i}") for i in range(1, 32)]
    return claim(reqs, constraints=[{"matchAttribute": "foo/bar"}] * 32, config=[config()] * 32)


def _invalid_spec() -> dict[str, Any]:
    cons = [{"requests": [GOOD, BAD], "matchAttribute": "missing-domain"}, {"matchAttribute": ""}, {}]
    return claim(constraints=cons, config=[{"requests": [GOOD, BAD], **config()}])


def _allocation_mode() -> dict[str, Any]:
    return claim(
        [
            exact(),
            exact("foo2", allocationMode="All", count=0),
            exact("foo3", count=-1),
            exact("foo4", allocationMode="other"),
            exact("foo5", allocationMode="All", count=2),
            exact(),
        ]
    )


def _configuration() -> dict[str, Any]:
    no_params = {"opaque": {"driver": "dra.example.com"}}
    return claim(
        config=[
            no_params,  # upstream: empty raw bytes
            config(),  # upstream: `{` (not JSON; cannot be written in a manifest)
            config(),  # upstream: `"hello-world"`, see the case `configuration-not-an-object`
            config(parameters=None),
            config(parameters=params_of_size()),
            config(parameters=params_of_size(1)),
        ]
    )


def _selectors(*selectors: dict[str, Any], index: int = 1) -> dict[str, Any]:
    reqs = [exact()] if index else []
    reqs.append(exact(GOOD + "-2" if index else GOOD, selectors=list(selectors)))
    return claim(reqs)


def _subrequests(n: int) -> dict[str, Any]:
    return claim([{"name": GOOD, "firstAvailable": [sub(f"subreq-{i}") for i in range(n)]}])


def _fa(**devices: Any) -> dict[str, Any]:
    c = first_available_claim()
    c["spec"]["devices"].update(devices)
    return c


def _both_set() -> dict[str, Any]:
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["exactly"] = exact(
        count=2, adminAccess=True, selectors=[{"cel": {"expression": 'device.driver == "dra.example.com"'}}]
    )["exactly"]
    return c


def _nested_invalid() -> dict[str, Any]:
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["firstAvailable"][0] = {"name": BAD}
    return c


def _nested_same_name() -> dict[str, Any]:
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["firstAvailable"][1]["name"] = GOOD
    return c


CLAIM_CASES: list[tuple[str, Callable[[], dict[str, Any]], Any]] = [
    ("good-claim", claim, want()),
    ("missing-name", lambda: claim(name=""), want(("metadata.name", "Required"))),
    ("bad-name", lambda: claim(name=BAD), want(("metadata.name", "Invalid"))),
    ("missing-namespace", lambda: claim(ns=""), want(("metadata.namespace", "Required"))),
    *[(name, lambda m=m: with_meta(**m), want()) for name, m in VALID_META.items()],
    (
        "bad-labels",
        lambda: with_meta(labels={"hello-world": "spaces not allowed"}),
        want(("metadata.labels", "Invalid")),
    ),
    (
        "bad-annotations",
        lambda: with_meta(annotations={BAD: "hello world"}),
        want(("metadata.annotations", "Invalid")),
    ),
    (
        "bad-classname",
        lambda: claim([exact(deviceClassName=BAD)]),
        want((f"{REQ}[0].exactly.deviceClassName", "Invalid")),
    ),
    (
        "missing-classname",
        lambda: claim([exact(deviceClassName="")]),
        want((f"{REQ}[0].exactly.deviceClassName", "Required")),
    ),
    (
        "invalid-request",  # every list over its limit: only `Too many`, item checks short-circuit
        _invalid_request,
        want((REQ, "TooMany"), (CONS, "TooMany"), (CONF, "TooMany")),
    ),
    ("valid-request", _valid_request, want()),
    (
        "invalid-spec",
        _invalid_spec,
        want(
            (f"{CONS}[0].requests[1]", "Invalid"),
            (f"{CONS}[0].requests[1]", "Invalid"),
            (f"{CONS}[0].matchAttribute", "Invalid"),
            (f"{CONS}[0].matchAttribute", "Invalid"),
            (f"{CONS}[1].matchAttribute", "Invalid"),
            (f"{CONS}[1].matchAttribute", "Invalid"),
            (f"{CONS}[2]", "Required"),
            (f"{CONF}[0].requests[1]", "Invalid"),
            (f"{CONF}[0].requests[1]", "Invalid"),
        ),
    ),
    (
        "allocation-mode",
        _allocation_mode,
        want(
            (f"{REQ}[2].exactly.count", "Invalid"),
            (f"{REQ}[3].exactly.allocationMode", "NotSupported"),
            (f"{REQ}[4].exactly.count", "Invalid"),
            (f"{REQ}[5]", "Duplicate"),
        ),
    ),
    (
        "configuration",
        _configuration,
        want(
            (f"{CONF}[0].opaque.parameters", "Required"),
            (f"{CONF}[3].opaque.parameters", "Required"),
            (f"{CONF}[5].opaque.parameters", "TooLong"),
        ),
    ),
    (
        # Same path and type as upstream, but our structural layer treats a non-object RawExtension as a
        # type error that stops the object's other checks (the API server would report them too).
        "configuration-not-an-object",
        lambda: claim(config=[config(parameters="hello-world")]),
        want((f"{CONF}[0].opaque.parameters", "Invalid")),
    ),
    (
        "CEL-compile-errors",
        lambda: _selectors(
            {"cel": {"expression": 'device.driver == "dra.example.com"'}},
            {"cel": {"expression": "device.attributes[true].someBoolean"}},
        ),
        want((f"{REQ}[1].exactly.selectors[1].cel.expression", "Invalid")),
    ),
    (
        "CEL-length",
        lambda: _selectors(long_selector(0), long_selector(1)),
        want((f"{REQ}[1].exactly.selectors[1].cel.expression", "TooLong")),
    ),
    (
        "CEL-cost",
        lambda: _selectors({"cel": {"expression": COST}}, index=0),
        want((f"{REQ}[0].exactly.selectors[0].cel.expression", "Forbidden")),
    ),
    ("prioritized-list-valid", first_available_claim, want()),
    ("prioritized-list-both-first-available-and-exactly-set", _both_set, want((f"{REQ}[0]", "Invalid"))),
    (
        "prioritized-list-invalid-nested-request",  # allocationMode is defaulted to ExactCount in v1
        _nested_invalid,
        want(
            (f"{REQ}[0].firstAvailable[0].name", "Invalid"),
            (f"{REQ}[0].firstAvailable[0].deviceClassName", "Required"),
        ),
    ),
    (
        "prioritized-list-nested-requests-same-name",
        _nested_same_name,
        want((f"{REQ}[0].firstAvailable[1]", "Duplicate")),
    ),
    (
        "prioritized-list-too-many-subrequests",
        lambda: _subrequests(9),
        want((f"{REQ}[0].firstAvailable", "TooMany")),
    ),
    ("prioritized-list-eight-subrequests", lambda: _subrequests(8), want()),
    (
        "prioritized-list-config-requests-with-subrequest-reference",
        lambda: _fa(config=[{"requests": ["foo/bar"], **config()}]),
        want(),
    ),
    (
        "prioritized-list-config-requests-with-parent-request-reference",
        lambda: _fa(config=[{"requests": ["foo"], **config()}]),
        want(),
    ),
    (
        "prioritized-list-config-requests-with-invalid-subrequest-reference",
        lambda: _fa(config=[{"requests": ["foo/baz"], **config()}]),
        want((f"{CONF}[0].requests[0]", "Invalid")),
    ),
    (
        "prioritized-list-constraints-requests-with-subrequest-reference",
        lambda: _fa(
            constraints=[{"requests": ["foo/bar"], "matchAttribute": "dra.example.com/driverVersion"}]
        ),
        want(),
    ),
    (
        "prioritized-list-constraints-requests-with-parent-request-reference",
        lambda: _fa(constraints=[{"requests": ["foo"], "matchAttribute": "dra.example.com/driverVersion"}]),
        want(),
    ),
    (
        "prioritized-list-constraints-requests-with-invalid-subrequest-reference",
        lambda: _fa(
            constraints=[{"requests": ["foo/baz"], "matchAttribute": "dra.example.com/driverVersion"}]
        ),
        want((f"{CONS}[0].requests[0]", "Invalid")),
    ),
]


@pytest.mark.parametrize(("name", "build", "expected"), CLAIM_CASES, ids=[c[0] for c in CLAIM_CASES])
def test_validate_claim(name: str, build: Callable[[], dict[str, Any]], expected: Any) -> None:
    assert errors(build()) == expected


def template(build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The claim's metadata and spec as a ResourceClaimTemplate."""
    c = build()
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": c["metadata"],
        "spec": {"spec": c["spec"]},
    }


def _template_bad_sub_class() -> dict[str, Any]:
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["firstAvailable"][0]["deviceClassName"] = BAD
    return c


TREQ = "spec.spec.devices.requests"
TEMPLATE_CASES: list[tuple[str, Callable[[], dict[str, Any]], Any]] = [
    ("good-claim", claim, want()),
    ("missing-name", lambda: claim(name=""), want(("metadata.name", "Required"))),
    ("bad-name", lambda: claim(name=BAD), want(("metadata.name", "Invalid"))),
    ("missing-namespace", lambda: claim(ns=""), want(("metadata.namespace", "Required"))),
    *[(name, lambda m=m: with_meta(**m), want()) for name, m in VALID_META.items()],
    (
        "bad-labels",
        lambda: with_meta(labels={"hello-world": "spaces not allowed"}),
        want(("metadata.labels", "Invalid")),
    ),
    (
        "bad-annotations",
        lambda: with_meta(annotations={BAD: "hello world"}),
        want(("metadata.annotations", "Invalid")),
    ),
    (
        "bad-classname",
        lambda: claim([exact(deviceClassName=BAD)]),
        want((f"{TREQ}[0].exactly.deviceClassName", "Invalid")),
    ),
    ("prioritized-list", first_available_claim, want()),
    (
        "prioritized-list-both-first-available-and-exactly-set",
        _both_set,
        want((f"{TREQ}[0]", "Invalid")),
    ),
    (
        "prioritized-list-bad-class-name-on-subrequest",
        _template_bad_sub_class,
        want((f"{TREQ}[0].firstAvailable[0].deviceClassName", "Invalid")),
    ),
]


@pytest.mark.parametrize(("name", "build", "expected"), TEMPLATE_CASES, ids=[c[0] for c in TEMPLATE_CASES])
def test_validate_claim_template(name: str, build: Callable[[], dict[str, Any]], expected: Any) -> None:
    assert errors(template(build)) == expected


def _change_class(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    reqs = c["spec"]["devices"]["requests"]
    target = reqs[0]["exactly"] if "exactly" in reqs[0] else reqs[0]["firstAvailable"][0]
    target["deviceClassName"] += "2"
    return c


def _too_large_config_claim() -> dict[str, Any]:
    return claim(config=[{"opaque": {"driver": GOOD, "parameters": params_of_size(1)}}])


UPDATE_CASES: list[
    tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], dict[str, Any]], Any]
] = [
    ("valid-no-op-update", claim, lambda c: c, want()),
    ("invalid-update", claim, _change_class, want(("spec", "Invalid"))),
    ("too-large-config-valid-if-stored", _too_large_config_claim, lambda c: c, want()),
    (
        "invalid-name-update",
        claim,
        lambda c: {**c, "metadata": {**c["metadata"], "name": "foo-2"}},
        want(("metadata.name", "Invalid")),
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "expected"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES]
)
def test_validate_claim_update(
    name: str, old: Callable[[], dict[str, Any]], update: Any, expected: Any
) -> None:
    before = old()
    assert errors(update(copy.deepcopy(before)), old=before) == expected


TEMPLATE_UPDATE_CASES = [
    ("valid-no-op-update", claim, lambda c: c, want()),
    ("invalid-update-class", claim, _change_class, want(("spec", "Invalid"))),
    ("prioritized-listinvalid-update-class", first_available_claim, _change_class, want(("spec", "Invalid"))),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "expected"), TEMPLATE_UPDATE_CASES, ids=[c[0] for c in TEMPLATE_UPDATE_CASES]
)
def test_validate_claim_template_update(name: str, old: Any, update: Any, expected: Any) -> None:
    before = template(old)
    after = template(lambda: update(old()))
    assert errors(after, old=before) == expected


# ---- TestValidateClaimStatusUpdate -----------------------------------------------------------------


def result(request: str = GOOD, **kw: Any) -> dict[str, Any]:
    return {"request": request, "driver": GOOD, "pool": GOOD, "device": GOOD, "adminAccess": False, **kw}


def allocated(base: Callable[[], dict[str, Any]] = claim, **allocation: Any) -> dict[str, Any]:
    c = base()
    c["status"] = {"allocation": {"devices": {"results": [result()]}, **allocation}}
    return c


def reserved(n: int, name: str | None = None, uid: str | None = None) -> list[dict[str, Any]]:
    return [{"resource": "pods", "name": name or f"foo-{i}", "uid": uid or str(i)} for i in range(n)]


def status(c: dict[str, Any], **fields: Any) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c.setdefault("status", {}).update(fields)
    return c


def allocation(results: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"devices": {"results": results if results is not None else [result()]}, **extra}


def device_status(driver: str = GOOD, pool: str = GOOD, device: str = GOOD, **kw: Any) -> dict[str, Any]:
    return {"driver": driver, "pool": pool, "device": device, **kw}


def conditions(n: int) -> list[dict[str, Any]]:
    return [
        {
            "type": f"test-{i}",
            "status": "True",
            "reason": "test_reason",
            "lastTransitionTime": "2026-07-01T00:00:00Z",
            "observedGeneration": 0,
        }
        for i in range(n)
    ]


def ips(n: int) -> list[str]:
    return [f"10.9.8.{i}/24" for i in range(n)]


ALLOCATED = allocated()
ALLOCATED_OLD = copy.deepcopy(ALLOCATED)  # allocated before adminAccess was required in results
del ALLOCATED_OLD["status"]["allocation"]["devices"]["results"][0]["adminAccess"]
DELETING = copy.deepcopy(ALLOCATED)
DELETING["metadata"]["deletionTimestamp"] = "2026-07-01T00:00:00Z"
ALLOC_BAD_LABEL = allocated(
    nodeSelector={
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-1"]}]}]
    }
)
ALLOC_LARGE_CONFIG = allocated(
    devices={
        "results": [result()],
        "config": [{"source": "FromClaim", "opaque": {"driver": GOOD, "parameters": params_of_size(1)}}],
    }
)
FA = first_available_claim()
BAD_CONFIGS = [
    {"source": "FromClaim", **config()},
    {"source": "", **config()},
    {"source": "no-such-source", **config()},
    {"source": "FromClaim"},
    {"source": "FromClaim", "opaque": {}},
    {"source": "FromClaim", "opaque": {"driver": GOOD, "parameters": params_of_size()}},
    {"source": "FromClaim", "opaque": {"driver": GOOD, "parameters": params_of_size(1)}},
]
NET_OK = {
    "interfaceName": "x" * 256,
    "hardwareAddress": "x" * 128,
    "ips": ["10.9.8.0/24", "2001:db8::/64", "10.9.8.1/24", "2001:db8::1/64"]
    + [f"10.9.8.{i}/24" for i in range(2, 14)],
}
NET_BAD = {
    "interfaceName": "x" * 257,
    "hardwareAddress": "x" * 129,
    "ips": ["300.9.8.0/24", "010.009.008.000/24", "2001:0db8::1/64"],
}
NET = f"{DEV}[0].networkData"

STATUS_CASES: list[tuple[str, dict[str, Any], dict[str, Any], Any]] = [
    ("valid-no-op-update", claim(), claim(), want()),
    ("valid-add-allocation-empty", claim(), status(claim(), allocation={}), want()),
    ("valid-add-allocation-non-empty", claim(), status(claim(), allocation=allocation()), want()),
    (
        "invalid-add-allocation-bad-request",
        claim(),
        status(claim(), allocation=allocation([result(BAD)])),
        want((f"{RES}[0].request", "Invalid"), (f"{RES}[0].request", "Invalid")),
    ),
    (
        "okay-add-allocation-missing-admin-access",
        claim(),
        status(claim(), allocation=allocation([{k: v for k, v in result().items() if k != "adminAccess"}])),
        want(),
    ),
    (
        "invalid-node-selector",
        claim(),
        status(claim(), allocation={"nodeSelector": {}}),
        want(("status.allocation.nodeSelector.nodeSelectorTerms", "Required")),
    ),
    ("add-reservation", ALLOCATED, status(ALLOCATED, reservedFor=reserved(256)), want()),
    ("add-reservation-old-claim", ALLOCATED_OLD, status(ALLOCATED_OLD, reservedFor=reserved(256)), want()),
    (
        "add-reservation-and-allocation",
        claim(),
        status(claim(), allocation=allocation(), reservedFor=reserved(256)),
        want(),
    ),
    (
        "invalid-reserved-for-too-large",
        ALLOCATED,
        status(ALLOCATED, reservedFor=reserved(257)),
        want(("status.reservedFor", "TooMany")),
    ),
    (
        "invalid-reserved-for-duplicate",  # v1.37 reports the duplicate at the entry, not at `.uid`
        ALLOCATED,
        status(ALLOCATED, reservedFor=reserved(2, name="foo", uid="1")),
        want(("status.reservedFor[1]", "Duplicate")),
    ),
    (
        "invalid-reserved-for-no-allocation",
        claim(),
        status(claim(), reservedFor=reserved(1, name="foo", uid="1")),
        want(("status.reservedFor", "Forbidden")),
    ),
    *[
        (
            f"invalid-reserved-for-no-{missing}",
            ALLOCATED,
            status(
                ALLOCATED,
                reservedFor=[
                    {k: v for k, v in {"resource": "pods", "name": "foo", "uid": "1"}.items() if k != missing}
                ],
            ),
            want((f"status.reservedFor[0].{missing}", "Required")),
        )
        for missing in ("resource", "name", "uid")
    ],
    (
        "invalid-reserved-deleted",
        DELETING,
        status(DELETING, reservedFor=reserved(1, name="foo", uid="1")),
        want(("status.reservedFor", "Forbidden")),
    ),
    (
        "invalid-allocation-modification",
        ALLOCATED,
        status(ALLOCATED, allocation=allocation([result(driver="foo-2")])),
        want(("status.allocation", "Invalid")),
    ),
    (
        "invalid-request-name",
        claim(),
        status(
            claim(),
            allocation={
                "devices": {
                    "results": [result()],
                    "config": [{"source": "FromClaim", "requests": [GOOD, BAD], **config()}],
                }
            },
        ),
        want((f"{ACONF}[0].requests[1]", "Invalid"), (f"{ACONF}[0].requests[1]", "Invalid")),
    ),
    (
        "configuration",  # v1.37: an empty opaque driver is only `Required`
        claim(),
        status(claim(), allocation={"devices": {"results": [result()], "config": BAD_CONFIGS}}),
        want(
            (f"{ACONF}[1].source", "Required"),
            (f"{ACONF}[2].source", "NotSupported"),
            (f"{ACONF}[3].opaque", "Required"),
            (f"{ACONF}[4].opaque.driver", "Required"),
            (f"{ACONF}[4].opaque.parameters", "Required"),
            (f"{ACONF}[6].opaque.parameters", "TooLong"),
        ),
    ),
    ("valid-configuration-update", ALLOC_LARGE_CONFIG, ALLOC_LARGE_CONFIG, want()),
    (
        "valid-network-device-status",
        ALLOCATED,
        status(
            ALLOCATED,
            devices=[
                device_status(
                    conditions=conditions(8),
                    data={"kind": "foo", "apiVersion": "dra.example.com/v1"},
                    networkData=NET_OK,
                )
            ],
        ),
        want(),
    ),
    (
        "invalid-device-status-duplicate",  # v1.37 reports the duplicate device at the entry
        ALLOCATED,
        status(
            ALLOCATED,
            devices=[
                device_status(networkData={"ips": ["2001:db8::1/64", "2001:db8::1/64"]}),
                device_status(),
            ],
        ),
        want((f"{NET}.ips[1]", "Duplicate"), (f"{DEV}[1]", "Duplicate")),
    ),
    (
        "invalid-network-device-status",
        ALLOCATED,
        status(ALLOCATED, devices=[device_status(networkData=NET_BAD)]),
        want(
            (f"{NET}.interfaceName", "TooLong"),
            (f"{NET}.hardwareAddress", "TooLong"),
            (f"{NET}.ips[0]", "Invalid"),
            (f"{NET}.ips[1]", "Invalid"),
            (f"{NET}.ips[2]", "Invalid"),
        ),
    ),
    (
        "invalid-data-device-status-limits",
        ALLOCATED,
        status(
            ALLOCATED,
            devices=[
                device_status(data=params_of_size(1), conditions=conditions(9), networkData={"ips": ips(17)})
            ],
        ),
        want(
            (f"{DEV}[0].conditions", "TooMany"),
            (f"{DEV}[0].data", "TooLong"),
            (f"{NET}.ips", "TooMany"),
        ),
    ),
    (
        "invalid-device-status-no-device",
        ALLOCATED,
        status(ALLOCATED, devices=[device_status("b", "a", "r")]),
        want((f"{DEV}[0]", "Invalid")),
    ),
    (
        "invalid-update-invalid-label-value",
        claim(),
        status(claim(), allocation=ALLOC_BAD_LABEL["status"]["allocation"]),
        want(
            ("status.allocation.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "Invalid")
        ),
    ),
    (
        "valid-update-with-invalid-label-value",
        ALLOC_BAD_LABEL,
        status(ALLOC_BAD_LABEL, reservedFor=reserved(256)),
        want(),
    ),
    (
        "valid-add-allocation-with-sub-requests",
        FA,
        status(FA, allocation=allocation([result(f"{GOOD}/{GOOD}")])),
        want(),
    ),
    (
        "invalid-add-allocation-with-sub-requests-invalid-format",
        FA,
        status(FA, allocation=allocation([result(f"{GOOD}/{GOOD}/{GOOD}")])),
        want((f"{RES}[0].request", "Invalid")),
    ),
    (
        "invalid-add-allocation-with-sub-requests-no-corresponding-sub-request",
        FA,
        status(FA, allocation=allocation([result("foo/baz")])),
        want((f"{RES}[0].request", "Invalid")),
    ),
    (
        "invalid-add-allocation-with-sub-requests-invalid-request-names",
        FA,
        status(FA, allocation=allocation([result(f"{BAD}/{BAD_SUB}")])),
        want(*[(f"{RES}[0].request", "Invalid")] * 3),
    ),
    (
        "add-allocation-old-claim-with-prioritized-list",
        FA,
        status(FA, allocation=allocation([result("foo/bar")])),
        want(),
    ),
]


@pytest.mark.parametrize(("name", "old", "new", "expected"), STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_validate_claim_status_update(
    name: str, old: dict[str, Any], new: dict[str, Any], expected: Any
) -> None:
    assert errors(new, old=old) == expected
