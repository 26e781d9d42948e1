"""Resource pools gathered for one node (upstream GatherPools), with their counter bookkeeping.

Per node: the slices with that nodeName plus every node-independent slice, filtered by relevance,
grouped by (driver, pool), highest generation only, checked for completeness (first among the node's
slices, then cluster-wide) and validity (duplicate device or counter-set names, unknown counter
references). Pools are ordered by driver, then pool name, pools with binding conditions last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.model.bignum import Nano, TooLarge
from webhook.model.records import DeviceRec, PoolID, SliceRec
from webhook.state.allocated import AllocatedState
from webhook.state.nodes import NodeInfo, node_fields_match, selector_matches


@dataclass(frozen=True, slots=True)
class GroupState:
    """Devices already on one counter set: how many, how many without groups, their common groups."""

    count: int = 0
    ungrouped: int = 0
    common: frozenset[str] | None = None  # intersection over grouped devices; None while there is none


@dataclass(eq=False, slots=True)
class Pool:
    """One pool as one node sees it, counted against one allocated state. Never changed once built (a
    state change makes new Pool objects: `counted()` for an allocation change, `gather()` for a slice
    or node change), so any number of readers may share it."""

    id: PoolID
    generation: int
    slices: list[SliceRec]  # targeting the node, by name
    others: list[SliceRec]  # same pool and generation, not targeting the node (counters only)
    incomplete: bool = False
    invalid: str = ""  # why the pool is invalid ("" = valid)
    has_binding: bool = False
    counter_sets: dict[str, dict[str, Nano]] = field(default_factory=dict)
    # Derived from the allocated state the pool was counted against.
    available: dict[str, dict[str, Nano]] = field(default_factory=dict)
    over_committed: bool = False  # some counter of the pool is already negative
    groups: dict[str, GroupState] = field(default_factory=dict)
    count_error: str = ""  # the counters could not be computed exactly (TooLarge): answers are undecided

    @property
    def usable(self) -> bool:
        return not self.incomplete and not self.invalid

    def all_slices(self) -> Iterable[SliceRec]:
        yield from self.slices
        yield from self.others

    def counted(self, allocated: AllocatedState, tick: Callable[[], None] | None = None) -> Pool:
        """This pool with its counters as `allocated` leaves them: available counters = published −
        consumption of every allocated device of the pool (whichever node it is on), read from the
        current slices (upstream; #140802 stays open: a republished pool without an allocated device
        frees its counters). Plus the compatibility groups in use. Work ∝ the pool's devices. Values
        too far apart to subtract exactly leave `count_error` set (engine answers become undecided)."""
        try:
            return self._counted(allocated, tick)
        except TooLarge as e:
            return self._with(self.available, self.over_committed, self.groups, str(e))

    def _with(
        self,
        available: dict[str, dict[str, Nano]],
        over: bool,
        groups: dict[str, GroupState],
        error: str = "",
    ) -> Pool:
        """This pool's structure with the given counters (shared, never copied)."""
        return Pool(
            self.id,
            self.generation,
            self.slices,
            self.others,
            self.incomplete,
            self.invalid,
            self.has_binding,
            self.counter_sets,
            available,
            over,
            groups,
            error,
        )

    def _counted(self, allocated: AllocatedState, tick: Callable[[], None] | None) -> Pool:
        avail = {name: dict(counters) for name, counters in self.counter_sets.items()}
        groups: dict[str, GroupState] = {}
        for s in self.all_slices():
            if tick is not None:
                tick()
            if not s.has_counters:
                continue
            for d in s.devices:
                if not d.consumes or not allocated.is_allocated(d.id):
                    continue
                for c in d.consumes:
                    have = avail.get(c.counter_set)
                    if have is not None:
                        for counter, v in c.counters:
                            if counter in have:
                                have[counter] -= v
                    groups[c.counter_set] = add_group(groups.get(c.counter_set, GroupState()), c.groups)
        return self._with(avail, any(v < 0 for cs in avail.values() for v in cs.values()), groups)


def add_group(g: GroupState, groups: frozenset[str]) -> GroupState:
    if not groups:
        return GroupState(g.count + 1, g.ungrouped + 1, g.common)
    common = groups if g.common is None else g.common & groups
    return GroupState(g.count + 1, g.ungrouped, common)


