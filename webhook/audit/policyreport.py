"""An audit as `wgpolicyk8s.io/v1alpha2` objects (the schema: schemas/policyreport/): one PolicyReport per
namespace for its namespaced resources, one ClusterPolicyReport for the cluster-scoped ones, each with
at most `max_results` results (failures first, then errors, warnings, skips, passes) and a summary that
counts every result, those cut included (the annotation `draguard.io/results-cut` says how many)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from webhook.audit.results import RESULT_KINDS, SOURCE, AuditReport, AuditResult, ResultKind

API_VERSION = "wgpolicyk8s.io/v1alpha2"
REPORT_NAME = "draguard-audit"
MAX_RESULTS = 1000
CUT = "draguard.io/results-cut"
ORDER = {k: n for n, k in enumerate(("fail", "error", "warn", "skip", "pass"))}
LABELS = {"app.kubernetes.io/managed-by": "draguard", "app.kubernetes.io/name": "draguard"}


class Timestamp(TypedDict):
    seconds: int
    nanos: int


def timestamp(unix: float) -> Timestamp:
    seconds = int(unix)
    return Timestamp(seconds=seconds, nanos=int(round((unix - seconds) * 1e9)) % 1_000_000_000)


def result_entry(r: AuditResult, ts: Timestamp) -> dict[str, Any]:
    """One result as the CRD has it; the field path and ratcheting in `properties` (strings only)."""
    out: dict[str, Any] = {
        "source": SOURCE,
        "policy": r.policy,
        "rule": r.rule,
        "result": r.result,
        "severity": r.severity,
        "category": r.category,
        "message": r.message,
        "scored": r.result != "warn",
        "resources": [dict(r.resource)],
        "timestamp": dict(ts),
    }
    props = {"field": r.field} if r.field else {}
    if r.existing:
        props["existingViolation"] = "true"
    if props:
        out["properties"] = props
    return out


def _summary(results: Iterable[AuditResult]) -> dict[ResultKind, int]:
    counts = dict.fromkeys(RESULT_KINDS, 0)
    for r in results:
        counts[r.result] += 1
    return counts


def report_object(
    namespace: str | None, results: list[AuditResult], ts: Timestamp, max_results: int = MAX_RESULTS
) -> dict[str, Any]:
    """The PolicyReport of `namespace` (None: the ClusterPolicyReport) holding `results`."""
    kept = sorted(results, key=lambda r: ORDER[r.result])[:max_results]
    meta: dict[str, Any] = {"name": REPORT_NAME, "labels": dict(LABELS)}
    if namespace is not None:
        meta["namespace"] = namespace
    cut = len(results) - len(kept)
    if cut:
        left = _summary(sorted(results, key=lambda r: ORDER[r.result])[max_results:])
        what = ", ".join(f"{n} {k}" for k, n in left.items() if n)
        meta["annotations"] = {CUT: f"{cut} results not listed ({what}): at most {max_results} per report"}
    return {
        "apiVersion": API_VERSION,
        "kind": "PolicyReport" if namespace is not None else "ClusterPolicyReport",
        "metadata": meta,
        "summary": _summary(results),
        "results": [result_entry(r, ts) for r in kept],
    }


def policy_reports(report: AuditReport, now: float, max_results: int = MAX_RESULTS) -> list[dict[str, Any]]:
    """The ClusterPolicyReport (when a cluster-scoped resource was audited), then one PolicyReport per
    namespace in name order."""
    ts = timestamp(now)
    cluster: list[AuditResult] = []
    spaces: dict[str, list[AuditResult]] = {}
    for r in report.results:
        if r.namespace:
            spaces.setdefault(r.namespace, []).append(r)
        else:
            cluster.append(r)
    out = [report_object(None, cluster, ts, max_results)] if cluster else []
    out += [report_object(ns, spaces[ns], ts, max_results) for ns in sorted(spaces)]
    return out
