"""Pre-computing at startup what the first requests would otherwise pay: a hook for long-running callers.

`warm_up(state)` takes, for each DeviceClass of the state, a claim for one device of that class and
- allocates it (the class selectors are compiled, the search and result code paths run once);
- primes its request shape on every candidate node (`webhook.engine.allocate.prime`): the class
  selectors evaluated on every device (the evaluator keeps the results per device, the per-slice
  results are kept per slice version), the exact number of devices of the class each node could give,
  and each node's part of the explanation of a request that fits nowhere; with `empty_cluster` (the
  default) also in the mode admission asks next when a request fits nowhere now (`allocate(...,
  ignore_allocations=True, ignore_taints=True)`: would it fit on the same cluster with nothing
  allocated?).
Every request whose devices come from one class reuses the per-device selector results; a request with
only class selectors (any count) reuses the counts and the explanation. These caches are shared by every
later version of the state (webhook.state.shared), per node with the node's pools stamp: a server calls
warm_up once after its first publish (and may call it again after a large reload). Pass `claims` to warm
request shapes of your own. Bounded like any allocate() call (`budget`, `deadline`).
"""

from __future__ import annotations

from typing import Any

from webhook.engine.allocate import allocate, prime
from webhook.engine.outcome import Budget, Deadline, Outcome
from webhook.state.view import HasView


def class_claims(state: HasView) -> list[dict[str, Any]]:
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
    state: HasView,
    claims: list[dict[str, Any]] | None = None,
    budget: Budget | None = None,
    deadline: Deadline | None = None,
    empty_cluster: bool = True,
) -> list[Outcome]:
    """Allocate and prime each claim on its own (default: `class_claims(state)`); returns the
    allocations' outcomes (callers that only want the caches filled discard them)."""
    out = []
    for c in claims or class_claims(state):
        out.append(allocate(state, [c], budget=budget, deadline=deadline))
        prime(state, [c], budget=budget, deadline=deadline)
        if empty_cluster:
            prime(state, [c], budget=budget, deadline=deadline, ignore_allocations=True, ignore_taints=True)
    return out
