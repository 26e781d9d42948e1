"""device.request-policy: consumable capacity requestPolicy rules, cases modelled on upstream's
TestValidateDeviceCapacity, including the DRAFractionalCapacityRange gate."""

from __future__ import annotations

from typing import Any

from slice_fixtures import ctx, device_slice, only, run

from webhook.config.context import Context

CAP = "spec.devices[0].capacity[memory].requestPolicy"
RANGE = CAP + ".validRange"
VALUES = CAP + ".validValues"


def policy_slice(value: Any, policy: dict, multi: bool = True) -> dict:
    dev: dict[str, Any] = {"name": "d", "capacity": {"memory": {"value": value, "requestPolicy": policy}}}
    if multi:
        dev["allowMultipleAllocations"] = True
    return device_slice(dev)


def found(
    value: Any, policy: dict, context: Context | None = None, multi: bool = True
) -> list[tuple[str, str]]:
    return only(run(policy_slice(value, policy, multi), context or ctx()), "device.request-policy")


def test_valid_policies() -> None:
    for policy in (
        {},
        {"default": "1Gi"},
        {"default": "1Gi", "validRange": {"min": "1Gi"}},
        {"default": "1Gi", "validRange": {"min": "1Gi", "max": "10Gi"}},
        {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
        {"default": "1Gi", "validRange": {"min": "1Gi", "max": "10Gi", "step": "1Gi"}},
        {"default": "1Gi", "validValues": ["1Gi"]},
        {"default": "1Gi", "validValues": ["1Gi", "10Gi"]},
    ):
        assert found("10Gi", policy) == [], policy


def test_request_policy_needs_allow_multiple_allocations() -> None:
    assert found("10Gi", {"default": "1Gi"}, multi=False) == [
        (CAP, "Forbidden: allowMultipleAllocations must be true")
    ]


def test_default_required() -> None:
    assert found("1Gi", {"validValues": ["1Gi"]}) == [
        (CAP + ".default", "Required value: required when validValues is defined")
    ]
    assert found("1Gi", {"validRange": {"min": "1Gi"}}) == [
        (CAP + ".default", "Required value: required when validRange is defined")
    ]
    # min is required in the OpenAPI schema too (the pipeline keeps that schema error instead).
    direct = run(policy_slice("1Gi", {"default": "1Gi", "validRange": {"max": "1Gi"}}), ctx(), direct=True)
    assert only(direct, "device.request-policy") == [
        (RANGE + ".min", "Required value: required when validRange is defined")
    ]


def test_values_and_range_are_exclusive() -> None:
    [(field, msg)] = found("10Gi", {"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}})
    assert field == CAP and msg.startswith("Forbidden: exactly one policy can be specified")


def test_valid_values_errors() -> None:
    assert found("10Gi", {"default": "1Gi", "validValues": ["20Gi"]}) == [
        (VALUES + "[0]", 'Invalid value: "20Gi": option is larger than capacity value: 10Gi'),
        (VALUES, 'Invalid value: "1Gi": default value is not valid according to the requestPolicy'),
    ]
    assert found("10Gi", {"default": "1Gi", "validValues": ["1Gi", "1Gi"]}) == [
        (VALUES + "[1]", 'Duplicate value: "1073741824"')
    ]
    assert found("10Gi", {"default": "1Ki", "validValues": ["1Ki", "1024"]}) == [
        (VALUES + "[1]", 'Duplicate value: "1024"')
    ]
    assert found("10Gi", {"default": "1Gi", "validValues": ["2Gi", "1Gi"]}) == [
        (VALUES + "[1]", 'Invalid value: "1Gi": values must be sorted in ascending order')
    ]


def test_valid_values_max_10() -> None:
    values = [str(i) for i in range(1, 12)]
    result = found("100", {"default": "1", "validValues": values})
    assert (VALUES, "Too many: 11: must have at most 10 items") in result


def test_valid_values_fractional_keys_depend_on_gate() -> None:
    policy = {"default": "100m", "validValues": ["100m", "200m", "1"]}
    assert found("10Gi", policy) == []
    # Without the gate upstream compares rounded-up integers: 100m and 200m are both "1".
    off = found("10Gi", policy, ctx(DRAFractionalCapacityRange=False))
    assert (VALUES + "[1]", 'Duplicate value: "1"') in off


def test_range_bounds() -> None:
    result = found("10Gi", {"default": "2Gi", "validRange": {"min": "20Gi", "max": "1Gi"}})
    assert result == [
        (RANGE + ".min", 'Invalid value: "20Gi": min is larger than capacity value: 10Gi'),
        (RANGE + ".default", 'Invalid value: "2Gi": default is less than min: 20Gi'),
        (RANGE + ".max", 'Invalid value: "20Gi": min is larger than max: 1Gi'),
        (RANGE + ".default", 'Invalid value: "2Gi": default is more than max: 1Gi'),
    ]
    assert found("10Gi", {"default": "1Gi", "validRange": {"min": "1Gi", "max": "20Gi"}}) == [
        (RANGE + ".max", 'Invalid value: "20Gi": max is larger than capacity value: 10Gi')
    ]


def test_range_step() -> None:
    assert found("10Gi", {"default": "2Gi", "validRange": {"min": "1Gi", "max": "10Gi", "step": "2Gi"}}) == [
        (RANGE + ".step", 'Invalid value: "2Gi": value is not a multiple of a given step (2Gi) from (1Gi)'),
        (RANGE + ".step", 'Invalid value: "10Gi": value is not a multiple of a given step (2Gi) from (1Gi)'),
    ]
    [(field, msg)] = found("10Gi", {"default": "1Gi", "validRange": {"min": "1Gi", "step": "10Gi"}})
    assert field == RANGE + ".step" and "one step 11Gi is larger than capacity value: 10Gi" in msg
    assert found("10", {"default": "3", "validRange": {"min": "1", "step": "4"}}) == [
        (RANGE + ".step", 'Invalid value: "3": value is not a multiple of a given step (4) from (1)')
    ]
    assert found("10", {"default": "1", "validRange": {"min": "1", "step": "0"}}) == [
        (RANGE + ".step", 'Invalid value: "0": must be greater than zero')
    ]


def test_range_int64_bounds_without_milli() -> None:
    result = found("10", {"default": "-2", "validRange": {"min": "-2", "step": "1"}})
    assert (RANGE + ".min", 'Invalid value: "-2": must be greater than or equal to 0') in result
    assert (RANGE + ".default", 'Invalid value: "-2": must be greater than or equal to 0') in result


def test_fractional_range_with_gate() -> None:
    policy = {"default": "200m", "validRange": {"min": "200m", "max": "1", "step": "100m"}}
    assert found("1", policy) == []
    policy["default"] = "250m"
    assert found("1", policy) == [
        (RANGE + ".step", 'Invalid value: "250m": value is not a multiple of a given step (100m) from (200m)')
    ]


def test_fractional_range_without_gate_is_not_rejected() -> None:
    # Upstream (gate off) uses integer arithmetic on rounded-up values and accepts both.
    off = ctx(DRAFractionalCapacityRange=False)
    for default in ("200m", "250m"):
        policy = {"default": default, "validRange": {"min": "200m", "max": "1", "step": "100m"}}
        assert found("1", policy, off) == []


def test_fractional_range_needs_milli_precision() -> None:
    assert found("100P", {"default": "20P", "validRange": {"min": "10P", "step": "100m"}}) == [
        (RANGE + ".default", 'Invalid value: "20P": value cannot be represented as a milli value'),
        (RANGE + ".min", 'Invalid value: "10P": value cannot be represented as a milli value'),
    ]
    assert found("1", {"default": "20u", "validRange": {"min": "10u"}}) == [
        (RANGE + ".default", 'Invalid value: "20u": value cannot be represented as a milli value'),
        (RANGE + ".min", 'Invalid value: "10u": value cannot be represented as a milli value'),
    ]


def test_unchanged_capacity_is_not_revalidated_on_update() -> None:
    bad = policy_slice("10Gi", {"default": "1Gi", "validValues": ["20Gi"]})
    context = Context(
        profile=ctx().profile,
        old=policy_slice("10Gi", {"default": "1Gi", "validValues": ["20Gi"]}),
        operation="UPDATE",
    )
    assert only(run(bad, context, direct=True), "device.request-policy") == []


def test_absurd_exponent_is_a_finding_not_a_crash() -> None:
    from webhook.config.context import Context
    from webhook.validate import object_violations

    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "eth1",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "bw": {
                            "value": "10G",
                            "requestPolicy": {"default": "1M", "validRange": {"min": "1e99999", "step": "8"}},
                        }
                    },
                }
            ],
        },
    }
    rules = {(v.rule, v.field) for v in object_violations(obj, Context())}
    assert ("internal.rule-crash", "") not in rules
    assert ("device.request-policy", "spec.devices[0].capacity[bw].requestPolicy.validRange.min") in rules
