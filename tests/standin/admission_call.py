"""One webhook call as the API server makes it: HTTPS POST of an AdmissionReview to the webhook's URL
(a Service reference mapped to a local address) verifying the configuration's caBundle against the name
the API server uses (`<service>.<namespace>.svc`), `?timeout=Ns`, the whole call bounded by
timeoutSeconds; then the answer checked as `VerifyAdmissionResponse` checks it, and a mutating
webhook's JSON Patch applied.

Ported from k8s.io/apiserver (behaviour): `util/webhook/{client.go,error.go}` (URL, TLS, error text),
`admission/plugin/webhook/request/admissionreview.go` (VerifyAdmissionResponse),
`.../mutating/dispatcher.go` (patch decoding and application). Errors are `CallFailure` (an
ErrCallingWebhook: failurePolicy decides) or `StatusFailure` (the API server answers with that Status
whatever the failurePolicy).
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import math
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jsonpatch  # type: ignore[import-untyped]

from tests.standin.admission_match import StatusFailure, internal_error

ServiceResolver = Callable[[str, str, int], "tuple[str, int] | None"]  # (namespace, name, port) → address


class CallFailure(Exception):
    """webhookutil.ErrCallingWebhook: `failed calling webhook "<name>": <reason>` (failurePolicy decides)."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')
        self.webhook = webhook
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """Where a webhook is called: the URL the API server uses, the address it reaches, the TLS name."""

    url: str  # https://draguard.draguard-system.svc:443/validate (without the query)
    address: tuple[str, int]
    server_name: str


def target(webhook: dict[str, Any], resolve: ServiceResolver) -> Target:
    """The webhook's clientConfig as a call target; raises CallFailure when it has no address."""
    name = webhook["name"]
    cc = webhook.get("clientConfig") or {}
    if cc.get("service"):
        svc = cc["service"]
        port = int(svc.get("port", 443))
        host = f"{svc['name']}.{svc['namespace']}.svc"
        address = resolve(svc["namespace"], svc["name"], port)
        if address is None:
            raise CallFailure(
                name,
                f'failed to call webhook: service "{svc["namespace"]}/{svc["name"]}" has no address in the stand-in',
            )
        return Target(f"https://{host}:{port}{svc.get('path') or ''}", address, host)
    url = cc.get("url")
    if not url:
        raise CallFailure(name, "could not get REST client: clientConfig has neither url nor service")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise CallFailure(name, f"could not get REST client: {url!r} is not an https URL")
    return Target(url, (parts.hostname, parts.port or 443), parts.hostname)


