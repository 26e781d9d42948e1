"""Where `simulate` puts a Pod among the nodes it fits on: the default scheduler profile's scores for
what draguard knows — NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation over the
cpu and memory of Node `status.allocatable` and Pod requests, and DynamicResources' prioritized-list
score — or first fit in node-name order (`pack`).

The scores port upstream's integer math (pkg/scheduler/framework/plugins/noderesources): scores 0..100
per plugin, weights 1, LeastAllocated over the non-zero requests (a container that requests no cpu or
memory counts 100m / 200Mi, pkg/scheduler/util), BalancedAllocation over the requests as written and
skipped for a Pod that requests neither (best effort). A resource a node does not list (allocatable 0)
is left out of both, as upstream leaves it out. Upstream picks at random among equal top scores; here
the first node in name order wins, so a run is reproducible. Other score plugins of the default profile
(TaintToleration, NodeAffinity preferences, PodTopologySpread, InterPodAffinity, ImageLocality) are not
modelled: every node ties on them. Scores never rule a node out: NodeResourcesFit's Filter (a Pod whose
requests exceed a node's free cpu or memory) is not modelled either, the safe side for a verdict."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from webhook.model.plain import as_dict, as_list
from webhook.model.quantity import parse_quantity

Placement = Literal["spread", "pack"]
PLACEMENTS: tuple[Placement, ...] = ("spread", "pack")
DEFAULT_PLACEMENT: Placement = "spread"

MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util: what a container without a cpu request counts
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # ... and without a memory request (200Mi)
FIRST_AVAILABLE_MAX = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
TERMINAL_PHASES = ("Succeeded", "Failed")  # their requests no longer count on the node


@dataclass(frozen=True)
class Resources:
    """Milli-CPU and bytes of memory (upstream's MilliValue() and Value(), rounded up)."""

    cpu: int = 0
    memory: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory)


def _amount(value: Any, resource: str) -> int:
    """One quantity as the scheduler counts it; 0 for one the API server would not have stored."""
    try:
        q = parse_quantity(value)
        return q.milli_value() if resource == "cpu" else q.int_value()
    except (ValueError, OverflowError):
        return 0


def _list_of(resources: Any) -> dict[str, int]:
    """The cpu and memory entries of a ResourceList that are present (absent ≠ 0: see non-zero)."""
    out: dict[str, int] = {}
    for name in ("cpu", "memory"):
        if name in as_dict(resources):
            out[name] = _amount(resources[name], name)
    return out


def _container_requests(container: Any, nonzero: bool) -> Resources:
    """A container's requests as stored (a limit without a request defaults the request to it), with
    upstream's non-zero defaults for a resource it does not request when `nonzero`."""
    res = as_dict(as_dict(container).get("resources"))
    got = {**_list_of(res.get("limits")), **_list_of(res.get("requests"))}
    if nonzero:
        got.setdefault("cpu", DEFAULT_MILLI_CPU_REQUEST)
        got.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    return Resources(got.get("cpu", 0), got.get("memory", 0))


def _max(a: Resources, b: Resources) -> Resources:
    return Resources(max(a.cpu, b.cpu), max(a.memory, b.memory))


def pod_requests(pod: Mapping[str, Any], nonzero: bool) -> Resources:
    """A Pod's cpu and memory requests as component-helpers' PodRequests sums them: the containers,
    restartable (sidecar) init containers added, the largest of the other init containers if larger,
    pod-level requests where set (PodLevelResources, on by default), plus the overhead. `nonzero`:
    LeastAllocated's view, with 100m / 200Mi for what a container does not request."""
    spec = as_dict(pod.get("spec"))
    total = Resources()
    for c in as_list(spec.get("containers")):
        total += _container_requests(c, nonzero)
    sidecars = Resources()
    init_max = Resources()
    for c in as_list(spec.get("initContainers")):
        req = _container_requests(c, nonzero)
        if as_dict(c).get("restartPolicy") == "Always":
            total += req
            sidecars += req
            init_max = _max(init_max, sidecars)
        else:
            init_max = _max(init_max, req + sidecars)
    total = _max(total, init_max)
    pod_level = _list_of(as_dict(spec.get("resources")).get("requests"))
    total = Resources(pod_level.get("cpu", total.cpu), pod_level.get("memory", total.memory))
    overhead = _list_of(spec.get("overhead"))
    return total + Resources(overhead.get("cpu", 0), overhead.get("memory", 0))


def node_allocatable(node: Mapping[str, Any]) -> Resources:
    """A Node's `status.allocatable` cpu and memory (0 where it lists none)."""
    listed = _list_of(as_dict(node.get("status")).get("allocatable"))
    return Resources(listed.get("cpu", 0), listed.get("memory", 0))


def least_allocated(requested: Resources, allocatable: Resources) -> int:
    """NodeResourcesFit's LeastAllocated score (cpu and memory, weight 1 each): the free share of each
    resource the node lists, after the Pod, averaged; 0 for a resource requested beyond allocatable."""
    total = weights = 0
    for req, cap in ((requested.cpu, allocatable.cpu), (requested.memory, allocatable.memory)):
        if cap == 0:
            continue
        total += 0 if req > cap else (cap - req) * MAX_NODE_SCORE // cap
        weights += 1
    return total // weights if weights else 0


