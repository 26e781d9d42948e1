"""The allocated state built from ResourceClaims with `status.allocation`, one immutable version per
published state; a builder changes what one claim contributes (work ∝ that claim's devices).

As upstream (scheduler `allocateddevices.go`, see webhook.model.records.Allocation): a result with
`adminAccess: true` is ignored entirely; a result with a `shareID` is one share of a multi-allocatable
device and adds its `consumedCapacity` to the device's aggregate; any other result holds its device
exclusively.
"""

from __future__ import annotations

from collections.abc import Hashable

from immutables import Map

from webhook.model.bignum import Nano
from webhook.model.records import Allocation, DeviceID, PoolID

ClaimKey = Hashable
_EMPTY: Map[object, object] = Map()


class AllocatedState:
    """Devices in use at one version: exclusive holders per device, shares per device, aggregated
    consumed capacity (nano) per device. Immutable; `evolve()` gives a builder of the next version."""

    __slots__ = ("exclusive", "shared", "capacity", "claims", "_cap_refs")

    def __init__(self) -> None:
        self.exclusive: Map[DeviceID, int] = _EMPTY  # type: ignore[assignment]
        self.shared: Map[DeviceID, Map[str, int]] = _EMPTY  # type: ignore[assignment]
        self.capacity: Map[DeviceID, dict[str, Nano]] = _EMPTY  # type: ignore[assignment]  # never mutated
        self.claims: Map[ClaimKey, Allocation] = _EMPTY  # type: ignore[assignment]
        self._cap_refs: Map[DeviceID, int] = _EMPTY  # type: ignore[assignment]

    def is_allocated(self, dev: DeviceID) -> bool:
        """Upstream IsDeviceAllocated: exclusively held, shared, or with capacity in use."""
        return dev in self.exclusive or dev in self.shared or dev in self.capacity

    def evolve(self) -> AllocatedBuilder:
        return AllocatedBuilder(self)


class AllocatedBuilder:
    """Changes to one AllocatedState; `touched` collects the pools whose devices changed."""

    def __init__(self, base: AllocatedState) -> None:
        self.exclusive = base.exclusive.mutate()
        self.shared = base.shared.mutate()
        self.capacity = base.capacity.mutate()
        self.claims = base.claims.mutate()
        self.cap_refs = base._cap_refs.mutate()
        self.touched: set[PoolID] = set()

    def set_claim(self, key: ClaimKey, allocation: Allocation | None) -> None:
        """Replace what claim `key` contributes by `allocation` (None: nothing, e.g. deleted)."""
        old = self.claims.get(key)
        if old == allocation:
            return
        if old is not None:
            del self.claims[key]
            self._apply(old, -1)
        if allocation is not None:
            self.claims[key] = allocation
            self._apply(allocation, 1)

    def _apply(self, a: Allocation, sign: int) -> None:
        touched = self.touched
        for dev in a.exclusive:
            n = self.exclusive.get(dev, 0) + sign
            if n > 0:
                self.exclusive[dev] = n
            elif dev in self.exclusive:
                del self.exclusive[dev]
            touched.add((dev[0], dev[1]))
        for dev, share in a.shared:
            shares: Map[str, int] = self.shared.get(dev) or _EMPTY  # type: ignore[assignment]
            n = shares.get(share, 0) + sign
            shares = shares.set(share, n) if n > 0 else (shares.delete(share) if share in shares else shares)
            if shares:
                self.shared[dev] = shares
            elif dev in self.shared:
                del self.shared[dev]
            touched.add((dev[0], dev[1]))
        for dev, caps in a.capacity:
            agg = dict(self.capacity.get(dev) or {})  # copy on write: readers may hold the old dict
            for k, v in caps:
                agg[k] = agg.get(k, 0) + (v if sign > 0 else -v)
            refs = self.cap_refs.get(dev, 0) + sign
            if refs > 0:
                self.cap_refs[dev] = refs
                self.capacity[dev] = agg
            else:
                if dev in self.cap_refs:
                    del self.cap_refs[dev]
                if dev in self.capacity:
                    del self.capacity[dev]
            touched.add((dev[0], dev[1]))

    def finish(self) -> AllocatedState:
        out = AllocatedState()
        out.exclusive = self.exclusive.finish()
        out.shared = self.shared.finish()
        out.capacity = self.capacity.finish()
        out.claims = self.claims.finish()
        out._cap_refs = self.cap_refs.finish()
        return out
