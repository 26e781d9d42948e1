"""A byte stream over one accepted socket for the front's event loop: plain TCP or server-side TLS.

TLS runs on memory BIOs (`SSLContext.wrap_bio`), the socket stays non-blocking and every wait is the
event loop's, so a client that stops in the middle of a ClientHello holds no thread. Unlike asyncio's
own SSL transport, what OpenSSL writes when a handshake fails — the alert saying why (`protocol
version`, `certificate required`) — is sent before the connection closes: the API server logs the
reason, not an EOF.

The reading side keeps one buffer: `readuntil` bounds it by its `limit`, `readexactly(n)` by `n` (the
front checked `n` against its caps first); the TLS layer adds at most one socket read (64 KiB).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct

RECV = 64 << 10
CLOSE_SECONDS = 1.0  # sending close_notify at most (a client that reads nothing cannot hold the close)


class Stream:
    def __init__(self, sock: socket.socket, context: ssl.SSLContext | None) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.eof = False
        self._loop = asyncio.get_running_loop()
        self._tls: ssl.SSLObject | None = None
        if context is not None:
            self._in = ssl.MemoryBIO()
            self._out = ssl.MemoryBIO()
            self._tls = context.wrap_bio(self._in, self._out, server_side=True)

    # --- TLS plumbing ----------------------------------------------------------------------------
    async def _flush(self) -> None:
        if self._tls is not None and self._out.pending:
            await self._loop.sock_sendall(self.sock, self._out.read())

    async def _feed(self) -> bool:
        """Read ciphertext into the TLS layer; False at the client's EOF."""
        data = await self._loop.sock_recv(self.sock, RECV)
        if not data:
            self._in.write_eof()
            return False
        self._in.write(data)
        return True

    async def handshake(self) -> None:
        """The TLS handshake (nothing for plain TCP). Raises ssl.SSLError (after sending the alert),
        ConnectionError, or asyncio.IncompleteReadError when the client goes away."""
        tls = self._tls
        if tls is None:
            return
        while True:
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                await self._flush()
                if not await self._feed():
                    raise asyncio.IncompleteReadError(b"", None) from None
                continue
            except ssl.SSLError:
                with contextlib.suppress(OSError, TimeoutError):
                    async with asyncio.timeout(CLOSE_SECONDS):
                        await self._flush()  # the alert
                raise
            await self._flush()
            return

    @property
    def client_certified(self) -> bool:
        """Whether the client presented a certificate that the context verified (after the handshake;
        with CERT_OPTIONAL an unverifiable one fails the handshake, none at all is allowed)."""
        return self._tls is not None and bool(self._tls.getpeercert())

    # --- reading ---------------------------------------------------------------------------------
    async def _fill(self) -> None:
        """At least one more byte in `buffer`, or `eof` set."""
        if self.eof:
            return
        tls = self._tls
        if tls is None:
            data = await self._loop.sock_recv(self.sock, RECV)
            if data:
                self.buffer += data
            else:
                self.eof = True
            return
        while True:
            try:
                data = tls.read(RECV)
            except ssl.SSLWantReadError:
                await self._flush()  # e.g. a TLS 1.3 key update's answer
                if not await self._feed():
                    continue  # the next read reports the EOF (clean or not)
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                self.eof = True
                return
            await self._flush()
            if data:
                self.buffer += data
            else:
                self.eof = True
            return

    async def read(self, most: int) -> bytes:
        """Up to `most` bytes as soon as there are any; b"" at EOF."""
        if not self.buffer:
            await self._fill()
        data = bytes(self.buffer[:most])
        del self.buffer[:most]
        return data

    async def readexactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            if self.eof:
                partial = bytes(self.buffer)
                self.buffer.clear()
                raise asyncio.IncompleteReadError(partial, n)
            await self._fill()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def readuntil(self, separator: bytes, limit: int) -> bytes:
        """Up to and including `separator`; asyncio.LimitOverrunError once `limit` bytes came without it."""
        start = 0
        while True:
            at = self.buffer.find(separator, start)
            if at >= 0:
                end = at + len(separator)
                if end > limit:
                    raise asyncio.LimitOverrunError("separator found beyond the limit", end)
                data = bytes(self.buffer[:end])
                del self.buffer[:end]
                return data
            if len(self.buffer) > limit:
                raise asyncio.LimitOverrunError("separator not found within the limit", len(self.buffer))
            if self.eof:
                partial = bytes(self.buffer)
                self.buffer.clear()
                raise asyncio.IncompleteReadError(partial, None)
            start = max(0, len(self.buffer) - len(separator) + 1)
            await self._fill()

    # --- writing and closing ---------------------------------------------------------------------
    async def write(self, data: bytes) -> None:
        """Send all of `data` (the caller bounds the wait)."""
        tls = self._tls
        if tls is None:
            await self._loop.sock_sendall(self.sock, data)
            return
        view = memoryview(data)
        while view:
            n = tls.write(view[:RECV])
            view = view[n:]
            await self._flush()

    async def close(self) -> None:
        """close_notify (TLS, bounded by CLOSE_SECONDS), then close the socket."""
        if self._tls is not None:
            with contextlib.suppress(ssl.SSLError, OSError, TimeoutError, ValueError):
                try:
                    self._tls.unwrap()
                except ssl.SSLWantReadError:
                    pass  # the client's close_notify is not waited for
                async with asyncio.timeout(CLOSE_SECONDS):
                    await self._flush()
        with contextlib.suppress(OSError):
            self.sock.close()

    def abort(self) -> None:
        """Close at once with a TCP reset."""
        reset(self.sock)


def reset(sock: socket.socket) -> None:
    """Close with a TCP reset (no FIN_WAIT/TIME_WAIT state kept for a refused or evicted peer)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()
