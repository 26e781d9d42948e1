"""Cross-slice rules for resource pools: what makes the scheduler treat a pool as incomplete or invalid.

A pool is keyed by (driver, pool name) — two drivers may use the same pool name and never mix. Only
the slices of the highest `pool.generation` count; the pool is complete when their number equals
`resourceSliceCount`. The API server checks none of this (it validates one slice at a time); the
allocator skips incomplete pools and marks a pool invalid for duplicate device or counter-set names
and for `consumesCounters` references that do not resolve inside the pool.

The rules are queries on the cross-object index (webhook.state.inventory): `pool_findings` checks one
pool of an inventory (once per version), `slice_findings` one slice as if it replaced its older version
(an admission request): work in proportion to the pool, never to the cluster.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webhook.config.context import Context
from webhook.model.cache import short_input_cache
from webhook.model.path import Path
from webhook.model.quantity import parse_quantity
from webhook.model.records import PoolID, SliceRec
from webhook.model.text import clip, listing
from webhook.rules.registry import InventoryFinding, inventory_rule
from webhook.state.inventory import Inventory, Key

KINDS = ("ResourceSlice",)


@dataclass
class PoolView:
    """The slices of one (driver, pool), split by generation. Positions are indexes into `keys` (the
    members' order: the input's order in a validate run; an object under admission comes last)."""

    driver: str
    pool: str
    where: str = "the input"
    keys: list[Any] = field(default_factory=list)  # position -> object key
    generation: int = 0  # highest generation seen
    current: list[tuple[int, SliceRec]] = field(default_factory=list)  # slices at that generation
    older: list[tuple[int, SliceRec]] = field(default_factory=list)
    # counter sets published at the current generation: name -> (position, set index, {counter: qty})
    sets: dict[str, tuple[int, int, dict[str, str]]] = field(default_factory=dict)
    older_sets: dict[str, tuple[int, SliceRec]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f'pool "{clip(self.pool)}" of driver {clip(self.driver)}'

    @property
    def expected(self) -> int:
        """resourceSliceCount (the largest one, if slices of the generation disagree)."""
        return max((s.slice_count for _, s in self.current), default=1)

    @property
    def present(self) -> int:
        """Distinct slices at the current generation (the same slice name twice counts once)."""
        return len({s.name or f"#{pos}" for pos, s in self.current})

    @property
    def all_in_input(self) -> bool:
        """Every slice of the current generation is in the input, so a missing reference is certain."""
        return self.present >= self.expected


def view_of(members: list[tuple[Any, SliceRec]], where: str = "the input") -> PoolView:
    """The view of one pool's slices, in the given order."""
    first = members[0][1]
    view = PoolView(first.driver, first.pool, where, [k for k, _ in members], first.generation)
    for pos, (_, rec) in enumerate(members):
        if rec.generation > view.generation:
            view.older.extend(view.current)
            view.current = []
            view.generation = max(view.generation, rec.generation)
        if rec.generation == view.generation:
            view.current.append((pos, rec))
        else:
            view.older.append((pos, rec))
    view.older.sort(key=lambda item: item[0])
    for pos, rec in view.current:
        for j, (name, texts) in enumerate(zip((n for n, _ in rec.counter_sets), rec.set_texts, strict=True)):
            view.sets.setdefault(name, (pos, j, dict(texts)))
    for pos, rec in view.older:
        for name, _ in rec.counter_sets:
            view.older_sets.setdefault(name, (pos, rec))
    return view


def _consumption_path(i: int, j: int) -> Path:
    return Path("spec").child("devices").index(i).child("consumesCounters").index(j)


def _slice_name(rec: SliceRec) -> str:
    return f'"{clip(rec.name)}"' if rec.name else "(unnamed)"


@dataclass(frozen=True)
class _Ref:
    pos: int
    path: Path
    message: str


def _analyse_refs(view: PoolView) -> tuple[list[_Ref], list[_Ref], list[_Ref]]:
    """(errors, unchecked, exceeding) over every consumesCounters reference of the current slices."""
    errors: list[_Ref] = []
    unchecked: list[_Ref] = []
    exceeding: list[_Ref] = []
    # (counter set, counters as written) -> within what the set defines: the devices of a partitioned
    # GPU consume the same few profiles, so each is compared once per pool, not once per device
    within: dict[tuple[str, tuple[tuple[str, str], ...]], bool] = {}
    for pos, rec in view.current:
        for i, device in enumerate(rec.devices):
            for j, use in enumerate(device.consumes):
                found = view.sets.get(use.counter_set)
                if found is None:
                    _missing_set(view, pos, _consumption_path(i, j), use.counter_set, errors, unchecked)
                    continue
                key = (use.counter_set, use.texts)
                ok = within.get(key)
                if ok is None:
                    defined = found[2]
                    ok = within[key] = all(c in defined and not _exceeds(q, defined[c]) for c, q in use.texts)
                if ok:
                    continue  # the usual case: nothing to report, no paths built
                _check_counters(
                    view,
                    pos,
                    _consumption_path(i, j),
                    device.name,
                    use.counter_set,
                    use.texts,
                    found,
                    errors,
                    exceeding,
                )
    return errors, unchecked, exceeding


