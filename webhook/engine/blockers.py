"""What keeps a (sub)request's matching devices from it on given nodes: the allocated claims that hold
them — exclusively, by shares of a device's capacity, or by drawing on the counter set a device needs —
and the device taints the request does not tolerate. `draguard explain pod` names these holders and
taints, and tries releasing each holder or tolerating each taint (webhook/simulate/podchanges.py).

Each device is taken at its first blocker in the allocator's eligibility order (`eligibility.blocker`):
a device both in use and tainted counts as in use, as the explanation's funnel counts it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webhook.engine.causes import claim_label, holders
from webhook.engine.eligibility import CAPACITY, COUNTERS, IN_USE, TAINTED, blocker, counter_block
from webhook.engine.outcome import Budget, Deadline
from webhook.engine.requests import EngineError, Features, blocking_taint, prepare
from webhook.engine.selectors import selectable
from webhook.model.budget import Meter, OutOfBudget
from webhook.model.records import DeviceID
from webhook.state.pools import Pool
from webhook.state.view import ClusterView, HasView


@dataclass(frozen=True)
class NodeBlockers:
    """On one node, what keeps one (sub)request's matching devices from it."""

    claim: str  # the requesting claim, "ns/name"
    request: str  # the request, or "request/subrequest"
    node: str | None
    held: dict[str, int]  # holding claim "ns/name" -> its devices (or shares) that keep devices away
    taints: tuple[dict[str, Any], ...]  # the distinct taints not tolerated, first seen first


@dataclass(frozen=True)
class Blockers:
    found: list[NodeBlockers]
    complete: bool  # False: the budget or deadline ran out first (or the claims could not be prepared)


def blockers(
    state: HasView,
    claims: list[dict[str, Any]],
    nodes: Sequence[str | None],
    *,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
) -> Blockers:
    """Per (sub)request of `claims` and per node of `nodes` (names of candidate nodes; others are
    skipped), the holders and taints that keep its matching devices from it. Bounded by `budget` and
    `deadline`: what was found when either runs out is returned with `complete` False."""
    view = state.view
    meter = Meter(budget or Budget(), deadline)
    f = Features.of(view)
    wanted = set(nodes)
    found: list[NodeBlockers] = []
    try:
        prepared = prepare(view, claims, f, meter.tick)
        cands = [n for n in view.candidate_nodes() if n.name in wanted]
        for pc in prepared:
            for req in pc.requests:
                for alt in req.alts:
                    for node in cands:
                        meter.check()  # the clock once per request and node: a small budget stops here
                        exclusive: set[DeviceID] = set()
                        shared: set[DeviceID] = set()
                        sets: set[tuple[Pool, str]] = set()
                        taints: dict[str, dict[str, Any]] = {}
                        for p, d, err in selectable(view, alt, view.pools_for(node, meter), node, f, meter):
                            if (
                                err is not None
                            ):  # its selector fails on it: not a match (the error is the answer)
                                continue
                            why = blocker(view, alt, p, d, f)
                            if why == IN_USE:
                                exclusive.add(d.id)
                            elif why == CAPACITY:
                                shared.add(d.id)
                            elif why == COUNTERS:
                                name = counter_block(p, d)
                                if name is not None:
                                    sets.add((p, name))
                            elif why == TAINTED:
                                t = blocking_taint(view.device_taints(d), alt.tolerations)
                                if t is not None:
                                    taints.setdefault(_taint_key(t), t)
                        held = holders(view, exclusive | _consumers(sets, meter))
                        held.update(_sharers(view, shared, meter))
                        ranked = dict(sorted(held.items(), key=lambda kv: (-kv[1], kv[0])))
                        found.append(
                            NodeBlockers(pc.label, alt.ref, node.name, ranked, tuple(taints.values()))
                        )
    except (OutOfBudget, EngineError):
        return Blockers(found, False)
    return Blockers(found, True)


def _taint_key(t: dict[str, Any]) -> str:
    return f"{t.get('key')}={t.get('value') or ''}:{t.get('effect')}"


def _consumers(sets: set[tuple[Pool, str]], meter: Meter) -> set[DeviceID]:
    """The devices of each pool that draw on the named counter set (their holders hold the counters)."""
    out: set[DeviceID] = set()
    for pool, name in sets:
        for s in pool.all_slices():
            meter.tick()
            out.update(d.id for d in s.devices if any(c.counter_set == name for c in d.consumes))
    return out


def _sharers(view: ClusterView, devices: set[DeviceID], meter: Meter) -> Counter[str]:
    """The allocated claims holding a share of (or capacity on) some of `devices`, with how many."""
    out: Counter[str] = Counter()
    if not devices:
        return out
    for key, alloc in view.allocated.claims.items():
        meter.tick()
        hit = {d for d, _ in alloc.shared if d in devices} | {d for d, _ in alloc.capacity if d in devices}
        if hit:
            out[claim_label(key)] += len(hit)
    return out
