"""Depth-first allocation of several claims on one node (upstream allocateOne / allocateDevice).

Claims in order → requests in spec order → devices in pool/slice/device order, only in increasing
position within one request; `firstAvailable` subrequests in list order with full backtracking; "All"
requests take their pre-collected devices in full. Every placement records exactly what it reserved
(counters, groups, constraint values, marks, capacity, result) and undoes exactly that (#140436).
Admin access neither needs nor consumes counters nor joins compatibility groups (#140729, as PR #140806
intends; the July 2026 snapshot still reserved counters).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from webhook.engine import capacity as cap
from webhook.engine.constraints import Constraint
from webhook.engine.requests import MAX_RESULTS, Alt, EngineError, Features, PreparedClaim, blocking_taint
from webhook.engine.selectors import Candidate, candidates
from webhook.model.bignum import Nano
from webhook.model.budget import Meter, OutOfBudget
from webhook.model.quantity import Quantity
from webhook.model.records import nano
from webhook.state.nodes import NodeInfo
from webhook.state.pools import GroupState, Pool, add_group, group_admits
from webhook.state.view import ClusterView

FAIL, OK, EXCEEDED = 0, 1, 2

__all__ = ["NodeSearch", "OutOfBudget"]

Signature = tuple[tuple[str, ...], tuple[str, ...]]  # (class selectors, request selectors)

# One level of the search: it yields the arguments of a deeper level and receives that level's result.
Level = Generator[tuple[int, int, int, int, bool, int], int, int]


@dataclass(slots=True)
class Picked:
    alt: Alt
    cand: Candidate
    share_id: str | None
    consumed: dict[str, Quantity] | None


def stable_share_id(claim: str, position: int, device: tuple[str, ...]) -> str:
    """The shareID of one share of a multi-allocatable device: a UUID (version 4 layout, as upstream's
    random ones) derived from the claim, the result's position in it and the device, so that the same
    input gives the same allocation byte for byte. Two shares never get the same one: a claim's results
    have distinct positions, and claims have distinct names."""
    seed = "\x00".join((claim, str(position), *device)).encode()
    return str(uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4))


class NodeSearch:
    """One allocation attempt for all claims on one node."""

    def __init__(
        self,
        state: ClusterView,
        claims: list[PreparedClaim],
        node: NodeInfo,
        pools: Sequence[Pool],
        features: Features,
        steps: Meter,
    ) -> None:
        self.state = state
        self.claims = claims
        self.node = node
        self.pools = pools
        self.f = features
        self.steps = steps
        self.exclusive = state.allocated.exclusive
        self.agg_capacity = state.allocated.capacity
        self.allocating: dict[tuple[str, str, str], set[int]] = {}
        self.allocating_cap: dict[tuple[str, str, str], dict[str, Nano]] = {}
        self.consumed: dict[tuple[str, str], dict[str, dict[str, Nano]]] = {}
        self.groups: dict[tuple[tuple[str, str], str], GroupState] = {}
        self.constraints = [
            [Constraint(c, features.list_attributes) for c in pc.constraints] for pc in claims
        ]
        self.results: list[list[Picked]] = [[] for _ in claims]
        self.selected: dict[tuple[int, int], int] = {}
        self.cands: dict[Signature, list[Candidate]] = {}
        self.index_of: dict[Signature, dict[tuple[str, str, str], int]] = {}  # device -> index in cands
        self.free_from: dict[Signature, int] = {}  # every candidate before it is taken
        self.all_devices: dict[int, list[Candidate]] = {}
        self.num: dict[int, int] = {}
        self.placed = 0  # devices placed in the current branch of the search
        self.deepest = 0  # the most devices placed at once: how far a failed search got (explanations)

    # --- preparation -----------------------------------------------------------------------------
    def cands_of(self, alt: Alt) -> list[Candidate]:
        """The selectable devices for `alt` on this node; (sub)requests with the same selectors share
        one list (thousands of one-device claims of one class must not build thousands of lists)."""
        got = self.cands.get(alt.signature)
        if got is None:
            got = candidates(self.state, alt, self.pools, self.node, self.f, self.steps)
            self.cands[alt.signature] = got
            self.index_of[alt.signature] = {c.dev.id: i for i, c in enumerate(got)}
        return got

    def prepare(self) -> None:
        """Per-node part of upstream's request validation: "All" pre-collection and the 32-results cap."""
        for pc in self.claims:
            self.steps.tick()
            minimum = 0
            for req in pc.requests:
                lows = []
                for alt in req.alts:
                    if alt.all_mode:
                        self.all_devices[id(alt)] = self._collect_all(pc, alt)
                        self.num[id(alt)] = len(self.all_devices[id(alt)])
                    else:
                        self.num[id(alt)] = alt.count
                    lows.append(self.num[id(alt)])
                minimum += min(lows)
            if minimum > MAX_RESULTS:
                raise EngineError(
                    f"claim {pc.label}: number of requested devices {minimum} exceeds the claim limit of {MAX_RESULTS}",
                    claim=pc.label,
                )

    def _collect_all(self, pc: PreparedClaim, alt: Alt) -> list[Candidate]:
        for p in self.pools:
            if p.incomplete:
                raise EngineError(
                    f"claim {pc.label}, request {alt.ref}: asks for all devices, but resource pool "
                    f"{p.id[0]}/{p.id[1]} is currently being updated",
                    "waits",
                )
            if p.invalid:
                raise EngineError(
                    f"claim {pc.label}, request {alt.ref}: asks for all devices, but resource pool "
                    f"{p.id[0]}/{p.id[1]} is currently invalid"
                )
        out = []
        tick = self.steps.tick
        for c in self.cands_of(alt):
            tick()
            c.raise_error(pc, alt)
            if self.f.consumable_capacity:
                use = cap.consumed(alt.capacity, c.dev)
                if not cap.fits(use, c.dev, self.agg_capacity.get(c.dev.id), None):
                    continue
            out.append(c)
        return out

    # --- search ----------------------------------------------------------------------------------
    def run(self) -> bool:
        self.prepare()
        return self._drive((0, 0, 0, 0, False, 0)) == OK

    def _drive(self, args: tuple[int, int, int, int, bool, int]) -> int:
        """Run `one` without recursion: each level is a generator on an explicit stack, so the depth
        (claims + requests + devices: thousands for a Pod with thousands of claims) needs no C stack."""
        stack: list[Level] = [self.one(*args)]
        result = 0
        send: int | None = None
        tick = self.steps.tick
        while stack:
            tick()
            try:
                sub = stack[-1].send(send)  # type: ignore[arg-type]
            except StopIteration as done:
                stack.pop()
                send = result = done.value
                continue
            stack.append(self.one(*sub))
            send = None
        return result

    def one(self, ci: int, ri: int, si: int, di: int, sub_mode: bool, start: int) -> Level:
        """The search from claim `ci`, request `ri`, subrequest `si`, device `di` on (candidates from
        `start`): OK, FAIL or EXCEEDED. `r = yield args` is a call of the next level (see `_drive`)."""
        if ci >= len(self.claims):
            return OK
        pc = self.claims[ci]
        if ri >= len(pc.requests):
            r = yield (ci + 1, 0, 0, 0, False, 0)
            return FAIL if r == EXCEEDED else r
        req = pc.requests[ri]
        if req.is_parent and not sub_mode:
            all_exceeded = True
            for s in range(len(req.alts)):
                r = yield (ci, ri, s, 0, True, 0)
                if r == EXCEEDED:
                    continue
                all_exceeded = False
                if r == OK:
                    self.selected[(ci, ri)] = s
                    return OK
            return EXCEEDED if all_exceeded else FAIL
        alt = req.alts[si]
        num = self.num[id(alt)]
        if alt.all_mode and num == 0:
            return FAIL
        if di >= num:
            r = yield (ci, ri + 1, 0, 0, False, 0)
            return r
        if len(self.results[ci]) + num - di > MAX_RESULTS:
            return EXCEEDED
        if alt.all_mode:
            c = self.all_devices[id(alt)][di]
            undo = self.place(ci, alt, c, True)
            if undo is None:
                return FAIL
            r = yield (ci, ri, si, di + 1, sub_mode, 0)
            if r != OK:
                undo()
            return r
        cands = self.cands_of(alt)
        admin = alt.admin
        tick = self.steps.tick
        sig = alt.signature
        # Candidates before free_from[sig] are all taken (allocated or being allocated): skip them, so
        # that thousands of one-device claims do not rescan each other's devices (quadratic).
        hint = self.free_from.get(sig, 0)
        advance = not admin and start <= hint
        for k in range(start if admin else max(start, hint), len(cands)):
            tick()
            c = cands[k]
            dev = c.dev
            if admin:
                holders = self.allocating.get(dev.id)
                if holders and ci in holders:
                    continue
            elif dev.id in self.exclusive or self.allocating.get(dev.id):
                continue
            elif advance:
                self.free_from[sig] = k
                advance = False
            c.raise_error(pc, alt)
            use = None
            if self.f.consumable_capacity:
                use = cap.consumed(alt.capacity, dev)
                if not cap.fits(use, dev, self.agg_capacity.get(dev.id), self.allocating_cap.get(dev.id)):
                    continue
            undo = self.place(ci, alt, c, False, use)
            if undo is None:
                continue
            r = yield (ci, ri, si, di + 1, sub_mode, k + 1)
            if r == OK:
                return OK
            undo()
            if r == EXCEEDED:
                return EXCEEDED
        return FAIL

    def place(self, ci: int, alt: Alt, c: Candidate, must: bool, use: Any = None) -> Any:
        """allocateDevice: returns an undo function, or None when the device cannot be used."""
        self.steps.take()
        dev = c.dev
        f = self.f
        multi = f.consumable_capacity and dev.allow_multi
        admin = alt.admin
        if not multi and admin:
            holders = self.allocating.get(dev.id)
            if holders and ci in holders:
                return None
        if not admin and (dev.id in self.exclusive or self.allocating.get(dev.id)):
            return None
        if dev.consumes and not f.partitionable:
            return None
        pool = c.pool
        skip_counters = admin or (multi and (dev.id in self.agg_capacity or dev.id in self.allocating_cap))
        reserved = False
        pushed_groups: list[tuple[tuple[tuple[str, str], str], GroupState | None]] = []
        if not skip_counters and dev.consumes:
            if not self._reserve(pool, dev.consumes):
                return None
            reserved = True
            if f.groups:
                for cons in dev.consumes:
                    key = (pool.id, cons.counter_set)
                    before = self.groups.get(key)
                    g = before if before is not None else pool.groups.get(cons.counter_set)
                    if not group_admits(g, cons.groups):
                        self._restore_groups(pushed_groups)
                        self._release(pool, dev.consumes)
                        return None
                    pushed_groups.append((key, before))
                    self.groups[key] = add_group(g or GroupState(), cons.groups)
        if f.taints and blocking_taint(self.state.device_taints(dev), alt.tolerations) is not None:
            self._rollback(pool, dev, reserved, pushed_groups, ci, alt, 0)
            return None
        added = 0
        base, ref = alt.base, alt.ref
        for con in self.constraints[ci]:
            if not con.add(base, ref, dev):
                self._rollback(pool, dev, reserved, pushed_groups, ci, alt, added)
                if must:
                    raise EngineError(
                        f"claim {self.claims[ci].label}, request {alt.ref}: cannot add device "
                        f"{'/'.join(dev.id)} because a claim constraint would not be satisfied"
                    )
                return None
            added += 1
        marked = False
        if not multi:
            self.allocating.setdefault(dev.id, set()).add(ci)
            marked = True
        share_id = None
        consumed_now = None
        cap_inserted = False
        if f.consumable_capacity:
            if use is None:
                use = cap.consumed(alt.capacity, dev)
            if not cap.fits(use, dev, self.agg_capacity.get(dev.id), self.allocating_cap.get(dev.id)):
                if marked:
                    self.allocating[dev.id].discard(ci)
                self._rollback(pool, dev, reserved, pushed_groups, ci, alt, added)
                return None
            if multi:
                consumed_now = use
                share_id = stable_share_id(self.claims[ci].label, len(self.results[ci]), dev.id)
                entry = self.allocating_cap.setdefault(dev.id, {})
                for name, q in use.items():
                    entry[name] = entry.get(name, 0) + nano(q)
                cap_inserted = True
        results = self.results[ci]
        results.append(Picked(alt, c, share_id, consumed_now))
        self.placed += 1
        if self.placed > self.deepest:
            self.deepest = self.placed

        def undo() -> None:
            results.pop()
            self.placed -= 1
            if cap_inserted and consumed_now is not None:
                entry = self.allocating_cap[dev.id]
                for name, q in consumed_now.items():
                    entry[name] -= nano(q)
                # The entry stays (possibly all zeros) while another share holds it, like upstream.
                if not any(p.cand.dev is dev and p.share_id for r in self.results for p in r):
                    del self.allocating_cap[dev.id]
            if marked:
                holders = self.allocating[dev.id]
                holders.discard(ci)
                if not holders:
                    self._freed(dev.id)
            self._rollback(pool, dev, reserved, pushed_groups, ci, alt, added)

        return undo

    def _freed(self, dev_id: tuple[str, str, str]) -> None:
        """A device is free again: lower the free_from hints of the candidate lists holding it."""
        for sig, at in self.index_of.items():
            i = at.get(dev_id)
            if i is not None and i < self.free_from.get(sig, 0):
                self.free_from[sig] = i

    def _rollback(
        self, pool: Pool, dev: Any, reserved: bool, pushed: list[Any], ci: int, alt: Alt, added: int
    ) -> None:
        cons = self.constraints[ci]
        for i in range(added - 1, -1, -1):
            cons[i].remove(alt.base, alt.ref)
        self._restore_groups(pushed)
        if reserved:
            self._release(pool, dev.consumes)

    def _restore_groups(self, pushed: list[Any]) -> None:
        for key, before in reversed(pushed):
            if before is None:
                self.groups.pop(key, None)
            else:
                self.groups[key] = before
        pushed.clear()

    def _reserve(self, pool: Pool, consumes: Any) -> bool:
        """Add the device's consumption; keep it only if no counter of the pool goes over."""
        used = self.consumed.setdefault(pool.id, {})
        for c in consumes:
            sets = used.setdefault(c.counter_set, {})
            for counter, v in c.counters:
                sets[counter] = sets.get(counter, 0) + v
        ok = not pool.over_committed
        if ok:
            avail = pool.available
            for c in consumes:
                have = avail.get(c.counter_set, {})
                sets = used[c.counter_set]
                for counter, _ in c.counters:
                    if counter in have and sets[counter] > have[counter]:
                        ok = False
                        break
                if not ok:
                    break
        if not ok:
            self._release(pool, consumes)
        return ok

    def _release(self, pool: Pool, consumes: Any) -> None:
        used = self.consumed[pool.id]
        for c in consumes:
            sets = used[c.counter_set]
            for counter, v in c.counters:
                sets[counter] -= v
