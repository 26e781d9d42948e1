"""Cluster state for the allocation engine: slices, classes, allocated claims, taint rules, nodes."""

from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool

__all__ = ["ClusterState", "NodeInfo", "Pool"]
