"""The connection side of `draguard serve`: an asyncio HTTP/1.1 front that holds sockets, never threads.

A worker's event loop accepts connections, runs the TLS handshake, reads the request head and body and
writes answers; only a complete request reaches the request threads (`Handler`, run in the executor). So
a client that connects and stays silent, stops in the middle of a ClientHello, or sends its headers or
body a byte a second costs a file descriptor and a few KiB, never a request thread.

Bounds (`FrontLimits`), each closing the connection when missed:
- `read_seconds`: one deadline for the TLS handshake, the request head and the body of a new
  connection (from accept), and for the head and body of each later request on a kept-alive one (from
  its first byte). The body must also arrive within the review's own window (the URL's `?timeout=`).
- `keepalive_seconds`: idle time between two requests; `write_seconds`: to write one answer.
- `max_connections` per worker: at the cap the connection that has waited longest for its request (or
  idled longest) is closed to make room; when every connection is busy with a request, the new one is
  refused at once (reset), never queued.
- `max_head_bytes`, `max_headers`, `max_body_bytes` per request; `body_budget_bytes` for the bodies
  of all the requests a worker reads and holds at once (a body waits, paused, until its share is free).
  A body of at most `small_body_bytes` (a head's size) reads without a share, as its head did: a
  thousand clients declaring 100 KB and trickling it cannot make a 2 KB review wait behind them
  (worst case, every connection holding one: max_connections x (head + small body)).
- `large_body_bytes` / `large_concurrency`: requests with bodies above the first are handled at most
  this many at a time (decoding one costs up to ~140 MiB: wire.MAX_REVIEW_OBJECTS).

Errors the front answers itself (400, 408, 413, 431, 501) are `metav1.Status` JSON as the handler's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NoReturn, Protocol
from urllib.parse import parse_qs, urlsplit

from webhook.server.stream import Stream, reset

log = logging.getLogger("draguard.front")

CRLF2 = b"\r\n\r\n"
LINGER_BYTES = 8 << 20  # read and dropped after an error answer, at most (then the connection is reset)
LINGER_SECONDS = 1.0
LINE_LIMIT = 4096  # a chunk-size line or a trailer field
TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
REASONS = {
    100: "Continue",
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class FrontLimits:
    read_seconds: float = 2.0
    keepalive_seconds: float = 60.0
    write_seconds: float = 5.0
    max_connections: int = 2048
    max_head_bytes: int = 64 << 10
    max_headers: int = 100
    max_body_bytes: int = 7 << 20
    body_budget_bytes: int = 28 << 20
    small_body_bytes: int = 64 << 10
    large_body_bytes: int = 1 << 20
    large_concurrency: int = 1
    tls_shutdown_seconds: float = 1.0


@dataclass(frozen=True)
class Request:
    method: str
    target: str  # as sent: path and query
    path: str
    query: str
    version: str  # "HTTP/1.1" or "HTTP/1.0"
    headers: tuple[tuple[str, str], ...]  # names lower-cased, in order
    body: bytes
    peer: tuple[str, int]
    received: float  # time.monotonic() of the request's first byte (of the accept, for a new connection)
    scheme: str = "https"
    server: tuple[str, int] = ("", 0)
    client_certified: bool = (
        False  # a client certificate verified against --client-ca came with the handshake
    )

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


class Handler(Protocol):
    """Answers one complete request (called on a request thread; it must not raise)."""

    def __call__(self, request: Request) -> Reply: ...


class Observer(Protocol):
    """What the front reports (metrics, access log); called on the event loop's thread."""

    def connection_closed(self, reason: CloseReason) -> None: ...

    def open_connections(self, count: int) -> None: ...

    def rejected(self, request_path: str, code: int) -> None: ...

    def answered(self, request: Request | None, status: int, size: int, seconds: float) -> None: ...


class CloseReason(StrEnum):
    """Why the front closed a connection (a closed set: metric labels)."""

    DONE = "done"  # the client closed it, or asked to (Connection: close), or an error was answered
    IDLE = "idle"  # kept-alive longer than keepalive_seconds
    READ_TIMEOUT = "read_timeout"  # handshake, head or body not complete before the deadline
    WRITE_TIMEOUT = "write_timeout"
    TLS_ERROR = "tls_error"  # the handshake failed (not TLS, no client certificate, ...)
    EVICTED = "evicted"  # closed to make room at max_connections
    REFUSED = "refused"  # at max_connections with nothing to evict
    BAD_REQUEST = "bad_request"
    DRAINED = "drained"  # closed by a stopping worker


