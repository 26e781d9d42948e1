"""The required-field audit: a field missing is an error only where the API server rejects its absence.

Two tables. `FIELDS` removes one field at a time from real objects (tests/schema/data/audit_base.yaml)
and runs the whole validation pipeline: every DRA field the OpenAPI lists as required, with what the
v1.37 API server says (or that it accepts the object). `test_every_verdict_at_the_schema_layer` covers
every audited field of every version (Pod included) at the schema layer.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.schema import generate, required, structural
from webhook.validate import object_violations

BASE = list(yaml.safe_load_all((Path(__file__).parent / "data" / "audit_base.yaml").read_text()))
BY_NAME = {f"{d['kind']}/{d['metadata']['name']}": d for d in BASE}

SLICE = "ResourceSlice/node-a-gpu.example.com-x7k2p"
COUNTERS = "ResourceSlice/node-a-gpu.example.com-counters"
NIC = "ResourceSlice/shared-nic"
CLASS = "DeviceClass/gpu.example.com"
CLAIM = "ResourceClaim/two-gpus"
ALLOCATED = "ResourceClaim/allocated"  # its status is validated as a /status write stores it
TEMPLATE = "ResourceClaimTemplate/one-gpu"
TAINT_RULE = "DeviceTaintRule/drain-gpu-0"
POD = "Pod/trainer-0"

REQ = "Required value"
DNS = 'Invalid value: "": a lowercase RFC 1123 label'
LABEL = 'Invalid value: "": name part must be non-empty'
NOT_ALLOCATED = ("status.devices[0]", "Invalid value: ")  # ...: must be an allocated device in the claim

# (object, dotted path removed, expected {(field, message prefix)} of the error findings; {} = valid)
FIELDS: list[tuple[str, str, set[tuple[str, str]]]] = [
    # ResourceSlice
    (
        SLICE,
        "spec",
        {
            ("spec.driver", REQ),
            ("spec.pool.name", REQ),
            ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
            ("spec", "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`"),
        },
    ),
    (SLICE, "spec.driver", {("spec.driver", REQ)}),
    (
        SLICE,
        "spec.pool",
        {
            ("spec.pool.name", REQ),
            ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
        },
    ),
    (SLICE, "spec.pool.name", {("spec.pool.name", REQ)}),
    (SLICE, "spec.pool.generation", set()),  # stored with generation 0
    (
        SLICE,
        "spec.pool.resourceSliceCount",
        {("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater")},
    ),
    (SLICE, "spec.devices.0.name", {("spec.devices[0].name", DNS)}),
    (SLICE, "spec.devices.0.capacity.memory.value", set()),
    (
        SLICE,
        "spec.devices.0.consumesCounters.0.counterSet",
        {("spec.devices[0].consumesCounters[0].counterSet", REQ)},
    ),
    (
        SLICE,
        "spec.devices.0.consumesCounters.0.counters",
        {("spec.devices[0].consumesCounters[0].counters", REQ)},
    ),
    (SLICE, "spec.devices.0.consumesCounters.0.counters.memory.value", set()),
    (SLICE, "spec.devices.0.taints.0.key", {("spec.devices[0].taints[0].key", LABEL)}),
    (SLICE, "spec.devices.0.taints.0.effect", {("spec.devices[0].taints[0].effect", REQ)}),
    (COUNTERS, "spec.sharedCounters.0.name", {("spec.sharedCounters[0].name", REQ)}),
    (COUNTERS, "spec.sharedCounters.0.counters", {("spec.sharedCounters[0].counters", REQ)}),
    (
        COUNTERS,
        "spec.nodeSelector.nodeSelectorTerms",
        {
            (
                "spec.nodeSelector.nodeSelectorTerms",
                "Required value: must have at least one node selector term",
            ),
            (
                "spec.nodeSelector.nodeSelectorTerms",
                "Invalid value: []: must have exactly one node selector term",
            ),
        },
    ),
    (
        COUNTERS,
        "spec.nodeSelector.nodeSelectorTerms.0.matchExpressions.0.key",
        {("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].key", LABEL)},
    ),
    (
        COUNTERS,
        "spec.nodeSelector.nodeSelectorTerms.0.matchExpressions.0.operator",
        {
            (
                "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator",
                'Invalid value: "": not a valid selector operator',
            )
        },
    ),
    (
        NIC,
        "spec.devices.0.capacity.bandwidth.requestPolicy.validRange.min",
        {
            (
                "spec.devices[0].capacity[bandwidth].requestPolicy.validRange.min",
                "Required value: required when validRange is defined",
            )
        },
    ),
    # DeviceClass
    (CLASS, "spec", set()),
    (
        CLASS,
        "spec.selectors.0.cel.expression",
        {("spec.selectors[0].cel.expression", 'Invalid value: "": compilation failed')},
    ),
    (CLASS, "spec.config.0.opaque.driver", {("spec.config[0].opaque.driver", REQ)}),
    (CLASS, "spec.config.0.opaque.parameters", {("spec.config[0].opaque.parameters", REQ)}),
    # ResourceClaim spec
    (CLAIM, "spec", set()),
    (
        CLAIM,
        "spec.devices.requests.0.name",
        {
            ("spec.devices.requests[0].name", DNS),
            ("spec.devices.config[0].requests[0]", 'Invalid value: "gpu": must be the name of a request'),
        },
    ),
    (
        CLAIM,
        "spec.devices.requests.0.exactly.deviceClassName",
        {("spec.devices.requests[0].exactly.deviceClassName", REQ)},
    ),
    (
        CLAIM,
        "spec.devices.requests.1.firstAvailable.0.name",
        {("spec.devices.requests[1].firstAvailable[0].name", DNS)},
    ),
    (
        CLAIM,
        "spec.devices.requests.1.firstAvailable.0.deviceClassName",
        {("spec.devices.requests[1].firstAvailable[0].deviceClassName", REQ)},
    ),
    # ResourceClaim status (a /status write)
    (
        ALLOCATED,
        "status.allocation.devices.results.0.request",
        {
            ("status.allocation.devices.results[0].request", DNS),
            (
                "status.allocation.devices.results[0].request",
                'Invalid value: "": must be the name of a request',
            ),
        },
    ),
    (
        ALLOCATED,
        "status.allocation.devices.results.0.driver",
        {("status.allocation.devices.results[0].driver", REQ), NOT_ALLOCATED},
    ),
    (
        ALLOCATED,
        "status.allocation.devices.results.0.pool",
        {("status.allocation.devices.results[0].pool", REQ), NOT_ALLOCATED},
    ),
    (
        ALLOCATED,
        "status.allocation.devices.results.0.device",
        {("status.allocation.devices.results[0].device", DNS), NOT_ALLOCATED},
    ),
    (
        ALLOCATED,
        "status.allocation.devices.config.0.source",
        {("status.allocation.devices.config[0].source", REQ)},
    ),
    (ALLOCATED, "status.reservedFor.0.resource", {("status.reservedFor[0].resource", REQ)}),
    (ALLOCATED, "status.reservedFor.0.name", {("status.reservedFor[0].name", REQ)}),
    (ALLOCATED, "status.reservedFor.0.uid", {("status.reservedFor[0].uid", REQ)}),
    (ALLOCATED, "status.devices.0.driver", {("status.devices[0].driver", REQ), NOT_ALLOCATED}),
    (ALLOCATED, "status.devices.0.pool", {("status.devices[0].pool", REQ), NOT_ALLOCATED}),
    (ALLOCATED, "status.devices.0.device", {("status.devices[0].device", DNS), NOT_ALLOCATED}),
    (ALLOCATED, "status.devices.0.conditions.0.type", {("status.devices[0].conditions[0].type", LABEL)}),
    (
        ALLOCATED,
        "status.devices.0.conditions.0.status",
        {
            (
                "status.devices[0].conditions[0].status",
                'Unsupported value: "": supported values: "False", "True"',
            )
        },
    ),
    (
        ALLOCATED,
        "status.devices.0.conditions.0.reason",
        {("status.devices[0].conditions[0].reason", "Required value: must be set")},
    ),
    (
        ALLOCATED,
        "status.devices.0.conditions.0.lastTransitionTime",
        {("status.devices[0].conditions[0].lastTransitionTime", "Required value: must be set")},
    ),
    # ResourceClaimTemplate
    (TEMPLATE, "spec", set()),
    (TEMPLATE, "spec.spec", set()),
    # DeviceTaintRule (resource.k8s.io/v1 in 1.37)
    (TAINT_RULE, "spec", {("spec.taint.key", LABEL), ("spec.taint.effect", REQ)}),
    (TAINT_RULE, "spec.taint", {("spec.taint.key", LABEL), ("spec.taint.effect", REQ)}),
    (TAINT_RULE, "spec.taint.key", {("spec.taint.key", LABEL)}),
    (TAINT_RULE, "spec.taint.effect", {("spec.taint.effect", REQ)}),
    # Pod fields draguard reads, and OpenAPI-required Pod fields the API server accepts absent
    (POD, "spec.containers.0.name", {("spec.containers[0].name", REQ)}),
    (
        POD,
        "spec.resourceClaims.0.name",
        {
            ("spec.resourceClaims[0].name", REQ),
            ("spec.containers[0].resources.claims[0]", 'Not found: "gpus"'),
        },
    ),
    (POD, "spec.containers.0.resources.claims.0.name", {("spec.containers[0].resources.claims[0]", REQ)}),
    (POD, "spec.containers.0.ports.0.containerPort", {("spec.containers[0].ports[0].containerPort", REQ)}),
    (POD, "spec.containers.0.env.0.name", {("spec.containers[0].env[0].name", REQ)}),
    (POD, "spec.containers.0.lifecycle.preStop.sleep.seconds", set()),  # 0 s is valid
    (POD, "spec.containers.0.livenessProbe.httpGet.httpHeaders.0.value", set()),
    (
        POD,
        "spec.containers.0.livenessProbe.httpGet.port",
        {("spec.containers[0].livenessProbe.httpGet.port", "Invalid value: 0: must be between 1 and 65535")},
    ),
    (POD, "spec.securityContext.sysctls.0.value", set()),
    (POD, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.0.preference", set()),
    (
        POD,
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.0.weight",
        {
            (
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                "Invalid value: 0: must be in the range 1-100",
            )
        },
    ),
]


def _remove(obj: dict[str, Any], dotted: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node: Any = out
    *parents, last = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    for p in parents:
        node = node[p]
    del node[last]
    return out


def _errors(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    ctx = Context(profile=load_profile("1.37"), as_stored="status" in obj)
    return {
        (v.rule, v.field, v.message)
        for v in object_violations(copy.deepcopy(obj), ctx)
        if v.severity.value == "error"
    }


def test_the_base_objects_are_valid() -> None:
    for key, obj in BY_NAME.items():
        assert _errors(obj) == set(), key


@pytest.mark.parametrize("key,path,expected", FIELDS, ids=[f"{k}:{p}" for k, p, _ in FIELDS])
def test_a_missing_field_is_an_error_only_where_upstream_rejects_it(
    key: str, path: str, expected: set[tuple[str, str]]
) -> None:
    found = _errors(_remove(BY_NAME[key], path))
    assert {f for _, f, _ in found} == {f for f, _ in expected}, found
    for field, prefix in expected:
        assert any(f == field and m.startswith(prefix) for _, f, m in found), (field, prefix, found)


# ------------------------------------------------------------------------------------------------
# Every verdict of every version at the schema layer.


def _defs(version: str) -> dict[str, tuple[dict[str, Any], str]]:
    """Definition name -> (its schema document, kind) over every kind of one version."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for kind in generate.kinds(version):
        doc = json.loads(structural.schema_path(kind, version).read_text())
        for name in doc["$defs"]:
            out.setdefault(name, (doc, kind))
    return out


