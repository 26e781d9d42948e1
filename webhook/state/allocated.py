"""The allocated state built from ResourceClaims with `status.allocation`, maintained per claim.

As upstream (scheduler `allocateddevices.go`): a result with `adminAccess: true` is ignored entirely (not
in use, consumes no counters or capacity); a result with a `shareID` is one share of a multi-allocatable
device (not exclusive) and adds its `consumedCapacity` to the device's aggregate; any other result holds
its device exclusively.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from webhook.model.bignum import Nano
from webhook.state.records import DeviceID, PoolID, nano, qty

ClaimKey = tuple[str | None, str]


@dataclass(slots=True)
class _ClaimContribution:
    exclusive: list[DeviceID]
    shared: list[tuple[DeviceID, str]]
    capacity: list[tuple[DeviceID, dict[str, Nano]]]


@dataclass
class AllocatedState:
    """Devices in use: exclusive ids (counted per claim), shares, aggregated consumed capacity (nano)."""

    exclusive: Counter[DeviceID] = field(default_factory=Counter)
    shared: dict[DeviceID, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    capacity: dict[DeviceID, dict[str, Nano]] = field(default_factory=dict)
    _claims: dict[ClaimKey, _ClaimContribution] = field(default_factory=dict)
    _pool_version: Counter[PoolID] = field(default_factory=Counter)
    _cap_refs: Counter[DeviceID] = field(default_factory=Counter)

    def is_allocated(self, dev: DeviceID) -> bool:
        """Upstream IsDeviceAllocated: exclusively held, shared, or with capacity in use."""
        return dev in self.exclusive or dev in self.shared or dev in self.capacity

    def pool_version(self, pool: PoolID) -> int:
        return self._pool_version[pool]

    def set_claim(self, key: ClaimKey, claim: dict[str, Any] | None) -> None:
        """Replace what `key` contributes by what `claim` (None = deleted) allocates."""
        old = self._claims.pop(key, None)
        if old is not None:
            self._remove(old)
        if claim is None:
            return
        alloc = (claim.get("status") or {}).get("allocation")
        if not isinstance(alloc, dict):
            return
        contrib = _ClaimContribution([], [], [])
        for r in ((alloc.get("devices") or {}).get("results")) or []:
            if not isinstance(r, dict) or r.get("adminAccess") is True:
                continue
            dev: DeviceID = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
            share = r.get("shareID")
            if share:
                contrib.shared.append((dev, str(share)))
                cc = r.get("consumedCapacity")
                if isinstance(cc, dict):
                    contrib.capacity.append((dev, {str(k): nano(qty(v)) for k, v in cc.items()}))
            else:
                contrib.exclusive.append(dev)
        self._claims[key] = contrib
        self._add(contrib)

    def _touch(self, dev: DeviceID) -> None:
        self._pool_version[(dev[0], dev[1])] += 1

    def _add(self, c: _ClaimContribution) -> None:
        for dev in c.exclusive:
            self.exclusive[dev] += 1
            self._touch(dev)
        for dev, share in c.shared:
            self.shared[dev][share] += 1
            self._touch(dev)
        for dev, caps in c.capacity:
            agg = self.capacity.setdefault(dev, {})
            for k, v in caps.items():
                agg[k] = agg.get(k, 0) + v
            self._cap_refs[dev] += 1
            self._touch(dev)

    def _remove(self, c: _ClaimContribution) -> None:
        for dev in c.exclusive:
            self.exclusive[dev] -= 1
            if self.exclusive[dev] <= 0:
                del self.exclusive[dev]
            self._touch(dev)
        for dev, share in c.shared:
            shares = self.shared[dev]
            shares[share] -= 1
            if shares[share] <= 0:
                del shares[share]
            if not shares:
                del self.shared[dev]
            self._touch(dev)
        for dev, caps in c.capacity:
            agg = self.capacity.get(dev)
            if agg is None:
                continue
            for k, v in caps.items():
                agg[k] = agg.get(k, 0) - v
            self._cap_refs[dev] -= 1
            if self._cap_refs[dev] <= 0:
                del self._cap_refs[dev]
                del self.capacity[dev]
            self._touch(dev)