def balanced_allocation(requested: Resources, allocatable: Resources) -> int:
    """NodeResourcesBalancedAllocation: (1 - the standard deviation of the requested shares of the
    resources the node lists, each capped at 1) × 100, truncated as Go's int64() does."""
    fractions = [
        min(float(req) / float(cap), 1.0)
        for req, cap in ((requested.cpu, allocatable.cpu), (requested.memory, allocatable.memory))
        if cap != 0
    ]
    std = math.fabs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1 - std) * float(MAX_NODE_SCORE))


NodeState = tuple[Resources, Resources, Resources]  # allocatable, requested, non-zero requested
_UNLISTED: NodeState = (Resources(), Resources(), Resources())  # a node without a Node object
KEPT_PODS = 8  # score tables kept, one per kind of Pod (its requests), most recent first


def _score(requested: Resources, nonzero: Resources, node: NodeState) -> int:
    """LeastAllocated (non-zero requests) + BalancedAllocation (requests; skipped for a best-effort
    Pod) of one node for one Pod."""
    allocatable, on_node, nonzero_on_node = node
    score = least_allocated(nonzero_on_node + nonzero, allocatable)
    if requested.cpu or requested.memory:
        score += balanced_allocation(on_node + requested, allocatable)
    return score


class Spread:
    """The cpu and memory of every Node, what the Pods placed so far request on each, and the score
    of a node for the next Pod. A Pod is counted once, on the node it was last bound to. The scores of
    the last few kinds of Pods (by their requests) are kept and only the nodes a Pod was bound to since
    are scored again: placing a thousand alike Pods on a thousand nodes costs a thousand node scores
    after the first table, not a million."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]]) -> None:
        self._nodes: dict[str, NodeState] = {}
        for node in nodes:
            name = as_dict(node.get("metadata")).get("name")
            if isinstance(name, str) and name:
                self._nodes[name] = (node_allocatable(node), Resources(), Resources())
        self._bound: dict[tuple[str, str], tuple[str, Resources, Resources]] = {}
        self._tables: dict[tuple[Resources, Resources], tuple[dict[str, int], set[str]]] = {}

    def bind(self, pod: Mapping[str, Any], node: str | None) -> None:
        """`pod` runs on `node` from now on (replacing where it ran before, if it was bound)."""
        meta = as_dict(pod.get("metadata"))
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        earlier = self._bound.pop(key, None)
        if earlier is not None and earlier[0] in self._nodes:
            self._add(earlier[0], Resources() - earlier[1], Resources() - earlier[2])
        if node is None or node not in self._nodes:
            return  # a node without a Node object lists no allocatable: nothing to score against
        requested, nonzero = pod_requests(pod, False), pod_requests(pod, True)
        self._add(node, requested, nonzero)
        self._bound[key] = (node, requested, nonzero)

    def _add(self, name: str, requested: Resources, nonzero: Resources) -> None:
        allocatable, on_node, nonzero_on_node = self._nodes[name]
        self._nodes[name] = (allocatable, on_node + requested, nonzero_on_node + nonzero)
        for _, dirty in self._tables.values():
            dirty.add(name)

    def bind_running(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """The input's Pods that already run somewhere (`spec.nodeName`, not finished)."""
        for pod in pods:
            node = as_dict(pod.get("spec")).get("nodeName")
            phase = as_dict(pod.get("status")).get("phase")
            if isinstance(node, str) and node and phase not in TERMINAL_PHASES:
                self.bind(pod, node)

    def scorer(self, pod: Mapping[str, Any]) -> Callable[[str | None], int]:
        """The node score of `pod` by node name: LeastAllocated + BalancedAllocation (0..200)."""
        requested, nonzero = pod_requests(pod, False), pod_requests(pod, True)
        kind = (requested, nonzero)
        table = self._tables.pop(kind, None)
        if table is None:
            scores = {name: _score(requested, nonzero, node) for name, node in self._nodes.items()}
            table = (scores, set())
        else:
            scores, dirty = table
            for name in dirty:
                scores[name] = _score(requested, nonzero, self._nodes[name])
            dirty.clear()
        self._tables[kind] = table  # the most recent last
        while len(self._tables) > KEPT_PODS:
            del self._tables[next(iter(self._tables))]
        unlisted = _score(requested, nonzero, _UNLISTED)
        return lambda name: scores.get(name, unlisted) if name is not None else unlisted


def prioritized_requests(claims: Sequence[Mapping[str, Any]]) -> int:
    """How many requests of `claims` choose among subrequests (`firstAvailable`)."""
    n = 0
    for claim in claims:
        for r in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
            if as_list(as_dict(r).get("firstAvailable")):
                n += 1
    return n


def prioritized_score(claims: Sequence[Mapping[str, Any]], chosen: Mapping[str, set[str]]) -> int:
    """DynamicResources' raw score of one node's allocation: for each `firstAvailable` request, 8 minus
    the index of the subrequest allocated there. `chosen` maps "namespace/name" of a claim to the
    "request/subrequest" names of its results."""
    score = 0
    for claim in claims:
        meta = as_dict(claim.get("metadata"))
        got = chosen.get(f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}", set())
        for r in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
            r = as_dict(r)
            for i, sub in enumerate(as_list(r.get("firstAvailable"))):
                if f"{r.get('name')}/{as_dict(sub).get('name')}" in got:
                    score += FIRST_AVAILABLE_MAX - i
    return score


def normalized(raw: int, highest: int) -> int:
    """DefaultNormalizeScore: a raw score as a share of the highest of the feasible nodes (0 if none
    scored)."""
    return MAX_NODE_SCORE * raw // highest if highest > 0 else 0
