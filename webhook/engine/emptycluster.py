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

from immutables import Map

from webhook.config.profile import Profile
from webhook.model.budget import Meter
from webhook.model.cache import ByteLRU
from webhook.model.records import DeviceRec, SliceRec
from webhook.state.allocated import AllocatedState
from webhook.state.inventory import Inventory
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool
from webhook.state.shared import MatchCache, SharedCaches, SharedEvaluator
from webhook.state.view import Cache, ClusterView, NodePools, TaintRules

_UNALLOCATED = "unallocated-pool"
_NOTHING = AllocatedState()  # immutable: shared by every view


class _PrefixedCache:
    """A cache of the wrapped view (`memo()` or `count_cache`) with every key moved under a prefix."""

    __slots__ = ("_cache", "_prefix")

    def __init__(self, cache: Cache, prefix: Hashable) -> None:
        self._cache = cache
        self._prefix = prefix

    def get(self, key: Hashable) -> Any:
        return self._cache.get((self._prefix, key))

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        self._cache.put((self._prefix, key), value, nbytes + 64)


class AdjustedView:
    """Reads of a ClusterView with allocations and/or device taints ignored (see the module docstring).
    A ClusterView itself: what it does not change reads the wrapped version."""

    __slots__ = ("_view", "_ignore_allocations", "_prefix", "_allocated")

    def __init__(self, view: ClusterView, *, ignore_allocations: bool, ignore_taints: bool) -> None:
        self._view = view
        self._ignore_allocations = ignore_allocations
        self._prefix = ("adjusted", ignore_allocations, ignore_taints)
        self._allocated = _NOTHING if ignore_allocations else view.allocated

    # -- what it changes ---------------------------------------------------------------------------
    @property
    def view(self) -> ClusterView:
        return self

    @property
    def allocated(self) -> AllocatedState:
        return self._allocated

    def memo(self) -> Cache:
        return _PrefixedCache(self._view.memo(), self._prefix)

    @property
    def count_cache(self) -> Cache:
        return _PrefixedCache(self._view.count_cache, self._prefix)

    # -- what it reads of the wrapped version ------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self._view.profile

    @property
    def version(self) -> int:
        return self._view.version

    @property
    def inventory(self) -> Inventory:
        return self._view.inventory

    @property
    def nodes(self) -> Map[str, NodeInfo]:
        return self._view.nodes

    @property
    def rules(self) -> TaintRules:
        return self._view.rules

    @property
    def taint_rules(self) -> Map[str, tuple[dict[str, Any] | None, dict[str, Any]]]:
        return self._view.taint_rules

    @property
    def node_pools(self) -> Map[str | None, NodePools]:
        return self._view.node_pools

    @property
    def shared(self) -> SharedCaches:
        return self._view.shared

    @property
    def evaluator(self) -> SharedEvaluator:
        return self._view.evaluator

    @property
    def compiled(self) -> ByteLRU[str, bool]:
        return self._view.compiled

    @property
    def match_cache(self) -> MatchCache:
        return self._view.match_cache

    @property
    def classes(self) -> dict[str, dict[str, Any]]:
        return self._view.classes

    @property
    def slices(self) -> dict[str, SliceRec]:
        return self._view.slices

    def enabled(self, gate: str) -> bool:
        return self._view.enabled(gate)

    def remember_match(self, key: tuple[Hashable, int], value: Any, nbytes: int) -> None:
        self._view.remember_match(key, value, nbytes)

    def candidate_nodes(self) -> list[NodeInfo]:
        return self._view.candidate_nodes()

    def node(self, name: str) -> NodeInfo:
        return self._view.node(name)

    def node_stamp(self, node: NodeInfo) -> int | None:
        return self._view.node_stamp(node)

    def gather(self, node: NodeInfo, tick: Any = None, seen: set[Any] | None = None) -> tuple[Pool, ...]:
        return self._view.gather(node, tick, seen)

    def device_class(self, name: str) -> dict[str, Any] | None:
        return self._view.device_class(name)

    def class_for_extended_resource(self, resource: str) -> str | None:
        return self._view.class_for_extended_resource(resource)

    def device_taints(self, d: DeviceRec) -> tuple[dict[str, Any], ...]:
        return self._view.device_taints(d)

    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> tuple[Pool, ...]:
        pools = self._view.pools_for(node, meter)
        if not self._ignore_allocations:
            return pools
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
