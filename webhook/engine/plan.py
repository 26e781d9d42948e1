"""One candidate node of an allocation call: its pools (listed when first asked), the search's promise
for it and, once searched, how far the search got and why it failed. Made by the allocator
(webhook/engine/allocate.py), read by the explanation (explain.py, causes.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from webhook.model.budget import Meter
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool
from webhook.state.view import ClusterView


@dataclass(eq=False, slots=True)
class NodePlan:
    node: NodeInfo
    state: ClusterView
    meter: Meter
    promise: float = 0.0
    feasible_bound: bool = True
    failure: str = ""
    depth: int = 0  # searched: the most devices the search placed at once (how far it got)
    _pools: Sequence[Pool] | None = None

    @property
    def pools(self) -> Sequence[Pool]:
        if self._pools is None:
            self._pools = self.state.pools_for(self.node, self.meter)
        return self._pools
