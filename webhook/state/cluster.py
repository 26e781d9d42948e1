"""ClusterState: the incremental in-memory index the allocation engine reads.

Holds ResourceSlices (by name, by (driver, pool), by node / node-independent), DeviceClasses (by name
and extended resource name), the allocated state of ResourceClaims, DeviceTaintRules and Nodes.
`apply()`/`delete()` touch only what the object changes; per-node pool gathering and per-slice selector
results are caches invalidated precisely (a changed slice drops its own entries and the node caches that
saw its pool).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from typing import Any

from webhook.model.budget import Deadline, Meter, OutOfBudget
from webhook.model.cache import ByteLRU, ClearingCache
from webhook.profile import Profile
from webhook.state.allocated import AllocatedState
from webhook.state.nodes import NodeInfo, node_from_object
from webhook.state.pools import Pool, gather
from webhook.state.records import DeviceRec, PoolID, SliceRec, parse_slice

KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule", "Node")
COMPILED_BYTES = 4 << 20  # expression text remembered as compiled
MATCH_BYTES = 256 << 20  # selector results per (selectors, slice)
MEMO_BYTES = 64 << 20  # derived per-state results (device counts per node, explanations)
INTERN_BYTES = 8 << 20  # capacity records shared by devices with identical capacities


def _meta(obj: dict[str, Any]) -> tuple[str | None, str]:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return (str(ns) if ns else None), str(meta.get("name") or "")


class ClusterState:
    """Everything allocation depends on, indexed; `version` bumps on every change."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.version = 0
        self.slices: dict[str, SliceRec] = {}
        self.pool_slices: dict[PoolID, dict[str, SliceRec]] = {}
        self.node_slices: dict[str, dict[str, SliceRec]] = {}
        self.shared_slices: dict[str, SliceRec] = {}
        self.classes: dict[str, dict[str, Any]] = {}
        self.claims: dict[tuple[str | None, str], dict[str, Any]] = {}
        self.allocated = AllocatedState()
        self.taint_rules: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {}
        self.nodes: dict[str, NodeInfo] = {}
        self._sorted_nodes: list[NodeInfo] | None = None
        self.rules_version = 0
        self._rules_index: dict[
            tuple[str | None, str | None, str | None], list[tuple[str, dict[str, Any]]]
        ] = {}
        self._rules_index_version = -1
        self._serial = itertools.count(1)
        self._gathered: dict[str | None, list[Pool]] = {}
        self._pool_nodes: dict[PoolID, set[str | None]] = {}
        self._taints: dict[tuple[str, int, int], tuple[int, tuple[dict[str, Any], ...]]] = {}
        # Selector results per (signature, slice serial): the engine fills it (see webhook.engine). A
        # changed slice gets a new serial, so its old entries are never hit again; the byte bound
        # drops them (and everything else) when the cache is full.
        self.match_cache: ClearingCache[tuple[Hashable, int], Any] = ClearingCache(MATCH_BYTES)
        self._evaluator: Any = None
        # Expressions the evaluator has compiled (the engine charges a compilation once); bounded.
        self.compiled: ByteLRU[str, bool] = ByteLRU(COMPILED_BYTES)
        self._memo: ClearingCache[Hashable, Any] = ClearingCache(MEMO_BYTES)
        self._interned: ClearingCache[Hashable, Any] = ClearingCache(INTERN_BYTES)  # shared capacities
        self._memo_version = -1

    # --- construction and updates ----------------------------------------------------------------
    @classmethod
    def from_objects(
        cls, objs: Iterable[dict[str, Any]], profile: Profile, deadline: Deadline | None = None
    ) -> ClusterState:
        """A state holding `objs`; raises `OutOfBudget` if `deadline` passes while building it."""
        state = cls(profile)
        for n, obj in enumerate(objs):
            if deadline is not None and n % 256 == 255 and deadline.expired():
                raise OutOfBudget()
            state.apply(obj)
        return state

    def enabled(self, gate: str) -> bool:
        return self.profile.enabled(gate)

    def apply(self, obj: dict[str, Any]) -> None:
        """Add or replace one object; other kinds are ignored."""
        kind = obj.get("kind")
        ns, name = _meta(obj)
        if kind == "ResourceSlice":
            self._drop_slice(name)
            rec = parse_slice(obj, next(self._serial), self._interned)
            self.slices[name] = rec
            self.pool_slices.setdefault(rec.pool_id, {})[name] = rec
            if rec.node_name:
                self.node_slices.setdefault(rec.node_name, {})[name] = rec
            else:
                self.shared_slices[name] = rec
            self._invalidate_slice(rec)
        elif kind == "DeviceClass":
            self.classes[name] = obj
        elif kind == "ResourceClaim":
            alloc = (obj.get("status") or {}).get("allocation")
            if isinstance(alloc, dict):
                self.claims[(ns, name)] = obj
                self.allocated.set_claim((ns, name), obj)
            else:
                self.claims.pop((ns, name), None)
                self.allocated.set_claim((ns, name), None)
        elif kind == "DeviceTaintRule":
            spec = obj.get("spec") or {}
            sel = spec.get("deviceSelector")
            self.taint_rules[name] = (sel if isinstance(sel, dict) else None, dict(spec.get("taint") or {}))
            self.rules_version += 1
        elif kind == "Node":
            self.nodes[name] = node_from_object(obj)
            self._sorted_nodes = None
            self._drop_node_cache(name)
        else:
            return
        self.version += 1

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        """Remove one object (unknown names are ignored)."""
        if kind == "ResourceSlice":
            self._drop_slice(name)
        elif kind == "DeviceClass":
            self.classes.pop(name, None)
        elif kind == "ResourceClaim":
            self.claims.pop((namespace, name), None)
            self.allocated.set_claim((namespace, name), None)
        elif kind == "DeviceTaintRule":
            self.taint_rules.pop(name, None)
            self.rules_version += 1
        elif kind == "Node":
            self.nodes.pop(name, None)
            self._sorted_nodes = None
            self._drop_node_cache(name)
        else:
            return
        self.version += 1

    def _drop_slice(self, name: str) -> None:
        old = self.slices.pop(name, None)
        if old is None:
            return
        self.pool_slices.get(old.pool_id, {}).pop(name, None)
        if not self.pool_slices.get(old.pool_id, True):
            del self.pool_slices[old.pool_id]
        if old.node_name:
            self.node_slices.get(old.node_name, {}).pop(name, None)
        else:
            self.shared_slices.pop(name, None)
        for d in old.devices:
            self._taints.pop(d.key, None)
        if self._evaluator is not None:
            self._evaluator.forget([d.key for d in old.devices])
        self._invalidate_slice(old)

    def _invalidate_slice(self, rec: SliceRec) -> None:
        if not rec.node_name:
            self._gathered.clear()
            self._pool_nodes.clear()
            return
        self._drop_node_cache(rec.node_name)
        for node in list(self._pool_nodes.get(rec.pool_id, ())):
            self._drop_node_cache(node)

    def _drop_node_cache(self, node: str | None) -> None:
        pools = self._gathered.pop(node, None)
        for p in pools or ():
            self._pool_nodes.get(p.id, set()).discard(node)

    # --- reads -----------------------------------------------------------------------------------
    @property
    def evaluator(self) -> Any:
        """The CEL selector evaluator shared by all allocate() calls on this state."""
        if self._evaluator is None:
            from webhook.cel.runtime import SelectorEvaluator

            self._evaluator = SelectorEvaluator(
                list_attributes=self.enabled("DRAListTypeAttributes"),
                consumable_capacity=self.enabled("DRAConsumableCapacity"),
            )
        return self._evaluator

    @evaluator.setter
    def evaluator(self, value: Any) -> None:
        self._evaluator = value
        self.compiled.clear()
        self.match_cache.clear()
        self._memo.clear()

    def memo(self) -> ClearingCache[Hashable, Any]:
        """A scratch cache for derived results, emptied whenever the state changes (`version`) and
        bounded by bytes (callers estimate their entries)."""
        if self._memo_version != self.version:
            self._memo.clear()
            self._memo_version = self.version
        return self._memo

    def remember_match(self, key: tuple[Hashable, int], value: Any, nbytes: int) -> None:
        self.match_cache.put(key, value, nbytes)

    def pools_for(self, node: NodeInfo, meter: Meter | None = None) -> list[Pool]:
        """The gathered pools of one node (cached until a relevant slice or the node changes); `meter`
        is ticked per slice looked at."""
        tick = meter.tick if meter is not None else None
        pools = self._gathered.get(node.name)
        if pools is None:
            cands: list[SliceRec] = []
            if node.name is not None:
                cands.extend(self.node_slices.get(node.name, {}).values())
            cands.extend(self.shared_slices.values())
            pools = gather(
                cands,
                node,
                self.pool_slices,
                partitionable=self.enabled("DRAPartitionableDevices"),
                groups_enabled=self.enabled("DRADeviceCompatibilityGroups"),
                tick=tick,
            )
            self._gathered[node.name] = pools
            for p in pools:
                self._pool_nodes.setdefault(p.id, set()).add(node.name)
        for p in pools:
            p.refresh(self.allocated, tick)
        return pools

    def candidate_nodes(self) -> list[NodeInfo]:
        """Node objects if there are any (sorted by name; the list is cached until a Node changes, so
        treat it as read-only); else every nodeName used by slices plus one anonymous node."""
        if self.nodes:
            if self._sorted_nodes is None:
                self._sorted_nodes = [self.nodes[n] for n in sorted(self.nodes)]
            return self._sorted_nodes
        named = [NodeInfo(n) for n in sorted(n for n, s in self.node_slices.items() if s)]
        per_device = sorted(
            {
                d.node_name
                for s in self.shared_slices.values()
                if s.per_device
                for d in s.devices
                if d.node_name
            }
            - {n.name for n in named}
        )
        anonymous = [NodeInfo(None)] if self.shared_slices or not named else []
        return named + [NodeInfo(n) for n in per_device] + anonymous

    def node(self, name: str) -> NodeInfo:
        return self.nodes.get(name) or (NodeInfo(name) if not self.nodes else NodeInfo(name, known=True))

    def device_taints(self, d: DeviceRec) -> tuple[dict[str, Any], ...]:
        """Slice taints plus those of matching DeviceTaintRules (absent selector = no devices)."""
        if not self.taint_rules or not self.enabled("DRADeviceTaintRules"):
            return d.taints
        hit = self._taints.get(d.key)
        if hit is not None and hit[0] == self.rules_version:
            return hit[1]
        driver, pool, name = d.id
        index = self._rule_index()
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
        self._taints[d.key] = (self.rules_version, taints)
        return taints

    def _rule_index(
        self,
    ) -> dict[tuple[str | None, str | None, str | None], list[tuple[str, dict[str, Any]]]]:
        """DeviceTaintRules by (driver, pool, device) of their selector (None = any), rebuilt when a rule
        changes: a device looks up the 8 keys that can match it instead of walking every rule."""
        if self._rules_index_version != self.rules_version:
            index: dict[tuple[str | None, str | None, str | None], list[tuple[str, dict[str, Any]]]] = {}
            for rule, (sel, taint) in self.taint_rules.items():
                if sel is None:
                    continue  # absent selector: no devices
                key = (sel.get("driver") or None, sel.get("pool") or None, sel.get("device") or None)
                index.setdefault(key, []).append((rule, taint))
            self._rules_index = index
            self._rules_index_version = self.rules_version
        return self._rules_index

    def device_class(self, name: str) -> dict[str, Any] | None:
        return self.classes.get(name)

    def class_for_extended_resource(self, resource: str) -> str | None:
        """The class serving an extended resource: explicit name (newest creationTimestamp wins, then the
        smaller class name), else the implicit `deviceclass.resource.kubernetes.io/<class>`."""
        best: tuple[str, str] | None = None
        for name, obj in self.classes.items():
            if (obj.get("spec") or {}).get("extendedResourceName") != resource:
                continue
            created = str((obj.get("metadata") or {}).get("creationTimestamp") or "")
            if best is None or created > best[0] or (created == best[0] and name < best[1]):
                best = (created, name)
        if best is not None:
            return best[1]
        prefix = "deviceclass.resource.kubernetes.io/"
        if resource.startswith(prefix) and resource[len(prefix) :] in self.classes:
            return resource[len(prefix) :]
        return None
