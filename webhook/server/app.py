"""The flask app: `/validate`, `/mutate`, `/healthz`, `/readyz`, `/metrics`, and the per-process runtime.

A review request: the body is read with a size cap (413 before reading when Content-Length says it is
too large) and a deadline on the socket (408 for a body that does not arrive in time), decoded with
the I/O layer's bounds (400 for anything that is no single JSON object), handed to the admission core
with the snapshot of this worker's state and a deadline (the configured one, shortened by the URL's
`?timeout=`), and its answer encoded. An exception out of the core is answered by the failure mode,
never by a 500. Routing is on the path only (the API server adds `?timeout=`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from webhook.admission.config import AdmissionConfig
from webhook.admission.wire import ENDPOINTS, Endpoint
from webhook.config.policy import Policy, combine
from webhook.model.budget import Deadline
from webhook.model.text import clip, one_line
from webhook.server import metrics
from webhook.server.loader import ManifestDirectory, ScanResult, StateLoader
from webhook.server.options import ServeOptions
from webhook.server.tls import Loaded, ReloadingTLS
from webhook.server.wire import (
    BadBody,
    TooManyValues,
    decode_review_body,
    failure_answer,
    parse_go_duration,
    status_body,
)
from webhook.server.wiring import (
    BadReview,
    ReviewInfo,
    load_serve_policy_specs,
    make_config,
    make_store,
    review_with_info,
    serve_profile,
)

if TYPE_CHECKING:
    from webhook.config.policyset import PolicySnapshot
    from webhook.server.livepolicy import LivePolicies
    from webhook.state.store import Snapshot

log = logging.getLogger("draguard.server")

JSON = "application/json"
TIMEOUT_SHARE = 0.8  # of the API server's ?timeout=: the rest is for the network and encoding
READ_CHUNK = 64 << 10
WARM_UP_SECONDS = 30.0  # at most, per worker, after its first state load
BODY_SECONDS = 1.0  # the body may take at least this long, however short the review's deadline: the API
# server sends it at once, and a review with no time left is still answered (undecided), not refused


class Runtime:
    """What one process serves with: the admission configs, and per worker its StateStore and loader
    (and with `--state cluster` its DraguardPolicies: `use_policy` swaps the configs, from that watch's
    applier thread only; a request reads `configs` once and keeps what it read)."""

    def __init__(self, options: ServeOptions, tls: ReloadingTLS | None = None) -> None:
        from webhook.config.context import Context

        self.options = options
        self.profile = serve_profile(options)
        self.policy_specs = load_serve_policy_specs(options)  # what --policy FILE sets
        self.policy = combine(self.policy_specs) if options.policy else None
        self.configs: dict[Endpoint, AdmissionConfig] = {
            e: make_config(options, e, self.profile, self.policy) for e in ENDPOINTS
        }
        self.context = Context(profile=self.profile, lint=False)
        self.tls = tls
        _import_everything(options.live)
        self.store: Any = None
        self.loader: StateLoader | None = None
        self.live: Any = None  # --state cluster: webhook.state.live.LiveState
        self.policies: LivePolicies | None = None  # --state cluster
        self.draining = False  # set once by the worker's event loop on SIGTERM

    def use_policy(self, policy: Policy) -> None:
        """Put `policy` in force: new configs, swapped whole (the caller is the one writer)."""
        self.configs = {e: replace(c, policy=policy) for e, c in self.configs.items()}

    def begin_drain(self) -> None:
        """The worker is stopping: /readyz answers 503 from now on (reviews are still answered)."""
        self.draining = True

    def body_deadline(self, target: str, received: float) -> float:
        """The latest (monotonic) time a review's body may finish arriving: the review's own deadline
        (`--deadline-seconds`, shortened by the URL's `?timeout=`), at least BODY_SECONDS."""
        from webhook.server.front import parse_timeout

        seconds = float(self.options.deadline_seconds)
        timeout = parse_timeout(target)
        if timeout is not None and math.isfinite(timeout):
            seconds = min(seconds, TIMEOUT_SHARE * timeout)
        return received + max(seconds, BODY_SECONDS)

    # --- worker lifecycle (gunicorn hooks call these) ----------------------------------------------
    def start_worker(self, heartbeat: Any = None, alive: Any = None) -> bool:
        """Create this process's store and loader; wait for the first load (calling `heartbeat()`
        meanwhile). False if `alive()` turned false first (the worker is being stopped)."""

        metrics.install_gc_timer()  # this worker's collector pauses, for /metrics
        metrics.RELOADS.labels("error")  # the series exists (at 0) before the first failure: alerts see it
        if self.tls is not None:
            self.tls.on_load = _certificate_loaded
            self.tls.on_error = lambda e: metrics.CERT_RELOADS.labels("error").inc()
            _certificate_loaded(self.tls.loaded)
        self.store = make_store(self.profile)
        waits: list[threading.Event] = []
        if self.options.live:
            from webhook.server.livepolicy import start_live_policies
            from webhook.server.livestate import start_live_state

            self.policies = start_live_policies(
                self.options, self.profile, self.policy_specs, self.use_policy
            )
            self.live = start_live_state(self.options, self.store, on_first=_warm_up)
            waits = [self.policies.ready, self.live.ready]
        else:
            metrics.STATE_SYNCED.set(0)  # 1 once the directory is read and published (`_published`)
            source = ManifestDirectory(self.options.state, self.context, self.policy)
            self.loader = StateLoader(
                source,
                self.store,
                self.options.reload_interval,
                on_publish=_published,
                on_tick=_tick,
                on_error=lambda e: metrics.RELOADS.labels("error").inc(),
                on_first=_warm_up,
            )
            self.loader.start()
            waits = [self.loader.ready]
        while not all(w.wait(1.0) for w in waits):  # gunicorn restarts a worker that stops heartbeating
            if heartbeat is not None:
                heartbeat()
            if alive is not None and not alive():
                return False
        return True

    def stop_worker(self) -> None:
        if self.loader is not None:
            self.loader.stop()
        if self.live is not None:
            self.live.stop()
        if self.policies is not None:
            self.policies.stop()

    def ready(self) -> bool:
        if self.draining:
            return False
        if self.live is not None and self.policies is not None:
            return bool(self.live.ready.is_set() and self.policies.ready.is_set())
        return self.loader is not None and self.loader.ready.is_set()

    def not_ready_reason(self) -> str:
        if self.draining:
            return "this worker is stopping (SIGTERM): it still answers reviews while the endpoint is removed"
        if self.live is not None and self.policies is not None:
            waiting = ", ".join([*self.live.waiting_for(), *self.policies.live.waiting_for()])
            return f"the cluster state is not synced yet (waiting for the initial list of: {waiting})"
        return "the cluster state is not loaded yet"


def _import_everything(live: bool = False) -> None:
    """Import, in the arbiter before it forks, what requests and the loader would import on first
    use: the workers share those pages and no request pays for an import."""
    if live:
        import kubernetes.client  # noqa: F401
        import kubernetes.config  # noqa: F401

        import webhook.server.livepolicy  # noqa: F401
        import webhook.server.livestate  # noqa: F401
    import webhook.admission.feasibility  # noqa: F401
    import webhook.cel.runtime  # noqa: F401
    import webhook.engine  # noqa: F401
    import webhook.engine.warm  # noqa: F401
    import webhook.rules.catalog  # noqa: F401
    import webhook.simulate.load  # noqa: F401


def _warm_up(snapshot: Snapshot) -> None:
    """Fill the engine's caches shared by every later version (one claim per DeviceClass) before the
    worker takes its first request, so that request does not pay for them."""
    from webhook.engine.warm import warm_up

    t0 = time.monotonic()
    warm_up(snapshot.state, deadline=Deadline.after(WARM_UP_SECONDS))
    log.info("engine caches warmed up in %.2f s", time.monotonic() - t0)


def _certificate_loaded(loaded: Loaded) -> None:
    metrics.CERT_EXPIRY.set(loaded.expires)
    metrics.CERT_RELOADS.labels("ok").inc()


def _published(snapshot: Snapshot, seconds: float, result: ScanResult) -> None:
    metrics.RELOADS.labels("ok").inc()
    metrics.RELOAD_TIME.observe(seconds)
    metrics.STATE_PUBLISHED.set(time.time())
    metrics.STATE_AGE.set(0.0)
    metrics.STATE_INVALID.set(result.invalid_total)
    metrics.STATE_SYNCED.set(1)  # --state DIR: loaded (a failed rescan keeps the published state)
    for kind, n in snapshot.counts().items():
        metrics.STATE_OBJECTS.labels(metrics.state_kind_label(kind)).set(n)
    if result.changed or result.removed:
        log.info(
            "state version %s published in %.3f s: %d file(s) loaded, %d removed, %d invalid object(s)",
            snapshot.version,
            seconds,
            len(result.changed),
            len(result.removed),
            result.invalid,
        )


def _tick(snapshot: Snapshot) -> None:
    metrics.STATE_AGE.set(max(0.0, time.monotonic() - snapshot.published_at))
    metrics.flush_gc_pauses()


def _json(data: bytes, code: int = 200) -> Response:
    return Response(data, status=code, mimetype=JSON)


def _reject(endpoint: str, code: int, message: str) -> Response:
    metrics.REJECTED.labels(endpoint, str(code)).inc()
    return _json(status_body(code, message), code)  # an unread rest is drained (64 KiB at most) or reset


def _deadline(config: Any, t0: float) -> Deadline:
    seconds = float(config.deadline_seconds)
    raw = request.args.get("timeout")
    if raw is not None:
        timeout = parse_go_duration(raw)
        if timeout is not None and math.isfinite(timeout):
            seconds = min(seconds, TIMEOUT_SHARE * timeout)
    return Deadline(t0 + seconds)


def _read_body(cap: int) -> bytes | None:
    """The body (the front has read it whole, within the caps and deadlines), or None when it is
    larger than `cap`."""
    length = request.content_length
    if length is not None and length > cap:
        return None
    body = request.stream.read(cap + 1)
    return None if len(body) > cap else body


def create_app(runtime: Runtime) -> Flask:
    app = Flask("draguard")
    app.logger.disabled = True  # gunicorn logs; our handlers log through "draguard.*"

    def admission(endpoint: Endpoint) -> Response:
        received = request.environ.get("draguard.received")
        t0 = received if isinstance(received, float) else time.monotonic()  # the request's first byte
        if runtime.options.client_ca and request.environ.get("draguard.client_certified") is not True:
            return _reject(
                endpoint,
                401,
                f"/{endpoint} requires a client certificate signed by the --client-ca bundle (the API "
                "server presents one when its AdmissionConfiguration's kubeconfig names it for this service)",
            )
        config = runtime.configs[endpoint]
        deadline = _deadline(config, t0)
        cap = runtime.options.max_body_bytes
        body = _read_body(cap)
        if body is None:
            return _reject(endpoint, 413, f"the request body is larger than the limit of {cap} bytes")
        try:
            ar = decode_review_body(body)
        except TooManyValues as e:
            return _reject(endpoint, 413, str(e))
        except BadBody as e:
            return _reject(endpoint, 400, str(e))
        snapshot = runtime.store.snapshot()
        try:
            answer, info = review_with_info(ar, snapshot, config, deadline)
            data = json.dumps(answer, separators=(",", ":"), allow_nan=False).encode()  # Go reads no NaN
        except BadReview as e:
            return _reject(endpoint, 400, str(e))
        except Exception as e:  # the core promises not to raise; if it does, the failure mode answers
            log.exception("admission core failed on request %s", _uid(ar))
            answer = failure_answer(ar, config.failure_mode, type(e).__name__)
            info = ReviewInfo(_request_kind(ar), _request_field(ar, "operation"), "error")
            data = json.dumps(answer, separators=(",", ":")).encode()
        _observe(endpoint, info, time.monotonic() - t0)
        return _json(data)

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Response:  # 404, 405, ...: a metav1.Status, as every other error
        code = e.code or 500
        return _json(status_body(code, f"{request.method[:16]} {request.path[:256]}: {e.name}"), code)

    @app.post("/validate")
    def validate() -> Response:
        return admission("validate")

    @app.post("/mutate")
    def mutate() -> Response:
        return admission("mutate")

    @app.get("/healthz")
    def healthz() -> Response:
        return Response("ok\n", mimetype="text/plain")

    @app.get("/readyz")
    def readyz() -> Response:
        if not runtime.ready():
            return _json(status_body(503, runtime.not_ready_reason()), 503)
        snapshot = runtime.store.snapshot()
        body: dict[str, Any] = {
            "status": "ready",
            "stateVersion": snapshot.version,
            "stateAgeSeconds": round(time.monotonic() - snapshot.published_at, 3),
            "objects": snapshot.counts(),
        }
        if runtime.live is not None and runtime.policies is not None:  # per kind, the resourceVersion reached
            body["resourceVersions"] = {
                **runtime.live.resource_versions(),
                **runtime.policies.live.resource_versions(),
            }
            body["policies"] = _policies(runtime.policies.snapshot())
        loader = runtime.loader
        if loader is not None and loader.errors:  # still ready: the last good state serves
            reload: dict[str, Any] = {"errors": loader.errors}
            failing = loader.failing
            if failing is not None:
                reload["failing"] = failing[0]
                reload["failingForSeconds"] = round(time.monotonic() - failing[1], 3)
            body["stateReload"] = reload
        return _json(json.dumps(body).encode())

    @app.get("/metrics")
    def metrics_endpoint() -> Response:
        if runtime.ready():
            _tick(runtime.store.snapshot())
        return Response(metrics.exposition(), mimetype=None, content_type=metrics.CONTENT_TYPE)

    return app


def _policies(snap: PolicySnapshot) -> dict[str, Any]:
    """/readyz's view of this worker's DraguardPolicies: the version in force, per object the generation
    in force and, when its current generation is invalid, that generation."""
    return {
        "version": snap.version,
        "inForce": {s.name: s.applied for s in snap.states.values() if s.applied is not None},
        "invalid": {s.name: s.generation for s in snap.states.values() if not s.verdict.valid},
    }


def _request_field(ar: Any, name: str) -> str:
    req = ar.get("request") if isinstance(ar, dict) else None
    value = req.get(name) if isinstance(req, dict) else None
    return value if isinstance(value, str) else ""


def _request_kind(ar: Any) -> str:
    req = ar.get("request") if isinstance(ar, dict) else None
    kind = req.get("kind") if isinstance(req, dict) else None
    value = kind.get("kind") if isinstance(kind, dict) else None
    return value if isinstance(value, str) else ""


def _uid(ar: Any) -> str:
    return clip(one_line(_request_field(ar, "uid")), 64) or "?"


def _observe(endpoint: str, info: ReviewInfo, seconds: float) -> None:
    kind = metrics.kind_label(info.kind)
    decision = info.decision if info.decision in ("allowed", "denied", "error") else "error"
    metrics.flush_gc_pauses()
    metrics.REQUESTS.labels(endpoint, kind, metrics.operation_label(info.operation), decision).inc()
    metrics.LATENCY.labels(endpoint, kind).observe(seconds)
    if info.extended in metrics.EXTENDED_RESULTS:
        metrics.EXTENDED.labels(info.extended).inc()
    if info.verdict is not None:
        metrics.FEASIBILITY.labels(kind, metrics.verdict_label(info.verdict)).inc()
        took = info.feasibility_seconds
        if took is not None and math.isfinite(took) and took >= 0:
            metrics.FEASIBILITY_TIME.labels(kind).observe(took)
