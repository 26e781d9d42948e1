"""Hostile clients at the socket (issue 14): a real `draguard serve` (2 workers x 4 threads) while test
sockets hold connections open — silent TCP, a ClientHello cut after 11 bytes, a request head or body
trickling in — and valid reviews must still be answered. Then the bounds themselves: the read deadline
closes stalled connections, the connection cap evicts the longest-waiting one, the head and body caps,
HTTP errors as metav1.Status, the drain after SIGTERM, reload errors on /metrics and /readyz, and the
access log's escaping. Every attacker is bounded in count and time and talks to 127.0.0.1 only."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_proc import (
    EXAMPLES,
    Server,
    StateServer,
    example_review,
    make_certs,
    metric_samples,
    served,
    wait_for,
)

THREADS = 4
WORKERS = 2
CLIENT_TIMEOUT = 60.0  # a review not answered by then counts as starved (the old server: never answered)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Attackers are held for the whole test: the read deadline is long on purpose (a short one would
    hide starvation by closing them)."""
    tmp = tmp_path_factory.mktemp("abuse")
    certs = tmp / "certs"
    make_certs(certs)
    s = Server(
        tmp,
        "--state", str(EXAMPLES / "simulate"),
        "--certs", str(certs),
        "--workers", str(WORKERS),
        "--threads", str(THREADS),
        "--read-timeout", "120",
        "--access-log",
        certs=certs,
    )  # fmt: skip
    yield s
    assert s.stop() == 0, s.log()


def _review_body() -> bytes:
    return json.dumps(example_review("claim-create.json")).encode()


def _valid_reviews(server: Server, n: int) -> list[int]:
    """`n` reviews, each on a new TLS connection (as a fresh API server connection would)."""
    statuses = []
    body = _review_body()
    for _ in range(n):
        conn = http.client.HTTPSConnection(
            "127.0.0.1", server.port, context=server.context(), timeout=CLIENT_TIMEOUT
        )
        try:
            conn.request(
                "POST", "/validate?timeout=10s", body=body, headers={"Content-Type": "application/json"}
            )
            response = conn.getresponse()
            data = response.read()
            assert json.loads(data)["response"]["allowed"] is True, data[:300]
            statuses.append(response.status)
        finally:
            conn.close()
    return statuses


class Held:
    """Attacker sockets, closed when the test ends (whatever happened)."""

    def __init__(self) -> None:
        self.socks: list[socket.socket] = []
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def connect(self, server: Server) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", server.port), timeout=CLIENT_TIMEOUT)
        self.socks.append(s)
        return s

    def trickle(self, socks: list[Any], data: bytes, every: float = 0.5) -> None:
        """Send `data` a byte at a time to each socket, one byte per `every` seconds, until stopped."""

        def run() -> None:
            i = 0
            while not self.stop.is_set() and i < len(data):
                for s in socks:
                    try:
                        s.send(data[i : i + 1])
                    except OSError:
                        pass
                i += 1
                self.stop.wait(every)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        self.threads.append(t)

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(5)
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass


@pytest.fixture
def held() -> Iterator[Held]:
    h = Held()
    yield h
    h.close()


def _client_hello_prefix() -> bytes:
    """The first 11 bytes of a real ClientHello (a TLS record header and the start of the handshake)."""
    ctx = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    hello = outgoing.read()
    assert hello[0] == 0x16  # handshake record
    return hello[:11]


def _tls(server: Server, held: Held) -> ssl.SSLSocket:
    raw = held.connect(server)
    tls = server.context().wrap_socket(raw, server_hostname="127.0.0.1")
    held.socks.append(tls)
    return tls


def _open_connections(server: Server) -> float:
    status, data = server.request("GET", "/metrics")
    assert status == 200
    return metric_samples(data.decode()).get(("draguard_http_connections", ()), 0.0)


def test_silent_connections_do_not_starve_reviews(server: Server, held: Held) -> None:
    for _ in range(300):
        held.connect(server)
    wait_for("the server to hold the silent connections", lambda: _open_connections(server) >= 300)
    assert _valid_reviews(server, 10) == [200] * 10
    assert all(s.fileno() != -1 for s in held.socks)  # still held: nothing was closed to get through


