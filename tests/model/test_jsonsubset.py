"""The JSON Schema subset validator agrees with jsonschema (the reference, a test dependency only) on every
bundled driver schema: generated parameters, near the real ones, are valid for one exactly when valid for the
other, and each error's path is one jsonschema reports too."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.driverschemas import bundled
from webhook.model.jsonsubset import unsupported, validate
from webhook.model.path import Path

NAMES = [
    "apiVersion",
    "kind",
    "sharing",
    "strategy",
    "timeSlicingConfig",
    "interval",
    "mpsConfig",
    "defaultActiveThreadPercentage",
    "defaultPinnedDeviceMemoryLimit",
    "defaultPerDevicePinnedMemoryLimit",
    "spacePartitioningConfig",
    "partitionCount",
    "domainID",
    "allocationMode",
    "iommu",
    "backendPolicy",
    "enableAPIDevice",
    "bwBurst",
    "ingressBurst",
    "egressBurst",
    "0",
    "extra",
]
WORDS = [
    "TimeSlicing",
    "MPS",
    "SpacePartitioning",
    "Long",
    "Longest",
    "Default",
    "10Gi",
    "1.5",
    "",
    "x",
    "LegacyOnly",
    "resource.nvidia.com/v1beta1",
    "GpuConfig",
    "gpu.resource.example.com/v1alpha1",
]
SCALARS = st.one_of(
    st.sampled_from(WORDS),
    st.integers(-5, 2**36),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=4), st.lists(inner, max_size=2)
    ),
    max_leaves=12,
)
SCHEMAS = {s.source: s for s in bundled()}


def _paths(error: jsonschema.ValidationError) -> set[str]:
    """The paths of an error and of its context (anyOf branches), in our notation's names."""
    out = {".".join(str(p) for p in error.absolute_path)}
    for sub in error.context or ():
        out |= _paths(sub)
    return out


@pytest.mark.parametrize("source", sorted(SCHEMAS))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_agrees_with_jsonschema(source: str, data: st.DataObject) -> None:
    entry = SCHEMAS[source]
    base: dict[str, Any] = {"apiVersion": entry.api_version, "kind": entry.kind}
    body = data.draw(st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=4))
    params = {**base, **body}
    reference = jsonschema.Draft202012Validator(entry.schema)
    ours = validate(params, entry.schema, Path())
    assert bool(ours) == (not reference.is_valid(params)), (params, ours)
    theirs = set().union(*(_paths(e) for e in reference.iter_errors(params))) if ours else set()
    for err in ours:
        at = str(err.field).replace("[", ".").replace("]", "")
        if not err.message.startswith("Required value") and not err.message.startswith("unknown field"):
            assert at in theirs, (params, err, theirs)


def test_agrees_on_the_real_configs() -> None:
    gpu = SCHEMAS["schemas/drivers/nvidia-gpuconfig.json"].schema
    real = {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "GpuConfig",
        "sharing": {
            "strategy": "MPS",
            "mpsConfig": {"defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "10Gi"},
        },
    }
    assert validate(real, gpu, Path()) == [] and jsonschema.Draft202012Validator(gpu).is_valid(real)


def test_refuses_what_it_cannot_check() -> None:
    assert unsupported({"type": "object", "format": "uuid"}) == ["<root>: keyword 'format' is not supported"]
    assert unsupported({"properties": {"a": {"$ref": "#/$defs/missing"}}}) == [
        ".properties.a: $ref '#/$defs/missing' is not a reference into this schema's $defs"
    ]
    assert unsupported({"pattern": "(?=lookahead)"})[0].startswith(
        "<root>: pattern '(?=lookahead)' is not RE2"
    )
    assert all(unsupported(s.schema) == [] for s in bundled())
