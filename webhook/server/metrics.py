"""Prometheus metrics of the webhook, aggregated over gunicorn's worker processes.

`draguard serve` points PROMETHEUS_MULTIPROC_DIR at a fresh directory before this module is imported, so
every worker writes its samples there and `/metrics` (whichever worker answers) collects all of them;
the arbiter marks exited workers dead (`mark_dead`). Gauges say how they combine across workers. Label
values come from closed sets (`KINDS`, `OPERATIONS`, ...): nothing a request sends can grow the series.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess

__all__ = ["CONTENT_TYPE", "exposition", "kind_label", "mark_dead", "operation_label"]

KINDS = frozenset(
    {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule", "Pod"}
)
OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT"})
VERDICTS = frozenset({"feasible", "busy", "unsatisfiable", "undecided", "skipped"})
ENDPOINTS = frozenset({"validate", "mutate"})
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "draguard_admission_requests",
    "AdmissionReviews answered, by endpoint, object kind, operation and decision "
    "(allowed, denied, error = answered by the failure mode)",
    ["endpoint", "kind", "operation", "decision"],
)
LATENCY = Histogram(
    "draguard_admission_request_duration_seconds",
    "Time from the handler's start to the encoded answer, by endpoint and kind",
    ["endpoint", "kind"],
    buckets=LATENCY_BUCKETS,
)
REJECTED = Counter(
    "draguard_http_rejected_requests",
    "Requests answered without a review: 400 (no AdmissionReview, malformed HTTP), 401 (no client "
    "certificate with --client-ca), 408 (body too slow), "
    "413 (too large), 431 (head too large), 501 (a transfer coding other than chunked)",
    ["endpoint", "code"],
)
CONNECTIONS_OPEN = Gauge(
    "draguard_http_connections",
    "Client connections open (sum over the live workers): handshaking, reading, answering or kept alive",
    multiprocess_mode="livesum",
)
CONNECTIONS_CLOSED = Counter(
    "draguard_http_connections_closed",
    "Client connections closed, by reason: done, idle (keep-alive timeout), read_timeout (handshake, head "
    "or body not complete in --read-timeout), write_timeout, tls_error, evicted (closed to make room at "
    "--max-connections), refused (at --max-connections, every connection busy), bad_request, drained",
    ["reason"],
)
FEASIBILITY = Counter(
    "draguard_feasibility_verdicts",
    "Admission-time feasibility verdicts by kind",
    ["kind", "verdict"],
)
FEASIBILITY_TIME = Histogram(
    "draguard_feasibility_duration_seconds",
    "Time the feasibility check of one request took, by kind",
    ["kind"],
    buckets=LATENCY_BUCKETS,
)
EXTENDED = Counter(
    "draguard_extended_resource_translations",
    "Pod CREATEs with extended resources on the mutating endpoint in --extended-resources translate, by "
    "result: translated, unmapped (no DeviceClass maps them), dryrun (translated, nothing written), error "
    "(a ResourceClaimTemplate could not be applied: the failure mode answered)",
    ["result"],
)
EXTENDED_RESULTS = frozenset({"translated", "unmapped", "dryrun", "error"})
STATE_OBJECTS = Gauge(
    "draguard_state_objects",
    "Objects in the cluster state by kind (the most recently published worker's count)",
    ["kind"],
    multiprocess_mode="livemostrecent",
)
STATE_AGE = Gauge(
    "draguard_state_age_seconds",
    "Seconds since the state was last published (the oldest of the live workers)",
    multiprocess_mode="livemax",
)
STATE_PUBLISHED = Gauge(
    "draguard_state_published_timestamp_seconds",
    "Unix time of the last state publication (the oldest of the live workers)",
    multiprocess_mode="livemin",
)
STATE_INVALID = Gauge(
    "draguard_state_invalid_objects",
    "Objects of the state directory left out because they are invalid (most recent worker)",
    multiprocess_mode="livemostrecent",
)
RELOADS = Counter(
    "draguard_state_reloads",
    "State reloads per worker: ok (published) or error (the previous state stayed)",
    ["result"],
)
RELOAD_TIME = Histogram(
    "draguard_state_reload_duration_seconds",
    "Time of one reload: scan, load of the changed files, replace_all and publish",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
GC_PAUSES = Histogram(
    "draguard_gc_pause_seconds",
    "Pauses of Python's cyclic garbage collector in the workers, by generation",
    ["generation"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
CERT_EXPIRY = Gauge(
    "draguard_tls_certificate_expiry_timestamp_seconds",
    "notAfter of the serving certificate in use, Unix time (the earliest of the live workers)",
    multiprocess_mode="livemin",
)
CERT_RELOADS = Counter(
    "draguard_tls_certificate_reloads",
    "Serving certificate (re)loads: ok, or error (the previous certificate stayed in use)",
    ["result"],
)


# --- the live state (`serve --state cluster`): per worker, every worker watches ---------------------------
WATCH_KINDS = frozenset(
    {
        "ResourceSlice",
        "DeviceClass",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceTaintRule",
        "Node",
        "Namespace",
        "DraguardPolicy",
    }
)
WATCH_EVENTS = Counter(
    "draguard_watch_events",
    "Watch events received, by kind and type (ADDED, MODIFIED, DELETED, BOOKMARK)",
    ["kind", "type"],
)
WATCH_RELISTS = Counter(
    "draguard_watch_relists",
    "LISTs of a kind: initial, expired (410: the watch could not resume), error",
    ["kind", "reason"],
)
WATCH_RESTARTS = Counter(
    "draguard_watch_restarts",
    "Watches reopened from their resourceVersion: timeout (server-side timeout), closed (ended early by "
    "the server), error (refused, broken, or silent for the read timeout)",
    ["kind", "reason"],
)
WATCH_LAST_EVENT = Gauge(
    "draguard_watch_last_event_timestamp_seconds",
    "Unix time of the last event, bookmark or completed list of a kind (the stalest live worker's)",
    ["kind"],
    multiprocess_mode="livemin",
)
STATE_SYNCED = Gauge(
    "draguard_state_synced",
    "1 once the state is loaded: every kind's initial list applied and published (--state cluster), the "
    "directory read and published (--state DIR); the least synced live worker's",
    multiprocess_mode="livemin",
)
EVENT_TO_VISIBLE = Histogram(
    "draguard_watch_event_to_visible_seconds",
    "Time from a watch event's arrival to the publication of the state that contains it",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

# --- DraguardPolicies (`serve --state cluster`): per worker, every worker watches ---------------------------
POLICIES = Gauge(
    "draguard_policies",
    "DraguardPolicy objects by state: in_force (a valid generation is applied), invalid (the current "
    "generation is invalid: the last valid one, if any, stays in force); the most recent worker's",
    ["state"],
    multiprocess_mode="livemostrecent",
)
POLICY_STATES = ("in_force", "invalid")
POLICY_CHANGES = Counter(
    "draguard_policy_changes",
    "Times a worker swapped the policy in force for a new one (a DraguardPolicy created, changed, deleted)",
)
POLICY_STATUS_WRITES = Counter(
    "draguard_policy_status_writes",
    "DraguardPolicy status writes: ok, conflict (the object changed meanwhile: its newer version gets its "
    "own), error (not written: RBAC, or the API server kept failing)",
    ["result"],
)


# --- the background audit (`serve --audit-interval`): one process of its own ------------------------------
AUDIT_RESULTS = Gauge(
    "draguard_audit_results",
    "Results of the last background audit by result (pass, fail, warn, error, skip)",
    ["result"],
    multiprocess_mode="mostrecent",
)
AUDIT_RUNS = Counter(
    "draguard_audit_runs",
    "Background audits run: ok (reports written) or error (the previous reports stayed)",
    ["result"],
)
AUDIT_OBJECTS_JUDGED = Counter(
    "draguard_audit_objects_judged",
    "Work of the background audit, incremental on watch events: objects validated again (checked), "
    "ratcheted again (judged), pending Pods explained (explained)",
    ["stage"],
)
AUDIT_REPORT_WRITES = Counter(
    "draguard_audit_report_writes",
    "PolicyReport and ClusterPolicyReport writes of the background audit: applied, deleted, or error",
    ["result"],
)


def watch_kind_label(kind: Any) -> str:
    return kind if isinstance(kind, str) and kind in WATCH_KINDS else "other"


class GCTimer:
    """A `gc.callbacks` entry timing every collection's pause (one per worker). The callback runs inside
    whatever code triggered the collection — possibly a thread holding a metric's lock (prometheus_client
    takes non-reentrant locks, and allocates under them): observing there deadlocks that thread. So the
    callback only appends to a bounded deque, and `flush()` — called from ordinary code: after each
    request, on the loader's tick, before /metrics — moves the pauses into GC_PAUSES."""

    KEPT = 4096  # pauses waiting for a flush (older ones are dropped if nothing flushes)

    def __init__(self) -> None:
        self._start = 0.0
        self.pending: deque[tuple[str, float]] = deque(maxlen=self.KEPT)

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pending.append((str(info.get("generation", "?")), time.perf_counter() - self._start))

    def flush(self) -> None:
        pending = self.pending
        while pending:
            try:
                generation, seconds = pending.popleft()
            except IndexError:  # another thread flushed the last one
                return
            GC_PAUSES.labels(generation).observe(seconds)


_timers: list[GCTimer] = []  # this process's GCTimer (installed by the worker)


def install_gc_timer() -> GCTimer:
    """Time this process's collections into GC_PAUSES (see GCTimer)."""
    import gc

    timer = GCTimer()
    gc.callbacks.append(timer)
    _timers.append(timer)
    return timer


def flush_gc_pauses() -> None:
    for timer in _timers:
        timer.flush()


def kind_label(kind: Any) -> str:
    return kind if isinstance(kind, str) and kind in KINDS else "other"


def state_kind_label(kind: Any) -> str:
    return kind if isinstance(kind, str) and (kind in KINDS or kind in ("Node", "Namespace")) else "other"


def operation_label(op: Any) -> str:
    return op if isinstance(op, str) and op in OPERATIONS else "other"


def verdict_label(verdict: Any) -> str:
    return verdict if isinstance(verdict, str) and verdict in VERDICTS else "other"


def exposition() -> bytes:
    """The text exposition of every worker's samples (or this process's, outside multiprocess mode)."""
    flush_gc_pauses()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    from prometheus_client import REGISTRY

    return generate_latest(REGISTRY)


def mark_dead(pid: int) -> None:
    """Drop a dead worker's live gauges (the arbiter calls this when a worker exits)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(pid)
