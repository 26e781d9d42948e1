"""The "empty cluster" read view of a StateView: the same slices, classes, nodes and taint rules, with
nothing allocated and/or device taints ignored. `allocate(..., ignore_allocations=True,
ignore_taints=True)` runs on it to tell a claim that must wait for devices to be freed (*busy*) from one
that can never be allocated on this cluster (*unsatisfiable*).

The view never writes to the version it wraps (which other threads may be reading): a node's pools are
counted anew against an empty allocated state (`Pool.counted`, a new immutable Pool; kept in the
version's memo, keyed by the pool object), and what the engine remembers per version (`memo()`) or per
node across versions (`count_cache`) is kept apart from the real entries by a key prefix naming the view.
Taints are ignored by the engine's feature switch (`Features.taints`); the view only separates the
cached counts of that mode.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from webhook.model.budget import Meter
from webhook.state.allocated import AllocatedState
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool

_UNALLOCATED = "unallocated-pool"
_NOTHING = AllocatedState()  # immutable: shared by every view


class _PrefixedCache:
    """A cache of the wrapped view (`memo()` or `count_cache`) with every key moved under a prefix."""

    __slots__ = ("_cache", "_prefix")

    def __init__(self, cache: Any, prefix: Hashable) -> None:
        self._cache = cache
        self._prefix = prefix

    def get(self, key: Hashable) -> Any:
        return self._cache.get((self._prefix, key))

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        self._cache.put((self._prefix, key), value, nbytes + 64)


class AdjustedView:
    """Reads of a StateView with allocations and/or device taints ignored (see the module docstring)."""

    def __init__(self, view: Any, *, ignore_allocations: bool, ignore_taints: bool) -> None:
        self._view = view
        self._ignore_allocations = ignore_allocations
        self._prefix = ("adjusted", ignore_allocations, ignore_taints)
        if ignore_allocations:
            self.allocated = _NOTHING

    def __getattr__(self, name: str) -> Any:  # everything not overridden reads the wrapped version
        return getattr(self._view, name)

    @property
    def view(self) -> AdjustedView:
        return self

    def memo(self) -> Any:
        return _PrefixedCache(self._view.memo(), self._prefix)

    @property
    def count_cache(self) -> Any:
        return _PrefixedCache(self._view.count_cache, self._prefix)

    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> tuple[Pool, ...]:
        pools = self._view.pools_for(node, meter)
        if not self._ignore_allocations:
            return pools  # type: ignore[no-any-return]
        memo = self._view.memo()
        out = []
        for p in pools:
            key = (_UNALLOCATED, p)  # Pools are immutable and hashed by identity
            counted = memo.get(key)
            if counted is None:
                counted = p.counted(_NOTHING, meter.tick if meter is not None else None)
                memo.put(key, counted, 300 + 120 * sum(len(c) + 1 for c in p.counter_sets.values()))
            out.append(counted)
        return tuple(out)