def _missing_set(
    view: PoolView, pos: int, base: Path, name: str, errors: list[_Ref], unchecked: list[_Ref]
) -> None:
    path = base.child("counterSet")
    if view.all_in_input:
        older = view.older_sets.get(name)
        hint = (
            f" (only slice {_slice_name(older[1])} of the older generation {older[1].generation} has it, and the "
            "scheduler ignores older generations)"
            if older
            else ""
        )
        errors.append(
            _Ref(
                pos,
                path,
                (
                    f'Invalid value: "{clip(name)}": no slice of {view.label} at generation {view.generation} publishes this '
                    f"counter set{hint}; the scheduler treats the whole pool as invalid and allocates nothing from it. "
                    "Publish the counter set in a slice of the same pool and generation, or fix the name"
                ),
            )
        )
    else:
        unchecked.append(
            _Ref(
                pos,
                path,
                (
                    f'counter set "{clip(name)}" is not in the slices of {view.label} in {view.where}: {view.where} holds '
                    f"{view.present} of {view.expected} slices at generation {view.generation}, so this reference "
                    f"could not be checked (it may be published by a slice that is not in {view.where})"
                ),
            )
        )


@short_input_cache(4096)
def _exceeds(need: str, have: str) -> bool:
    """Whether quantity `need` is more than `have` (malformed quantities: False, reported elsewhere)."""
    try:
        return parse_quantity(need) > parse_quantity(have)
    except (ValueError, TypeError):
        return False


def _check_counters(
    view: PoolView,
    pos: int,
    base: Path,
    device: str,
    set_name: str,
    counters: tuple[tuple[str, str], ...],
    found: tuple[int, int, dict[str, str]],
    errors: list[_Ref],
    exceeding: list[_Ref],
) -> None:
    defined = found[2]
    for counter, qty in counters:
        path = base.child("counters").key(counter)
        if counter not in defined:
            known = listing(sorted(defined), limit=32) or "none"
            errors.append(
                _Ref(
                    pos,
                    path,
                    (
                        f'Invalid value: "{clip(counter)}": counter set "{clip(set_name)}" of {view.label} has no such counter '
                        f"(it defines: {known}); the scheduler treats the whole pool as invalid"
                    ),
                )
            )
            continue
        if _exceeds(qty, defined[counter]):
            exceeding.append(
                _Ref(
                    pos,
                    path,
                    (
                        f'device "{clip(device)}" consumes {clip(qty)} of counter "{clip(counter)}" but counter set "{clip(set_name)}" of '
                        f"{view.label} only has {defined[counter]}: this device can never be allocated"
                    ),
                )
            )


Found = tuple[int, Path, str]  # (position in the view, field, message)


def _completeness(view: PoolView) -> Iterator[Found]:
    present, expected = view.present, view.expected
    if present == expected:
        return
    pos = view.current[0][0]
    path = Path("spec").child("pool").child("resourceSliceCount")
    if present < expected:
        msg = (
            f"{view.label}: {view.where} holds {present} of {expected} slices at generation {view.generation}; "
            "the scheduler allocates only from complete pools, so the other slices must exist in the cluster"
        )
    else:
        msg = (
            f"{view.label} has {present} slices at generation {view.generation} but resourceSliceCount is "
            f"{expected}: the scheduler treats the pool as incomplete and never allocates from it; publish "
            "exactly resourceSliceCount slices per generation"
        )
    yield pos, path, msg


def _generation(view: PoolView) -> Iterator[Found]:
    newest = view.current[0][1]
    for pos, rec in view.older:
        yield (
            pos,
            Path("spec").child("pool").child("generation"),
            (
                f"generation {rec.generation} is older than generation {view.generation} of slice "
                f"{_slice_name(newest)} in {view.label}: the scheduler ignores this slice (drivers replace "
                "all slices of a pool when they bump the generation)"
            ),
        )
    counts = Tally(rec.slice_count for _, rec in view.current)
    if len(counts) < 2:
        return
    usual = max(counts, key=lambda c: (counts[c], -[r.slice_count for _, r in view.current].index(c)))
    example = next(rec for _, rec in view.current if rec.slice_count == usual)
    for pos, rec in view.current:
        if rec.slice_count != usual:
            yield (
                pos,
                Path("spec").child("pool").child("resourceSliceCount"),
                (
                    f"resourceSliceCount {rec.slice_count} differs from {usual} in slice {_slice_name(example)} "
                    f"of the same generation {view.generation} of {view.label}: all slices of a generation "
                    "must agree, or the scheduler may treat the pool as incomplete"
                ),
            )


