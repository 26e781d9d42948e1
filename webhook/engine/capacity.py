"""Consumable capacity (DRAConsumableCapacity): requestPolicy rounding, policy checks, remaining capacity.

A port of upstream's consumable_capacity behaviour: an absent request takes the policy default or the
full capacity; validRange rounds up to min + k·step; validValues rounds up to the next listed value.
Arithmetic is exact (nano-unit integers, compact `Big`s for huge values), so fractional ranges need no
separate path.
"""

from __future__ import annotations

from webhook.model.bignum import Nano
from webhook.model.quantity import Quantity
from webhook.model.records import Capacity, DeviceRec, nano


def _round(requested: Quantity | None, cap: Capacity) -> Quantity:
    if requested is None:
        return cap.default if cap.default is not None else cap.value
    if cap.range_min is not None:
        rmin = cap.range_min
        if requested < rmin:
            return rmin
        if cap.range_step is None:
            return requested
        step = nano(cap.range_step)
        if not step > 0:
            return Quantity.from_nano(nano(rmin), cap.range_step.format)
        # rmin + ceil(span / step) * step == requested + ((-span) mod step), exact for huge values too
        span = nano(requested) - nano(rmin)
        return Quantity.from_nano(nano(requested) + (-span) % step, cap.range_step.format)
    if cap.valid_values is not None:
        for v in cap.valid_values:
            if requested <= v:
                return v
        return requested
    return requested


def _violates(q: Quantity, cap: Capacity) -> bool:
    if cap.default is not None and q == cap.default:
        return False
    if cap.range_min is not None or cap.range_max is not None or cap.range_step is not None:
        if cap.range_max is not None and q > cap.range_max:
            return True
        if cap.range_step is not None:
            step = nano(cap.range_step)
            base = nano(cap.range_min) if cap.range_min is not None else 0
            if step and (nano(q) - base) % step:
                return True
        return False
    if cap.valid_values:
        return q not in cap.valid_values
    return False


def consumed(requests: dict[str, Quantity] | None, dev: DeviceRec) -> dict[str, Quantity] | None:
    """What one allocation of `dev` consumes per capacity; None if the device cannot serve the request
    (a requested capacity it lacks, or a rounded value the policy forbids)."""
    reqs = requests or {}
    for name in reqs:
        if name not in dev.capacity:
            return None
    out = {}
    for name, cap in dev.capacity.items():
        q = _round(reqs.get(name), cap)
        if _violates(q, cap):
            return None
        out[name] = q
    return out


def fits(
    use: dict[str, Quantity] | None,
    dev: DeviceRec,
    allocated: dict[str, Nano] | None,
    allocating: dict[str, Nano] | None,
) -> bool:
    """existing consumption + in-flight + this ≤ capacity value, for every capacity."""
    if use is None:
        return False
    for name, q in use.items():
        total = nano(q) + (allocated or {}).get(name, 0) + (allocating or {}).get(name, 0)
        if total > dev.capacity[name].value_n:
            return False
    return True
