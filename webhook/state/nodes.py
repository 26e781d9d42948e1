"""Nodes as the allocator sees them, and core/v1 NodeSelector matching (terms ORed, requirements ANDed).

A node known only by name (no Node object in the state) has unknown labels: label requirements are
then assumed satisfiable, `metadata.name` field requirements are still checked. The anonymous node
(name None) stands for "some node" when the state has no Node objects at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhook.model.plain import as_dict


@dataclass(frozen=True, slots=True)
class NodeInfo:
    name: str | None
    labels: dict[str, str] = field(default_factory=dict)
    declared_features: frozenset[str] = frozenset()
    known: bool = False  # built from a Node object (labels are authoritative)


def node_from_object(obj: dict[str, Any]) -> NodeInfo:
    """A Node's name, labels and declared features (fields of the wrong type count as absent)."""
    meta = as_dict(obj.get("metadata"))
    status = as_dict(obj.get("status"))
    labels = {str(k): str(v) for k, v in as_dict(meta.get("labels")).items()}
    labels.setdefault("kubernetes.io/hostname", str(meta.get("name") or ""))
    declared = status.get("declaredFeatures")
    feats = frozenset(f for f in (declared if isinstance(declared, list) else []) if isinstance(f, str))
    return NodeInfo(str(meta.get("name") or ""), labels, feats, True)


def _int(s: str) -> int | None:
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def _requirement(req: dict[str, Any], value: str | None, known: bool) -> bool:
    op = req.get("operator")
    values = [str(v) for v in (req.get("values") or [])]
    if not known:
        return True
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        a, b = _int(value), _int(values[0])
        if a is None or b is None:
            return False
        return a > b if op == "Gt" else a < b
    return False


def term_matches(term: dict[str, Any], node: NodeInfo) -> bool:
    """One NodeSelectorTerm; a term without requirements matches no node (upstream)."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    for r in exprs:
        if not _requirement(r, node.labels.get(str(r.get("key"))), node.known):
            return False
    for r in fields:
        if r.get("key") != "metadata.name":
            return False
        if node.name is None:
            continue  # the anonymous node may be any node
        if not _requirement(r, node.name, True):
            return False
    return True


def selector_matches(selector: dict[str, Any] | None, node: NodeInfo) -> bool:
    """A NodeSelector: any term matches. None matches nothing here (callers decide what absent means)."""
    if not selector:
        return False
    return any(term_matches(t or {}, node) for t in selector.get("nodeSelectorTerms") or [])


def node_fields_match(
    node_name: str | None, all_nodes: bool, selector: dict[str, Any] | None, node: NodeInfo
) -> bool:
    """Upstream NodeMatches: nodeName equal, allNodes, or the selector matches."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector_matches(selector, node)
    return False


def pod_allows(pod: dict[str, Any], node: NodeInfo) -> bool:
    """Whether a Pod's nodeName / nodeSelector / required node affinity admit `node`."""
    spec = pod.get("spec") or {}
    want = spec.get("nodeName")
    if want and node.name != want:
        return False
    for k, v in (spec.get("nodeSelector") or {}).items():
        if node.known and node.labels.get(str(k)) != str(v):
            return False
    aff = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if isinstance(aff, dict) and aff.get("nodeSelectorTerms"):
        return selector_matches(aff, node)
    return True
