"""Pre-computing at startup what the first requests would otherwise pay: a hook for long-running callers.

`warm_up(state)` allocates, for each DeviceClass of the state, one device of that class: the class
selectors are compiled and evaluated on every device (the evaluator keeps the results per device), and
the selector results and candidate counts of that request shape are cached for every node. Those caches
are shared by every later version of the state (webhook.state.shared), so a server calls it once after
its first publish (and may call it again after a large reload). Pass `claims` to warm request shapes of
your own. Bounded like any allocate() call (`budget`, `deadline`).
"""

from __future__ import annotations

from typing import Any

from webhook.engine.allocate import allocate
from webhook.engine.outcome import Budget, Deadline, Outcome


def class_claims(state: Any) -> list[dict[str, Any]]:
    """One claim per DeviceClass of `state` (a view or a ClusterState), asking for one device of it."""
    view = state.view
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"warm-up-{name}", "namespace": "draguard-warm-up"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": name}}]}},
        }
        for name in view.inventory.class_names()
    ]


def warm_up(
    state: Any,
    claims: list[dict[str, Any]] | None = None,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
) -> list[Outcome]:
    """Allocate each claim on its own (default: `class_claims(state)`); the answers are discarded by
    callers that only want the caches filled."""
    return [allocate(state, [c], budget=budget, deadline=deadline) for c in claims or class_claims(state)]
