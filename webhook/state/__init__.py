"""Cluster state for the allocation engine and the cross-object rules: one writer (`StateStore`), immutable
published versions (`Snapshot`, `StateView`), and `ClusterState`, the single-threaded convenience."""

from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool
from webhook.state.store import Snapshot, StateStore
from webhook.state.view import StateView

__all__ = ["ClusterState", "NodeInfo", "Pool", "Snapshot", "StateStore", "StateView"]
