"""Consumable-capacity `requestPolicy` checks: exact quantity arithmetic, as upstream does it.

Without the DRAFractionalCapacityRange gate upstream uses integer arithmetic on `Quantity.Value()`
(rounded up), so fractional bounds are *not* rejected there; with the gate and any fractional
min/max/step/default, milli-unit arithmetic is used and every value must be exact in milli units.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

from webhook.config.context import Context
from webhook.model.quantity import Quantity, parse_quantity
from webhook.model.violation import Finding
from webhook.rules import fielderr
from webhook.rules.registry import object_rule
from webhook.rules.slice_devices import (
    MAX_VALID_VALUES,
    QUALIFIED_KEY_PATH_LEN,
    checked_devices,
    old_devices_by_name,
    truncate_key,
)

_MAX_INT64 = 2**63 - 1
_MIN_INT64 = -(2**63)


def _q(raw: Any) -> Quantity | None:
    """A parsed quantity, or None when it cannot be parsed (the structural layer reports that)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    try:
        return parse_quantity(raw)  # memoised by bytes in webhook.model.quantity
    except (ValueError, OverflowError):
        return None


SHOWN_DIGITS = 200  # longer numbers in messages are shortened (Go prints them whole)


def _s(q: Quantity) -> str:
    """How Go prints a quantity in an error (`Quantity.String()`); a number of thousands of digits
    (a sum like 1e99999 + 8) is shortened in the middle, with its length."""
    text = str(q)
    if len(text) <= SHOWN_DIGITS:
        return text
    return f"{text[:40]}...{text[-40:]} ({len(text)} characters)"


def _milli_exact(q: Quantity) -> bool:
    """`NewMilliQuantity(q.MilliValue()) == q`: exact in milli units and within int64."""
    try:
        m = q.value * 1000
    except OverflowError:
        return False
    return m.denominator == 1 and _MIN_INT64 <= m.numerator <= _MAX_INT64


_KEY_DIGITS = 4000  # longer exact decimals are keyed (and shown) in canonical form instead


def _dec_key(q: Quantity) -> str:
    """Upstream's uniqueness key with the gate on: the exact decimal value (`AsDec().String()`); for
    values of more than _KEY_DIGITS digits the canonical form, which is just as exact and unique."""
    try:
        v: Fraction = q.value
    except OverflowError:
        return q.canonical()
    if v.denominator == 1:
        if v.numerator.bit_length() > _KEY_DIGITS * 3:
            return q.canonical()
        return str(v.numerator)
    return str(Decimal(v.numerator) / Decimal(v.denominator))


def _int_key(q: Quantity) -> str:
    """Upstream's uniqueness key without the gate: `strconv.FormatInt(q.Value())`."""
    return str(q.int_value()) if q.fits_int64() else q.canonical()


def request_policy_findings(
    capacity_value: Any, policy: dict[str, Any], path: str, fractional_gate: bool
) -> list[Finding]:
    """Findings for `requestPolicy` at `path` of a device that allows multiple allocations."""
    out: list[Finding] = []
    valid_values = policy.get("validValues") or ()
    valid_range = policy.get("validRange")
    if valid_values and valid_range is not None:
        out.append(
            Finding(
                path,
                fielderr.forbidden(
                    'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
                ),
            )
        )
        return out
    if not valid_values and valid_range is None:
        return out
    raw_cap = capacity_value if capacity_value is not None else 0
    max_cap = _q(raw_cap)
    if max_cap is None:
        return out
    default_raw = policy.get("default")
    if valid_values:
        if default_raw is None:
            out.append(Finding(path + ".default", fielderr.required("required when validValues is defined")))
            return out
        default = _q(default_raw)
        if default is not None:
            _valid_values(default, max_cap, valid_values, path + ".validValues", fractional_gate, out)
        return out
    if default_raw is None:
        out.append(Finding(path + ".default", fielderr.required("required when validRange is defined")))
        return out
    default = _q(default_raw)
    if default is not None:
        try:
            _valid_range(default, max_cap, valid_range or {}, path + ".validRange", fractional_gate, out)
        except OverflowError:
            # e.g. `min: 1e99999`: Go's inf.Dec computes it; exact arithmetic here would be unbounded
            out.append(
                Finding(
                    path + ".validRange",
                    "Invalid value: a quantity's magnitude is too extreme to check the range exactly "
                    "(decimal exponent beyond ±10000): use quantities within the int64 range",
                )
            )
    return out


def _valid_values(
    default: Quantity, max_cap: Quantity, raw: Any, path: str, fractional_gate: bool, out: list[Finding]
) -> None:
    parsed = [_q(v) for v in raw]
    if any(q is None for q in parsed):
        return
    qs: list[Quantity] = [q for q in parsed if q is not None]
    for i in range(len(qs) - 1):
        if qs[i + 1] < qs[i]:
            out.append(
                Finding(
                    f"{path}[{i + 1}]",
                    fielderr.invalid(_s(qs[i + 1]), "values must be sorted in ascending order"),
                )
            )
    found_default = False
    if len(qs) > MAX_VALID_VALUES:
        out.append(Finding(path, fielderr.too_many(len(qs), MAX_VALID_VALUES)))
    else:
        for i, q in enumerate(qs):
            if max_cap < q:
                out.append(
                    Finding(
                        f"{path}[{i}]",
                        fielderr.invalid(_s(q), f"option is larger than capacity value: {_s(max_cap)}"),
                    )
                )
            if q == default:
                found_default = True
        # Uniqueness key: the exact decimal with the gate, else the rounded-up integer Value().
        seen: set[str] = set()
        for i, q in enumerate(qs):
            key = _dec_key(q) if fractional_gate else _int_key(q)
            if key in seen:
                out.append(Finding(f"{path}[{i}]", fielderr.duplicate(key)))
            else:
                seen.add(key)
    if not found_default:
        out.append(
            Finding(
                path,
                fielderr.invalid(_s(default), "default value is not valid according to the requestPolicy"),
            )
        )


