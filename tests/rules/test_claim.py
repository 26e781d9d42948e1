"""ResourceClaim / ResourceClaimTemplate spec rules: every rule valid + invalid, at both spec paths."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.builders import first_available, request, subrequest
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.rules import claim

VALID = """
requests:
- name: gpu
  exactly:
    deviceClassName: gpu.example.com
    allocationMode: ExactCount
    count: 2
    selectors:
    - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
    tolerations:
    - {key: example.com/maintenance, operator: Exists, effect: NoSchedule}
    - {key: example.com/tier, operator: Equal, value: gold}
    capacity: {requests: {memory: 8Gi}}
- name: nic
  firstAvailable:
  - {name: fast, deviceClassName: nic.example.com, allocationMode: All}
  - {name: slow, deviceClassName: nic.example.com, allocationMode: ExactCount, count: 1}
constraints:
- {requests: [gpu, nic/fast], matchAttribute: example.com/numa}
config:
- requests: [gpu]
  opaque: {driver: gpu.example.com, parameters: {sharing: {strategy: TimeSlicing}}}
"""

KINDS = {"ResourceClaim": "spec.devices", "ResourceClaimTemplate": "spec.spec.devices"}
ALL_RULES = [
    claim.check_requests,
    claim.check_first_available,
    claim.check_device_class_name,
    claim.check_allocation_mode,
    claim.check_selectors,
    claim.check_tolerations,
    claim.check_tolerations_max,
    claim.check_capacity_requests,
    claim.check_constraints,
    claim.check_config,
    claim.check_admin_access,
    claim.check_derived_attributes,
]


def make(kind: str, devices: dict[str, Any]) -> dict[str, Any]:
    spec = {"devices": devices}
    if kind == "ResourceClaimTemplate":
        return {"kind": kind, "metadata": {"name": "t", "namespace": "n"}, "spec": {"spec": spec}}
    return {"kind": kind, "metadata": {"name": "c", "namespace": "n"}, "spec": spec}


def run(fn: Any, obj: dict[str, Any], ctx: Context | None = None) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(obj, ctx or Context())]


@pytest.mark.parametrize("kind", KINDS)
def test_valid_claim_passes_every_rule(kind: str) -> None:
    obj = make(kind, yaml.safe_load(VALID))
    ctx = Context(namespace_labels={})
    for fn in ALL_RULES:
        assert run(fn, obj, ctx) == [], fn.__name__


def req(body: str | dict[str, Any]) -> dict[str, Any]:
    """The devices of a table row: flow YAML (short rows), or built (long ones)."""
    return yaml.safe_load(body) if isinstance(body, str) else copy.deepcopy(body)


# (rule function, devices (flow YAML, or built when long), expected path below the devices path, keywords of the
# message)
CASES = [
    (claim.check_requests, "requests: [{name: gpu}]", ".requests[0]", "Required value: exactly one of"),
    (
        claim.check_requests,
        "requests: [{name: gpu, exactly: {deviceClassName: c}, firstAvailable: [{name: a, deviceClassName: c}]}]",
        ".requests[0]",
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple",
    ),
    (
        claim.check_requests,
        "requests: [{name: a, exactly: {deviceClassName: c}}, {name: a, exactly: {deviceClassName: c}}]",
        ".requests[1]",
        'Duplicate value: "a"',
    ),
    (
        claim.check_requests,
        "requests: [{name: GPU_0, exactly: {deviceClassName: c}}]",
        ".requests[0].name",
        "RFC 1123",
    ),
    (
        claim.check_requests,
        {"requests": [request(f"r{i}", "c") for i in range(33)]},
        ".requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        claim.check_first_available,
        "requests: [{name: r, firstAvailable: [{name: a, deviceClassName: c}, {name: a, deviceClassName: c}]}]",
        ".requests[0].firstAvailable[1]",
        'Duplicate value: "a"',
    ),
    (
        claim.check_first_available,
        {"requests": [first_available("r", *(subrequest(f"s{i}", "c") for i in range(9)))]},
        ".requests[0].firstAvailable",
        "Too many: 9: must have at most 8 items",
    ),
    (
        claim.check_device_class_name,
        "requests: [{name: r, exactly: {deviceClassName: Bad_Class}}]",
        ".requests[0].exactly.deviceClassName",
        'Invalid value: "Bad_Class"',
    ),
    (
        claim.check_device_class_name,
        "requests: [{name: r, firstAvailable: [{name: a, deviceClassName: ''}]}]",
        ".requests[0].firstAvailable[0].deviceClassName",
        "Required value",
    ),
    (
        claim.check_allocation_mode,
        "requests: [{name: r, exactly: {deviceClassName: c, allocationMode: All, count: 2}}]",
        ".requests[0].exactly.count",
        "Invalid value: 2: must not be specified when allocationMode is 'All'",
    ),
    (
        claim.check_allocation_mode,
        "requests: [{name: r, exactly: {deviceClassName: c, allocationMode: ExactCount, count: -1}}]",
        ".requests[0].exactly.count",
        "Invalid value: -1: must be greater than zero",
    ),
    (
        claim.check_allocation_mode,
        "requests: [{name: r, firstAvailable: [{name: a, deviceClassName: c, allocationMode: Some}]}]",
        ".requests[0].firstAvailable[0].allocationMode",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    (
        claim.check_selectors,
        "requests: [{name: r, exactly: {deviceClassName: c, selectors: [{cel: {expression: device.driver}}]}}]",
        ".requests[0].exactly.selectors[0].cel.expression",
        'Invalid value: "device.driver": must evaluate to bool or the unknown type, not string',
    ),
    (
        claim.check_selectors,
        "requests: [{name: r, exactly: {deviceClassName: c, selectors: [{}]}}]",
        ".requests[0].exactly.selectors[0].cel",
        "Required value",
    ),
    (
        claim.check_selectors,
        "requests: [{name: r, firstAvailable: [{name: a, deviceClassName: c, selectors: [{cel: {expression: 'x =='}}]}]}]",
        ".requests[0].firstAvailable[0].selectors[0].cel.expression",
        "compilation failed: ERROR: <input>:1:5: Syntax error",
    ),
    (
        claim.check_tolerations,
        "requests: [{name: r, exactly: {deviceClassName: c, tolerations: [{key: k, operator: Exists, value: v}]}}]",
        ".requests[0].exactly.tolerations[0].value",
        'Invalid value: "v": must be empty for operator `Exists`',
    ),
    (
        claim.check_tolerations,
        "requests: [{name: r, exactly: {deviceClassName: c, tolerations: [{key: k, operator: Equal, effect: PreferNoSchedule}]}}]",
        ".requests[0].exactly.tolerations[0].effect",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    (
        claim.check_tolerations,
        "requests: [{name: r, exactly: {deviceClassName: c, tolerations: [{key: 'bad key', operator: Equal}]}}]",
        ".requests[0].exactly.tolerations[0].key",
        'Invalid value: "bad key"',
    ),
    (
        claim.check_tolerations_max,
        "requests: [{name: r, exactly: {deviceClassName: c, tolerations: ["
        + ", ".join("{operator: Exists}" for _ in range(17))
        + "]}}]",
        ".requests[0].exactly.tolerations",
        "Too many: 17: must have at most 16 items",
    ),
    (
        claim.check_capacity_requests,
        "requests: [{name: r, exactly: {deviceClassName: c, capacity: {requests: {memory: -1Gi}}}}]",
        ".requests[0].exactly.capacity.requests[memory]",
        "must be greater than or equal to 0",
    ),
    (
        claim.check_capacity_requests,
        "requests: [{name: r, exactly: {deviceClassName: c, capacity: {requests: {9mem: 1Gi}}}}]",
        ".requests[0].exactly.capacity.requests",
        'Invalid value: "9mem"',
    ),
    (
        claim.check_constraints,
        "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconstraints: [{requests: [gpu/none], matchAttribute: d.example.com/numa}]",
        ".constraints[0].requests[0]",
        'Invalid value: "gpu/none": must be the name of a request in the claim',
    ),
    (
        claim.check_constraints,
        "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconstraints: [{requests: [gpu, gpu], matchAttribute: d.example.com/numa}]",
        ".constraints[0].requests[1]",
        'Duplicate value: "gpu"',
    ),
    (
        claim.check_constraints,
        "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconstraints: [{matchAttribute: numa}]",
        ".constraints[0].matchAttribute",
        "a fully qualified name must be a domain and a name separated by a slash",
    ),
    (
        claim.check_constraints,
        "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconstraints: [{requests: [gpu]}]",
        ".constraints[0]",
        'Required value: exactly one of "matchAttribute" or "distinctAttribute" is required',
    ),
    (
        claim.check_config,
        "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconfig: [{requests: [tpu], opaque: {driver: d.io, parameters: {}}}]",
        ".config[0].requests[0]",
        'Invalid value: "tpu": must be the name of a request',
    ),
    (claim.check_config, "config: [{requests: []}]", ".config[0].opaque", "Required value"),
    (
        claim.check_config,
        "config: [{opaque: {driver: d.example.com, parameters: [1, 2]}}]",
        ".config[0].opaque.parameters",
        'Invalid value: "<value omitted>": must be a valid JSON object',
    ),
    (
        claim.check_config,
        "config: [{opaque: {driver: d.example.com, parameters: {blob: '" + "x" * 10240 + "'}}}]",
        ".config[0].opaque.parameters",
        "Too long: must have at most 10240 bytes",
    ),
    (
        claim.check_config,
        "config: [{opaque: {driver: -bad-, parameters: {}}}]",
        ".config[0].opaque.driver",
        'Invalid value: "-bad-"',
    ),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("fn", "devices", "suffix", "words"), CASES)
def test_invalid(kind: str, fn: Any, devices: str | dict[str, Any], suffix: str, words: str) -> None:
    ctx = Context(profile=load_profile("1.37", {"DRADerivedAttributes": True}))
    found = run(fn, make(kind, req(devices)), ctx)
    path = KINDS[kind] + suffix
    assert any(p == path and words in m for p, m in found), found


def test_constraint_without_type_before_consumable_capacity() -> None:
    ctx = Context(profile=load_profile("1.37", {"DRAConsumableCapacity": False}))
    obj = make("ResourceClaim", req("constraints: [{}]"))
    assert run(claim.check_constraints, obj, ctx) == [
        ("spec.devices.constraints[0].matchAttribute", "Required value")
    ]


def test_too_many_requests_stops_other_request_checks() -> None:
    body = {"requests": [request(f"r{i}", "BAD") for i in range(33)]}
    assert run(claim.check_device_class_name, make("ResourceClaim", body)) == []


@pytest.mark.parametrize("kind", KINDS)
def test_admin_access_needs_namespace_label(kind: str) -> None:
    body = (
        "requests: [{name: a, exactly: {deviceClassName: c}}, "
        "{name: r, exactly: {deviceClassName: c, adminAccess: true}}, "
        "{name: s, exactly: {deviceClassName: c, adminAccess: true}}]"
    )
    obj = make(kind, req(body))
    # upstream's AuthorizedForAdmin (pkg/registry/resource): the first such request only, at
    # spec.devices.requests[i].adminAccess — without `exactly`, and for a template too (not spec.spec)
    path = "spec.devices.requests[1].adminAccess"
    assert run(claim.check_admin_access, obj, Context()) == []  # offline: namespace unknown
    found = run(claim.check_admin_access, obj, Context(namespace_labels={"team": "a"}))
    assert [p for p, _ in found] == [path] and found[0][1].startswith("Forbidden: admin access")
    ok = Context(namespace_labels={"resource.kubernetes.io/admin-access": "true"})
    assert run(claim.check_admin_access, obj, ok) == []


@pytest.mark.parametrize("kind", KINDS)
def test_derived_attributes(kind: str) -> None:
    body = """