# closed with close_notify and FIN (what was answered, an alert included, reaches the client); the others
# with a reset: nothing is owed to a client that stalled or was evicted
_GRACEFUL = frozenset(
    {CloseReason.DONE, CloseReason.DRAINED, CloseReason.IDLE, CloseReason.BAD_REQUEST, CloseReason.TLS_ERROR}
)


class Phase(StrEnum):
    HANDSHAKE = "handshake"
    WAITING = "waiting"  # kept alive, no byte of the next request yet
    READING = "reading"
    BUSY = "busy"  # a request is being answered


class _Rejected(Exception):
    def __init__(self, code: int, message: str, reason: CloseReason = CloseReason.BAD_REQUEST) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


class _Closed(Exception):
    def __init__(self, reason: CloseReason) -> None:
        super().__init__(reason.value)
        self.reason = reason


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    peer: tuple[str, int]
    phase: Phase = Phase.HANDSHAKE
    since: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None
    stream: Stream | None = None
    evicted: bool = False

    def enter(self, phase: Phase) -> None:
        self.phase = phase
        self.since = time.monotonic()


class BodyBudget:
    """Bytes of request bodies one worker holds at once; waiters are served in arrival order."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def acquire(self, n: int) -> None:
        n = min(n, self.total)
        if not self._waiters and self.used + n <= self.total:
            self.used += n
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (n, future)
        self._waiters.append(entry)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(n)  # granted, then cancelled before it was used
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(entry)
                self._wake()
            raise

    def release(self, n: int) -> None:
        self.used -= min(n, self.total)
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            n, future = self._waiters[0]
            if future.done():
                self._waiters.popleft()
                continue
            if self.used + n > self.total:
                return
            self._waiters.popleft()
            self.used += n
            future.set_result(None)


def parse_timeout(target: str) -> float | None:
    """The URL's `?timeout=` (a Go duration: the API server's webhook timeoutSeconds), in seconds."""
    from webhook.server.wire import parse_go_duration

    query = urlsplit(target).query
    if "timeout=" not in query:
        return None
    values = parse_qs(query, keep_blank_values=True).get("timeout")
    return parse_go_duration(values[0]) if values else None


class Front:
    """One worker's connections (see the module docstring). `serve()` runs until `stop()`."""

    def __init__(
        self,
        limits: FrontLimits,
        handler: Handler,
        executor: Executor,
        tls: Callable[[], ssl.SSLContext] | None,
        observer: Observer,
        error_body: Callable[[int, str], bytes],
        body_window: Callable[[str, float], float],
    ) -> None:
        self.limits = limits
        self.handler = handler
        self.executor = executor
        self.tls = tls
        self.observer = observer
        self.error_body = error_body
        self.body_window = body_window  # (target, received) -> the latest time the body may complete
        self.draining = False
        self._conns: dict[_Conn, None] = {}  # insertion-ordered
        self._budget = BodyBudget(limits.body_budget_bytes)
        self._large = asyncio.Semaphore(limits.large_concurrency)
        self._accepting: list[asyncio.Task[None]] = []
        self._listeners: list[socket.socket] = []

    # --- accepting -------------------------------------------------------------------------------
    def start(self, listeners: Iterable[socket.socket]) -> None:
        loop = asyncio.get_running_loop()
        for listener in listeners:
            listener.setblocking(False)
            self._listeners.append(listener)
            self._accepting.append(loop.create_task(self._accept_loop(listener)))

    async def _accept_loop(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, peer = await loop.sock_accept(listener)
            except asyncio.CancelledError:
                raise
            except OSError as e:  # EMFILE and friends: back off briefly, the connections already held go on
                log.warning("accept failed: %s", e)
                await asyncio.sleep(0.1)
                continue
            self._admit(sock, peer if isinstance(peer, tuple) else ("", 0))

    def _admit(self, sock: socket.socket, peer: tuple[str, int]) -> None:
        if len(self._conns) >= self.limits.max_connections and not self._evict_one():
            reset(sock)
            self.observer.connection_closed(CloseReason.REFUSED)
            return
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(sock, (str(peer[0]), int(peer[1])))
        self._conns[conn] = None
        self.observer.open_connections(len(self._conns))
        conn.task = asyncio.get_running_loop().create_task(self._serve(conn))

    def _evict_one(self) -> bool:
        """Close the connection that has waited longest without a request in hand; False when every
        connection is answering one."""
        oldest: _Conn | None = None
        for conn in self._conns:
            if conn.phase is Phase.BUSY or conn.evicted:
                continue
            if oldest is None or conn.since < oldest.since:
                oldest = conn
        if oldest is None:
            return False
        self._drop(oldest)
        return True

    def _drop(self, conn: _Conn) -> None:
        """Forget `conn` now (its slot is free at once) and end its task."""
        conn.evicted = True
        self._conns.pop(conn, None)
        self.observer.open_connections(len(self._conns))
        self.observer.connection_closed(CloseReason.EVICTED)
        if conn.task is not None:
            conn.task.cancel()  # its `finally` resets the socket
        else:
            reset(conn.sock)

    # --- one connection --------------------------------------------------------------------------
    async def _serve(self, conn: _Conn) -> None:
        loop = asyncio.get_running_loop()
        accepted = loop.time()
        reason = CloseReason.DONE
        stream: Stream | None = None
        try:
            stream = Stream(conn.sock, self.tls() if self.tls is not None else None)
            conn.stream = stream
            try:
                async with asyncio.timeout_at(accepted + self.limits.read_seconds):
                    await stream.handshake()
            except TimeoutError:
                raise _Closed(CloseReason.READ_TIMEOUT) from None
            except (ssl.SSLError, ConnectionError, OSError, asyncio.IncompleteReadError):
                raise _Closed(CloseReason.TLS_ERROR) from None
            first = True
            while await self._one_request(conn, stream, first, accepted):
                first = False
        except _Closed as e:
            reason = e.reason
        except asyncio.CancelledError:
            reason = CloseReason.EVICTED if conn.evicted else CloseReason.DRAINED
        except (ConnectionError, OSError, asyncio.IncompleteReadError, ssl.SSLError):
            reason = CloseReason.DONE
        except Exception:  # a bug in the front must not end the worker's loop
            log.exception("connection from %s failed", conn.peer[0])
        finally:
            if not conn.evicted:
                self._conns.pop(conn, None)
                self.observer.open_connections(len(self._conns))
                self.observer.connection_closed(reason)
            if stream is None:
                reset(conn.sock)
            elif reason in _GRACEFUL:
                await stream.close()
            else:
                stream.abort()

    async def _one_request(
        self,
        conn: _Conn,
        stream: Stream,
        first: bool,
        accepted: float,
    ) -> bool:
        """Read, answer and write one request; whether the connection stays open for another."""
        loop = asyncio.get_running_loop()
        limits = self.limits
        prefix = b""
        received = accepted
        if not first:
            conn.enter(Phase.WAITING)
            try:
                async with asyncio.timeout(limits.keepalive_seconds):
                    prefix = await stream.readexactly(1)
            except TimeoutError:
                raise _Closed(CloseReason.IDLE) from None
            except asyncio.IncompleteReadError:
                raise _Closed(CloseReason.DONE) from None
            received = loop.time()
        conn.enter(Phase.READING)
        deadline = received + limits.read_seconds
        try:
            async with asyncio.timeout_at(deadline):
                head = await _read_head(stream, prefix, limits.max_head_bytes)
        except TimeoutError:
            raise _Closed(CloseReason.READ_TIMEOUT) from None
        except asyncio.IncompleteReadError:
            raise _Closed(CloseReason.DONE) from None
        except asyncio.LimitOverrunError:
            return await self._refuse(
                stream,
                None,
                received,
                431,
                f"the request head is larger than {limits.max_head_bytes} bytes",
            )
        try:
            method, target, version, headers = _parse_head(head, limits.max_headers)
            length, chunked = _framing(headers)
        except _Rejected as e:
            return await self._refuse(stream, None, received, e.code, e.message)
        path = urlsplit(target).path or "/"
        if length is not None and length > limits.max_body_bytes:
            return await self._refuse(
                stream,
                path,
                received,
                413,
                f"the request body is larger than the limit of {limits.max_body_bytes} bytes",
            )
        want = length if length is not None else (limits.max_body_bytes if chunked else 0)
        if want <= limits.small_body_bytes:
            want = 0
        reserved = 0
        try:
            try:
                async with asyncio.timeout_at(min(deadline, self.body_window(target, received))):
                    if want:
                        await self._budget.acquire(want)
                        reserved = want
                    if (length or chunked) and _expects_continue(headers):
                        await stream.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    body = await _read_body(stream, length, chunked, limits.max_body_bytes)
            except TimeoutError:
                return await self._refuse(
                    stream,
                    path,
                    received,
                    408,
                    "the request body did not arrive before the deadline",
                    CloseReason.READ_TIMEOUT,
                )
            except _Rejected as e:
                return await self._refuse(stream, path, received, e.code, e.message)
            request = Request(
                method=method,
                target=target,
                path=path,
                query=urlsplit(target).query,
                version=version,
                headers=headers,
                body=body,
                peer=conn.peer,
                received=received,
                server=_sockname(conn.sock),
                client_certified=stream.client_certified,
            )
            conn.enter(Phase.BUSY)
            reply = await self._dispatch(request)
        finally:
            if reserved:
                self._budget.release(reserved)
        keep_alive = _wants_keep_alive(version, headers) and not self.draining
        await self._write(stream, reply, keep_alive)
        self.observer.answered(request, reply.status, len(reply.body), loop.time() - received)
        return keep_alive

    async def _refuse(
        self,
        stream: Stream,
        path: str | None,
        received: float,
        code: int,
        message: str,
        reason: CloseReason = CloseReason.BAD_REQUEST,
    ) -> NoReturn:
        """Answer a request the front does not hand on (a metav1.Status), then close the connection: what
        is left of the request on the wire cannot be trusted to frame the next one."""
        self.observer.rejected(path or "", code)
        reply = Reply(code, (("Content-Type", "application/json"),), self.error_body(code, message))
        await self._write(stream, reply, keep_alive=False)
        self.observer.answered(None, code, len(reply.body), asyncio.get_running_loop().time() - received)
        if reason is not CloseReason.READ_TIMEOUT:  # read what the client is still sending (bounded), so
            await _discard(stream, LINGER_BYTES, LINGER_SECONDS)  # closing does not reset the answer away
        raise _Closed(reason)

    async def _dispatch(self, request: Request) -> Reply:
        loop = asyncio.get_running_loop()
        if len(request.body) > self.limits.large_body_bytes:
            async with self._large:
                return await loop.run_in_executor(self.executor, self.handler, request)
        return await loop.run_in_executor(self.executor, self.handler, request)

    async def _write(self, stream: Stream, reply: Reply, keep_alive: bool) -> None:
        lines = [f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Unknown')}"]
        for name, value in reply.headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {len(reply.body)}")
        lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        try:
            async with asyncio.timeout(self.limits.write_seconds):
                await stream.write(head + reply.body)
        except TimeoutError:
            raise _Closed(CloseReason.WRITE_TIMEOUT) from None

    # --- stopping --------------------------------------------------------------------------------
    def begin_drain(self) -> None:
        """Answers from now on close their connection (clients reconnect, elsewhere once the endpoint is
        gone); requests on kept-alive connections and new connections are still answered."""
        self.draining = True

    def stop_accepting(self) -> None:
        for task in self._accepting:
            task.cancel()
        self._accepting.clear()
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.close()
        self._listeners.clear()

    def close_idle(self) -> None:
        """Close every connection that is not in the middle of a request."""
        for conn in list(self._conns):
            if conn.phase in (Phase.WAITING, Phase.HANDSHAKE) and conn.task is not None:
                conn.task.cancel()

    def busy(self) -> int:
        return sum(1 for c in self._conns if c.phase in (Phase.BUSY, Phase.READING))

    def open_count(self) -> int:
        return len(self._conns)

    async def close_all(self) -> None:
        tasks = [c.task for c in self._conns if c.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=self.limits.tls_shutdown_seconds + 1.0)


async def _discard(stream: Stream, most: int, seconds: float) -> None:
    with contextlib.suppress(TimeoutError, ConnectionError, OSError):
        async with asyncio.timeout(seconds):
            while most > 0:
                chunk = await stream.read(min(most, 64 << 10))
                if not chunk:
                    return
                most -= len(chunk)


async def _read_head(stream: Stream, prefix: bytes, limit: int) -> bytes:
    """The request line and header fields up to the empty line (empty lines before the request line
    are ignored, RFC 9112 2.2)."""
    head = (prefix + await stream.readuntil(CRLF2, limit)).lstrip(b"\r\n")
    while not head:
        head = (await stream.readuntil(CRLF2, limit)).lstrip(b"\r\n")
    return head


async def _read_body(stream: Stream, length: int | None, chunked: bool, cap: int) -> bytes:
    if length is not None:
        return await stream.readexactly(length) if length else b""
    if not chunked:
        return b""
    parts: list[bytes] = []
    total = 0
    while True:
        line = await stream.readuntil(b"\r\n", LINE_LIMIT)
        size_text = line[:-2].split(b";", 1)[0].strip()
        if not size_text or len(size_text) > 16 or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
            raise _Rejected(400, "the chunked request body is malformed (a chunk size is not hex)")
        size = int(size_text, 16)
        if size == 0:
            while (await stream.readuntil(b"\r\n", LINE_LIMIT)) != b"\r\n":  # trailer fields, ignored
                pass
            return b"".join(parts)
        total += size
        if total > cap:
            raise _Rejected(413, f"the request body is larger than the limit of {cap} bytes")
        parts.append(await stream.readexactly(size))
        if await stream.readexactly(2) != b"\r\n":
            raise _Rejected(400, "the chunked request body is malformed (a chunk is not followed by CRLF)")


def _sockname(sock: socket.socket) -> tuple[str, int]:
    try:
        name = sock.getsockname()
    except OSError:
        return ("", 0)
    return (str(name[0]), int(name[1])) if isinstance(name, tuple) else ("", 0)


def _path_of(target: object) -> str:
    return urlsplit(target).path if isinstance(target, str) else ""


def _parse_head(head: bytes, max_headers: int) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[0] or not all(c in TOKEN for c in parts[0]):
        raise _Rejected(400, "the request line is malformed (expected METHOD TARGET HTTP/1.1)")
    method, target, version = (p.decode("latin-1") for p in parts)
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise _Rejected(400, "only HTTP/1.0 and HTTP/1.1 are served")
    if not target.startswith("/") or any(c <= " " or c == "\x7f" for c in target):
        raise _Rejected(400, "the request target is malformed (expected an absolute path)")
    if len(lines) - 1 > max_headers:
        raise _Rejected(431, f"the request has more than {max_headers} header fields")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or not all(c in TOKEN for c in name):
            raise _Rejected(400, "a header field is malformed (obsolete line folding or no name)")
        text = value.strip(b" \t")
        if any(c < 0x20 and c != 0x09 or c == 0x7F for c in text):
            raise _Rejected(400, "a header field value holds a control character")
        headers.append((name.decode("ascii").lower(), text.decode("latin-1")))
    return method, target, version, tuple(headers)


def _framing(headers: tuple[tuple[str, str], ...]) -> tuple[int | None, bool]:
    """(Content-Length, chunked) as RFC 9112 6.3 reads them; a conflict is a 400."""
    lengths = {v.strip() for k, v in headers if k == "content-length" for v in v.split(",")}
    codings = [c.strip().lower() for k, v in headers if k == "transfer-encoding" for c in v.split(",")]
    if codings:
        if lengths:
            raise _Rejected(400, "the request has both Content-Length and Transfer-Encoding")
        if codings != ["chunked"]:
            raise _Rejected(501, "only the chunked transfer coding is supported")
        return None, True
    if not lengths:
        return None, False
    if len(lengths) > 1:
        raise _Rejected(400, "the request has conflicting Content-Length values")
    text = lengths.pop()
    if not text.isdigit() or len(text) > 18:
        raise _Rejected(400, "the Content-Length is not a number")
    return int(text), False


def _wants_keep_alive(version: str, headers: tuple[tuple[str, str], ...]) -> bool:
    tokens = {t.strip().lower() for k, v in headers if k == "connection" for t in v.split(",")}
    if "close" in tokens:
        return False
    return version == "HTTP/1.1" or "keep-alive" in tokens


def _expects_continue(headers: tuple[tuple[str, str], ...]) -> bool:
    return any(k == "expect" and v.strip().lower() == "100-continue" for k, v in headers)
