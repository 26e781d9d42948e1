"""How many devices an `allocationMode: All` request would take on a cluster state, without allocating.

Upstream's allocator gives such a request every device that matches it (the class's selectors and the
request's) in the pools the chosen node can reach, allocated or not (one already allocated makes the
allocation fail, not smaller). Which node the scheduler picks is not known at admission, so the answer
is the most any candidate node would give: the count a per-claim or per-Pod device limit must allow.
Pools that are incomplete or invalid are not counted (upstream's allocation fails on such a node).

None when it cannot be told: the class does not exist, a selector fails to evaluate on a device,
counters too large to compute, or the budget ran out. Callers treat None as unknown (a warning, never a denial).
"""

from __future__ import annotations

from typing import Any

from webhook.engine.requests import EngineError, Features, prepare
from webhook.engine.selectors import selectable
from webhook.model.bignum import TooLarge
from webhook.model.budget import Budget, Deadline, Meter, OutOfBudget
from webhook.state.view import HasView

BUDGET = Budget(steps=50_000, seconds=0.25)  # one request: a selector over every device of every node


def all_mode_count(
    state: HasView, request: dict[str, Any], budget: Budget = BUDGET, deadline: Deadline | None = None
) -> int | None:
    """The most devices the (sub)request `request` (`exactly` or one `firstAvailable` entry, with
    `allocationMode: All`) would take on any candidate node of `state`; None when unknown (module
    docstring)."""
    view = state.view
    f = Features.of(view)
    claim = {"metadata": {}, "spec": {"devices": {"requests": [{"name": "all", "exactly": request}]}}}
    meter = Meter(budget, deadline)
    try:
        (prepared,) = prepare(view, [claim], f, meter.tick)
        alt = prepared.requests[0].alts[0]
        most = 0
        for node in view.candidate_nodes():
            meter.tick()
            pools = view.pools_for(node, meter)
            n = 0
            for _, _, error in selectable(view, alt, pools, node, f, meter):
                if error is not None:
                    return None
                n += 1
            most = max(most, n)
        return most
    except (EngineError, OutOfBudget, TooLarge):
        return None
