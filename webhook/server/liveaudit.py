"""`serve --state cluster --audit-interval S`: the background audit, in a process of its own (forked by
`serve()` before gunicorn starts, so the workers never audit and the audit never holds a request).

It watches the DRA kinds, Nodes, Namespaces, Pods and DraguardPolicies with the live state's machinery
into `webhook.audit.objects.AuditObjects`, and runs `webhook.audit.run.audit` on them — the same audit
as `draguard audit` live: the policies in force are `--policy` and the cluster's valid DraguardPolicies.
Rate-limited and driven by the watch: an audit runs when a watch event changed something since the last
one, at most once per interval. What it writes is incremental too: a PolicyReport (per namespace) or the
ClusterPolicyReport is applied (server-side apply) only when its results changed, and deleted when it
has none any more (reports a previous process wrote are found by one LIST at the start). Every report
is bounded (`--audit-max-results`); `draguard_audit_results{result}` counts the last audit's results."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webhook.audit.incremental import IncrementalAudit
from webhook.audit.objects import AuditObjects, ObjectsSnapshot
from webhook.audit.policyreport import API_VERSION, REPORT_NAME, policy_reports
from webhook.audit.results import AuditReport
from webhook.config.policy import PolicySpec
from webhook.server import metrics
from webhook.server.options import ServeOptions
from webhook.state.live import ApiError, KubeClient, LiveState, Unreachable, load_api_client, watched_for
from webhook.state.live.kinds import POLICIES
from webhook.state.live.listing import POD, list_kind

log = logging.getLogger("draguard.audit")

GROUP_PATH = f"/apis/{API_VERSION}"
AUDITED_KINDS = (
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceTaintRule",
    "Node",
    "Namespace",
    "Pod",
)
ReportKey = tuple[str, str]  # (kind, namespace or "")


def report_path(kind: str, namespace: str) -> str:
    if kind == "ClusterPolicyReport":
        return f"{GROUP_PATH}/clusterpolicyreports/{REPORT_NAME}"
    return f"{GROUP_PATH}/namespaces/{namespace}/policyreports/{REPORT_NAME}"


def content(doc: dict[str, Any]) -> str:
    """What decides whether a report changed: everything but the results' timestamps."""
    results = [{k: v for k, v in r.items() if k != "timestamp"} for r in doc.get("results") or []]
    return json.dumps({**doc, "results": results}, sort_keys=True)


@dataclass(frozen=True)
class AuditSettings:
    interval: float  # seconds between two audits at least
    max_results: int
    max_pending_pods: int
    deadline_seconds: float  # one audit


