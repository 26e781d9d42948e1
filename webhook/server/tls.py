"""Server TLS contexts that follow the certificate files: rotation without a restart.

`ReloadingTLS.current()` stats the certificate, key (and client-CA) files and builds a new `SSLContext`
when any of them changed; the front (front.py) calls it for every new connection. Every context
it hands out also has an `sni_callback` that moves the handshake onto the newest context, so a server
that kept one context for all connections still serves the rotated certificate. A connection keeps the
context it shook hands with: in-flight requests are never cut. When the new files cannot be used
together (a key renamed before its certificate, a half-written file) the last good context stays in
service and the next connection tries again.

TLS 1.2 is the lowest version offered; with `client_ca` the handshake asks for a client certificate and
fails on one that CA did not sign; the admission endpoints then require one (app.py answers 401 without
it: the API server presents one when its AdmissionConfiguration names it), while the kubelet's probes
and a metrics scrape connect without.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from webhook.server.certs import CertError, not_after

log = logging.getLogger("draguard.tls")

Signature = tuple[tuple[int, int, int, int] | None, ...]


@dataclass(frozen=True)
class Loaded:
    """One built context and what it was built from."""

    context: ssl.SSLContext
    signature: Signature
    expires: float  # the serving certificate's notAfter, Unix seconds
    serial: int


def _stat(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)  # follows symlinks: a Kubernetes Secret volume swaps its `..data` link
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)


class ReloadingTLS:
    """The newest usable server context for a certificate/key pair (and optional client CA)."""

    def __init__(
        self,
        cert: str | Path,
        key: str | Path,
        client_ca: str | Path | None = None,
        on_load: Callable[[Loaded], None] | None = None,
        on_error: Callable[[CertError], None] | None = None,
    ) -> None:
        self.cert, self.key = Path(cert), Path(key)
        self.client_ca = Path(client_ca) if client_ca else None
        self.on_load = on_load
        self.on_error = on_error
        self.failures = 0  # rebuilds that failed (the old context stayed in service)
        self._lock = threading.Lock()
        self._failed: Signature | None = None
        self._loaded = self._build(self._signature())  # raises CertError: a server must not start without

    def _signature(self) -> Signature:
        paths = [self.cert, self.key] + ([self.client_ca] if self.client_ca else [])
        return tuple(_stat(p) for p in paths)

    def _build(self, signature: Signature) -> Loaded:
        try:
            cert_pem = self.cert.read_bytes()
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE
            ctx.load_cert_chain(self.cert, self.key)
            if self.client_ca is not None:
                # asked for and verified when sent; required by the admission endpoints (the app), so the
                # kubelet's probes and a metrics scrape need none
                ctx.verify_mode = ssl.CERT_OPTIONAL
                ctx.load_verify_locations(cafile=str(self.client_ca))
            ctx.sni_callback = self._sni
            expires = not_after(cert_pem)
            from cryptography import x509

            serial = x509.load_pem_x509_certificate(cert_pem).serial_number
        except (OSError, ssl.SSLError, ValueError) as e:
            raise CertError(f"{self.cert} / {self.key}: cannot serve TLS with these files: {e}") from None
        loaded = Loaded(ctx, signature, expires.timestamp(), serial)
        if self.on_load is not None:
            self.on_load(loaded)
        return loaded

    def current(self) -> ssl.SSLContext:
        """The context for a new connection (rebuilt first when the files changed)."""
        loaded = self._loaded
        signature = self._signature()
        if signature == loaded.signature or signature == self._failed:
            return loaded.context
        with self._lock:
            loaded = self._loaded
            if signature == loaded.signature or signature == self._failed:
                return loaded.context
            try:
                self._loaded = loaded = self._build(signature)
                self._failed = None
                log.info("TLS certificate reloaded: %s (serial %x)", self.cert, loaded.serial)
            except CertError as e:
                self.failures += 1
                self._failed = signature  # not retried until the files change again
                log.warning("%s; the previous certificate stays in use", e)
                if self.on_error is not None:
                    self.on_error(e)
        return loaded.context

    @property
    def loaded(self) -> Loaded:
        return self._loaded

    def _sni(self, sock: ssl.SSLObject | ssl.SSLSocket, server_name: str | None, ctx: ssl.SSLContext) -> None:
        newest = self.current()
        if newest is not ctx:
            sock.context = newest
        return None
