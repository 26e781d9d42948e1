"""TLS material with `cryptography`: a CA, serving and client certificates, the caBundle.

    files = ensure_certs("certs", dns=["localhost"], ips=["127.0.0.1"])   # CA kept, serving cert (re)issued
    ca_bundle(files.ca_cert)                                              # base64 PEM for the webhook config

A directory holds `ca.crt`/`ca.key` (the CA), `tls.crt`/`tls.key` (the serving certificate, the names a
Kubernetes TLS Secret uses) and optionally `client.crt`/`client.key`. Every file is written to a temporary
name and renamed over the old one (keys mode 0600), the key before its certificate, so a server that
reloads them (webhook/server/tls.py) never reads a half-written file, and a key that does not match its
certificate yet is only a moment between two renames.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from webhook.model.errors import UsageError

CA_CERT, CA_KEY = "ca.crt", "ca.key"
TLS_CERT, TLS_KEY = "tls.crt", "tls.key"
CLIENT_CERT, CLIENT_KEY = "client.crt", "client.key"
DEFAULT_DNS = ("localhost",)
DEFAULT_IPS = ("127.0.0.1", "::1")
SERVING_DAYS = 365
CA_DAYS = 3650
_BACKDATE = dt.timedelta(minutes=5)  # tolerate clocks a little behind ours


class CertError(UsageError):
    """A certificate or key that cannot be read, parsed or used (names the file and what to do)."""


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def cert(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)

    @property
    def key(self) -> ec.EllipticCurvePrivateKey:
        k = serialization.load_pem_private_key(self.key_pem, password=None)
        if not isinstance(k, ec.EllipticCurvePrivateKey):
            raise CertError("the CA key is not an EC key: draguard signs with its own EC P-256 CA")
        return k


@dataclass(frozen=True)
class CertFiles:
    """Paths of the TLS material in one directory."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / CA_CERT

    @property
    def ca_key(self) -> Path:
        return self.directory / CA_KEY

    @property
    def tls_cert(self) -> Path:
        return self.directory / TLS_CERT

    @property
    def tls_key(self) -> Path:
        return self.directory / TLS_KEY

    @property
    def client_cert(self) -> Path:
        return self.directory / CLIENT_CERT

    @property
    def client_key(self) -> Path:
        return self.directory / CLIENT_KEY


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_ca(common_name: str = "draguard webhook CA", days: int = CA_DAYS) -> KeyPair:
    """A self-signed CA that may sign leaf certificates only (path length 0)."""
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue(
    ca: KeyPair,
    common_name: str,
    dns: list[str] | tuple[str, ...] = (),
    ips: list[str] | tuple[str, ...] = (),
    days: int = SERVING_DAYS,
    client: bool = False,
) -> KeyPair:
    """A leaf certificate signed by `ca`: a serving one for `dns`/`ips` (SANs), or a client one."""
    key = _new_key()
    ca_cert, ca_key = ca.cert, ca.key
    now = _now()
    not_after = min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    sans += [x509.IPAddress(_ip(a)) for a in ips]
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise CertError(f"{text!r} is not an IP address (use --dns for names)") from None


def service_names(service: str, namespace: str) -> list[str]:
    """The names the API server may use for a webhook Service (`<svc>.<ns>.svc` is the one it uses)."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _write_atomic(path: Path, data: bytes, private: bool) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if private:
                os.fchmod(f.fileno(), 0o600)
            else:
                os.fchmod(f.fileno(), 0o644)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_pair(cert_path: Path, key_path: Path, pair: KeyPair) -> None:
    """Write a key and its certificate, each atomically, the key first."""
    cert_path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(key_path, pair.key_pem, private=True)
    _write_atomic(cert_path, pair.cert_pem, private=False)


def read_pair(cert_path: Path, key_path: Path) -> KeyPair:
    """A certificate and key from files; CertError naming the file when one is missing or broken."""
    try:
        pair = KeyPair(cert_path.read_bytes(), key_path.read_bytes())
    except OSError as e:
        raise CertError(f"{e.filename}: {e.strerror or e}") from None
    try:
        pair.cert  # noqa: B018  (parse now: a clear error here, not at the first handshake)
    except ValueError as e:
        raise CertError(f"{cert_path}: not a PEM certificate ({e})") from None
    return pair


def _load_ca(files: CertFiles, ca_days: int, new_ca: bool) -> KeyPair:
    if not new_ca and files.ca_cert.exists() and files.ca_key.exists():
        ca = read_pair(files.ca_cert, files.ca_key)
        try:
            ca.key  # noqa: B018
        except ValueError as e:
            raise CertError(f"{files.ca_key}: not a PEM private key ({e})") from None
        if ca.cert.not_valid_after_utc > _now() + dt.timedelta(days=1):
            return ca
    ca = make_ca(days=ca_days)
    write_pair(files.ca_cert, files.ca_key, ca)
    return ca


def ensure_certs(
    directory: str | Path,
    dns: list[str] | tuple[str, ...] = DEFAULT_DNS,
    ips: list[str] | tuple[str, ...] = DEFAULT_IPS,
    days: int = SERVING_DAYS,
    ca_days: int = CA_DAYS,
    renew: bool = True,
    new_ca: bool = False,
    client: str | None = None,
) -> CertFiles:
    """Create the directory's CA unless a valid one is there (or `new_ca`), and issue the serving
    certificate for `dns`/`ips` (with `renew=False` only when it is missing); `client` also issues a
    client certificate with that common name."""
    files = CertFiles(Path(directory))
    if not dns and not ips:
        raise CertError("a serving certificate needs at least one DNS name or IP address")
    for ip in ips:
        _ip(ip)
    try:
        files.directory.mkdir(parents=True, exist_ok=True)
        ca = _load_ca(files, ca_days, new_ca)
        if renew or new_ca or not (files.tls_cert.exists() and files.tls_key.exists()):
            leaf = issue(ca, (list(dns) or list(ips))[0], dns, ips, days)
            write_pair(files.tls_cert, files.tls_key, leaf)
        if client:
            write_pair(files.client_cert, files.client_key, issue(ca, client, days=days, client=True))
    except OSError as e:
        raise CertError(f"{e.filename or directory}: {e.strerror or e}") from None
    return files


def ca_bundle(ca_cert: str | Path) -> str:
    """The caBundle of a webhook configuration: base64 of the CA's PEM."""
    try:
        pem = Path(ca_cert).read_bytes()
    except OSError as e:
        raise CertError(f"{ca_cert}: {e.strerror or e}") from None
    return base64.b64encode(pem).decode("ascii")


def not_after(cert_pem: bytes) -> dt.datetime:
    """When the (first) certificate of a PEM file expires (UTC)."""
    return x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc


def san_summary(cert_pem: bytes) -> list[str]:
    """The DNS names and IP addresses a certificate covers, as text."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(n.value) for n in ext]
