"""StateView: one published version of the cluster state, as the allocation engine reads it.

Immutable once published (webhook.state.store builds it), so any number of threads may read it for as
long as they hold it. Its parts are persistent maps shared with the versions before and after it:

- `inventory`: the records by object key and by pool, node, class name (webhook.state.inventory)
- `allocated`: the devices allocated claims hold (webhook.state.allocated)
- `nodes`, `candidates`: Node objects, and the nodes allocate() tries (sorted)
- `node_pools`: per candidate node, its gathered and counted pools with a stamp (built by the writer,
  eagerly, for exactly the nodes a change touches)
- `taint_rules` / `rules`: DeviceTaintRules and their index by (driver, pool, device)

Caches readers fill (each documented where it lives):
- `memo()`: version-scoped — derived results of this version only (explanations), a bounded dictionary
  filled with single operations of values computed beforehand; it dies with the view.
- `rules.taints`: per DeviceTaintRules version — a device's taints by device key (a pure function of the
  device version and the rules), bounded.
- `shared.*` (webhook.state.shared): pure functions of immutable keys, shared by all versions.
- `_extra`: version-scoped — pools of nodes that are not candidates (a pinned unknown node), bounded.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

from immutables import Map

from webhook.config.profile import Profile
from webhook.model.bignum import TooLarge
from webhook.model.budget import Meter
from webhook.model.cache import ByteLRU, ClearingCache
from webhook.model.records import DeviceRec, SliceRec
from webhook.state.allocated import AllocatedState
from webhook.state.inventory import Inventory
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool, gather
from webhook.state.shared import MatchCache, SharedCaches, SharedEvaluator

MEMO_BYTES = 64 << 20  # derived per-version results (explanations)
TAINT_BYTES = 16 << 20  # device taints per DeviceTaintRules version
EXTRA_BYTES = 4 << 20  # pools of non-candidate nodes per version

RuleKey = tuple[str | None, str | None, str | None]
NodePools = tuple[int, tuple[Pool, ...], str]  # (stamp, pools, the first pool's count_error or "")


class TaintRules:
    """One version of the DeviceTaintRules: the rules by name, indexed by (driver, pool, device) of
    their selector (None = any), and the taints per device computed so far (bounded)."""

    __slots__ = ("version", "rules", "index", "taints")

    def __init__(self, version: int, rules: Map[str, tuple[dict[str, Any] | None, dict[str, Any]]]) -> None:
        self.version = version
        self.rules = rules
        index: dict[RuleKey, list[tuple[str, dict[str, Any]]]] = {}
        for name, (sel, taint) in rules.items():
            if sel is None:
                continue  # absent selector: no devices
            key = (sel.get("driver") or None, sel.get("pool") or None, sel.get("device") or None)
            index.setdefault(key, []).append((name, taint))
        self.index = index
        self.taints: ClearingCache[tuple[str, int, int], tuple[dict[str, Any], ...]] = ClearingCache(
            TAINT_BYTES
        )


class Cache(Protocol):
    """A bounded cache the engine keeps its work in (`ClearingCache`, or a view's prefixed part of one)."""

    def get(self, key: Hashable) -> Any: ...

    def put(self, key: Hashable, value: Any, nbytes: int) -> None: ...


class ClusterView(Protocol):
    """What allocation reads of the cluster at one version: implemented by `StateView` and by the
    engine's `AdjustedView` (the same version with nothing allocated and/or taints ignored)."""

    @property
    def profile(self) -> Profile: ...
    @property
    def version(self) -> int: ...
    @property
    def inventory(self) -> Inventory: ...
    @property
    def allocated(self) -> AllocatedState: ...
    @property
    def nodes(self) -> Map[str, NodeInfo]: ...
    @property
    def rules(self) -> TaintRules: ...
    @property
    def taint_rules(self) -> Map[str, tuple[dict[str, Any] | None, dict[str, Any]]]: ...
    @property
    def node_pools(self) -> Map[str | None, NodePools]: ...
    @property
    def shared(self) -> SharedCaches: ...
    @property
    def view(self) -> ClusterView: ...
    @property
    def evaluator(self) -> SharedEvaluator: ...
    @property
    def compiled(self) -> ByteLRU[str, bool]: ...
    @property
    def match_cache(self) -> MatchCache: ...
    @property
    def count_cache(self) -> Cache: ...
    @property
    def classes(self) -> dict[str, dict[str, Any]]: ...
    @property
    def slices(self) -> dict[str, SliceRec]: ...

    def enabled(self, gate: str) -> bool: ...
    def remember_match(self, key: tuple[Hashable, int], value: Any, nbytes: int) -> None: ...
    def memo(self) -> Cache: ...
    def candidate_nodes(self) -> list[NodeInfo]: ...
    def node(self, name: str) -> NodeInfo: ...
    def node_stamp(self, node: NodeInfo) -> int | None: ...
    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> tuple[Pool, ...]: ...
    def gather(self, node: NodeInfo, tick: Any = None, seen: set[Any] | None = None) -> tuple[Pool, ...]: ...
    def device_class(self, name: str) -> dict[str, Any] | None: ...
    def class_for_extended_resource(self, resource: str) -> str | None: ...
    def device_taints(self, d: DeviceRec) -> tuple[dict[str, Any], ...]: ...


class HasView(Protocol):
    """A state allocation can run on: a `StateView` (itself) or a `ClusterState` (its current version)."""

    @property
    def view(self) -> ClusterView: ...


class StateView:
    """Everything allocation depends on at one version (see the module docstring)."""

    __slots__ = (
        "profile",
        "version",
        "inventory",
        "allocated",
        "nodes",
        "candidates",
        "node_pools",
        "taint_rules",
        "rules",
        "shared",
        "_memo",
        "_extra",
    )

    def __init__(
        self,
        profile: Profile,
        version: int,
        inventory: Inventory,
        allocated: AllocatedState,
        nodes: Map[str, NodeInfo],
        candidates: list[NodeInfo],
        node_pools: Map[str | None, NodePools],
        rules: TaintRules,
        shared: SharedCaches,
    ) -> None:
        self.profile = profile
        self.version = version
        self.inventory = inventory
        self.allocated = allocated
        self.nodes = nodes
        self.candidates = candidates
        self.node_pools = node_pools
        self.rules = rules
        self.taint_rules = rules.rules
        self.shared = shared
        self._memo: ClearingCache[Hashable, Any] = ClearingCache(MEMO_BYTES)
        self._extra: ClearingCache[str | None, tuple[NodeInfo, tuple[Pool, ...], str]] = ClearingCache(
            EXTRA_BYTES
        )

    @property
    def view(self) -> StateView:
        """This view (a ClusterState's `view` is its current version)."""
        return self

    def enabled(self, gate: str) -> bool:
        return self.profile.enabled(gate)

    # --- shared caches ----------------------------------------------------------------------------
    @property
    def evaluator(self) -> SharedEvaluator:
        """The CEL selector evaluator shared by every version and thread of this state."""
        return self.shared.evaluator

    @property
    def compiled(self) -> ByteLRU[str, bool]:
        return self.shared.compiled

    @property
    def match_cache(self) -> MatchCache:
        return self.shared.match

    def remember_match(self, key: tuple[Hashable, int], value: Any, nbytes: int) -> None:
        self.shared.match.put(key, value, nbytes)

    @property
    def count_cache(self) -> ClearingCache[Hashable, Any]:
        return self.shared.counts

    def memo(self) -> ClearingCache[Hashable, Any]:
        """A scratch cache for results derived from this version (bounded by bytes: callers estimate
        their entries)."""
        return self._memo

    # --- nodes and pools -------------------------------------------------------------------------
    def candidate_nodes(self) -> list[NodeInfo]:
        """Node objects if there are any (sorted by name); else every nodeName used by slices, then
        nodes named by per-device node selection, then one anonymous node. Read-only."""
        return self.candidates

    def node(self, name: str) -> NodeInfo:
        return self.nodes.get(name) or (NodeInfo(name) if not self.nodes else NodeInfo(name, known=True))

    def _canonical(self, node: NodeInfo) -> NodePools | None:
        hit = self.node_pools.get(node.name)
        if hit is None:
            return None
        known = self.nodes.get(node.name) if node.name is not None else None
        if known is not None:
            return hit if (known is node or known == node) else None
        return hit if (not node.labels and not node.known) else None

    def node_stamp(self, node: NodeInfo) -> int | None:
        """A number that changes whenever `node`'s pools change (None: not a candidate node)."""
        hit = self._canonical(node)
        return hit[0] if hit is not None else None

    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> tuple[Pool, ...]:
        """The gathered, counted pools of one node. Candidate nodes' pools were built when this version
        was published; others are gathered now (`meter` is ticked per slice looked at). Raises
        `TooLarge` when a pool's counters could not be computed exactly (the answer is undecided)."""
        hit = self._canonical(node)
        if hit is not None:
            pools, error = hit[1], hit[2]
        else:
            extra = self._extra.get(node.name)
            if extra is None or not (extra[0] is node or extra[0] == node):
                tick = meter.tick if meter is not None else None
                found = self.gather(node, tick)
                extra = (node, found, next((p.count_error for p in found if p.count_error), ""))
                self._extra.put(node.name, extra, 200 + 100 * len(found))
            pools, error = extra[1], extra[2]
        if error:
            raise TooLarge(error)  # counters of a pool could not be computed exactly: no answer
        return pools

    def gather(self, node: NodeInfo, tick: Any = None, seen: set[Any] | None = None) -> tuple[Pool, ...]:
        """The pools of `node` computed from this version's slices and allocation."""
        inv = self.inventory
        cands: list[SliceRec] = []
        if node.name is not None:
            mine = inv.node_slices.get(node.name)
            if mine is not None:
                cands.extend(mine.values())
        cands.extend(inv.shared_slices.values())
        pools = gather(
            cands,
            node,
            inv.pools,
            partitionable=self.enabled("DRAPartitionableDevices"),
            groups_enabled=self.enabled("DRADeviceCompatibilityGroups"),
            tick=tick,
            seen=seen,
        )
        return tuple(p.counted(self.allocated, tick) for p in pools)

    # --- classes, taints, slices -----------------------------------------------------------------
    def device_class(self, name: str) -> dict[str, Any] | None:
        rec = self.inventory.class_named(name)
        return rec.obj if rec is not None else None

    def class_for_extended_resource(self, resource: str) -> str | None:
        """The class serving an extended resource: explicit name (newest creationTimestamp wins, then the
        smaller class name), else the implicit `deviceclass.resource.kubernetes.io/<class>`."""
        best: tuple[str, str] | None = None
        for _, rec in self.inventory.classes_with_ern(resource):
            created = rec.created or ""
            if best is None or created > best[0] or (created == best[0] and rec.name < best[1]):
                best = (created, rec.name)
        if best is not None:
            return best[1]
        prefix = "deviceclass.resource.kubernetes.io/"
        if resource.startswith(prefix) and resource[len(prefix) :] in self.inventory.classes:
            return resource[len(prefix) :]
        return None

    @property
    def classes(self) -> dict[str, dict[str, Any]]:
        """DeviceClass objects by name (a new dictionary per call: for tests and tools)."""
        return {name: rec.obj for name in self.inventory.classes if (rec := self.inventory.class_named(name))}  # type: ignore[misc]

    @property
    def slices(self) -> dict[str, SliceRec]:
        """Slice records by name (a new dictionary per call: for tests and tools)."""
        return {r.name: r for r in self.inventory.records.values() if isinstance(r, SliceRec)}

    def device_taints(self, d: DeviceRec) -> tuple[dict[str, Any], ...]:
        """Slice taints plus those of matching DeviceTaintRules (absent selector = no devices)."""
        if not self.taint_rules or not self.enabled("DRADeviceTaintRules"):
            return d.taints
        rules = self.rules
        hit = rules.taints.get(d.key)
        if hit is not None:
            return hit
        driver, pool, name = d.id
        index = rules.index
        found: list[tuple[str, dict[str, Any]]] = []
        for key in (
            (driver, pool, name),
            (driver, pool, None),
            (driver, None, name),
            (driver, None, None),
            (None, pool, name),
            (None, pool, None),
            (None, None, name),
            (None, None, None),
        ):
            found.extend(index.get(key, ()))
        extra = [taint for _, taint in sorted(found, key=lambda r: r[0])]  # rule name order
        taints = d.taints + tuple(extra)
        rules.taints.put(d.key, taints, 100 + 50 * len(taints))
        return taints
