"""Cluster state for the allocation engine and the cross-object rules: the index of every object's
record (`inventory`), one writer (`StateStore`), immutable published versions (`Snapshot`, `StateView`),
and `ClusterState`, the single-threaded convenience.

The names below are imported when first used, so that reading the index (`webhook.state.inventory`, as
every `validate` run does) does not load the store and the views."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webhook.state.cluster import ClusterState
    from webhook.state.nodes import NodeInfo
    from webhook.state.pools import Pool
    from webhook.state.store import Snapshot, StateStore
    from webhook.state.view import StateView

__all__ = ["ClusterState", "NodeInfo", "Pool", "Snapshot", "StateStore", "StateView"]

_HOMES = {
    "ClusterState": "webhook.state.cluster",
    "NodeInfo": "webhook.state.nodes",
    "Pool": "webhook.state.pools",
    "Snapshot": "webhook.state.store",
    "StateStore": "webhook.state.store",
    "StateView": "webhook.state.view",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'webhook.state' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
