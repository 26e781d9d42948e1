"""Certificates from `webhook.server.certs` and contexts from `ReloadingTLS`, on a plain TLS socket server
that keeps one context for all connections (the case the SNI callback is for)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from webhook.server.certs import (
    CertError,
    CertFiles,
    ca_bundle,
    ensure_certs,
    service_names,
)
from webhook.server.tls import ReloadingTLS


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_the_serving_certificate_covers_the_service_names_and_chains_to_the_ca(tmp_path: Path) -> None:
    dns = service_names("draguard", "dra-system")
    files = ensure_certs(tmp_path, dns, ["10.0.0.7"])
    ca, leaf = _cert(files.ca_cert), _cert(files.tls_cert)
    leaf.verify_directly_issued_by(ca)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [
        "draguard",
        "draguard.dra-system",
        "draguard.dra-system.svc",
        "draguard.dra-system.svc.cluster.local",
    ]
    assert [str(a) for a in sans.get_values_for_type(x509.IPAddress)] == ["10.0.0.7"]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert leaf.not_valid_after_utc <= ca.not_valid_after_utc
    assert base64.b64decode(ca_bundle(files.ca_cert)) == files.ca_cert.read_bytes()


def test_renewal_keeps_the_ca_and_new_ca_replaces_it(tmp_path: Path) -> None:
    files = ensure_certs(tmp_path)
    ca1, leaf1 = _cert(files.ca_cert), _cert(files.tls_cert)
    ensure_certs(tmp_path)
    assert _cert(files.ca_cert) == ca1 and _cert(files.tls_cert) != leaf1
    _cert(files.tls_cert).verify_directly_issued_by(ca1)
    ensure_certs(tmp_path, renew=False)  # the embedded default: nothing missing, nothing changes
    leaf2 = _cert(files.tls_cert)
    ensure_certs(tmp_path, renew=False)
    assert _cert(files.tls_cert) == leaf2
    ensure_certs(tmp_path, new_ca=True)
    assert _cert(files.ca_cert) != ca1
    assert list(tmp_path.glob(".*")) == []  # no temporary files left behind


def test_bad_names_and_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(CertError, match="not an IP address"):
        ensure_certs(tmp_path, ["x"], ["localhost"])
    with pytest.raises(CertError, match="at least one DNS name or IP"):
        ensure_certs(tmp_path, [], [])
    files = ensure_certs(tmp_path)
    files.tls_key.write_text("garbage")
    with pytest.raises(CertError, match="cannot serve TLS with these files"):
        ReloadingTLS(files.tls_cert, files.tls_key)


class OneContextServer:
    """Accepts connections with the context it was given at start, forever (no per-connection hook)."""

    def __init__(self, ctx: ssl.SSLContext) -> None:
        self.ctx = ctx
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                with self.ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError) as e:
                self.errors.append(repr(e))

    def serial(self, ca: Path) -> int:
        client = ssl.create_default_context(cafile=str(ca))
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as plain:
            with client.wrap_socket(plain, server_hostname="localhost") as tls:
                der = tls.getpeercert(binary_form=True)
                tls.sendall(b"x")
        assert der is not None
        return x509.load_der_x509_certificate(der).serial_number

    def close(self) -> None:
        # closing alone does not wake a thread blocked in accept() (Linux): shutting the socket down does
        with contextlib.suppress(OSError):  # already shut down
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(10)


@pytest.fixture
def certs(tmp_path: Path) -> Iterator[CertFiles]:
    yield ensure_certs(tmp_path, ["localhost"], ["127.0.0.1"])


def test_sni_callback_moves_new_handshakes_to_the_rotated_certificate(certs: CertFiles) -> None:
    tls = ReloadingTLS(certs.tls_cert, certs.tls_key)
    first = tls.current()
    assert first.minimum_version == ssl.TLSVersion.TLSv1_2
    server = OneContextServer(first)  # never asks `tls` again
    try:
        before = server.serial(certs.ca_cert)
        assert before == _cert(certs.tls_cert).serial_number
        ensure_certs(certs.directory, ["localhost"], ["127.0.0.1"])  # renewed on disk
        assert server.serial(certs.ca_cert) == _cert(certs.tls_cert).serial_number != before
        assert tls.current() is not first and server.errors == []
    finally:
        server.close()


def _replace(target: Path, source: Path) -> None:
    """A new file (new inode) in place of `target`: a change even within one mtime tick."""
    tmp = target.with_name(target.name + ".new")
    tmp.write_bytes(source.read_bytes())
    tmp.replace(target)


def test_a_mismatched_pair_keeps_the_last_good_context_until_the_files_change(
    certs: CertFiles, tmp_path: Path
) -> None:
    tls = ReloadingTLS(certs.tls_cert, certs.tls_key)
    good = tls.current()
    other = ensure_certs(tmp_path / "other")
    _replace(certs.tls_key, other.tls_key)  # the key of another pair
    assert tls.current() is good and tls.failures == 1
    assert tls.current() is good and tls.failures == 1  # not retried until the files change again
    _replace(certs.tls_cert, other.tls_cert)
    assert tls.current() is not good and tls.failures == 1
    assert tls.loaded.serial == _cert(other.tls_cert).serial_number


def test_expiry_is_reported_on_every_load(certs: CertFiles) -> None:
    seen: list[float] = []
    tls = ReloadingTLS(certs.tls_cert, certs.tls_key, on_load=lambda loaded: seen.append(loaded.expires))
    assert seen == [_cert(certs.tls_cert).not_valid_after_utc.timestamp()]
    ensure_certs(certs.directory, ["localhost"], days=2)
    tls.current()
    assert len(seen) == 2
    assert dt.datetime.fromtimestamp(seen[1], dt.UTC) <= dt.datetime.now(dt.UTC) + dt.timedelta(days=2)
