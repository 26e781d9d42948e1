"""The ResourceClaimTemplate writer against an HTTPS server on 127.0.0.1: the server-side apply request as
the kubernetes client sends it (PATCH, `application/apply-patch+yaml`, fieldManager, force, the bearer
token of the kubeconfig, the template as the body), the API server's refusals and an unreachable or slow
server as TemplateWriteError, and a translated Pod CREATE through review() writing through it."""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from admission_fixtures import admission_review, pod, served, snapshot

from webhook.admission import AdmissionConfig, review_with_info
from webhook.admission.extended import template_object
from webhook.admission.templates_writer import APPLY_PATCH, ApiTemplateWriter, TemplateWriteError
from webhook.config.profile import load_profile
from webhook.server.certs import ensure_certs
from webhook.state.live.client import load_api_client

TOKEN = "t0k3n-for-tests"
TEMPLATE = template_object("ml", "gpu.example.com", 2)
PATH = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates/draguard-gpu.example.com-2"


class FakeAPIServer:
    """Records every request; answers with `status` and `body` (201 and the object by default), or
    holds the answer until `release` is set."""

    def __init__(self, certs: Any) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 201
        self.body: dict[str, Any] | None = None
        self.release: threading.Event | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_PATCH(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                outer.requests.append(
                    {
                        "method": "PATCH",
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": raw,
                    }
                )
                if outer.release is not None:
                    outer.release.wait(10)
                body = outer.body if outer.body is not None else yaml.safe_load(raw)
                data = json.dumps(body).encode()
                try:
                    self.send_response(outer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (ConnectionError, ssl.SSLError):  # the writer gave up waiting (a timeout test)
                    self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certs.tls_cert, certs.tls_key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.release is not None:
            self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def certs(tmp_path: Path) -> Any:
    return ensure_certs(tmp_path / "certs", ["localhost"], ["127.0.0.1"])


@pytest.fixture
def server(certs: Any) -> Iterator[FakeAPIServer]:
    s = FakeAPIServer(certs)
    yield s
    s.stop()


def _kubeconfig(tmp_path: Path, ca: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {"server": f"https://127.0.0.1:{port}", "certificate-authority": str(ca)},
                    }
                ],
                "users": [{"name": "u", "user": {"token": TOKEN}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def _writer(tmp_path: Path, certs: Any, port: int, manager: str = "draguard-test") -> ApiTemplateWriter:
    config = _kubeconfig(tmp_path, certs.ca_cert, port)
    return ApiTemplateWriter(lambda: load_api_client(str(config)), field_manager=manager)


def test_apply_is_a_server_side_apply_patch(tmp_path: Path, certs: Any, server: FakeAPIServer) -> None:
    _writer(tmp_path, certs, server.port).apply(TEMPLATE, timeout=5)
    [req] = server.requests
    url = urlsplit(req["path"])
    assert (req["method"], url.path) == ("PATCH", PATH)
    assert parse_qs(url.query) == {"fieldManager": ["draguard-test"], "force": ["true"]}
    assert req["headers"]["content-type"] == APPLY_PATCH
    assert req["headers"]["authorization"] == f"Bearer {TOKEN}"
    assert yaml.safe_load(req["body"]) == TEMPLATE


def test_a_refusal_names_the_status_and_the_api_servers_message(
    tmp_path: Path, certs: Any, server: FakeAPIServer
) -> None:
    server.status = 403
    server.body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": 'resourceclaimtemplates.resource.k8s.io "draguard-gpu.example.com-2" is forbidden: User '
        '"system:serviceaccount:draguard-system:draguard" cannot patch resource "resourceclaimtemplates"',
        "reason": "Forbidden",
        "code": 403,
    }
    with pytest.raises(TemplateWriteError) as e:
        _writer(tmp_path, certs, server.port).apply(TEMPLATE, timeout=5)
    assert e.value.status == 403
    assert (
        str(e.value)
        == f"applying ResourceClaimTemplate ml/draguard-gpu.example.com-2: HTTP 403: {server.body['message']}"
    )


def test_no_server_or_no_answer_in_time(tmp_path: Path, certs: Any, server: FakeAPIServer) -> None:
    server.release = threading.Event()
    with pytest.raises(
        TemplateWriteError, match="applying ResourceClaimTemplate ml/draguard-gpu.example.com-2: "
    ) as e:
        _writer(tmp_path, certs, server.port).apply(TEMPLATE, timeout=0.2)
    assert e.value.status is None
    server.release.set()
    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now
    with pytest.raises(TemplateWriteError) as e:
        _writer(tmp_path, certs, port).apply(TEMPLATE, timeout=2)
    assert e.value.status is None
    with pytest.raises(TemplateWriteError, match="no time left"):
        _writer(tmp_path, certs, server.port).apply(TEMPLATE, timeout=0)


def test_a_translated_pod_writes_its_template_through_the_api(
    tmp_path: Path, certs: Any, server: FakeAPIServer
) -> None:
    config = AdmissionConfig(
        endpoint="mutate",
        profile=load_profile("1.35"),
        extended_resources="translate",
        templates=_writer(tmp_path, certs, server.port, manager="draguard"),
    )
    p = pod("trainer")
    p["spec"]["containers"][0]["resources"] = {
        "limits": {"example.com/h100": "2"},
        "requests": {"example.com/h100": "2"},
    }
    out, info = review_with_info(admission_review(served(p)), snapshot(), config)
    assert info.extended == "translated" and out["response"]["allowed"] is True
    ops = json.loads(base64.b64decode(out["response"]["patch"]))
    assert ops[-1]["value"] == [
        {"name": "container-0-request-0", "resourceClaimTemplateName": "draguard-h100.example.com-2"}
    ]
    [req] = server.requests
    assert parse_qs(urlsplit(req["path"]).query)["fieldManager"] == ["draguard"]
    assert yaml.safe_load(req["body"]) == template_object("ml", "h100.example.com", 2)
    server.status = 500
    server.body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": "etcdserver: request timed out",
        "code": 500,
    }
    closed = AdmissionConfig(
        endpoint="mutate",
        profile=load_profile("1.35"),
        extended_resources="translate",
        templates=config.templates,
        failure_mode="closed",
    )
    out, info = review_with_info(admission_review(served(p)), snapshot(), closed)
    assert (
        out["response"]["allowed"] is False
        and "etcdserver: request timed out" in out["response"]["status"]["message"]
    )


def test_a_configuration_that_does_not_load_is_a_write_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing-kubeconfig")
    with pytest.raises(TemplateWriteError, match=f"no API client: --kubeconfig {missing}: no such file"):
        ApiTemplateWriter(lambda: load_api_client(missing)).apply(TEMPLATE, timeout=5)
