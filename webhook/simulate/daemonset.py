"""Which nodes a DaemonSet runs a Pod on, as its controller decides (NodeShouldRunDaemonPod): the
template's nodeName, nodeSelector and required node affinity must admit the node, and every NoSchedule /
NoExecute taint of the node must be tolerated — by the template's tolerations plus those the controller
adds to every daemon Pod. Each daemon Pod is then pinned to its node by node affinity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.model.plain import as_dict, as_list, deep_copy
from webhook.model.text import listing
from webhook.state.nodes import NodeInfo, node_from_object, selector_matches

# AddOrUpdateDaemonPodTolerations: (key, effect); hostNetwork Pods also tolerate network-unavailable.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")
BLOCKING = ("NoSchedule", "NoExecute")


def daemon_tolerations(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's tolerations and the ones the DaemonSet controller adds (an equal one is kept once)."""
    out = [t for t in as_list(spec.get("tolerations")) if isinstance(t, dict)]
    added = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if spec.get("hostNetwork") is True else [])
    for key, effect in added:
        tol = {"key": key, "operator": "Exists", "effect": effect}
        if not any(_same(t, tol) for t in out):
            out.append(tol)
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("key", "operator", "value", "effect"))


def tolerates(tol: dict[str, Any], taint: dict[str, Any]) -> bool:
    """core/v1 Toleration.ToleratesTaint (operators Equal, empty = Equal, Exists; any other: no match)."""
    effect, key = tol.get("effect") or "", tol.get("key") or ""
    if effect and effect != taint.get("effect"):
        return False
    if key and key != taint.get("key"):
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated(taints: list[Any], tolerations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first NoSchedule/NoExecute taint no toleration matches (FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if not isinstance(taint, dict) or taint.get("effect") not in BLOCKING:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _taint_text(taint: dict[str, Any]) -> str:
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + str(value) if value else ''}:{taint.get('effect')}"


def _labels_text(selector: dict[str, Any]) -> str:
    return listing([f"{k}={v}" for k, v in selector.items()])


def ineligible(spec: dict[str, Any], node: NodeInfo, taints: list[Any]) -> str | None:
    """Why the DaemonSet controller runs no Pod of this template on `node` (None: it runs one). A node
    known only by name (no Node object) has unknown labels and taints: assumed to admit the Pod."""
    want = spec.get("nodeName")
    if isinstance(want, str) and want and want != node.name:
        return f"the template's spec.nodeName is {want}"
    selector = as_dict(spec.get("nodeSelector"))
    if node.known:
        for k, v in selector.items():
            if node.labels.get(str(k)) != str(v):
                return f"spec.nodeSelector {_labels_text(selector)} does not match the node's labels"
    required = as_dict(
        as_dict(as_dict(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    if required.get("nodeSelectorTerms") and not selector_matches(required, node):
        return "the required node affinity does not match the node"
    taint = untolerated(taints, daemon_tolerations(spec))
    if taint is not None:
        return f"taint {_taint_text(taint)} is not tolerated"
    return None


@dataclass(frozen=True)
class DaemonNodes:
    eligible: list[str]  # node names, sorted
    skipped: list[tuple[str, str]]  # (node, why not)
    known: bool  # from Node objects (else: node names the ResourceSlices use, labels unknown)


def daemon_nodes(spec: dict[str, Any], nodes: list[dict[str, Any]], slice_nodes: list[str]) -> DaemonNodes:
    """The nodes the DaemonSet runs on: every Node object in name order, or, when the input has no Node
    objects, every node a ResourceSlice names (labels and taints unknown)."""
    eligible: list[str] = []
    skipped: list[tuple[str, str]] = []
    if nodes:
        by_name: dict[str, dict[str, Any]] = {}
        for obj in nodes:
            by_name.setdefault(str(as_dict(obj.get("metadata")).get("name") or ""), obj)
        for name in sorted(by_name):
            obj = by_name[name]
            why = ineligible(spec, node_from_object(obj), as_list(as_dict(obj.get("spec")).get("taints")))
            if why is None:
                eligible.append(name)
            else:
                skipped.append((name, why))
        return DaemonNodes(eligible, skipped, True)
    for name in sorted(slice_nodes):
        why = ineligible(spec, NodeInfo(name), [])
        if why is None:
            eligible.append(name)
        else:
            skipped.append((name, why))
    return DaemonNodes(eligible, skipped, False)


def pin_to_node(spec: dict[str, Any], node: str) -> dict[str, Any]:
    """The daemon Pod's spec: the controller's tolerations added, and its required node affinity replaced
    by `metadata.name In [node]` (ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    out = deep_copy(spec)
    out["tolerations"] = daemon_tolerations(out)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = dict(as_dict(out.get("affinity")))
    node_affinity = dict(as_dict(affinity.get("nodeAffinity")))
    required = dict(as_dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")))
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    out["affinity"] = affinity
    return out
