"""gunicorn's worker class for `draguard serve`: the asyncio front (front.py) in the worker's main thread,
the flask app on `threads` request threads.

gunicorn keeps what it is good at — the arbiter forking, watching and replacing workers, the listening
sockets, SIGTERM/SIGHUP handling, the heartbeat — and this worker replaces gthread's connection handling,
which gives every new connection a thread for its TLS handshake and request head (a silent or slow client
held it: issue 14). `worker_class_for()` binds the class to one Runtime (no module state).

Stopping (SIGTERM from the arbiter, which sends it on its own SIGTERM): readiness turns false at once
(`/readyz` 503, so the kubelet takes the Pod out of the endpoints), then for `drain_seconds` everything is
still answered — new connections and requests on kept-alive ones — with `Connection: close`, so the
API server's clients move to another replica; then the worker stops accepting, closes idle connections,
and gives the requests in flight the rest of `graceful_timeout`.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gunicorn.workers.base import Worker

from webhook.model.text import one_line
from webhook.server import metrics
from webhook.server.front import CloseReason, Front, FrontLimits, Reply, Request
from webhook.server.wire import status_body

log = logging.getLogger("draguard.server")
access = logging.getLogger("draguard.access")

HEARTBEAT_SECONDS = 1.0


def wsgi_call(app: Any, request: Request) -> Reply:
    """Run a WSGI application on one complete request (PEP 3333); an exception is a 500 Status."""
    server_name, server_port = request.server
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": _wsgi_path(request.path),
        "QUERY_STRING": request.query,
        "SERVER_NAME": server_name or "localhost",
        "SERVER_PORT": str(server_port),
        "SERVER_PROTOCOL": request.version,
        "REMOTE_ADDR": request.peer[0],
        "REMOTE_PORT": str(request.peer[1]),
        "CONTENT_LENGTH": str(len(request.body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": request.scheme,
        "wsgi.input": io.BytesIO(request.body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "draguard.received": request.received,  # monotonic time of the request's first byte
        "draguard.client_certified": request.client_certified,
    }
    for name, value in request.headers:
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_LENGTH", "TRANSFER_ENCODING") or "_" in name:
            continue  # the body is complete; a name with `_` could pose as another (CGI's ambiguity)
        if key == "CONTENT_TYPE":
            environ["CONTENT_TYPE"] = value
            continue
        key = "HTTP_" + key
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [status, headers]
        return lambda data: None

    try:
        result = app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        code = int(str(started[0]).split(" ", 1)[0])
        return Reply(code, tuple((str(k), str(v)) for k, v in started[1]), body)
    except Exception:
        log.exception("the application failed on %s %s", request.method, one_line(request.path[:200]))
        return Reply(500, (("Content-Type", "application/json"),), status_body(500, "internal error"))


def _wsgi_path(path: str) -> str:
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(path).decode("latin-1")


class FrontObserver:
    """Metrics and the access log of one worker's front."""

    def __init__(self, access_log: bool) -> None:
        self.access_log = access_log

    def connection_closed(self, reason: CloseReason) -> None:
        metrics.CONNECTIONS_CLOSED.labels(reason.value).inc()

    def open_connections(self, count: int) -> None:
        metrics.CONNECTIONS_OPEN.set(count)

    def rejected(self, request_path: str, code: int) -> None:
        endpoint = request_path.strip("/")
        metrics.REJECTED.labels(endpoint if endpoint in metrics.ENDPOINTS else "other", str(code)).inc()

    def answered(self, request: Request | None, status: int, size: int, seconds: float) -> None:
        if not self.access_log:
            return
        if request is None:
            access.info('- "-" %d %d %.1fms', status, size, seconds * 1000)
            return
        access.info(
            '%s "%s %s %s" %d %d %.1fms "%s"',
            request.peer[0],
            one_line(request.method),
            one_line(request.target[:2048]),
            request.version,
            status,
            size,
            seconds * 1000,
            one_line((request.header("user-agent") or "-")[:256]),
        )


def worker_class_for(runtime: Any, limits: FrontLimits, drain_seconds: float) -> type[Worker]:
    """A gunicorn worker class serving `runtime`'s app through the front with `limits`."""

    class DraguardWorker(_FrontWorker):
        pass

    DraguardWorker.runtime = runtime
    DraguardWorker.limits = limits
    DraguardWorker.drain_seconds = drain_seconds
    return DraguardWorker


class _FrontWorker(Worker):  # type: ignore[misc]
    runtime: Any = None
    limits: FrontLimits = FrontLimits()
    drain_seconds: float = 5.0

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        quick = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)

        def quit_now() -> None:
            quick.set()
            stop.set()

        for sig in (signal.SIGINT, signal.SIGQUIT):
            loop.add_signal_handler(sig, quit_now)
        if not self.alive:  # a SIGTERM that came while the state loaded
            stop.set()
        runtime = self.runtime
        executor = ThreadPoolExecutor(
            max_workers=max(1, self.cfg.threads), thread_name_prefix="draguard-request"
        )
        app = self.wsgi
        options = runtime.options
        front = Front(
            self.limits,
            lambda request: wsgi_call(app, request),
            executor,
            runtime.tls.current if runtime.tls is not None else None,
            FrontObserver(options.access_log),
            status_body,
            runtime.body_deadline,
        )
        front.start([getattr(s, "sock", s) for s in self.sockets])
        heartbeat = loop.create_task(self._heartbeat(stop))
        await stop.wait()
        heartbeat.cancel()
        graceful_end = time.monotonic() + max(0.0, float(self.cfg.graceful_timeout))
        if not quick.is_set():
            await self._drain(front, graceful_end)
        front.stop_accepting()
        front.close_idle()
        while front.busy() and time.monotonic() < graceful_end and not quick.is_set():
            self.notify()
            await asyncio.sleep(0.05)
        await front.close_all()
        executor.shutdown(wait=False, cancel_futures=True)

    async def _drain(self, front: Front, graceful_end: float) -> None:
        runtime = self.runtime
        runtime.begin_drain()
        front.begin_drain()
        end = min(graceful_end, time.monotonic() + self.drain_seconds)
        log.info(
            "worker %d stopping: not ready; answering for %.1f s more, then closing",
            os.getpid(),
            self.drain_seconds,
        )
        while time.monotonic() < end:
            self.notify()
            await asyncio.sleep(min(0.1, max(0.0, end - time.monotonic())))

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        while True:
            self.notify()
            if self.ppid != os.getppid():  # the arbiter is gone
                log.info("worker %d: the arbiter exited; stopping", os.getpid())
                stop.set()
                return
            if not self.alive:
                stop.set()
                return
            await asyncio.sleep(HEARTBEAT_SECONDS)
