"""Allocation results as the scheduler writes them: device results, config (FromClass, then FromClaim),
and the allocation's node selector."""

from __future__ import annotations

from typing import Any

from webhook.engine.outcome import ClaimResult, DeviceResult
from webhook.engine.requests import Alt, PreparedClaim
from webhook.engine.search import NodeSearch, Picked
from webhook.model.plain import deep_copy
from webhook.state.nodes import NodeInfo


def _device_result(p: Picked, s: NodeSearch) -> DeviceResult:
    dev = p.cand.dev
    f = s.f
    return DeviceResult(
        request=p.alt.ref,
        driver=dev.id[0],
        pool=dev.id[1],
        device=dev.id[2],
        admin_access=True if p.alt.admin else None,
        consumed_capacity={k: q.canonical() for k, q in p.consumed.items()} if p.consumed else None,
        share_id=p.share_id,
        tolerations=deep_copy(p.alt.tolerations) or None,
        binding_conditions=list(dev.binding_conditions) if f.binding and dev.binding_conditions else None,
        binding_failure_conditions=(
            list(dev.binding_failure_conditions) if f.binding and dev.binding_failure_conditions else None
        ),
        skip_node_operations=(
            list(dev.slice.skip_node_operations)
            if f.node_operations and dev.slice.skip_node_operations
            else None
        ),
    )


def _chosen(pc: PreparedClaim, ci: int, s: NodeSearch) -> list[Alt]:
    return [req.alts[s.selected.get((ci, ri), 0)] for ri, req in enumerate(pc.requests)]


def _config(pc: PreparedClaim, ci: int, s: NodeSearch) -> list[dict[str, Any]]:
    chosen = _chosen(pc, ci, s)
    out: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for alt in chosen:
        cname = alt.device_class.get("metadata", {}).get("name") or alt.class_name
        if cname in by_class:
            for entry in by_class[cname]:
                entry["requests"].append(alt.ref)
            continue
        entries = []
        for c in (alt.device_class.get("spec") or {}).get("config") or []:
            entry = {"source": "FromClass", "requests": [alt.ref], **_device_config(c)}
            entries.append(entry)
            out.append(entry)
        by_class[cname] = entries
    for c in pc.config:
        reqs = [str(r) for r in c.get("requests") or []]
        if not reqs:
            out.append({"source": "FromClaim", **_device_config(c)})
            continue
        for alt in chosen:
            if alt.base in reqs or (alt.parent and alt.ref in reqs):
                out.append({"source": "FromClaim", "requests": list(reqs), **_device_config(c)})
                break
    for entry in out:
        listed = entry.get("requests")
        if listed and all(a.base in listed or a.ref in listed for a in chosen):
            del entry["requests"]
    return out


def _device_config(c: dict[str, Any]) -> dict[str, Any]:
    return {k: deep_copy(v) for k, v in c.items() if k not in ("requests", "source")}


def _add_requirements(src: list[Any], dst: list[Any]) -> None:
    for r in src or []:
        if r not in dst:
            dst.append(deep_copy(r))


def node_selector(picks: list[Picked], node: NodeInfo) -> dict[str, Any] | None:
    """Pinned to the node if any device is node-local or binds to the node; else the merged single term
    of every device's or slice's nodeSelector; None = usable on every node."""
    fields: list[Any] = []
    exprs: list[Any] = []
    for p in picks:
        dev = p.cand.dev
        sl = dev.slice
        name, sel = (dev.node_name, dev.node_selector) if sl.per_device else (sl.node_name, sl.node_selector)
        if name or dev.binds_to_node:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node.name or ""]}]}
                ]
            }
        terms = (sel or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            _add_requirements(terms[0].get("matchFields"), fields)
            _add_requirements(terms[0].get("matchExpressions"), exprs)
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def claim_results(s: NodeSearch) -> list[ClaimResult]:
    out = []
    for ci, pc in enumerate(s.claims):
        picks = s.results[ci]
        results = [_device_result(p, s) for p in picks]
        devices: dict[str, Any] = {"results": [r.to_api() for r in results]}
        config = _config(pc, ci, s)
        if config:
            devices["config"] = config
        allocation: dict[str, Any] = {"devices": devices}
        sel = node_selector(picks, s.node)
        if sel is not None:
            allocation["nodeSelector"] = sel
        out.append(ClaimResult(pc.namespace, pc.name, results, allocation))
    return out
