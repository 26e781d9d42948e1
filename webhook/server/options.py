"""What `draguard serve` was asked to do: one frozen value built by the CLI, read by every worker."""

from __future__ import annotations

import os
from dataclasses import dataclass

from webhook.admission.wire import FailureMode

DEFAULT_PORT = 8443
DEFAULT_ADDRESS = "127.0.0.1"
# The API server accepts request bodies up to 3 MiB (MaxRequestBodyBytes); an UPDATE review carries the
# object and its oldObject, each as large as that, plus the review around them: 2 × 3 MiB + 1 MiB.
DEFAULT_MAX_BODY = 7 << 20
# One deadline for a request to arrive whole (a new connection's TLS handshake included): an API server
# sends its request at once, so anything slower is a stalled or hostile client holding a connection. Well
# under the shortest timeoutSeconds deploy/ sets (2 s, the mutating webhook); --read-timeout.
DEFAULT_READ_TIMEOUT = 2.0
DEFAULT_MAX_CONNECTIONS = 2048  # per worker: a few KiB each (bench/abuse_bench.py)
DEFAULT_DRAIN = 5.0  # seconds a stopping worker still answers (readiness false): endpoints propagate
DEFAULT_THREADS = 4  # per worker (bench/webhook_bench.py --sweep: docs/benchmarks.md)
# `--state cluster`: one worker per replica, scaled out by replicas (issue 18). Every worker holds its own
# copy of the state and its own list+watch of every kind; one worker makes it one per replica.
LIVE_WORKERS = 1


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


CLUSTER = "cluster"  # --state cluster: live state from the API server (list + watch)
DEFAULT_LIST_PAGE_SIZE = 500
DEFAULT_WATCH_READ_TIMEOUT = 150.0  # the API server's watch cache sends a bookmark about every minute


@dataclass(frozen=True)
class ServeOptions:
    state: str  # directory (or file) of manifests forming the cluster state, or CLUSTER
    certs: str  # directory with tls.crt / tls.key (ca.crt)
    address: str = DEFAULT_ADDRESS
    port: int = DEFAULT_PORT
    k8s_version: str = "1.37"
    feature_gates: tuple[tuple[str, bool], ...] = ()
    policy: str | None = None  # policy file path
    driver_schemas: str | None = None  # --driver-schemas DIR: opaque config schemas besides the bundled ones
    client_ca: str | None = None  # require client certificates signed by this CA
    deadline_seconds: float = 2.0  # per request; the URL's ?timeout= can only shorten it
    budget_steps: int = 100_000  # one allocator run of the feasibility check (a request may run two)
    budget_seconds: float = 0.75
    failure_mode: FailureMode = "open"  # on an internal error
    workers: int = 0  # 0 = one per usable core; with --state cluster, one (LIVE_WORKERS)
    threads: int = DEFAULT_THREADS
    max_body_bytes: int = DEFAULT_MAX_BODY
    reload_interval: float = 1.0  # seconds between two scans of the state directory
    keepalive: float = 60.0  # idle seconds a kept-alive connection stays open
    read_timeout: float = DEFAULT_READ_TIMEOUT  # TLS handshake + head + body of a request, from its start
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # per worker
    drain_seconds: float = DEFAULT_DRAIN  # after SIGTERM: not ready, still answering
    graceful_timeout: float = 20.0  # seconds in-flight requests get after SIGTERM
    worker_timeout: float = 60.0  # a worker silent for longer is restarted (also bounds its first load)
    log_level: str = "info"
    access_log: bool = False
    kubeconfig: str | None = None  # --state cluster: None = in-cluster config, else $KUBECONFIG
    watch_timeout_seconds: int | None = None  # server-side watch timeout; None = random 300-600 s per watch
    watch_read_timeout_seconds: float = DEFAULT_WATCH_READ_TIMEOUT  # a watch silent this long is reopened
    list_page_size: int = DEFAULT_LIST_PAGE_SIZE
    extended_resources: str | None = None  # native | translate | off; None: by the profile's gate
    field_manager: str = "draguard"  # server-side apply of translate's ResourceClaimTemplates
    audit_interval: float = 0.0  # --state cluster: seconds between background audits at least (0: none)
    audit_max_results: int = 1000  # results per PolicyReport the background audit writes
    audit_max_pending_pods: int = 200  # Pods pending on DRA each background audit explains

    @property
    def live(self) -> bool:
        """Whether the state comes from the API server (`--state cluster`)."""
        return self.state == CLUSTER

    @property
    def worker_count(self) -> int:
        """`--workers`, else one with `--state cluster` (one state and one watch per kind per replica),
        else one per usable core."""
        if self.workers:
            return self.workers
        return LIVE_WORKERS if self.live else usable_cores()

    @property
    def bind(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}"
