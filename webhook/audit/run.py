"""The audit of a loaded cluster (`webhook.simulate.load.Inputs`, from `--cluster` files or a live
listing): every DRA object's findings sorted by ratcheting (`webhook.audit.ratchet`), then every Pod
pending on DRA grounds explained (`webhook.simulate.explainpod`, no search for changes), at most
`max_pending_pods` of them and all within the run's deadline."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from webhook.admission.config import AdmissionConfig
from webhook.admission.wire import ClusterSnapshot
from webhook.audit.ratchet import Judged, judge
from webhook.audit.results import (
    MAX_PENDING_PODS,
    PASS_RULE,
    SEVERITY,
    AuditReport,
    AuditResult,
    ReportSeverity,
    ResourceRef,
    ResultKind,
)
from webhook.config.policy import Policy
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.keys import DRA_KINDS
from webhook.model.plain import as_dict
from webhook.model.violation import Violation
from webhook.model.workloads import uses_dra
from webhook.simulate.explainpod import ExplainOptions, PodExplanation, Prepared, explain_pod
from webhook.simulate.leftout import CLUSTER_SCOPED
from webhook.simulate.load import Inputs
from webhook.simulate.run import DEADLINE_PASSED
from webhook.state import ClusterState

EXISTING = " (existing violation: the stored object has it, and an update that changes nothing is not denied)"
ObjKey = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


@dataclass(frozen=True, kw_only=True)
class AuditOptions(ExplainOptions):
    max_pending_pods: int = MAX_PENDING_PODS  # Pods pending on DRA grounds explained; the rest skipped
    rule_policies: Mapping[str, str] = field(default_factory=dict)  # rule id -> the policy grading it


def api_version(kind: str) -> str:
    return "resource.k8s.io/v1" if kind in DRA_KINDS else "v1"


def resource_ref(kind: str, namespace: str, name: str, obj: dict[str, Any] | None) -> ResourceRef:
    ref = ResourceRef(apiVersion=api_version(kind), kind=kind, name=name)
    if namespace:
        ref["namespace"] = namespace
    uid = as_dict(as_dict(obj).get("metadata")).get("uid") if obj is not None else None
    if isinstance(uid, str) and uid:
        ref["uid"] = uid
    return ref


def is_pending(pod: dict[str, Any]) -> bool:
    """Waiting for the scheduler: no node bound, not finished."""
    phase = as_dict(pod.get("status")).get("phase")
    return not as_dict(pod.get("spec")).get("nodeName") and phase not in ("Running", "Succeeded", "Failed")


def _objects(data: Inputs) -> dict[ObjKey, dict[str, Any]]:
    out: dict[ObjKey, dict[str, Any]] = {}
    for lo in data.left_out:
        got = lo.obj if lo.obj is not None else lo.raw
        if got is not None:
            out[(lo.kind, lo.namespace or "", lo.name)] = got
    loaded = [*data.claims.values(), *data.templates.values(), *data.pods]
    for obj in [*data.state, *(item.obj for item in loaded)]:
        meta = as_dict(obj.get("metadata"))
        kind = str(obj.get("kind") or "")
        ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or "default")
        out[(kind, ns, str(meta.get("name") or ""))] = obj
    return out


class Kept(Protocol):
    """What an audit that runs again and again keeps between runs (`webhook.audit.incremental`): objects'
    judgements still valid, and the cluster states kept up to date rather than built again."""

    def judged(
        self, key: ObjKey, obj: dict[str, Any] | None, found: list[Violation], judge: Callable[[], Judged]
    ) -> Judged: ...

    def state(self, name: str, objs: list[dict[str, Any]], deadline: Deadline) -> ClusterState: ...


class _Audit:
    def __init__(
        self, data: Inputs, options: AuditOptions, deadline: Deadline, kept: Kept | None = None
    ) -> None:
        self.data, self.options, self.deadline, self.kept = data, options, deadline, kept
        self.policy = options.policy or Policy()
        self.config = AdmissionConfig(profile=options.context(deadline).profile, policy=self.policy)
        self.report = AuditReport(policies=self.policy.sources)
        self._snapshot: ClusterSnapshot | None = None

    def snapshot(self) -> ClusterSnapshot:
        """The audited cluster as the webhook's state holds it (every claim and template too)."""
        if self._snapshot is None:
            d = self.data
            objs = [*d.state, *(i.obj for i in d.pending), *(i.obj for i in d.templates.values())]
            if self.kept is not None:
                state = self.kept.state("admission", objs, self.deadline)
            else:
                state = ClusterState.from_objects(objs, self.config.profile, self.deadline)
            self._snapshot = state.store.snapshot()
        return self._snapshot

    def add(self, ref: ResourceRef, v: Violation, result: ResultKind, existing: bool = False) -> None:
        message = v.message + (EXISTING if existing else "")
        policy = self.options.rule_policies.get(v.rule, "draguard")
        self.report.results.append(
            AuditResult(ref, v.rule, result, SEVERITY[v.severity], message, v.field, policy, existing)
        )

    def objects(self) -> None:
        objects = _objects(self.data)
        for res in self.data.report.objects:
            kind, name = res.kind or "", res.name or ""
            if kind not in (*DRA_KINDS, "Pod") or not name:
                continue
            ns = "" if kind in CLUSTER_SCOPED else (res.namespace or "default")
            obj = objects.get((kind, ns, name))
            if kind == "Pod" and (obj is None or not is_pending(obj) or not uses_dra(obj)):
                continue
            self.report.resources += 1
            ref = resource_ref(kind, ns, name, obj)
            found = res.violations

            def judged_now(
                kind: str = kind, obj: dict[str, Any] | None = obj, found: list[Violation] = found
            ) -> Judged:
                return judge(kind, obj, found, self.snapshot, self.config, self.deadline)

            judged = (
                judged_now()
                if self.kept is None
                else self.kept.judged((kind, ns, name), obj, found, judged_now)
            )
            for v in judged.denied:
                self.add(ref, v, "fail")
            for v in judged.existing:
                self.add(ref, v, "warn", existing=True)
            for v in judged.warnings:
                self.add(ref, v, "warn")
            if not (judged.denied or judged.existing or judged.warnings):
                self.report.results.append(
                    AuditResult(ref, PASS_RULE, "pass", "info", "no finding: every rule in force passes")
                )

    def pending(self) -> Iterator[dict[str, Any]]:
        for item in self.data.pods:
            if is_pending(item.obj) and uses_dra(item.obj):
                yield item.obj

    def pods(self, live: bool, pods: Mapping[tuple[str, str], dict[str, Any]] | None) -> None:
        options = dataclasses.replace(self.options, search_runs=0)
        prepared: Prepared | None = None
        for pod in self.pending():
            self.report.pending_pods += 1
            meta = as_dict(pod.get("metadata"))
            ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
            ref = resource_ref("Pod", ns, name, pod)
            mode = self.policy.feasibility.mode("Pod", ns)

            def skip(why: str, ref: ResourceRef = ref) -> None:
                self.report.results.append(AuditResult(ref, "feasibility.undecided", "skip", "info", why))

            if mode == "off":
                skip("not explained: the policy turns feasibility off for Pods in this namespace")
                continue
            if self.report.explained >= self.options.max_pending_pods or self.deadline.expired():
                why = (
                    f"--max-pending-pods ({self.options.max_pending_pods}) reached"
                    if not self.deadline.expired()
                    else DEADLINE_PASSED
                )
                self.report.incomplete = (
                    self.report.incomplete or f"Pods pending on DRA left unexplained: {why}"
                )
                skip(f"not explained: {why}")
                continue
            if prepared is None:
                try:
                    state = None
                    if self.kept is not None:
                        state = self.kept.state("pods", self.data.state, self.deadline)
                    prepared = Prepared.of(self.data, options, self.deadline, state)
                except OutOfBudget:
                    self.report.incomplete = f"{DEADLINE_PASSED} while the cluster state was built"
                    skip(f"not explained: {self.report.incomplete}")
                    continue
            self.report.explained += 1
            out = explain_pod(
                self.data, ns, name, options, self.deadline, live=live, pods=pods, prepared=prepared
            )
            self.pod_result(ref, mode, out)

    def pod_result(self, ref: ResourceRef, mode: str, out: PodExplanation) -> None:
        """One explained Pod's result: unsatisfiable fails under `enforce` (else warns), busy warns,
        fitting now passes, undecided is an error; a Pod left out (invalid) has its findings already."""
        text = f"{out.summary}: {out.reason}" if out.reason else out.summary
        rule = "feasibility.infeasible"
        result_kind: ResultKind
        sev: ReportSeverity
        if out.status == "does-not-fit" and out.verdict == "unsatisfiable":
            result_kind, sev = ("fail", "high") if mode == "enforce" else ("warn", "medium")
        elif out.status == "does-not-fit":
            rule, result_kind, sev = "feasibility.busy", "warn", "medium"
        elif out.status == "fits":
            result_kind, sev = "pass", "info"
            where = out.node or "any"
            text = f"pending, but its claims fit now (on node {where}): the scheduler has not placed it yet"
        elif out.status == "undecided":
            rule, result_kind, sev = "feasibility.undecided", "error", "info"
        else:
            return
        self.report.results.append(AuditResult(ref, rule, result_kind, sev, text))


def audit(
    data: Inputs,
    options: AuditOptions,
    deadline: Deadline,
    *,
    live: bool = False,
    pods: Mapping[tuple[str, str], dict[str, Any]] | None = None,
    kept: Kept | None = None,
) -> AuditReport:
    """Audit the loaded cluster `data` (module docstring). `pods`: every Pod of a live cluster in short
    (what claims are reserved for); `live`: the objects came from an API server; `kept`: what a
    previous run left that is still valid (`webhook.audit.incremental`)."""
    run = _Audit(data, options, deadline, kept)
    if data.report.not_checked:
        run.report.incomplete = f"{DEADLINE_PASSED} while the cluster was loaded and validated"
        return run.report
    try:
        run.objects()
    except OutOfBudget:
        run.report.incomplete = f"{DEADLINE_PASSED} while the objects were judged"
        return run.report
    run.pods(live, pods)
    return run.report