def go_base64(text: Any) -> bytes:
    """A `[]byte` field of JSON as Go decodes it: standard base64, line breaks (\\r, \\n) ignored (kustomize's
    secretGenerator wraps a caBundle every 76 characters). Raises ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"expected a base64 string, got {type(text).__name__}")
    return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)


def _tls_context(webhook: dict[str, Any]) -> ssl.SSLContext:
    bundle = (webhook.get("clientConfig") or {}).get("caBundle")
    if not bundle:
        return ssl.create_default_context()  # the API server's system trust roots
    try:
        pem = go_base64(bundle).decode()
        return ssl.create_default_context(cadata=pem)
    except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError) as e:
        raise CallFailure(webhook["name"], f"could not get REST client: invalid caBundle: {e}") from None


def go_duration(seconds: float) -> str:
    """`r.Timeout(d)` writes `?timeout=` as a Go duration; whole seconds here (`10s`)."""
    return f"{int(seconds)}s"


class Pool:
    """Kept-alive connections per (address, TLS name, caBundle), as the API server's HTTP transport keeps
    them to a webhook: a call takes an idle connection or dials a new one, and gives it back after a
    complete answer. Bounded: at most `idle` idle connections per key."""

    def __init__(self, idle: int = 8) -> None:
        self.idle = idle
        self._closed = False
        self._lock = threading.Lock()
        self._conns: dict[tuple[Any, ...], list[http.client.HTTPSConnection]] = {}

    def take(self, key: tuple[Any, ...]) -> http.client.HTTPSConnection | None:
        with self._lock:
            conns = self._conns.get(key)
            return conns.pop() if conns else None

    def give(self, key: tuple[Any, ...], conn: http.client.HTTPSConnection) -> None:
        with self._lock:
            conns = self._conns.setdefault(key, [])
            if not self._closed and len(conns) < self.idle:
                conns.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns = [c for cs in self._conns.values() for c in cs]
            self._conns.clear()
        for c in conns:
            c.close()


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining


def _dial(tgt: Target, ctx: ssl.SSLContext, deadline: _Deadline) -> http.client.HTTPSConnection:
    sock = socket.create_connection(tgt.address, timeout=deadline.left())
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Go's net/http (no Nagle delays)
        tls = ctx.wrap_socket(sock, server_hostname=tgt.server_name, do_handshake_on_connect=False)
    except BaseException:
        sock.close()
        raise
    try:
        tls.settimeout(deadline.left())
        tls.do_handshake()
    except BaseException:
        tls.close()
        raise
    conn = http.client.HTTPSConnection(tgt.server_name, tgt.address[1])
    conn.sock = tls  # connected and verified: http.client never dials itself
    return conn


def _exchange(
    conn: http.client.HTTPSConnection, path: str, body: bytes, deadline: _Deadline
) -> tuple[int, bytes, bool]:
    """One request on `conn`: (status, body, whether the connection may be reused)."""
    sock = conn.sock  # (getresponse() drops conn.sock when the answer closes the connection)
    assert sock is not None
    sock.settimeout(deadline.left())
    conn.request(
        "POST",
        path,
        body=body,
        headers={"Content-Type": "application/json", "Accept": "application/json, */*"},
    )
    sock.settimeout(deadline.left())
    resp = conn.getresponse()
    sock.settimeout(deadline.left())
    data = resp.read()
    return resp.status, data, not resp.will_close


# what a kept-alive connection the server has closed fails with, before any answer arrives
_CLOSED = (
    http.client.RemoteDisconnected,
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
    ssl.SSLEOFError,
    ssl.SSLZeroReturnError,
)


def post(
    webhook: dict[str, Any], review: dict[str, Any], resolve: ServiceResolver, pool: Pool | None = None
) -> dict[str, Any]:
    """POST `review` to the webhook within timeoutSeconds; the decoded answer. Raises CallFailure.
    A kept-alive connection the webhook closed meanwhile is retried once on a new one (Go's transport
    retries a request whose body it can replay when the server closed an idle connection)."""
    name = webhook["name"]
    tgt = target(webhook, resolve)
    timeout = float(webhook.get("timeoutSeconds", 10))
    deadline = _Deadline(timeout)
    query = f"timeout={go_duration(math.ceil(timeout))}"
    url = f"{tgt.url}?{query}"
    path = (urlsplit(tgt.url).path or "/") + "?" + query
    ctx = _tls_context(webhook)
    body = json.dumps(review).encode()
    key = (tgt.address, tgt.server_name, (webhook.get("clientConfig") or {}).get("caBundle"))
    conn: http.client.HTTPSConnection | None = None
    try:
        conn = pool.take(key) if pool is not None else None
        reused = conn is not None
        if conn is None:
            conn = _dial(tgt, ctx, deadline)
        try:
            code, data, keep = _exchange(conn, path, body, deadline)
        except _CLOSED:
            if not reused:
                raise
            conn.close()
            conn = _dial(tgt, ctx, deadline)
            code, data, keep = _exchange(conn, path, body, deadline)
        if keep and pool is not None:
            pool.give(key, conn)
            conn = None
    except TimeoutError:
        raise CallFailure(name, f'failed to call webhook: Post "{url}": context deadline exceeded') from None
    except ConnectionRefusedError:
        host, port = tgt.address
        raise CallFailure(
            name, f'failed to call webhook: Post "{url}": dial tcp {host}:{port}: connect: connection refused'
        ) from None
    except ssl.SSLCertVerificationError as e:
        raise CallFailure(
            name,
            f'failed to call webhook: Post "{url}": tls: failed to verify certificate: {e.verify_message}',
        ) from None
    except (OSError, http.client.HTTPException) as e:
        raise CallFailure(name, f'failed to call webhook: Post "{url}": {type(e).__name__}: {e}') from None
    finally:
        if conn is not None:
            conn.close()
    if not 200 <= code < 300:
        raise CallFailure(name, f"failed to call webhook: {_status_text(code, data)}")
    try:
        answer = json.loads(data)
    except ValueError as e:
        raise CallFailure(
            name, f"failed to call webhook: couldn't get version/kind; json parse error: {e}"
        ) from None
    if not isinstance(answer, dict):
        raise CallFailure(
            name, "failed to call webhook: couldn't get version/kind; the body is no JSON object"
        )
    return answer


def _status_text(code: int, data: bytes) -> str:
    """client-go's error for a non-2xx answer: the Status message when the body is one."""
    try:
        s = json.loads(data)
        if isinstance(s, dict) and s.get("kind") == "Status" and s.get("message"):
            return str(s["message"])
    except ValueError:
        pass
    text = data.decode("utf-8", "replace").strip()
    if text:
        return f'an error on the server ("{text[:512]}") has prevented the request from succeeding'
    return f"the server responded with the status code {code} but did not return more information"