requests:
- name: gpu
  exactly:
    deviceClassName: c
    derivedAttributes:
    - {name: derived.example.com/numa, expression: "1"}
    - {name: derived.example.com/unused, expression: "2"}
- name: nic
  firstAvailable:
  - name: a
    deviceClassName: c
    derivedAttributes: [{name: derived.example.com/numa, expression: "1"}]
constraints:
- {requests: [gpu, nic], matchAttribute: derived.example.com/numa}
"""
    found = run(claim.check_derived_attributes, make(kind, req(body)))
    assert found == [
        (
            KINDS[kind] + ".requests[0].exactly.derivedAttributes[1].name",
            'Invalid value: "derived.example.com/unused": must be referenced by at least one matchAttribute '
            "or distinctAttribute constraint targeting this request",
        )
    ]


def test_update_skips_spec_rules() -> None:
    obj = make("ResourceClaim", req("requests: [{name: r}]"))
    ctx = Context(old=obj, operation="UPDATE")
    assert run(claim.check_requests, obj, ctx) == []


def test_template_metadata() -> None:
    ok = {
        "kind": "ResourceClaimTemplate",
        "spec": {"metadata": {"labels": {"app": "x"}, "annotations": {"a/b": "c"}}},
    }
    assert run(claim.check_template_metadata, ok) == []
    bad = {"kind": "ResourceClaimTemplate", "spec": {"metadata": {"name": "x", "labels": {"bad key": "v"}}}}
    assert run(claim.check_template_metadata, bad) == [
        ("spec.metadata.name", "Forbidden: cannot be set for a resource claim template"),
        (
            "spec.metadata.labels",
            "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
    ]


def test_constraint_attribute_with_two_slashes_is_accepted_like_upstream() -> None:
    # validateFullyQualifiedName has an upstream TODO: "a/b/c" is not rejected by v1.37
    obj = make(
        "ResourceClaim",
        req(
            "requests: [{name: gpu, exactly: {deviceClassName: c}}]\nconstraints: [{distinctAttribute: a.io/b/c}]"
        ),
    )
    assert run(claim.check_constraints, obj) == []
