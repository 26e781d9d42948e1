"""The "empty cluster" read view of a ClusterState: the same slices, classes, nodes and taint rules, with
nothing allocated. `allocate(..., ignore_allocations=True)` runs on it to tell a claim that must wait for
devices to be freed (*busy*) from one that can never be allocated on this cluster (*unsatisfiable*).

The view never writes to the state it wraps: the gathered pools of a node are copied and their counter
bookkeeping reset (the wrapped state's pools stay as they are for concurrent readers), and results the
engine memoises per state version are kept apart from the real ones by a key prefix.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable
from typing import Any

from webhook.model.budget import Meter
from webhook.state.allocated import AllocatedState
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool


class _PrefixedMemo:
    """The wrapped state's per-version memo with every key moved under a prefix naming the view."""

    __slots__ = ("_memo", "_prefix")

    def __init__(self, memo: Any, prefix: Hashable) -> None:
        self._memo = memo
        self._prefix = prefix

    def get(self, key: Hashable) -> Any:
        return self._memo.get((self._prefix, key))

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        self._memo.put((self._prefix, key), value, nbytes + 64)


def unallocated_pool(pool: Pool) -> Pool:
    """A copy of `pool` as if none of its devices were allocated (all counters available, no groups)."""
    out = copy.copy(pool)
    out.available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
    out.over_committed = False
    out.groups = {}
    return out


class AdjustedView:
    """Reads of `state` with allocations and/or device taints ignored (see the module docstring).

    Taints are ignored by the engine's feature switch; the view only keeps what the engine memoises
    under that switch apart from the real state's entries."""

    def __init__(self, state: Any, *, ignore_allocations: bool, ignore_taints: bool) -> None:
        self._state = state
        self._ignore_allocations = ignore_allocations
        self._prefix = ("adjusted", ignore_allocations, ignore_taints)
        if ignore_allocations:
            self.allocated = AllocatedState()

    def __getattr__(self, name: str) -> Any:  # everything not overridden reads the real state
        return getattr(self._state, name)

    def memo(self) -> Any:
        return _PrefixedMemo(self._state.memo(), self._prefix)

    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> list[Pool]:
        pools = self._state.pools_for(node, meter)
        return [unallocated_pool(p) for p in pools] if self._ignore_allocations else pools