def _instance(doc: dict[str, Any], node: dict[str, Any], depth: int = 0) -> Any:
    """A small value of `node` with every schema-required field present."""
    while "$ref" in node:
        node = doc["$defs"][node["$ref"].rsplit("/", 1)[1]]
    t = node.get("type")
    if t == "object" and "properties" in node:
        return {f: _instance(doc, node["properties"][f], depth + 1) for f in node.get("required", [])}
    if t == "object":
        return {}
    if t == "array":
        return []
    if t == "integer":
        return 1
    if t == "boolean":
        return True
    if node.get("format") == "date-time":
        return "2026-09-03T10:00:00Z"
    return "1" if isinstance(t, list) else "x"  # Quantity / IntOrString accept "1"


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for version in generate.VERSIONS:
        defs = _defs(version)
        for (definition, field), _ in sorted(required.AUDIT.items()):
            if definition in defs and field in defs[definition][0]["$defs"][definition]["properties"]:
                out.append((version, definition, field))
    return out


@pytest.mark.parametrize("version,definition,field", _cases())
def test_every_verdict_at_the_schema_layer(version: str, definition: str, field: str) -> None:
    verdict = required.AUDIT[(definition, field)]
    assert verdict.reason
    doc = _defs(version)[definition][0]
    node = doc["$defs"][definition]
    assert (field in node.get("required", [])) == verdict.in_schema
    compiler = structural._Compiler(doc)
    _, check, _ = compiler.compile({"$ref": f"#/$defs/{definition}"})
    value = _instance(doc, node)
    value.pop(field, None)
    errs: list[Any] = []
    assert check is not None
    check(value, None, errs)
    found = [
        structural._violation(e) for e in errs if e is not structural._NULL_SEEN and e[0] != structural._ZERO
    ]
    if verdict.in_schema:
        assert [(v.rule, v.field, v.message) for v in found] == [("schema.required", field, verdict.message)]
    else:
        assert found == []
    zeros = [e for e in errs if e is not structural._NULL_SEEN and e[0] == structural._ZERO and e[2] == field]
    assert bool(zeros) == verdict.zero


def test_every_openapi_required_field_is_audited() -> None:
    for version in generate.VERSIONS:
        openapi = generate._openapi(version)
        names = generate._names(version)
        for full, name in names.items():
            for field in openapi[full].get("required", []):
                assert required.verdict(name, field) is not None, (version, name, field)


def test_verdict_counts() -> None:
    """The audit's result at a glance (a regression shows up here as well as in the tables)."""
    kinds = {
        k: sum(1 for v in required.AUDIT.values() if v.kind == k)
        for k in ("required", "rejected", "rule", "optional")
    }
    assert kinds["required"] > 60 and kinds["optional"] > 30 and kinds["rule"] > 15 and kinds["rejected"] > 15
    assert required.AUDIT[("V1ResourcePool", "generation")].kind == required.OPTIONAL
