"""`draguard serve`: gunicorn embedded (BaseApplication), configured from ServeOptions.

Workers: one process per usable core (`--workers`; one with `--state cluster`: one state and one list+watch
per kind per replica, scaled out by replicas), each an asyncio front holding every connection
(TLS handshake, request head and body, kept-alive waits: webhook/server/front.py) and `--threads`
request threads that only ever see complete requests (webhook/server/worker.py). The app is imported once in the arbiter and
forked (preload), each worker then loads its own state (docs/webhook.md: one StateStore per process, written by
its loader thread) and only starts accepting connections once that state is published. TLS contexts come
from `ReloadingTLS` for every new connection (rotation without restart). SIGTERM: readiness false, still
answering for `--drain-seconds`, then no new connections; requests in flight get the rest of
`graceful_timeout` seconds.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import tempfile
from typing import Any

from gunicorn.app.base import BaseApplication

from webhook.server import memory
from webhook.server.front import FrontLimits
from webhook.server.options import ServeOptions

log = logging.getLogger("draguard.server")

# Bodies a worker reads and holds at once, in units of --max-body-bytes (front.py's body budget): with
# one large body decoded at a time, this bounds a worker's request memory (bench/abuse_bench.py --parts memory)
BODY_BUDGET_BODIES = 4


class DraguardApplication(BaseApplication):  # type: ignore[misc]
    """gunicorn with a settings dict instead of a config file or command line."""

    def __init__(self, app: Any, settings: dict[str, Any]) -> None:
        self.application = app
        self.settings = settings
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.settings.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application


def front_limits(options: ServeOptions) -> FrontLimits:
    return FrontLimits(
        read_seconds=options.read_timeout,
        keepalive_seconds=options.keepalive,
        max_connections=options.max_connections,
        max_body_bytes=options.max_body_bytes,
        body_budget_bytes=BODY_BUDGET_BODIES * options.max_body_bytes,
    )


def gunicorn_settings(options: ServeOptions, runtime: Any, cert: str, key: str) -> dict[str, Any]:
    """The gunicorn configuration `draguard serve` runs with."""
    from webhook.server import metrics
    from webhook.server.worker import worker_class_for

    def post_worker_init(worker: Any) -> None:
        if not runtime.start_worker(heartbeat=worker.notify, alive=lambda: worker.alive):
            sys.exit(0)

    def worker_exit(server: Any, worker: Any) -> None:
        runtime.stop_worker()

    def child_exit(server: Any, worker: Any) -> None:
        metrics.mark_dead(worker.pid)

    def when_ready(server: Any) -> None:
        metrics.mark_dead(os.getpid())  # the arbiter never reports: its initial gauge values must not count
        server.log.info(
            "draguard webhook: https://%s (state %s, %d worker(s) x %d thread(s)); workers accept "
            "connections once their state is loaded",
            options.bind,
            options.state,
            options.worker_count,
            options.threads,
        )

    return {
        "bind": [options.bind],
        "workers": options.worker_count,
        "worker_class": worker_class_for(runtime, front_limits(options), options.drain_seconds),
        "threads": options.threads,
        "preload_app": True,
        "timeout": math.ceil(options.worker_timeout),  # gunicorn takes whole seconds
        "graceful_timeout": math.ceil(options.graceful_timeout),
        "keepalive": math.ceil(options.keepalive),
        # TLS is the front's (ReloadingTLS); these make the arbiter say https:// and check the files
        "certfile": cert,
        "keyfile": key,
        "post_worker_init": post_worker_init,
        "worker_exit": worker_exit,
        "child_exit": child_exit,
        "when_ready": when_ready,
        "control_socket_disable": True,
        "proc_name": "draguard",
        "errorlog": "-",
        "accesslog": None,  # --access-log: the front's "draguard.access" lines (control characters escaped)
        "loglevel": options.log_level,
        "worker_tmp_dir": "/dev/shm" if os.path.isdir("/dev/shm") else None,
    }


FULL_COLLECTION_EVERY = 100  # gen1 collections between two full ones considered (CPython's default: 10)


def _tune_collector() -> None:
    """Tune the cyclic garbage collector of the server processes: called once by `serve()` in the
    arbiter before it forks (the workers inherit it). Process setup of `draguard serve` only: the
    library, the CLI's other commands and the tests never run it.

    - Freeze what the arbiter holds before forking (modules, classes, functions, the app and its
      configuration: ~50,000 objects that live as long as the process): each worker's full collections
      then scan only what it created itself (its state, caches, requests). No cluster state exists yet,
      so nothing that is ever replaced is frozen (the leak the library rule against gc.freeze is about).
    - Consider a full collection every 100th gen1 collection instead of every 10th. A full collection
      stops a worker for as long as its state takes to scan. Measured with `bench/webhook_bench.py`
      (8,000 devices, 200 req/s with a state change every 100 ms, 70 s per run, 2 runs each, 2-core
      machine shared with other jobs, 2026-12-01): CPython's default ran 12-13 full collections per run
      (2.0-2.1 s of pauses, each up to 0.5 s) and the 60-s p99 was 88 / 130 ms; with this setting 1 full
      collection per run (0.14 s) and p99 31 ms (the second tuned run, 384 ms, was taken at load 7:
      CPU contention, not the collector). Cyclic garbage lives longer; RSS stays flat over thousands of
      state changes (`bench/webhook_bench.py --reloads`)."""
    import gc

    gc.collect()
    gc.freeze()
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, FULL_COLLECTION_EVERY)


def serve(options: ServeOptions) -> int:
    """Run the webhook until SIGTERM/SIGINT; the exit code of gunicorn's arbiter."""
    from webhook.server.certs import CertFiles
    from webhook.server.tls import ReloadingTLS

    files = CertFiles(__import__("pathlib").Path(options.certs))
    tls = ReloadingTLS(files.tls_cert, files.tls_key, options.client_ca)  # CertError: usage error, exit 2
    metrics_dir = tempfile.mkdtemp(prefix="draguard-metrics-")
    audit_pid: int | None = None
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir  # before prometheus_client is imported
    try:
        logging.basicConfig(
            level=options.log_level.upper(),
            format="[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s",
            stream=sys.stderr,
        )
        if not memory.limit_arenas():  # before any thread or child exists: they inherit it
            log.debug("not glibc: malloc's arenas are left as they are")
        if options.audit_interval > 0:
            from webhook.server.liveaudit import fork_audit_process

            audit_pid = fork_audit_process(options)  # before any thread exists (gunicorn, the app)
        from webhook.server.app import Runtime, create_app

        if options.live and options.worker_count > 1:
            log.warning(
                "--state cluster with %d workers: each holds its own copy of the cluster state and its own "
                "list+watch of every kind (%d of each per replica); scale out by replicas instead",
                options.worker_count,
                options.worker_count,
            )
        runtime = Runtime(options, tls)
        app = create_app(runtime)
        settings = gunicorn_settings(options, runtime, str(files.tls_cert), str(files.tls_key))
        try:
            _tune_collector()
            DraguardApplication(app, settings).run()
        except SystemExit as e:
            return int(e.code or 0) if not isinstance(e.code, str) else 1
        return 0
    finally:
        if options.audit_interval > 0 and audit_pid:
            _stop_child(audit_pid)
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _stop_child(pid: int) -> None:
    """SIGTERM the audit process (gunicorn's arbiter may have reaped it already)."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