def test_partial_client_hellos_do_not_starve_reviews(server: Server, held: Held) -> None:
    prefix = _client_hello_prefix()
    for _ in range(100):
        held.connect(server).sendall(prefix)
    wait_for("the server to hold the half handshakes", lambda: _open_connections(server) >= 100)
    assert _valid_reviews(server, 10) == [200] * 10


def test_headers_a_byte_at_a_time_do_not_starve_reviews(server: Server, held: Held) -> None:
    socks = [_tls(server, held) for _ in range(4 * WORKERS * THREADS)]  # 4 per request thread
    head = b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" * 4
    held.trickle(socks, head)
    time.sleep(1.0)  # every attacker has sent its first bytes
    assert _valid_reviews(server, 10) == [200] * 10


def test_a_body_a_byte_at_a_time_does_not_starve_reviews(server: Server, held: Held) -> None:
    socks = [_tls(server, held) for _ in range(4 * WORKERS * THREADS)]
    for s in socks:
        s.sendall(
            b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n{"
        )
    held.trickle(socks, b' "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"' * 4)
    time.sleep(1.0)
    assert _valid_reviews(server, 10) == [200] * 10


def test_kept_alive_connections_stay_usable_beside_attackers(server: Server, held: Held) -> None:
    """The API server's own pattern: one connection, many reviews, while others trickle."""
    socks = [_tls(server, held) for _ in range(2 * WORKERS * THREADS)]
    held.trickle(socks, b"GET /healthz HTTP/1.1\r\n" * 8)
    conn = server.connection()
    body = _review_body()
    try:
        for _ in range(5):
            status, data = server.request("POST", "/validate", body, conn=conn)
            assert status == 200 and json.loads(data)["response"]["allowed"] is True
    finally:
        conn.close()


# --- the bounds themselves ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StateServer]:
    """A server with a short read deadline and a small connection cap (one worker)."""
    tmp = tmp_path_factory.mktemp("strict")
    yield from served(
        tmp,
        EXAMPLES / "simulate",
        "--read-timeout", "1",
        "--max-connections", "40",
        "--max-body-bytes", "65536",
        "--reload-interval", "0.1",
        "--access-log",
    )  # fmt: skip


def _closed_by_server(sock: socket.socket | ssl.SSLSocket) -> bool:
    """Whether the server closed the connection (EOF or reset), reading whatever it sent first."""
    sock.settimeout(CLIENT_TIMEOUT)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, ssl.SSLError):
        return True
    except TimeoutError:
        return False
    return True


def _closed_total(server: Server, reason: str) -> float:
    status, data = server.request("GET", "/metrics")
    samples = metric_samples(data.decode())
    return samples.get(("draguard_http_connections_closed_total", (("reason", reason),)), 0.0)


def test_the_read_deadline_closes_stalled_connections(strict: Server, held: Held) -> None:
    before = _closed_total(strict, "read_timeout")
    silent = held.connect(strict)
    half_hello = held.connect(strict)
    half_hello.sendall(_client_hello_prefix())
    slow_head = _tls(strict, held)
    slow_head.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
    for s in (silent, half_hello, slow_head):
        assert _closed_by_server(s)
    assert _closed_total(strict, "read_timeout") >= before + 3


def test_a_body_that_stalls_gets_408_as_a_status(strict: Server, held: Held) -> None:
    tls = _tls(strict, held)
    tls.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
    tls.settimeout(CLIENT_TIMEOUT)
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == 408
    status = json.loads(response.read())
    assert status["kind"] == "Status" and status["code"] == 408 and status["reason"] == "Timeout"


def test_at_the_cap_the_longest_waiting_connection_makes_room(strict: Server, held: Held) -> None:
    """40 connections per worker: 45 silent ones, then a review. The oldest silent ones are closed to
    make room (not the review's); nothing waits in a queue."""
    first = [held.connect(strict) for _ in range(5)]
    for _ in range(40):
        held.connect(strict)
    assert _valid_reviews(strict, 3) == [200] * 3
    assert all(_closed_by_server(s) for s in first)
    assert _closed_total(strict, "evicted") >= 5


def test_a_head_over_the_cap_gets_431(strict: Server, held: Held) -> None:
    tls = _tls(strict, held)
    tls.sendall(b"GET /healthz HTTP/1.1\r\n" + b"X-Filler: " + b"a" * (70 << 10) + b"\r\n\r\n")
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == 431
    assert json.loads(response.read())["kind"] == "Status"


