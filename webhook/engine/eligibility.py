"""Why one selectable device cannot serve a request on its own (used for pruning and explanations).

The checks follow the allocator's eligibility order after the selectors: in use, partitionable gate,
taints, capacity, counters (the device alone against what allocated devices left), compatibility groups.
A device that passes is only a *candidate*: devices picked together may still exclude each other.
"""

from __future__ import annotations

from collections.abc import Hashable

from webhook.engine import capacity as cap
from webhook.engine.requests import Alt, Features, blocking_taint
from webhook.model.records import DeviceRec
from webhook.state.pools import Pool, group_admits
from webhook.state.view import ClusterView

IN_USE = "in use"
GATED = "partitionable gate"
TAINTED = "tainted"
CAPACITY = "capacity"
COUNTERS = "counters"
GROUPS = "groups"


def counter_block(pool: Pool, d: DeviceRec) -> str | None:
    """The counter set this device alone would overdraw, given what allocated devices consume."""
    if pool.over_committed:
        for name, counters in pool.available.items():
            if any(v < 0 for v in counters.values()):
                return name
    for c in d.consumes:
        have = pool.available.get(c.counter_set)
        if have is None:
            continue
        for counter, v in c.counters:
            if v > have.get(counter, v):
                return c.counter_set
    return None


def capacity_ok(alt: Alt, d: DeviceRec, state: ClusterView) -> bool:
    agg = state.allocated.capacity.get(d.id)
    if alt.capacity is None and not d.allow_multi and agg is None:
        return True  # the whole device, no policy: always within its own capacity
    return cap.fits(cap.consumed(alt.capacity, d), d, agg, None)


def blocker(state: ClusterView, alt: Alt, pool: Pool, d: DeviceRec, f: Features) -> str | None:
    """The first reason (in eligibility order) that excludes `d` for `alt`, or None."""
    if not alt.admin and d.id in state.allocated.exclusive:
        return IN_USE
    if d.consumes and not f.partitionable:
        return GATED
    if f.taints and (d.taints or state.taint_rules):
        if blocking_taint(state.device_taints(d), alt.tolerations) is not None:
            return TAINTED
    if f.consumable_capacity and (d.capacity or alt.capacity) and not capacity_ok(alt, d, state):
        return CAPACITY
    if d.consumes and not alt.admin:
        if f.consumable_capacity and d.allow_multi and d.id in state.allocated.capacity:
            return None  # already shared: its counters are taken once, by the first share
        if counter_block(pool, d) is not None:
            return COUNTERS
        if f.groups and not all(group_admits(pool.groups.get(c.counter_set), c.groups) for c in d.consumes):
            return GROUPS
    return None


def alt_key(alt: Alt) -> Hashable:
    """Everything about a (sub)request that decides which devices can serve it on their own."""
    caps = tuple(sorted((k, str(v)) for k, v in alt.capacity.items())) if alt.capacity is not None else None
    tols = tuple(tuple(sorted((k, str(v)) for k, v in t.items())) for t in alt.tolerations)
    return (alt.signature, alt.admin, tols, caps)


def key_bytes(key: Hashable) -> int:
    """A rough size of a memo key built from `alt_key` (its strings dominate)."""
    if isinstance(key, str):
        return 50 + len(key)
    if isinstance(key, tuple):
        return 56 + sum(key_bytes(k) for k in key)
    return 32
