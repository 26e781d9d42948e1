"""StateStore: the cluster state of one process — one writer, many readers, consistent snapshots.

    store = StateStore(profile)
    store.replace_all(objects); store.publish()      # the loader thread (the only writer)
    snap = store.snapshot()                          # any request thread: O(1), never blocks
    allocate(snap.state, claims, ...)                # the engine reads one immutable version
    violations_for(snap.state.inventory, obj, old)   # (webhook.rules.crossobject) the inventory rules for one object
    snap.objects("ResourceClaim")[("ns", "name")]    # the stored objects of one kind (admission reads them)

The writer's `apply`/`delete`/`replace_all` record changes into builders of persistent maps
(`immutables.Map`: structural sharing, no copy of the cluster per change); `publish()` finishes them into
the next immutable `StateView` and swaps one reference. Work per publish is proportional to the change:
a parsed record per changed object, the index entries it touches, and the pools of exactly the nodes
whose answers depend on it — a claim's allocation re-counts the pools it holds devices of on the nodes
that see them; a republished slice re-gathers the nodes that see its pool (its own node, or the nodes a
node-independent slice is relevant to); a Node object its node. Unchanged objects given to `apply` or
`replace_all` (equal to what is stored) cost a comparison and nothing else.

`Snapshot.objects(kind)` is one persistent map per kind, (namespace or "", name) → the object as given to
the writer, evolved per publish like the rest (a change costs one map update, never a copy); Namespaces
are kept there only (their labels: admin access).

Hooks for engine churn work: `Snapshot.state.node_stamp(node)` changes exactly when a node's pools do;
`StateStore.last_publish` records what the latest publish touched and how long it took.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from immutables import Map

from webhook.config.profile import Profile
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.cache import ClearingCache
from webhook.model.keys import NAMESPACED, object_key
from webhook.model.records import ClaimRec, PoolID, SliceRec, parse_record, parse_slice
from webhook.state.allocated import AllocatedBuilder, AllocatedState
from webhook.state.inventory import Inventory, InventoryBuilder
from webhook.state.nodes import NodeInfo, node_from_object
from webhook.state.pools import Pool, slice_relevant
from webhook.state.shared import SharedCaches
from webhook.state.view import NodePools, StateView, TaintRules

KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule", "Node")
STORED_KINDS = (*KINDS, "Namespace")  # what apply() keeps; Namespaces only for objects() (their labels)
INTERN_BYTES = 8 << 20  # capacity and consumption records shared by devices with identical ones
WHERE = "the cluster state"

_EMPTY: Map[Any, Any] = Map()
ObjectMaps = Map[str, Map[tuple[str, str], dict[str, Any]]]  # kind → (namespace or "", name) → object


class Snapshot:
    """One published version; immutable, safe to use from any thread for as long as a request needs it."""

    __slots__ = ("version", "published_at", "state", "_objects")

    def __init__(
        self, version: int, published_at: float, state: StateView, objects: ObjectMaps = _EMPTY
    ) -> None:
        self.version = version
        self.published_at = published_at  # time.monotonic() of the publish
        self.state = state
        self._objects = objects

    @property
    def inventory(self) -> Inventory:
        return self.state.inventory

    def counts(self) -> dict[str, int]:
        """Objects per kind (every kind the store keeps, zeros included)."""
        inv = self.state.inventory
        out = {k: inv.count(k) for k in KINDS[:4]}
        out["DeviceTaintRule"] = len(self.state.taint_rules)
        out["Node"] = len(self.state.nodes)
        out["Namespace"] = len(self.objects("Namespace"))
        return out

    def objects(self, kind: str) -> Mapping[tuple[str, str], dict[str, Any]]:
        """The stored objects of one kind (any of STORED_KINDS) by (namespace or "", name), as given to
        the writer (the loader's are defaulted as the API server stores them). Read-only: the mapping
        is immutable and belongs to this version (O(1) to get); the objects must not be changed."""
        return self._objects.get(kind, _EMPTY)


@dataclass
class PublishStats:
    """What one publish changed (for benchmarks, metrics and tests)."""

    version: int = 0
    objects: int = 0  # objects applied or deleted since the previous publish
    nodes_gathered: int = 0  # nodes whose pools were gathered anew
    nodes_recounted: int = 0  # nodes whose pools were only re-counted (an allocation changed)
    seconds: float = 0.0
    touched_pools: set[PoolID] = field(default_factory=set)


class _Pending:
    """The changes since the last publish (writer only)."""

    def __init__(self, base: StateView) -> None:
        self.base = base
        self.objects = 0
        self._inv: InventoryBuilder | None = None
        self._alloc: AllocatedBuilder | None = None
        self._nodes: Any = None
        self._rules: Any = None
        self.slices: list[tuple[SliceRec | None, SliceRec | None]] = []
        self.node_names: set[str] = set()
        self.kinds: dict[str, Any] = {}  # kind → mutation of its objects() map

    @property
    def inv(self) -> InventoryBuilder:
        if self._inv is None:
            self._inv = self.base.inventory.evolve()
        return self._inv

    @property
    def alloc(self) -> AllocatedBuilder:
        if self._alloc is None:
            self._alloc = self.base.allocated.evolve()
        return self._alloc

    @property
    def nodes(self) -> Any:
        if self._nodes is None:
            self._nodes = self.base.nodes.mutate()
        return self._nodes

    @property
    def rules(self) -> Any:
        if self._rules is None:
            self._rules = self.base.taint_rules.mutate()
        return self._rules


class StateStore:
    """The cluster state of one process: one writer, many readers (see the module docstring). Objects
    given to the writer must not be changed afterwards (records share their device dictionaries)."""

    def __init__(self, profile: Profile, where: str = WHERE) -> None:
        self.profile = profile
        self.shared = SharedCaches(profile)
        self._intern: ClearingCache[Hashable, Any] = ClearingCache(INTERN_BYTES)
        self._serial = itertools.count(1)
        self._stamp = itertools.count(1)
        self._rules_version = 0
        self._objects: dict[tuple[str, str, str], dict[str, Any]] = {}  # the stored object per key (diffing)
        self._pool_nodes: dict[PoolID, set[str | None]] = {}  # nodes whose pools depend on a pool
        self._node_seen: dict[str | None, set[PoolID]] = {}  # the converse
        view = StateView(
            profile,
            0,
            Inventory(where=where),
            AllocatedState(),
            _EMPTY,
            [NodeInfo(None)],
            _EMPTY,
            TaintRules(0, _EMPTY),
            self.shared,
        )
        view.node_pools = self._gather_all(view, view.candidates)  # the anonymous node's: none
        self._current = Snapshot(0, time.monotonic(), view)
        self._pending = _Pending(view)
        self.last_publish = PublishStats()

    # --- readers ---------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The latest published version (one attribute read: never blocks, never half an update)."""
        return self._current

    # --- the writer ------------------------------------------------------------------------------
    def apply(self, obj: dict[str, Any]) -> None:
        """Add or replace one object (kinds the state does not keep are ignored)."""
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind not in STORED_KINDS:
            return
        key = object_key(obj)
        stored = self._objects.get(key)
        if stored is not None and (stored is obj or stored == obj):
            return
        self._objects[key] = obj
        p = self._pending
        p.objects += 1
        self._kind_map(kind)[key[1:]] = obj
        if kind == "Namespace":
            return
        if kind == "ResourceSlice":
            rec = parse_slice(obj, next(self._serial), self._intern)
            old = p.inv.put(key, rec)
            p.slices.append((old if isinstance(old, SliceRec) else None, rec))
        elif kind == "DeviceTaintRule":
            spec = obj.get("spec")
            spec = spec if isinstance(spec, dict) else {}
            sel, taint = spec.get("deviceSelector"), spec.get("taint")
            p.rules[key[2]] = (
                sel if isinstance(sel, dict) else None,
                dict(taint) if isinstance(taint, dict) else {},
            )
        elif kind == "Node":
            info = node_from_object(obj)
            if p.nodes.get(key[2]) != info:  # a status update that changes no label: nothing to do
                p.nodes[key[2]] = info
                p.node_names.add(key[2])
        else:
            rec2 = parse_record(obj, 0, self._intern)
            if rec2 is None:
                return
            p.inv.put(key, rec2)
            if kind == "ResourceClaim":
                assert isinstance(rec2, ClaimRec)
                p.alloc.set_claim(key, rec2.allocation)

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        """Remove one object (unknown objects are ignored)."""
        key = (kind, (namespace or "") if kind in NAMESPACED else "", name)
        if self._objects.pop(key, None) is None:
            return
        p = self._pending
        p.objects += 1
        del self._kind_map(kind)[key[1:]]
        if kind == "Namespace":
            return
        if kind == "DeviceTaintRule":
            if name in p.rules:
                del p.rules[name]
        elif kind == "Node":
            if name in p.nodes:
                del p.nodes[name]
            p.node_names.add(name)
        else:
            old = p.inv.remove(key)
            if isinstance(old, SliceRec):
                p.slices.append((old, None))
            elif kind == "ResourceClaim":
                p.alloc.set_claim(key, None)

    def replace_all(self, objs: Iterable[dict[str, Any]]) -> None:
        """A full (re)load: the stored content becomes `objs` (kinds the state keeps); objects equal to
        the stored ones cost a comparison, others are applied, missing ones deleted."""
        keep: set[tuple[str, str, str]] = set()
        for obj in objs:
            if isinstance(obj, dict) and obj.get("kind") in STORED_KINDS:
                keep.add(object_key(obj))
                self.apply(obj)
        for kind, ns, name in [k for k in self._objects if k not in keep]:
            self.delete(kind, ns or None, name)

    def publish(self, deadline: Deadline | None = None) -> Snapshot:
        """Make the changes since the last publish visible as the next version (the current one when
        nothing changed). With a `deadline` (a CLI run building its state), raises `OutOfBudget` once it
        passes while nodes' pools are gathered; the store is then unusable (its changes are lost)."""
        p = self._pending
        if p.objects == 0:
            return self._current
        t0 = time.perf_counter()
        base = p.base
        stats = PublishStats(base_version := self._current.version + 1, p.objects)
        inv = p.inv.finish() if p._inv is not None else base.inventory
        alloc_touched: set[PoolID] = set()
        if p._alloc is not None:
            alloc_touched = p._alloc.touched
            allocated = p._alloc.finish()
        else:
            allocated = base.allocated
        nodes = p._nodes.finish() if p._nodes is not None else base.nodes
        if p._rules is not None:
            self._rules_version += 1
            rules = TaintRules(self._rules_version, p._rules.finish())
        else:
            rules = base.rules
        candidates = base.candidates
        if p.node_names or (not nodes and _node_set_changed(p.slices, base.inventory, inv)):
            candidates = _candidates(inv, nodes)
        view = StateView(
            self.profile, base_version, inv, allocated, nodes, candidates, base.node_pools, rules, self.shared
        )
        self._update_pools(view, base, p, alloc_touched, stats, deadline)
        stats.touched_pools = alloc_touched
        gone = [old for old, _ in p.slices if old is not None]
        self.shared.forget([s.serial for s in gone], [d.key for s in gone for d in s.devices])
        objects = self._current._objects
        if p.kinds:
            maps = objects.mutate()
            for kind, m in p.kinds.items():
                maps[kind] = m.finish()
            objects = maps.finish()
        snap = Snapshot(base_version, time.monotonic(), view, objects)
        self._current = snap
        self._pending = _Pending(view)
        stats.seconds = time.perf_counter() - t0
        self.last_publish = stats
        return snap

    def _kind_map(self, kind: str) -> Any:
        """The pending mutation of `kind`'s objects() map (started from the published one)."""
        m = self._pending.kinds.get(kind)
        if m is None:
            m = self._current._objects.get(kind, _EMPTY).mutate()
            self._pending.kinds[kind] = m
        return m

    # --- pools per node --------------------------------------------------------------------------
    def _gather_all(self, view: StateView, nodes: list[NodeInfo]) -> Map[str | None, NodePools]:
        m = _EMPTY.mutate()
        for node in nodes:
            m[node.name] = self._gather(view, node)
        return m.finish()

    def _gather(self, view: StateView, node: NodeInfo) -> NodePools:
        seen: set[PoolID] = set()
        pools = view.gather(node, None, seen)
        self._track(node.name, seen)
        return (next(self._stamp), pools, _error(pools))

    def _track(self, name: str | None, seen: set[PoolID]) -> None:
        """Record that node `name`'s pools depend on exactly the pools `seen`."""
        for pid in self._node_seen.pop(name, ()):
            users = self._pool_nodes.get(pid)
            if users is not None:
                users.discard(name)
                if not users:
                    del self._pool_nodes[pid]
        if seen:
            self._node_seen[name] = seen
            for pid in seen:
                self._pool_nodes.setdefault(pid, set()).add(name)

    def _update_pools(
        self,
        view: StateView,
        base: StateView,
        p: _Pending,
        alloc_touched: set[PoolID],
        stats: PublishStats,
        deadline: Deadline | None,
    ) -> None:
        """The candidate nodes' pools of the new version: gathered anew for the nodes a slice or Node
        change touches, re-counted for the nodes that see a pool whose allocation changed."""
        old_map = base.node_pools
        names = {n.name for n in view.candidates}
        dirty: set[str | None] = set(p.node_names)
        for old, new in p.slices:
            for rec in (old, new):
                if rec is None:
                    continue
                dirty.update(self._pool_nodes.get(rec.pool_id, ()))
                if rec.node_name:
                    dirty.add(rec.node_name)
                else:  # node-independent: the nodes it is relevant to
                    dirty.update(n.name for n in view.candidates if slice_relevant(rec, n))
        m = old_map.mutate()
        if view.candidates is not base.candidates:
            for name in list(old_map.keys()):
                if name not in names:
                    self._track(name, set())
                    del m[name]
            dirty.update(n for n in names if n not in old_map)
        view.node_pools = old_map  # gather() below reads slices and allocation, never node_pools
        for node in view.candidates:
            if node.name in dirty:
                m[node.name] = self._gather(view, node)
                stats.nodes_gathered += 1
                if deadline is not None and stats.nodes_gathered % 64 == 0 and deadline.expired():
                    raise OutOfBudget()
        memo: dict[tuple[int, ...], Pool] = {}
        for pid in alloc_touched:
            for name in self._pool_nodes.get(pid, ()):
                if name in dirty or name not in names:
                    continue
                entry = m.get(name)
                if entry is None:
                    continue
                pools = tuple(_recount(q, pid, view.allocated, memo) for q in entry[1])
                m[name] = (next(self._stamp), pools, _error(pools))
                stats.nodes_recounted += 1
        view.node_pools = m.finish()


def _recount(pool: Pool, pid: PoolID, allocated: AllocatedState, memo: dict[tuple[int, ...], Pool]) -> Pool:
    """`pool` counted against `allocated` if it is the pool `pid` (nodes that see the same slices of a
    pool share the counting within one publish)."""
    if pool.id != pid:
        return pool
    key = tuple(sorted(s.serial for s in pool.all_slices()))
    done = memo.get(key)
    if done is None or done.id != pid:
        done = pool.counted(allocated)
        memo[key] = done
    if done.slices is pool.slices:
        return done
    return pool._with(done.available, done.over_committed, done.groups, done.count_error)


def _error(pools: tuple[Pool, ...]) -> str:
    return next((p.count_error for p in pools if p.count_error), "")


def _node_set_changed(
    slices: list[tuple[SliceRec | None, SliceRec | None]], before: Inventory, after: Inventory
) -> bool:
    """Whether slice changes may change the candidate nodes of a state without Node objects."""
    if bool(before.shared_slices) != bool(after.shared_slices):
        return True  # the anonymous node comes or goes
    for old, new in slices:
        for rec in (old, new):
            if rec is None:
                continue
            if rec.node_name is None:
                if rec.per_device:
                    return True
            elif (rec.node_name in before.node_slices) != (rec.node_name in after.node_slices):
                return True
    return False


def _candidates(inv: Inventory, nodes: Map[str, NodeInfo]) -> list[NodeInfo]:
    """Node objects if there are any (sorted by name); else every nodeName used by slices plus the
    nodes named by per-device node selection, plus one anonymous node."""
    if nodes:
        return [nodes[n] for n in sorted(nodes)]
    named = sorted(inv.node_slices.keys())
    per_device = sorted(
        {d.node_name for s in inv.shared_slices.values() if s.per_device for d in s.devices if d.node_name}
        - set(named)
    )
    anonymous = [NodeInfo(None)] if inv.shared_slices or not named else []
    return [NodeInfo(n) for n in named] + [NodeInfo(n) for n in per_device] + anonymous
