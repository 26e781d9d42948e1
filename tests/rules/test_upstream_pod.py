"""Pod claim fields, ported from upstream's tables.

Source: kubernetes/kubernetes `pkg/apis/core/validation/validation_test.go` (TestValidateDynamicResourceAllocation;
000f2605). Upstream only asserts "some error" for its failure cases; the expected (field path, error type)
pairs below come from the v1.37 validation code the test exercises (`validation.go` 000f2605:
validatePodResourceClaim, validateResourceClaimNames, validateEphemeralContainers, validatePodResources,
validatePodResourceClaimStatuses). Upstream validates a bare PodSpec at `field`; we validate a whole Pod, so
paths start at `spec`. Not ported: ephemeral containers are also `Forbidden` on create by ValidatePodCreate
(`spec.ephemeralContainers`), which is general Pod validation outside draguard's scope.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.rules import upstream_util
from tests.rules.upstream_util import Errors, want

EXTERNAL_CLAIM = "some-claim"
EXTERNAL_TEMPLATE = "some-claim-template"
RC = "spec.resourceClaims"
C0 = "spec.containers[0].resources.claims"


def errors(obj: dict[str, Any], status: bool = False) -> Errors:
    """upstream_util.errors, with `Not found` (field.NotFound) named as upstream names it."""
    out = Errors()
    for (path, kind), n in upstream_util.errors(obj, status=status).items():
        out[(path, "NotFound" if kind.startswith("Other:Not found") else kind)] += n
    return out


def pod(
    claims: list[dict[str, Any]] | None = None,
    container_claims: list[dict[str, Any]] | None = None,
    init_claims: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": "ctr", "image": "image"}
    if container_claims is not None:
        ctr["resources"] = {"claims": container_claims}
    spec: dict[str, Any] = {"restartPolicy": "Always", "containers": [ctr]}
    if init_claims is not None:
        spec["initContainers"] = [
            {"name": "ctr-init", "image": "image", "resources": {"claims": init_claims}}
        ]
    if claims is not None:
        spec["resourceClaims"] = claims
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "some-pod", "namespace": "ns"},
        "spec": spec,
    }


def ref(name: str, claim: str = EXTERNAL_CLAIM) -> dict[str, Any]:
    return {"name": name, "resourceClaimName": claim}


def tmpl(name: str, template: str = EXTERNAL_TEMPLATE) -> dict[str, Any]:
    return {"name": name, "resourceClaimTemplateName": template}


def good_template() -> dict[str, Any]:
    return pod([tmpl("my-claim-template")], [{"name": "my-claim-template"}])


def good_reference() -> dict[str, Any]:
    return pod([ref("my-claim-reference")], [{"name": "my-claim-reference"}])


def ephemeral() -> dict[str, Any]:
    p = pod([ref("my-claim")])
    p["spec"]["ephemeralContainers"] = [
        {
            "name": "ctr-ephemeral",
            "image": "image",
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File",
            "resources": {"claims": [{"name": "my-claim"}]},
            "targetContainerName": "ctr",
        }
    ]
    return p


def with_claim(base: Callable[[], dict[str, Any]], **fields: Any) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        p = base()
        p["spec"]["resourceClaims"][0].update(fields)
        return p

    return make


SUCCESS: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("resource claim reference", good_reference),
    ("resource claim template", good_template),
    (
        "multiple claims",
        lambda: pod(
            [ref("my-claim"), ref("another-claim")], [{"name": "my-claim"}, {"name": "another-claim"}]
        ),
    ),
    (
        "multiple claims with requests",
        lambda: pod(
            [ref("my-claim"), ref("another-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "another-claim", "request": "req-0"}],
        ),
    ),
    (
        "single claim with requests",
        lambda: pod(
            [ref("my-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim", "request": "req-1"}],
        ),
    ),
    ("init container", lambda: pod([ref("my-claim")], init_claims=[{"name": "my-claim"}])),
]


@pytest.mark.parametrize("make", [c[1] for c in SUCCESS], ids=[c[0] for c in SUCCESS])
def test_success(make: Callable[[], dict[str, Any]]) -> None:
    assert errors(make()) == want()


FAILURE: list[tuple[str, Callable[[], dict[str, Any]], Any]] = [
    ("pod claim name with prefix", lambda: pod([ref("../my-claim")]), want((f"{RC}[0].name", "Invalid"))),
    ("pod claim name with path", lambda: pod([ref("my/claim")]), want((f"{RC}[0].name", "Invalid"))),
    ("pod claim name empty", lambda: pod([ref("")]), want((f"{RC}[0].name", "Required"))),
    (
        "duplicate pod claim entries",
        lambda: pod([ref("my-claim"), ref("my-claim")]),
        want((f"{RC}[1].name", "Duplicate")),
    ),
    ("resource claim source empty", lambda: pod([{"name": "my-claim"}]), want((f"{RC}[0]", "Invalid"))),
    (
        "resource claim reference and template",
        lambda: pod([{**ref("my-claim"), **tmpl("my-claim")}], [{"name": "my-claim"}]),
        want((f"{RC}[0]", "Invalid")),
    ),
    (
        "claim not found",
        lambda: pod([ref("my-claim")], [{"name": "no-such-claim"}]),
        want((f"{C0}[0]", "NotFound")),
    ),
    ("claim name empty", lambda: pod([ref("my-claim")], [{"name": ""}]), want((f"{C0}[0]", "Required"))),
    (
        "pod claim name duplicates",
        lambda: pod([ref("my-claim")], [{"name": "my-claim"}, {"name": "my-claim"}]),
        want((f"{C0}[1]", "Duplicate")),
    ),
    (
        "pod claim name duplicates without and with request",
        lambda: pod([ref("my-claim")], [{"name": "my-claim"}, {"name": "my-claim", "request": "req-0"}]),
        want((f"{C0}[1]", "Duplicate")),
    ),
    (
        "pod claim name duplicates with and without request",
        lambda: pod([ref("my-claim")], [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim"}]),
        want((f"{C0}[1]", "Duplicate")),
    ),
    (
        "pod claim name duplicates with requests",
        lambda: pod(
            [ref("my-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim", "request": "req-0"}],
        ),
        want((f"{C0}[1]", "Duplicate")),
    ),
    (
        "bad request name",
        lambda: pod([ref("my-claim")], [{"name": "my-claim", "request": "*$@%^"}]),
        want((f"{C0}[0].request", "Invalid")),
    ),
    ("no claims defined", lambda: pod(None, [{"name": "my-claim"}]), want((f"{C0}[0]", "NotFound"))),
    (
        "duplicate pod claim name",
        lambda: pod([ref("my-claim"), ref("my-claim")], [{"name": "my-claim"}]),
        want((f"{RC}[1].name", "Duplicate")),
    ),
    (
        "ephemeral container don't support resource requirements",
        ephemeral,
        want(("spec.ephemeralContainers[0].resources", "Forbidden")),
    ),
    (
        "invalid claim template name",
        with_claim(good_template, resourceClaimTemplateName=".foo_bar"),
        want((f"{RC}[0].resourceClaimTemplateName", "Invalid")),
    ),
    (
        "invalid claim reference name",
        with_claim(good_reference, resourceClaimName=".foo_bar"),
        want((f"{RC}[0].resourceClaimName", "Invalid")),
    ),
]

# Code-derived cases (validation.go 000f2605) for branches the upstream table does not reach.
FAILURE += [
    (
        "three-way overlap reports each request of the claim",
        lambda: pod(
            [ref("my-claim")],
            [
                {"name": "my-claim", "request": "a"},
                {"name": "my-claim", "request": "b"},
                {"name": "my-claim"},
            ],
        ),
        want((f"{C0}[2]", "Duplicate"), (f"{C0}[2]", "Duplicate")),
    ),
    (
        "unknown and duplicate at once",
        lambda: pod([ref("my-claim")], [{"name": "other"}, {"name": "other"}]),
        want((f"{C0}[0]", "NotFound"), (f"{C0}[1]", "NotFound"), (f"{C0}[1]", "Duplicate")),
    ),
    (
        "init container claim not found",
        lambda: pod([ref("my-claim")], init_claims=[{"name": "nope"}]),
        want(("spec.initContainers[0].resources.claims[0]", "NotFound")),
    ),
    (
        "duplicate name is not also format-checked",
        lambda: pod([ref("Bad_Name"), ref("Bad_Name")]),
        want((f"{RC}[0].name", "Invalid"), (f"{RC}[1].name", "Duplicate")),
    ),
    (
        "empty claim reference names",
        lambda: pod([{"name": "a", "resourceClaimName": ""}, {"name": "b", "resourceClaimTemplateName": ""}]),
        want((f"{RC}[0].resourceClaimName", "Invalid"), (f"{RC}[1].resourceClaimTemplateName", "Invalid")),
    ),
    (
        "pod-level claims are forbidden and still name-checked",
        lambda: _pod_level([{"name": "nope"}]),
        want(("spec.resources.claims", "Forbidden"), ("spec.resources.claims[0]", "NotFound")),
    ),
]


def _pod_level(claims: list[dict[str, Any]]) -> dict[str, Any]:
    p = pod([ref("my-claim")])
    p["spec"]["resources"] = {"claims": claims}
    return p


@pytest.mark.parametrize("make,expected", [c[1:] for c in FAILURE], ids=[c[0] for c in FAILURE])
def test_failure(make: Callable[[], dict[str, Any]], expected: Any) -> None:
    assert errors(make()) == expected


def status_pod(statuses: list[dict[str, Any]]) -> dict[str, Any]:
    p = pod([tmpl("my-claim"), ref("other")])
    p["status"] = {"resourceClaimStatuses": statuses}
    return p


STATUS: list[tuple[str, list[dict[str, Any]], Any]] = [
    ("no statuses", [], want()),
    ("generated name", [{"name": "my-claim", "resourceClaimName": "some-pod-my-claim-x7k2p"}], want()),
    ("no claim needed", [{"name": "my-claim"}], want()),
    (
        "name not in spec",
        [{"name": "no-such-claim", "resourceClaimName": "foo"}],
        want(("status.resourceClaimStatuses[0].name", "Invalid")),
    ),
    (
        "duplicate name",
        [{"name": "my-claim", "resourceClaimName": "a"}, {"name": "my-claim", "resourceClaimName": "b"}],
        want(("status.resourceClaimStatuses[1].name", "Duplicate")),
    ),
    (
        "invalid claim name is reported at .name",
        [{"name": "my-claim", "resourceClaimName": "%$!#"}],
        want(("status.resourceClaimStatuses[0].name", "Invalid")),
    ),
]


@pytest.mark.parametrize("statuses,expected", [c[1:] for c in STATUS], ids=[c[0] for c in STATUS])
def test_claim_statuses(statuses: list[dict[str, Any]], expected: Any) -> None:
    assert errors(status_pod(statuses), status=True) == expected  # ValidatePodStatusUpdate


def test_claim_statuses_are_reset_on_create() -> None:
    """On CREATE the API server resets the status: a bad one is not validated, only noted."""
    p = status_pod([{"name": "no-such-claim", "resourceClaimName": "foo"}])
    assert errors(p) == want()
    found = upstream_util.object_violations(
        p, upstream_util.Context(profile=upstream_util.load_profile("1.37"))
    )
    assert [(v.rule, v.field, v.severity.value) for v in found] == [
        ("status.dropped-on-create", "status", "info")
    ]