@dataclass(frozen=True)
class Response:
    """The fields the API server takes from a verified answer (request.AdmissionResponse)."""

    allowed: bool
    result: dict[str, Any] | None
    patch: list[dict[str, Any]] | None  # decoded JSON Patch operations (mutating only; None: no change)
    patch_type: str | None
    warnings: list[str]
    audit: dict[str, str]


def verify(webhook: str, uid: str, mutating: bool, review: dict[str, Any]) -> Response:
    """VerifyAdmissionResponse (admission.k8s.io/v1) plus the mutating patch decoding; raises CallFailure."""

    def bad(reason: str) -> CallFailure:
        return CallFailure(webhook, f"received invalid webhook response: {reason}")

    if review.get("apiVersion") != "admission.k8s.io/v1" or review.get("kind") != "AdmissionReview":
        got = f"{review.get('apiVersion', '')}, Kind={review.get('kind', '')}"
        return _raise(
            bad(f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}")
        )
    r = review.get("response")
    if not isinstance(r, dict):
        return _raise(bad("webhook response was absent"))
    if r.get("uid") != uid:
        return _raise(bad(f'expected response.uid="{uid}", got "{r.get("uid", "")}"'))
    patch_b64, patch_type = r.get("patch"), r.get("patchType")
    raw = b""
    if patch_b64 is not None:
        try:
            raw = go_base64(patch_b64)
        except (binascii.Error, TypeError, ValueError) as e:  # the AdmissionReview fails to decode
            raise CallFailure(
                webhook, f"failed to call webhook: illegal base64 data in response.patch: {e}"
            ) from None
    if mutating:
        if raw and patch_type is None:
            return _raise(bad("webhook returned response.patch but not response.patchType"))
        if not raw and patch_type is not None:
            return _raise(bad("webhook returned response.patchType but not response.patch"))
        if patch_type is not None and patch_type == "":
            return _raise(bad('webhook returned invalid response.patchType of ""'))
    else:
        if raw:
            return _raise(bad("validating webhook may not return response.patch"))
        if patch_type is not None:
            return _raise(bad("validating webhook may not return response.patchType"))
    patch: list[dict[str, Any]] | None = None
    allowed = r.get("allowed") is True
    if mutating and raw and allowed:
        try:
            ops = json.loads(raw)
            if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
                raise ValueError("a JSON Patch is an array of operation objects")
        except ValueError as e:
            raise CallFailure(webhook, f"received undecodable patch in webhook response: {e}") from None
        patch = ops or None
    warnings = [w for w in r.get("warnings") or [] if isinstance(w, str)]
    audit = {k: v for k, v in (r.get("auditAnnotations") or {}).items() if isinstance(v, str)}
    return Response(allowed, r.get("status"), patch, patch_type, warnings, audit)


def _raise(e: CallFailure) -> Response:
    raise e


def apply_patch(
    webhook: str, obj: dict[str, Any] | None, ops: list[dict[str, Any]], patch_type: str | None
) -> dict[str, Any]:
    """Apply a decoded, non-empty JSON Patch to the object (in the webhook's version). A patch that does not
    apply, or any patch on an absent object (DELETE), is a 500 whatever the failurePolicy (StatusFailure);
    a patch type other than JSONPatch is a call failure."""
    if obj is None:
        raise StatusFailure(
            internal_error(
                f'admission webhook "{webhook}" attempted to modify the object, which is not supported for this operation'
            )
        )
    if patch_type != "JSONPatch":
        raise CallFailure(webhook, f'unsupported patch type "{patch_type}"')
    try:
        patched = jsonpatch.JsonPatch(ops).apply(obj)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as e:
        raise StatusFailure(internal_error(str(e))) from None
    if not isinstance(patched, dict):
        raise StatusFailure(internal_error("the patched object is no JSON object"))
    return patched