def _valid_range(
    default: Quantity,
    max_cap: Quantity,
    rng: dict[str, Any],
    path: str,
    fractional_gate: bool,
    out: list[Finding],
) -> None:
    if rng.get("min") is None:
        out.append(Finding(path + ".min", fielderr.required("required when validRange is defined")))
        return
    lo = _q(rng.get("min"))
    hi = _q(rng["max"]) if rng.get("max") is not None else None
    step = _q(rng["step"]) if rng.get("step") is not None else None
    if (
        lo is None
        or (rng.get("max") is not None and hi is None)
        or (rng.get("step") is not None and step is None)
    ):
        return  # unparsable quantities are reported by the structural layer
    if max_cap < lo:
        out.append(
            Finding(
                path + ".min", fielderr.invalid(_s(lo), f"min is larger than capacity value: {_s(max_cap)}")
            )
        )
    if default < lo:
        out.append(
            Finding(path + ".default", fielderr.invalid(_s(default), f"default is less than min: {_s(lo)}"))
        )
    if hi is not None:
        if hi < lo:
            out.append(Finding(path + ".max", fielderr.invalid(_s(lo), f"min is larger than max: {_s(hi)}")))
        if max_cap < hi:
            out.append(
                Finding(
                    path + ".max",
                    fielderr.invalid(_s(hi), f"max is larger than capacity value: {_s(max_cap)}"),
                )
            )
        if hi < default:
            out.append(
                Finding(
                    path + ".default", fielderr.invalid(_s(default), f"default is more than max: {_s(hi)}")
                )
            )
    named = (("default", default), ("min", lo), ("max", hi), ("step", step))
    use_milli = False
    if fractional_gate:
        use_milli = any(q is not None and not q.is_integer for _, q in named)
        if use_milli:
            unsafe = False
            for name, q in named:
                if q is not None and not _milli_exact(q):
                    out.append(
                        Finding(
                            f"{path}.{name}",
                            fielderr.invalid(_s(q), "value cannot be represented as a milli value"),
                        )
                    )
                    unsafe = True
            if unsafe:
                return
    if step is None:
        return
    if step.sign() <= 0:
        out.append(Finding(path + ".step", fielderr.invalid(_s(step), "must be greater than zero")))
        return
    added = lo + step
    if max_cap < added:
        out.append(
            Finding(
                path + ".step",
                fielderr.invalid(
                    _s(step), f"one step {_s(added)} is larger than capacity value: {_s(max_cap)}"
                ),
            )
        )
    if not use_milli:
        unsafe = False
        for name, q in named:
            if q is None:
                continue
            if q.sign() < 0:
                out.append(
                    Finding(f"{path}.{name}", fielderr.invalid(_s(q), "must be greater than or equal to 0"))
                )
                unsafe = True
            elif q.cmp_int(_MAX_INT64) > 0:
                out.append(
                    Finding(
                        f"{path}.{name}", fielderr.invalid(_s(q), f"must not be larger than {_MAX_INT64}")
                    )
                )
                unsafe = True
        if unsafe:
            return
    for value in (default, hi):
        if value is None:
            continue
        if use_milli:
            v, m, s = value.milli_value(), lo.milli_value(), step.milli_value()
        else:
            v, m, s = value.int_value(), lo.int_value(), step.int_value()
        if (v - m) % s != 0:
            out.append(
                Finding(
                    path + ".step",
                    fielderr.invalid(
                        _s(value), f"value is not a multiple of a given step ({_s(step)}) from ({_s(lo)})"
                    ),
                )
            )


@object_rule("device.request-policy")
def check_request_policy(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    old = old_devices_by_name(ctx) if ctx.old else None
    fractional = ctx.enabled("DRAFractionalCapacityRange")
    for i, d in enumerate(checked_devices(obj)):
        if not d:
            continue
        caps = d.get("capacity")
        if not caps:
            continue
        if old is not None:
            od = old.get(d.get("name") or "")
            if od is not None and od.get("capacity") == caps:
                continue  # unchanged capacity is not re-validated (upstream)
        multi = d.get("allowMultipleAllocations") is True
        for key, cap in caps.items():
            if not cap:
                continue
            policy = cap.get("requestPolicy")
            if policy is None:
                continue
            path = f"spec.devices[{i}].capacity[{truncate_key(key, QUALIFIED_KEY_PATH_LEN)}].requestPolicy"
            if not multi:
                yield Finding(path, fielderr.forbidden("allowMultipleAllocations must be true"))
                continue
            yield from request_policy_findings(cap.get("value"), policy, path, fractional)