@pytest.mark.parametrize(
    "raw, code",
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /healthz HTTP/2.0\r\n\r\n", 400),
        (b"POST /validate HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", 400),
        (b"POST /validate HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        (b"DELETE /validate HTTP/1.1\r\nHost: x\r\n\r\n", 405),
    ],
)
def test_http_errors_answer_a_metav1_status(strict: Server, held: Held, raw: bytes, code: int) -> None:
    tls = _tls(strict, held)
    tls.sendall(raw)
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == code
    assert response.getheader("Content-Type") == "application/json"
    status = json.loads(response.read())
    assert status["kind"] == "Status" and status["code"] == code and status["status"] == "Failure"


def test_expect_continue_and_chunked_bodies_are_read(strict: Server, held: Held) -> None:
    body = _review_body()
    tls = _tls(strict, held)
    tls.sendall(
        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    assert tls.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
    tls.sendall(body)
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == 200 and json.loads(response.read())["response"]["allowed"] is True
    chunked = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + 100]), body[i : i + 100]) for i in range(0, len(body), 100)
    )
    tls.sendall(
        b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n"
    )  # the same connection: kept alive
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == 200 and json.loads(response.read())["response"]["allowed"] is True


def test_the_access_log_escapes_control_characters(strict: Server, held: Held) -> None:
    tls = _tls(strict, held)
    tls.sendall(
        b"GET /c1-\xc2\x85-\xc2\x9b-\x85 HTTP/1.1\r\nHost: x\r\nUser-Agent: agent\xc2\x9b[2J\x9b\r\n\r\n"
    )
    response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
    response.begin()
    assert response.status == 404
    line = wait_for("the access line", lambda: [ln for ln in strict.log().splitlines() if "/c1-" in ln])[0]
    assert "\x85" not in line and "\x9b" not in line and "\\x85" in line and "\\x9b" in line


def test_a_state_directory_that_fails_to_reload_shows_on_metrics_and_readyz(strict: StateServer) -> None:
    state = strict.state
    samples = metric_samples(strict.request("GET", "/metrics")[1].decode())
    assert samples[("draguard_state_reloads_total", (("result", "error"),))] == 0  # the series exists
    moved = state.with_name("state-away")
    state.rename(moved)
    try:

        def failing() -> dict[str, Any] | None:
            status, data = strict.request("GET", "/readyz")
            assert status == 200  # the last good state still serves
            body: dict[str, Any] = json.loads(data)
            return body if body.get("stateReload", {}).get("failing") else None

        body = wait_for("/readyz to report the reload error", failing)
        assert str(state) in body["stateReload"]["failing"] and body["stateReload"]["errors"] >= 1
        samples = metric_samples(strict.request("GET", "/metrics")[1].decode())
        assert samples[("draguard_state_reloads_total", (("result", "error"),))] >= 1
    finally:
        moved.rename(state)
    wait_for(
        "the error to clear",
        lambda: json.loads(strict.request("GET", "/readyz")[1]).get("stateReload", {}).get("failing") is None,
    )


def test_sigterm_drains_readiness_first_and_answers_kept_alive_connections(tmp_path: Path) -> None:
    """After SIGTERM: /readyz 503 at once; requests on kept-alive connections and on new ones are still
    answered during the drain (with Connection: close); then the server exits 0."""
    certs = tmp_path / "certs"
    make_certs(certs)
    server = Server(
        tmp_path,
        "--state", str(EXAMPLES / "simulate"),
        "--certs", str(certs),
        "--workers", "2",
        "--drain-seconds", "3",
        certs=certs,
    )  # fmt: skip
    body = _review_body()
    conns = [server.connection() for _ in range(17)]
    try:
        for c in conns:
            assert server.request("POST", "/validate", body, conn=c)[0] == 200
        server.proc.send_signal(signal.SIGTERM)
        wait_for("readiness to turn false", lambda: server.get("/readyz")[0] == 503)
        answered = []
        for c in conns:
            c.request("POST", "/validate", body=body, headers={"Content-Type": "application/json"})
            response = c.getresponse()
            answered.append((response.status, response.getheader("Connection")))
            response.read()
        assert answered == [(200, "close")] * 17
        assert server.request("POST", "/validate", body)[0] == 200  # a new connection, still in the drain
    finally:
        for c in conns:
            c.close()
    assert server.proc.wait(120) == 0, server.log()
    assert server.stop() == 0
