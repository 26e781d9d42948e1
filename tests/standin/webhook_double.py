"""A programmable admission webhook for the admission chain's tests: a real HTTPS server on 127.0.0.1 (a
thread) with a certificate for a Service name, answering each AdmissionReview with `handler(review)`.

    with WebhookDouble(tmp_path, lambda review: allow(review)) as hook:
        config = validating("v.example.com", hook, rules=[...])       # caBundle and service filled in
        chain = Admission([config], services=hook.services)
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from webhook.server.certs import ensure_certs

Answer = dict[str, Any] | tuple[int, bytes]
Handler = Callable[[dict[str, Any]], Answer]


def allow(review: dict[str, Any], **response: Any) -> dict[str, Any]:
    """An AdmissionReview answering `review` (allowed unless `allowed=False` is given)."""
    r = {"uid": review["request"]["uid"], "allowed": True, **response}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r}


def patch_response(review: dict[str, Any], ops: list[dict[str, Any]], **response: Any) -> dict[str, Any]:
    patch = base64.b64encode(json.dumps(ops).encode()).decode()
    return allow(review, patch=patch, patchType="JSONPatch", **response)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    double: WebhookDouble
    open: set[Any]

    def finish_request(self, request: Any, client_address: Any) -> None:
        # the TLS handshake in the connection's own thread (a stalled client never blocks accept)
        try:
            tls = self.double.tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        with self.double.lock:
            self.open.add(tls)
        try:
            super().finish_request(tls, client_address)
        except OSError:
            pass
        finally:
            with self.double.lock:
                self.open.discard(tls)
            tls.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    def do_POST(self) -> None:
        double = self.server.double
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        parts = urlsplit(self.path)
        review = json.loads(body)
        with double.lock:
            double.received.append(
                {
                    "path": parts.path,
                    "query": parse_qs(parts.query),
                    "review": review,
                    "peer": self.client_address,
                }
            )
        if double.delay:
            time.sleep(double.delay)
        answer = double.handler(review)
        if isinstance(answer, tuple):
            code, data = answer
        else:
            code, data = 200, json.dumps(answer).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if not double.keep_alive:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass  # the caller gave up (timeout)


class WebhookDouble:
    """The webhook Service `<name>.<namespace>.svc` (certificate for that name) on a free local port."""

    def __init__(
        self, tmp: Path, handler: Handler, name: str = "hook", namespace: str = "test", delay: float = 0.0
    ) -> None:
        self.handler = handler
        self.delay = delay
        self.keep_alive = True  # False: every answer closes its connection
        self.name, self.namespace = name, namespace
        self.received: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        certs = tmp / f"certs-{name}-{namespace}-{time.monotonic_ns()}"
        files = ensure_certs(certs, dns=[f"{name}.{namespace}.svc"], ips=[])
        self.ca_bundle = base64.b64encode(files.ca_cert.read_bytes()).decode()
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(str(files.tls_cert), str(files.tls_key))
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.double = self
        self.server.open = set()
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def services(self) -> dict[str, str]:
        return {f"{self.namespace}/{self.name}": f"127.0.0.1:{self.port}"}

    def client_config(self, path: str = "/validate") -> dict[str, Any]:
        return {
            "service": {"namespace": self.namespace, "name": self.name, "path": path, "port": 443},
            "caBundle": self.ca_bundle,
        }

    def reviews(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r["review"] for r in self.received]

    def drop_connections(self) -> None:
        """Close every open connection (as a server restart or an idle timeout does)."""
        with self.lock:
            conns = list(self.server.open)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> WebhookDouble:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def closed_port() -> int:
    """A local port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