class BackgroundAudit:
    """The watch, the audit thread and the report writer of one process."""

    def __init__(
        self,
        options: ServeOptions,
        settings: AuditSettings,
        base: Sequence[PolicySpec],
        watch_client: KubeClient,
        write_client: KubeClient,
    ) -> None:
        self.options, self.settings, self.base = options, settings, list(base)
        self.objects = AuditObjects()
        self.client = write_client
        self.live = LiveState(
            watch_client,
            self.objects,
            kinds=[*watched_for(options.k8s_version), POD, POLICIES],
            page_size=options.list_page_size,
            watch_timeout=options.watch_timeout_seconds,
            read_timeout=options.watch_read_timeout_seconds,
            what="the audited cluster",
        )
        self.audited = -1  # the version of the objects last audited
        self.written: dict[ReportKey, str] | None = None  # what each report holds now (None: not listed yet)
        self.last: AuditReport | None = None
        self.incremental = IncrementalAudit()  # what the last audit judged, kept for the next
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        for result in ("pass", "fail", "warn", "error", "skip"):
            metrics.AUDIT_RESULTS.labels(result).set(0)
        for outcome in ("applied", "deleted", "error"):
            metrics.AUDIT_REPORT_WRITES.labels(outcome)
        for stage in ("checked", "judged", "explained"):
            metrics.AUDIT_OBJECTS_JUDGED.labels(stage)

    def start(self) -> None:
        self.live.start()
        self.thread = threading.Thread(target=self.loop, name="draguard-audit", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.live.stop(timeout)
        if self.thread is not None:
            self.thread.join(timeout)
        self.client.close()

    def loop(self) -> None:
        while not self._stop.is_set():
            if self.live.ready.wait(0.2):
                started = time.monotonic()
                try:
                    self.run_once()
                except Exception:  # noqa: BLE001 - the next change audits again; the reports stay
                    log.exception("background audit failed; the previous reports stay")
                    metrics.AUDIT_RUNS.labels("error").inc()
                self._stop.wait(max(0.0, self.settings.interval - (time.monotonic() - started)))

    def run_once(self) -> AuditReport | None:
        """Audit the current objects if they changed since the last audit, and write the reports that
        changed (None: nothing changed)."""
        snap = self.objects.snapshot()
        if snap.version == self.audited:
            return None
        report = self.audit(snap)
        self.last = report
        if self.write(policy_reports(report, time.time(), self.settings.max_results)):
            self.audited = snap.version  # else the next interval audits and writes again
        for result, n in report.counts().items():
            metrics.AUDIT_RESULTS.labels(result).set(n)
        metrics.AUDIT_RUNS.labels("ok").inc()
        log.info("audit of version %d: %s", snap.version, report.counts())
        return report

    def audit(self, snap: ObjectsSnapshot) -> AuditReport:
        from webhook.audit.run import AuditOptions
        from webhook.config.policy import combine
        from webhook.config.policyobject import check_policy_object, policy_name
        from webhook.config.profile import load_profile
        from webhook.engine import Budget
        from webhook.model.budget import Deadline
        from webhook.model.catalogue import RULES
        from webhook.state.live.listing import pod_summary

        opts = self.options
        profile = load_profile(opts.k8s_version, dict(opts.feature_gates))
        specs, invalid = list(self.base), []
        for obj in snap.objects("DraguardPolicy").values():
            got = check_policy_object(obj, RULES, profile)
            if isinstance(got, list):
                invalid.append(f"{policy_name(obj)}: {got[0].message}")
            else:
                specs.append(got)
        owners: dict[str, str] = {}
        for s in sorted(specs, key=lambda s: s.name):
            for rule in s.rules:
                if s.name:
                    owners.setdefault(rule, s.name)
        options = AuditOptions(
            version=opts.k8s_version,
            gates=opts.feature_gates,
            policy=combine(specs) if specs else None,
            budget=Budget(steps=opts.budget_steps, seconds=opts.budget_seconds),
            deadline_seconds=self.settings.deadline_seconds,
            search_runs=0,
            jobs=1,
            max_pending_pods=self.settings.max_pending_pods,
            rule_policies=owners,
        )
        deadline = Deadline(time.monotonic() + self.settings.deadline_seconds)
        pods = {k: pod_summary(p) for k, p in snap.objects("Pod").items()}
        report = self.incremental.run(snap.everything(AUDITED_KINDS), options, deadline, pods)
        for stage, n in self.incremental.counts.items():
            metrics.AUDIT_OBJECTS_JUDGED.labels(stage).inc(n)
        report.invalid_policies = invalid
        return report

    def _existing(self) -> dict[ReportKey, str]:
        """The reports a previous process left (draguard's name, any content: replaced or deleted)."""
        out: dict[ReportKey, str] = {}
        for kind, plural in (
            ("PolicyReport", "policyreports"),
            ("ClusterPolicyReport", "clusterpolicyreports"),
        ):
            from webhook.state.live.kinds import WatchedKind

            listed = WatchedKind(kind, API_VERSION, plural, kind == "PolicyReport")
            try:
                items = list_kind(self.client, listed, lambda o: o)
            except ApiError as e:
                if e.status != 404:
                    raise
                items = []
            for item in items:
                meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
                if isinstance(meta, dict) and meta.get("name") == REPORT_NAME:
                    out[(kind, str(meta.get("namespace") or ""))] = ""
        return out

    def write(self, docs: list[dict[str, Any]]) -> bool:
        """Apply the reports whose content changed, delete those with no results any more; whether
        every write was done."""
        if self.written is None:
            self.written = self._existing()
        fresh: dict[ReportKey, str] = {}
        done = True
        for doc in docs:
            key = (str(doc["kind"]), str(doc["metadata"].get("namespace") or ""))
            fresh[key] = text = content(doc)
            if self.written.get(key) == text:
                continue
            if self._send(report_path(*key), doc):
                self.written[key] = text
            else:
                done = False
        for key in [k for k in self.written if k not in fresh]:
            if self._send(report_path(*key), None):
                del self.written[key]
            else:
                done = False
        return done

    def _send(self, path: str, doc: dict[str, Any] | None) -> bool:
        """Apply `doc` at `path` (None: delete what is there); whether it is done (a report already gone
        counts as deleted). A failure is retried by the next audit (the report is not marked written)."""
        outcome = "applied" if doc is not None else "deleted"
        try:
            if doc is not None:
                self.client.apply(path, doc, self.options.field_manager)
            else:
                self.client.delete(path)
        except ApiError as e:
            if doc is None and e.status == 404:
                return True
            metrics.AUDIT_REPORT_WRITES.labels("error").inc()
            log.warning("audit report %s not %s: %s", path, outcome, e)
            return False
        except Unreachable as e:
            metrics.AUDIT_REPORT_WRITES.labels("error").inc()
            log.warning("audit report %s not %s: %s", path, outcome, e)
            return False
        metrics.AUDIT_REPORT_WRITES.labels(outcome).inc()
        return True


def settings_of(options: ServeOptions) -> AuditSettings:
    return AuditSettings(
        interval=options.audit_interval,
        max_results=options.audit_max_results,
        max_pending_pods=options.audit_max_pending_pods,
        deadline_seconds=max(options.audit_interval, 60.0),
    )


def run_audit_process(options: ServeOptions, parent: int) -> None:
    """The forked audit process: audits until SIGTERM or until `parent` (the arbiter) is gone."""
    import signal

    from webhook.server.wiring import load_serve_policy_specs

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    background = BackgroundAudit(
        options,
        settings_of(options),
        load_serve_policy_specs(options),
        KubeClient(load_api_client(options.kubeconfig)),
        KubeClient(load_api_client(options.kubeconfig)),
    )
    background.start()
    log.info("background audit every %g s at most (process %d)", options.audit_interval, os.getpid())
    while not stop.wait(1.0) and os.getppid() == parent:
        pass
    background.stop()


def fork_audit_process(options: ServeOptions) -> int:
    """Fork the audit process (before gunicorn starts: no threads yet); its pid."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            run_audit_process(options, parent)
        except BaseException:  # noqa: BLE001 - the child never returns into the arbiter's code
            log.exception("the background audit process failed")
            code = 1
        finally:
            os._exit(code)
    return pid
