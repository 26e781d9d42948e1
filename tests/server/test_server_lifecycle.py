"""`draguard serve` over its lifetime: the embedded default, certificate rotation under load, client
certificates, and a graceful stop that finishes the request in flight. Each test runs its own server."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
from cryptography import x509
from server_proc import EXAMPLES, ROOT, Server, draguard, example_review, make_certs, metric_samples, wait_for


def _serial(server: Server) -> int:
    """The serial number of the certificate a new connection is served."""
    ctx = server.context()
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as plain:
        with ctx.wrap_socket(plain, server_hostname="127.0.0.1") as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def test_embedded_default_creates_certificates_and_serves_the_examples(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(EXAMPLES)
    server = Server(tmp_path, cwd=tmp_path, drain=None)  # no flags but a free port
    try:
        for name in ("ca.crt", "ca.key", "tls.crt", "tls.key"):
            assert (tmp_path / "certs" / name).is_file()
        for key in ("ca.key", "tls.key"):
            assert stat.S_IMODE((tmp_path / "certs" / key).stat().st_mode) == 0o600
        status, data = server.request("GET", "/readyz")
        assert status == 200 and json.loads(data)["objects"]["DeviceClass"] >= 1
        status, answer = server.review(example_review("claim-create.json"))
        assert (
            status == 200
            and answer["response"]["uid"] == example_review("claim-create.json")["request"]["uid"]
        )
        assert "created a CA and a serving certificate in certs/" in server.log()
        # a --state directory, loaded by every worker: synced (the bundled DraguardNotReady alert stays off)
        synced = ("draguard_state_synced", ())
        wait_for(
            "every worker to load",
            lambda: metric_samples(server.request("GET", "/metrics")[1].decode())[synced],
        )
    finally:
        assert server.stop() == 0, server.log()
    cert = x509.load_pem_x509_certificate((tmp_path / "certs" / "tls.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    assert {str(a) for a in sans.get_values_for_type(x509.IPAddress)} >= {"127.0.0.1", "::1"}


def _large_state(state: Path, nodes: int = 400) -> int:
    """`nodes` nodes of 8 GPUs each (slices of one node, 20 per file) and one class: a state whose
    first load takes a while. Returns the number of slices."""
    state.mkdir()
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    }
    (state / "class.json").write_text(json.dumps(cls))
    for f in range(0, nodes, 20):
        items = []
        for n in range(f, min(nodes, f + 20)):
            devices = [
                {
                    "name": f"gpu-{d}",
                    "attributes": {"model": {"string": "H100"}, "serial": {"string": f"S{n:04d}{d}"}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for d in range(8)
            ]
            items.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"node-{n}-gpu"},
                    "spec": {
                        "driver": "gpu.example.com",
                        "nodeName": f"node-{n}",
                        "pool": {"name": f"node-{n}", "generation": 1, "resourceSliceCount": 1},
                        "devices": devices,
                    },
                }
            )
        (state / f"slices-{f:04d}.json").write_text(
            json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        )
    return nodes


def test_probes_sent_before_the_state_is_loaded_are_answered_once_it_is(tmp_path: Path) -> None:
    """A worker accepts connections only once its state is published and its caches warmed: a /readyz
    or /healthz sent while the workers still load waits (no 200 for an empty or partial state, no 503
    flapping) and then reports the whole state."""
    certs = tmp_path / "certs"
    make_certs(certs)
    slices = _large_state(tmp_path / "state")
    server = Server(
        tmp_path,
        "--state", str(tmp_path / "state"),
        "--certs", str(certs),
        "--workers", "2",
        certs=certs,
        wait_ready=False,
    )  # fmt: skip
    try:
        answers: dict[str, tuple[int, bytes, str]] = {}

        def probe(path: str) -> None:
            status, data = server.request("GET", path)
            answers[path] = (status, data, server.log())  # the log as the answer arrived

        threads = [threading.Thread(target=probe, args=(p,)) for p in ("/readyz", "/healthz")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        status, data, log_then = answers["/readyz"]
        assert status == 200, data
        body = json.loads(data)
        assert body["status"] == "ready" and body["stateVersion"] >= 1
        assert body["objects"]["ResourceSlice"] == slices and body["objects"]["DeviceClass"] == 1
        assert "engine caches warmed up" in log_then  # the answering worker had loaded its state first
        status, data, log_then = answers["/healthz"]
        assert (status, data) == (200, b"ok\n") and "engine caches warmed up" in log_then
    finally:
        assert server.stop() == 0, server.log()


def test_an_explicit_certs_directory_must_hold_the_files(tmp_path: Path) -> None:
    p = draguard("serve", "--certs", str(tmp_path / "empty"), "--state", str(EXAMPLES), "--port", "0")
    assert p.returncode == 2
    assert "no tls.crt and tls.key there" in p.stderr and "draguard certs --dir" in p.stderr
    assert not (tmp_path / "empty").exists()


def test_certificates_rotate_under_load_without_a_failed_request(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    make_certs(certs)
    server = Server(tmp_path, "--state", str(EXAMPLES / "simulate"), "--certs", str(certs), certs=certs)
    ar = json.dumps(example_review("claim-create.json")).encode()
    stop = threading.Event()
    failures: list[str] = []
    done = {"new": 0, "kept": 0}
    kept_sockets: set[int] = set()

    def fresh_connections() -> None:
        while not stop.is_set():
            try:
                status, _ = server.request("POST", "/validate", ar)
                if status != 200:
                    failures.append(f"new connection: HTTP {status}")
                done["new"] += 1
            except (OSError, http.client.HTTPException) as e:
                failures.append(f"new connection: {e!r}")

    def kept_alive() -> None:
        conn = server.connection()
        while not stop.is_set():
            try:
                status, _ = server.request("POST", "/validate", ar, conn=conn)
                kept_sockets.add(id(conn.sock))
                if status != 200:
                    failures.append(f"kept-alive connection: HTTP {status}")
                done["kept"] += 1
            except (OSError, http.client.HTTPException) as e:
                failures.append(f"kept-alive connection: {e!r}")
        conn.close()

    threads = [threading.Thread(target=f) for f in (fresh_connections, fresh_connections, kept_alive)]
    for t in threads:
        t.start()
    try:
        seen = [_serial(server)]
        for _ in range(3):  # `draguard certs` renews: new key and certificate, same CA, atomic renames
            make_certs(certs)
            new = x509.load_pem_x509_certificate((certs / "tls.crt").read_bytes()).serial_number
            wait_for("new connections to get the renewed certificate", lambda n=new: _serial(server) == n)
            seen.append(new)
        # A careless rotation: the key rewritten in place first, its certificate a moment later. In
        # between, the pair does not match: the previous certificate stays in service.
        staging = tmp_path / "staging"
        staging.mkdir()
        for name in ("ca.crt", "ca.key"):
            (staging / name).write_bytes((certs / name).read_bytes())
        make_certs(staging)  # the same CA
        (certs / "tls.key").write_bytes((staging / "tls.key").read_bytes())
        wait_for("the mismatching pair to be refused", lambda: "stays in use" in server.log())
        assert _serial(server) == seen[-1]
        m = metric_samples(server.request("GET", "/metrics")[1].decode())
        assert m[("draguard_tls_certificate_reloads_total", (("result", "error"),))] >= 1
        (certs / "tls.crt").write_bytes((staging / "tls.crt").read_bytes())
        final = x509.load_pem_x509_certificate((certs / "tls.crt").read_bytes()).serial_number
        wait_for("the completed pair to be served", lambda: _serial(server) == final)
        wait_for("some more requests", lambda: done["kept"] > 20 and done["new"] > 20)
    finally:
        stop.set()
        for t in threads:
            t.join()
        code = server.stop()
    assert failures == [], failures[:5]
    assert len(set(seen)) == 4
    assert len(kept_sockets) == 1  # the kept-alive connection lived through every rotation
    assert code == 0, server.log()


def test_a_client_certificate_is_required_with_client_ca(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    make_certs(certs, "--client", "kube-apiserver")
    other = tmp_path / "other"
    make_certs(other, "--client", "intruder")
    server = Server(
        tmp_path,
        "--state", str(EXAMPLES / "simulate"),
        "--certs", str(certs),
        "--client-ca", str(certs / "ca.crt"),
        "--workers", "1",
        certs=certs,
        client=(certs / "client.crt", certs / "client.key"),
    )  # fmt: skip
    try:
        ar = example_review("claim-create.json")
        status, answer = server.review(ar)
        assert status == 200 and answer["response"]["allowed"] is True
        # a certificate of another CA fails the handshake
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            server.review(
                ar, conn=server.connection(server.context((other / "client.crt", other / "client.key")))
            )
        # none at all: the probes and /metrics answer (the kubelet and a scrape have none), the admission
        # endpoints do not
        anonymous = server.connection(server.context(anonymous=True))
        assert server.request("GET", "/healthz", conn=anonymous)[0] == 200
        assert server.request("GET", "/readyz", conn=anonymous)[0] == 200
        assert server.request("GET", "/metrics", conn=anonymous)[0] == 200
        for path in ("/validate", "/mutate"):
            status, body = server.request("POST", path, json.dumps(ar).encode(), conn=anonymous)
            assert status == 401, body
            answer = json.loads(body)
            assert answer["kind"] == "Status" and answer["reason"] == "Unauthorized" and answer["code"] == 401
            assert "--client-ca" in answer["message"]
    finally:
        assert server.stop() == 0, server.log()


def test_sigterm_finishes_the_request_in_flight_then_exits_0(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    make_certs(certs)
    server = Server(
        tmp_path, "--state", str(EXAMPLES / "simulate"), "--certs", str(certs), "--workers", "1", certs=certs
    )
    ar = example_review("claim-create.json")
    body = json.dumps(ar).encode()
    ctx = server.context()
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as plain:
        with ctx.wrap_socket(plain, server_hostname="127.0.0.1") as tls:
            conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx)
            conn.sock = tls  # one kept-alive connection for both requests
            assert server.request("POST", "/validate", body, conn=conn)[0] == 200
            head = (
                b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            tls.sendall(head + body[:100])  # the second request is under way ...
            server.proc.send_signal(signal.SIGTERM)  # ... when the stop begins
            wait_for("the arbiter to start stopping", lambda: "Handling signal: term" in server.log())
            tls.sendall(body[100:])
            response = http.client.HTTPResponse(tls)
            response.begin()
            assert response.status == 200
            assert json.loads(response.read())["response"]["uid"] == ar["request"]["uid"]
    assert server.proc.wait(120) == 0, server.log()
    assert server.stop() == 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=10).close()


def test_usage_errors_exit_2_before_anything_starts(tmp_path: Path) -> None:
    make_certs(tmp_path / "certs")
    base = ("serve", "--certs", str(tmp_path / "certs"), "--port", "0")
    for args, message in [
        (("--state", str(tmp_path / "missing")), "no such file or directory"),
        (("--state", str(EXAMPLES), "--client-ca", str(tmp_path / "nope.crt")), "--client-ca"),
        (("--state", str(EXAMPLES), "--feature-gates", "Nope=true"), "unrecognized feature gate: Nope"),
        (("--state", str(EXAMPLES), "--policy", str(tmp_path / "nope.yaml")), "nope.yaml"),
    ]:
        p = draguard(*base, *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert message in p.stderr, (args, p.stderr)
    (tmp_path / "certs" / "tls.crt").write_text("not a certificate\n")
    p = draguard(*base, "--state", str(EXAMPLES))
    assert p.returncode == 2 and "cannot serve TLS with these files" in p.stderr, p.stderr
    assert os.path.isdir(ROOT / "certs")