def group_admits(g: GroupState | None, groups: frozenset[str]) -> bool:
    """KEP-5963: nothing on the set yet; or ungrouped among ungrouped; or grouped, all grouped and the
    common groups still intersect."""
    if g is None or g.count == 0:
        return True
    if not groups:
        return g.ungrouped == g.count
    return g.ungrouped == 0 and g.common is not None and bool(g.common & groups)


def slice_relevant(s: SliceRec, node: NodeInfo) -> bool:
    if s.node_name:
        return s.node_name == node.name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return selector_matches(s.node_selector, node)
    if s.per_device:
        return any(device_on_node(d, node) for d in s.devices)
    return False  # none of the four fields: a future extension, ignored


def device_on_node(d: DeviceRec, node: NodeInfo) -> bool:
    return node_fields_match(d.node_name, d.all_nodes, d.node_selector, node)


def _validate(pool: Pool, tick: Callable[[], None] | None) -> str:
    names: set[str] = set()
    sets: dict[str, dict[str, Nano]] = {}
    for s in sorted(pool.all_slices(), key=lambda s: s.name):
        for name, counters in s.counter_sets:
            if name in sets:
                return f"duplicate counter set name {name}"
            sets[name] = dict(counters)
    pool.counter_sets = sets
    for s in sorted(pool.all_slices(), key=lambda s: s.name):
        if tick is not None:
            tick()
        for d in s.devices:
            if d.name in names:
                return f"duplicate device name {d.name}"
            names.add(d.name)
            for c in d.consumes:
                have = sets.get(c.counter_set)
                if have is None:
                    return f"device {d.name} consumes counters from unknown counter set {c.counter_set}"
                for counter, _ in c.counters:
                    if counter not in have:
                        return f"device {d.name} consumes unknown counter {counter} of set {c.counter_set}"
    return ""


def gather(
    candidates: Iterable[SliceRec],
    node: NodeInfo,
    pool_slices: Mapping[PoolID, Mapping[Any, SliceRec]],
    *,
    partitionable: bool,
    groups_enabled: bool,
    tick: Callable[[], None] | None = None,
    seen: set[PoolID] | None = None,
) -> list[Pool]:
    """The pools of `node` from its candidate slices, not yet counted (see `Pool.counted`);
    `pool_slices` holds every slice cluster-wide by pool. `tick` is called per slice looked at (a
    budget's clock). `seen` (if given) receives every pool the node's relevant slices belong to, also
    the ones left out as obsolete (what the node's pools depend on)."""
    by_pool: dict[PoolID, list[SliceRec]] = {}
    for s in candidates:
        if tick is not None:
            tick()
        if not partitionable and s.uses_partitionable:
            continue
        if not slice_relevant(s, node):
            continue
        cur = by_pool.get(s.pool_id)
        if cur is None or s.generation > cur[0].generation:
            by_pool[s.pool_id] = [s]
        elif s.generation == cur[0].generation:
            cur.append(s)
    if seen is not None:
        seen.update(by_pool)
    pools: list[Pool] = []
    for pid, slices in by_pool.items():
        slices.sort(key=lambda s: s.name)
        gen = slices[0].generation
        pool = Pool(pid, gen, slices, [])
        if len(slices) != slices[0].slice_count:
            everything = pool_slices.get(pid, {}).values()
            if any(s.generation > gen for s in everything):
                continue  # obsolete: a newer generation exists elsewhere
            same = [s for s in everything if s.generation == gen]
            if len(same) == slices[0].slice_count:
                own = {id(s) for s in slices}
                pool.others = sorted((s for s in same if id(s) not in own), key=lambda s: s.name)
            else:
                pool.incomplete = True
        pool.invalid = _validate(pool, tick)
        if not groups_enabled and any(s.has_groups for s in pool.all_slices()):
            pool.incomplete = True  # [D] scheduler without the gate: grouped pools count as incomplete
        pool.has_binding = any(s.has_binding for s in pool.all_slices())
        pools.append(pool)
    pools.sort(key=lambda p: (p.has_binding, p.id[0], p.id[1]))
    return pools