def _duplicate_device(view: PoolView) -> Iterator[Found]:
    seen: dict[str, SliceRec] = {}
    for pos, rec in view.current:
        names_here = set()
        for i, device in enumerate(rec.devices):
            if not device.name or device.name in names_here:
                continue  # duplicates inside one slice are the API server's (single-object) error
            names_here.add(device.name)
            first = seen.setdefault(device.name, rec)
            if first is not rec and (not rec.name or first.name != rec.name):
                yield (
                    pos,
                    Path("spec").child("devices").index(i).child("name"),
                    (
                        f'Duplicate value: "{clip(device.name)}": slice {_slice_name(first)} of {view.label} at '
                        f"generation {view.generation} already has a device of this name; the scheduler "
                        "marks the whole pool invalid"
                    ),
                )


def _duplicate_counter_set(view: PoolView) -> Iterator[Found]:
    by_pos = dict(view.current)
    for pos, rec in view.current:
        for j, (name, _) in enumerate(rec.counter_sets):
            first_pos = view.sets.get(name, (pos, j, {}))[0]
            if not name or first_pos == pos:
                continue
            first = by_pos[first_pos]
            if rec.name and first.name == rec.name:
                continue  # the same slice twice in the input, not two slices
            yield (
                pos,
                Path("spec").child("sharedCounters").index(j).child("name"),
                (
                    f'Duplicate value: "{clip(name)}": slice {_slice_name(first)} of {view.label} at generation '
                    f"{view.generation} already publishes a counter set of this name; the scheduler marks the "
                    "whole pool invalid"
                ),
            )


REF_RULES = ("pool.counter-set-ref", "pool.unchecked", "pool.counter-exceeds-set")
# the other rules' check of one pool
CHECKS: dict[str, Callable[[PoolView], Iterator[Found]]] = {
    "pool.completeness": _completeness,
    "pool.generation": _generation,
    "pool.duplicate-device": _duplicate_device,
    "pool.duplicate-counter-set": _duplicate_counter_set,
}


def _all_findings(view: PoolView) -> dict[str, list[InventoryFinding]]:
    """Every pool rule's findings on one pool, by rule id, naming objects by their keys."""
    refs = _analyse_refs(view)
    found: dict[str, Iterable[Found]] = {
        rule_id: [(r.pos, r.path, r.message) for r in refs[i]] for i, rule_id in enumerate(REF_RULES)
    }
    found.update((rule_id, check(view)) for rule_id, check in CHECKS.items())
    out: dict[str, list[InventoryFinding]] = {}
    for rule_id, items in found.items():
        got = [InventoryFinding(view.keys[pos], path, msg) for pos, path, msg in items]
        if got:
            out[rule_id] = got
    return out


def pool_findings(inventory: Inventory, pool: PoolID) -> dict[str, list[InventoryFinding]]:
    """Every pool rule's findings for one pool of the inventory, by rule id (once per version)."""

    def compute(inv: Inventory) -> dict[str, list[InventoryFinding]]:
        members = inv.pool_members(pool)
        return _all_findings(view_of(members, inv.where)) if members else {}

    return inventory.memo(("pool", pool), compute)


def slice_findings(
    inventory: Inventory, key: Key, rec: SliceRec, replaces: Iterable[Key] = ()
) -> dict[str, list[InventoryFinding]]:
    """The pool rules' findings on one slice `rec` as if it were stored under `key`, replacing the objects
    `replaces` (and `key`): its pool's other slices come first, it comes last. Work ∝ its pool."""
    drop = {key, *replaces}
    members = [(k, r) for k, r in inventory.pool_members(rec.pool_id) if k not in drop]
    members.append((key, rec))
    found = _all_findings(view_of(members, inventory.where))
    out = {}
    for rule_id, items in found.items():
        mine = [f for f in items if f.index == key]
        if mine:
            out[rule_id] = mine
    return out


def _registered(rule_id: str) -> Callable[[Inventory, Any], Iterator[InventoryFinding]]:
    def run(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
        for pool in inventory.pool_ids():
            yield from pool_findings(inventory, pool).get(rule_id, ())

    return run


counter_set_ref = inventory_rule("pool.counter-set-ref")(_registered("pool.counter-set-ref"))

unchecked = inventory_rule("pool.unchecked")(_registered("pool.unchecked"))

counter_exceeds_set = inventory_rule("pool.counter-exceeds-set")(_registered("pool.counter-exceeds-set"))

completeness = inventory_rule("pool.completeness")(_registered("pool.completeness"))

generation = inventory_rule("pool.generation")(_registered("pool.generation"))

duplicate_device = inventory_rule("pool.duplicate-device")(_registered("pool.duplicate-device"))

duplicate_counter_set = inventory_rule("pool.duplicate-counter-set")(
    _registered("pool.duplicate-counter-set")
)
