"""DeviceTaintRule rules: selector formats, taint shape, status conditions, the select-everything lint."""

from __future__ import annotations

import yaml

from webhook.config.context import Context
from webhook.model.path import Path
from webhook.rules import taintrule

RULE = """
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-0}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
"""


def load(text: str = RULE, **changes: object) -> dict:
    obj = yaml.safe_load(text)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        cur = obj
        for p in parents:
            cur = cur.setdefault(p, {})
        cur[last] = value
    return obj


def run(fn, obj: dict, ctx: Context | None = None) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(obj, ctx or Context())]


def test_rule_ids() -> None:
    assert taintrule.selector.rule.id == "taint-rule.selector"
    assert taintrule.taint.rule.id == "taint-rule.taint"
    assert taintrule.conditions.rule.id == "taint-rule.conditions"
    assert taintrule.everything.rule.id == "taint-rule.everything"
    assert str(taintrule.everything.rule.severity) == "warning"


def test_valid_rule_has_no_findings() -> None:
    obj = load()
    for fn in (taintrule.selector, taintrule.taint, taintrule.conditions, taintrule.everything):
        assert run(fn, obj) == []


def test_selector_formats() -> None:
    obj = load(spec__deviceSelector={"driver": "bad_driver", "pool": "a//b", "device": "GPU_0"})
    found = run(taintrule.selector, obj)
    fields = [f for f, _ in found]
    assert "spec.deviceSelector.driver" in fields
    assert "spec.deviceSelector.pool" in fields
    assert "spec.deviceSelector.device" in fields
    assert all(m.startswith("Invalid value") for _, m in found)


def test_selector_empty_driver_is_required() -> None:
    found = run(taintrule.selector, load(spec__deviceSelector={"driver": ""}))
    assert found == [("spec.deviceSelector.driver", "Required value")]


def test_taint_prefer_no_schedule_unsupported() -> None:
    found = run(taintrule.taint, load(spec__taint={"key": "bad key", "effect": "PreferNoSchedule"}))
    assert "spec.taint.key" in [f for f, _ in found]
    effect = [m for f, m in found if f == "spec.taint.effect"]
    assert len(effect) == 1
    assert effect[0].startswith(
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'
    )


def test_taint_effect_required_and_value_format() -> None:
    found = run(taintrule.taint, load(spec__taint={"key": "k", "value": "not valid!", "effect": ""}))
    assert ("spec.taint.effect", "Required value") in found
    assert any(f == "spec.taint.value" and m.startswith('Invalid value: "not valid!"') for f, m in found)


def test_taint_unchanged_effect_not_rechecked_on_update() -> None:
    old = load(spec__taint={"key": "k", "effect": "Bogus"})
    new = load(spec__taint={"key": "k", "effect": "Bogus"})
    assert run(taintrule.taint, new, Context(old=old, operation="UPDATE")) == []
    assert run(taintrule.taint, new) != []


def test_taint_findings_helper_for_slices() -> None:
    found = list(
        taintrule.taint_findings(
            {"key": "k", "effect": "Sometimes"},
            Path("spec").child("devices").index(0).child("taints").index(2),
        )
    )
    assert [str(f.field) for f in found] == ["spec.devices[0].taints[2].effect"]


def condition(ctype: str = "EvictionInProgress", **extra: object) -> dict:
    c = {
        "type": ctype,
        "status": "True",
        "reason": "Evicting",
        "message": "",
        "lastTransitionTime": "2026-09-01T00:00:00Z",
    }
    c.update(extra)
    return c


def test_conditions_valid_and_too_many() -> None:
    assert run(taintrule.conditions, load(status={"conditions": [condition()]})) == []
    many = [condition(f"c{i}") for i in range(9)]
    found = run(taintrule.conditions, load(status={"conditions": many}))
    assert found == [("status.conditions", "Too many: 9: must have at most 8 items")]


def test_conditions_shape() -> None:
    conds = [
        condition(),
        condition(status="Maybe", reason="1bad", observedGeneration=-1),
        condition(lastTransitionTime=None),
    ]
    found = run(taintrule.conditions, load(status={"conditions": conds}))
    assert ("status.conditions[1].type", 'Duplicate value: "EvictionInProgress"') in found
    assert any(
        f == "status.conditions[1].status" and m.startswith('Unsupported value: "Maybe"') for f, m in found
    )
    assert any(f == "status.conditions[1].reason" and "condition reason must start" in m for f, m in found)
    assert any(f == "status.conditions[1].observedGeneration" for f, _ in found)
    assert ("status.conditions[2].lastTransitionTime", "Required value: must be set") in found


def test_everything_lint() -> None:
    obj = load(spec__deviceSelector={}, spec__taint={"key": "k", "effect": "NoExecute"})
    found = run(taintrule.everything, obj)
    assert len(found) == 1 and found[0][0] == "spec.deviceSelector"
    assert "every device" in found[0][1]
    # NoSchedule, or a selector that narrows, or no selector at all: no warning
    assert (
        run(
            taintrule.everything,
            load(spec__deviceSelector={}, spec__taint={"key": "k", "effect": "NoSchedule"}),
        )
        == []
    )
    assert (
        run(
            taintrule.everything,
            load(
                spec__deviceSelector={"driver": "d.example.com"},
                spec__taint={"key": "k", "effect": "NoExecute"},
            ),
        )
        == []
    )
    no_selector = load(spec__taint={"key": "k", "effect": "NoExecute"})
    del no_selector["spec"]["deviceSelector"]
    assert run(taintrule.everything, no_selector) == []
