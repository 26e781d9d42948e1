"""Bad input never becomes a traceback or a crashed rule: random mutations of real manifests go
through the whole pipeline (schema, defaulting, stripping, every rule, inventory rules, the engine)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.engine import Budget, allocate
from webhook.io.documents import Document, parse
from webhook.state import ClusterState
from webhook.validate import FileResult, assemble, check_document, check_file_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [
    d for p in sorted((ROOT / "examples").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d
]
ALL_ON = load_profile(
    "1.37",
    {
        g: True
        for g in (
            "DRADeviceCompatibilityGroups",
            "DRAOptionalNodeOperations",
            "DRAListTypeAttributes",
            "DRANodeAllocatableResources",
            "DRADerivedAttributes",
            "DRAPartitionableDevicesType",
            "DRAResourcePoolStatus",
        )
    },
)

leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=70),
    st.sampled_from(
        [
            "",
            "y",
            "1Gi",
            "-1",
            "1e99999",
            "a/b/c",
            "*",
            "NodePrepareResources",
            "All",
            "0.5",
            "device.driver == 'x'",
            "device.attributes['x'].y",
            "::1/64",
            "NoExecute",
        ]
    ),
)
value = st.recursive(
    leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=12), c, max_size=3),
    max_leaves=6,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_paths(v, (*prefix, i)))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(EXAMPLES)))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(obj) if len(p) > 1]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            parent.pop(path[-1], None)
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(value)
        else:
            parent[path[-1]] = draw(value)
    return obj


def _crashes(violations: list[Any]) -> list[str]:
    return [v.message for v in violations if v.rule == "internal.rule-crash"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.booleans())
def test_mutated_objects_never_crash_a_rule(obj: dict[str, Any], gates_on: bool) -> None:
    ctx = Context(profile=ALL_ON) if gates_on else Context()
    result, record, _ = check_document(Document("m.yaml", 1, obj), ctx, None, frozenset())
    if result is not None:
        assert _crashes(result.violations) == []
    report = assemble([FileResult([result] if result else [], [record] if result else [])], ctx, None)
    assert all(not _crashes(o.violations) for o in report.objects)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated(), min_size=1, max_size=4))
def test_engine_answers_on_mutated_clusters(objs: list[dict[str, Any]]) -> None:
    # only objects that pass validation reach the engine, as in `draguard simulate`
    valid = []
    for o in objs:
        result, _, _ = check_document(Document("m.yaml", 1, o), Context(profile=ALL_ON), None, frozenset())
        if result is not None and not result.errors:
            valid.append(o)
    state = ClusterState.from_objects(
        [o for o in valid if o.get("kind") != "ResourceClaim" or (o.get("status") or {}).get("allocation")],
        ALL_ON,
    )
    claims = [
        o for o in valid if o.get("kind") == "ResourceClaim" and not (o.get("status") or {}).get("allocation")
    ]
    out = allocate(state, claims, budget=Budget(steps=5_000, seconds=2.0))
    assert out.feasible in (True, False, None)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300))
def test_garbage_text_is_an_input_error_not_a_traceback(data: bytes | str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    res = check_file_text(text, "g.yaml", Context())
    for o in res.objects:
        assert _crashes(o.violations) == []
    list(parse(text, "g.json"))  # the JSON path too
