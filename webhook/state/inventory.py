"""The cross-object index: records (webhook.model.records) by object key, and the secondary indexes the
cross-object rules and the allocation engine query — slices by pool, by node and node-independent,
DeviceClasses by name and by extended resource name, claims and templates by name.

An `Inventory` is immutable: `evolve()` gives a builder whose `put`/`remove` change only the entries an
object touches (persistent maps with structural sharing, `immutables.Map`), and `finish()` gives the next
version. Keys are whatever identifies an object in its source: the position in the input for a
`draguard validate` run (`Inventory(records)`; two documents with the same name are two objects), or
(kind, namespace, name) in a cluster state (webhook.state.store; an object replaces its older version).

Queries cost work in proportion to the pool or the names they touch. `memo()` holds results derived
from one version (filled with single dictionary operations of pure values: safe from any thread).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

from immutables import Map

from webhook.model.records import ClaimRec, ClassRec, PodRec, PoolID, Record, SliceRec, parse_record

T = TypeVar("T")
Key = Hashable

__all__ = ["Inventory", "InventoryBuilder", "Key", "extract_record"]


def extract_record(obj: Any, index: int = 0) -> Record | None:
    """The record `draguard validate` keeps per object (`index`: its position, kept by the caller):
    pool facts without the allocator's per-device detail; None for kinds no cross-object rule uses and
    for slices without a driver or pool name (nothing to check across slices)."""
    rec = parse_record(obj, 0, None, detail=False)
    if isinstance(rec, SliceRec) and (not rec.driver or not rec.pool):
        return None
    return rec


_EMPTY: Map[Any, Any] = Map()


def _kind(rec: Record) -> str:
    return (
        "ResourceSlice"
        if isinstance(rec, SliceRec)
        else ("DeviceClass" if isinstance(rec, ClassRec) else rec.kind)
    )


class Inventory:
    """One version of the index (see the module docstring). `where` names the source in messages
    ("the input", "the cluster state")."""

    __slots__ = (
        "where",
        "records",
        "pools",
        "node_slices",
        "shared_slices",
        "classes",
        "erns",
        "claim_names",
        "counts",
        "_memo",
    )

    def __init__(self, records: Iterable[Record | None] = (), where: str = "the input") -> None:
        self.where = where
        self.records: Map[Key, Record] = _EMPTY
        self.pools: Map[PoolID, Map[Key, SliceRec]] = _EMPTY
        self.node_slices: Map[str, Map[Key, SliceRec]] = _EMPTY
        self.shared_slices: Map[Key, SliceRec] = _EMPTY
        self.classes: Map[str, Map[Key, ClassRec]] = _EMPTY
        self.erns: Map[str, Map[Key, ClassRec]] = _EMPTY
        self.claim_names: Map[tuple[str, str], Map[Key, str | None]] = _EMPTY
        self.counts: Map[str, int] = _EMPTY
        self._memo: dict[Hashable, Any] = {}
        if records:
            b = self.evolve()
            for i, rec in enumerate(records):
                if rec is not None:
                    b.put(i, rec)
            b.finish(self)

    def evolve(self) -> InventoryBuilder:
        """A builder of the next version (this one is not changed)."""
        return InventoryBuilder(self)

    # --- queries ---------------------------------------------------------------------------------
    def record(self, key: Key) -> Record | None:
        return self.records.get(key)

    def count(self, kind: str) -> int:
        return self.counts.get(kind, 0)

    def has_kind(self, kind: str) -> bool:
        return self.counts.get(kind, 0) > 0

    def of_kind(self, kind: str) -> Iterator[tuple[Key, Any]]:
        """(key, record) of every record of `kind`, in key order (the input's order in a validate run)."""
        if not self.has_kind(kind):
            return iter(())
        found = [(k, r) for k, r in self.records.items() if _kind(r) == kind]
        found.sort(key=lambda kr: kr[0])  # type: ignore[arg-type,return-value]
        return iter(found)

    def pool_members(self, pool: PoolID) -> list[tuple[Key, SliceRec]]:
        """The slices of one (driver, pool) in key order."""
        members = self.pools.get(pool)
        if members is None:
            return []
        return sorted(members.items(), key=lambda kr: kr[0])  # type: ignore[arg-type,return-value]

    def pool_ids(self) -> list[PoolID]:
        """Every pool, in the order of its first slice's key (computed once per version)."""
        return self.memo("pool-ids", _pool_order)

    def class_names(self) -> list[str]:
        """The names of every DeviceClass, sorted (computed once per version)."""
        return self.memo("class-names", lambda inv: sorted(n for n in inv.classes if n))

    def classes_with_ern(self, ern: str) -> list[tuple[Key, ClassRec]]:
        members = self.erns.get(ern)
        return sorted(members.items(), key=lambda kr: kr[0]) if members else []  # type: ignore[arg-type,return-value]

    def erns_in_use(self) -> list[str]:
        return sorted(self.erns)

    def class_named(self, name: str) -> ClassRec | None:
        """The DeviceClass of that name (the first by key if the input has several)."""
        members = self.classes.get(name)
        if not members:
            return None
        if len(members) == 1:
            return next(iter(members.values()))
        return min(members.items(), key=lambda kr: kr[0])[1]  # type: ignore[arg-type,return-value]

    def claim_namespaces(self, kind: str, name: str) -> list[str | None]:
        """Namespaces of the ResourceClaims (or ResourceClaimTemplates) named `name`, in key order."""
        members = self.claim_names.get((kind, name))
        if not members:
            return []
        return [ns for _, ns in sorted(members.items(), key=lambda kr: kr[0])]  # type: ignore[arg-type,return-value]

    def memo(self, key: Hashable, compute: Callable[[Inventory], T]) -> T:
        """A result derived from this version, computed once (concurrent first calls may both compute
        it; the value is pure, so either is right)."""
        hit = self._memo.get(key, _MISSING)
        if hit is _MISSING:
            hit = compute(self)
            self._memo[key] = hit
        return hit  # type: ignore[no-any-return]


_MISSING = object()


def _pool_order(inv: Inventory) -> list[PoolID]:
    first: list[tuple[Any, PoolID]] = []
    for pid, members in inv.pools.items():
        first.append((min(members.keys()), pid))  # type: ignore[type-var]
    first.sort(key=lambda fp: fp[0])
    return [pid for _, pid in first]


def _add(m: Any, outer: Hashable, key: Key, value: Any) -> Any:
    inner = m.get(outer)
    m[outer] = (inner if inner is not None else _EMPTY).set(key, value)
    return m


def _drop(m: Any, outer: Hashable, key: Key) -> None:
    inner = m.get(outer)
    if inner is None or key not in inner:
        return
    inner = inner.delete(key)
    if inner:
        m[outer] = inner
    else:
        del m[outer]


class InventoryBuilder:
    """Changes to one Inventory version; `finish()` makes the next version (work ∝ the changes)."""

    def __init__(self, base: Inventory) -> None:
        self.where = base.where
        self.records = base.records.mutate()
        self.pools = base.pools.mutate()
        self.node_slices = base.node_slices.mutate()
        self.shared_slices = base.shared_slices.mutate()
        self.classes = base.classes.mutate()
        self.erns = base.erns.mutate()
        self.claim_names = base.claim_names.mutate()
        self.counts = base.counts.mutate()

    def get(self, key: Key) -> Record | None:
        return self.records.get(key)

    def put(self, key: Key, rec: Record) -> Record | None:
        """Add or replace the object `key`; returns the record it replaced."""
        old = self.remove(key)
        self.records[key] = rec
        kind = _kind(rec)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if isinstance(rec, SliceRec):
            _add(self.pools, rec.pool_id, key, rec)
            if rec.node_name:
                _add(self.node_slices, rec.node_name, key, rec)
            else:
                self.shared_slices[key] = rec
        elif isinstance(rec, ClassRec):
            _add(self.classes, rec.name, key, rec)
            if rec.extended_resource_name:
                _add(self.erns, rec.extended_resource_name, key, rec)
        elif isinstance(rec, ClaimRec):
            _add(self.claim_names, (rec.kind, rec.name), key, rec.namespace)
        return old

    def remove(self, key: Key) -> Record | None:
        """Remove the object `key` (if present); returns its record."""
        rec = self.records.get(key)
        if rec is None:
            return None
        del self.records[key]
        kind = _kind(rec)
        left = self.counts.get(kind, 1) - 1
        if left > 0:
            self.counts[kind] = left
        else:
            del self.counts[kind]
        if isinstance(rec, SliceRec):
            _drop(self.pools, rec.pool_id, key)
            if rec.node_name:
                _drop(self.node_slices, rec.node_name, key)
            elif key in self.shared_slices:
                del self.shared_slices[key]
        elif isinstance(rec, ClassRec):
            _drop(self.classes, rec.name, key)
            if rec.extended_resource_name:
                _drop(self.erns, rec.extended_resource_name, key)
        elif isinstance(rec, ClaimRec):
            _drop(self.claim_names, (rec.kind, rec.name), key)
        elif isinstance(rec, PodRec):
            pass
        return rec

    def finish(self, into: Inventory | None = None) -> Inventory:
        """The next version (or fill `into`, a new empty Inventory, with it)."""
        inv = into if into is not None else Inventory(where=self.where)
        inv.records = self.records.finish()
        inv.pools = self.pools.finish()
        inv.node_slices = self.node_slices.finish()
        inv.shared_slices = self.shared_slices.finish()
        inv.classes = self.classes.finish()
        inv.erns = self.erns.finish()
        inv.claim_names = self.claim_names.finish()
        inv.counts = self.counts.finish()
        return inv
