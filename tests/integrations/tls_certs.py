"""Test certificates for the Zenoh TLS test (not collected): a CA and leaf certificates.

Made with ``cryptography`` when it is installed, else with the ``openssl`` command (EC P-256,
valid one day). Each leaf certificate's common name is the peer's name (Zenoh's
``access_control`` matches it with ``cert_common_names``); it is valid for ``localhost`` and
``127.0.0.1``, as server and as client (mutual TLS).
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from pathlib import Path


def available() -> str | None:
    """Why certificates cannot be made here, or None when they can."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            return "neither the cryptography package nor the openssl command is installed"
    return None


def make_ca(directory: Path, name: str) -> Path:
    """``<name>.pem`` (a CA certificate) and ``<name>.key`` in ``directory``."""
    try:
        return _ca_cryptography(directory, name)
    except ImportError:
        return _ca_openssl(directory, name)


def make_leaf(directory: Path, name: str, ca: Path) -> None:
    """``<name>.pem`` and ``<name>.key``, signed by the CA ``ca`` (its ``.pem``; the key beside it)."""
    try:
        _leaf_cryptography(directory, name, ca)
    except ImportError:
        _leaf_openssl(directory, name, ca)


# -- cryptography ------------------------------------------------------------------------------


def _ca_cryptography(directory: Path, name: str) -> Path:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    usage = x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        crl_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .sign(key, hashes.SHA256())
    )
    _write(directory, name, key, cert)
    return directory / f"{name}.pem"


def _leaf_cryptography(directory: Path, name: str, ca: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert = x509.load_pem_x509_certificate(ca.read_bytes())
    ca_key = serialization.load_pem_private_key(ca.with_suffix(".key").read_bytes(), password=None)
    now = datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    usage = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH])
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(san, critical=False)
        .add_extension(usage, critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    _write(directory, name, key, cert)


def _write(directory: Path, name: str, key, cert) -> None:  # noqa: ANN001 - cryptography types
    from cryptography.hazmat.primitives import serialization

    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (directory / f"{name}.key").write_bytes(pem)
    (directory / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))


# -- openssl command -----------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _key_openssl(directory: Path, name: str) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=directory)


def _ca_openssl(directory: Path, name: str) -> Path:
    _key_openssl(directory, name)
    _openssl(
        "req", "-x509", "-new", "-key", f"{name}.key", "-subj", f"/CN={name}", "-days", "1", "-out", f"{name}.pem",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        cwd=directory,
    )  # fmt: skip
    return directory / f"{name}.pem"


def _leaf_openssl(directory: Path, name: str, ca: Path) -> None:
    _key_openssl(directory, name)
    ext = directory / f"{name}.ext"
    ext.write_text(
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        "extendedKeyUsage=serverAuth,clientAuth\n"
        "basicConstraints=critical,CA:FALSE\n",
        encoding="utf-8",
    )
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={name}", "-out", f"{name}.csr", cwd=directory)
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", str(ca), "-CAkey", str(ca.with_suffix(".key")),
        "-CAcreateserial", "-days", "1", "-extfile", str(ext), "-out", f"{name}.pem",
        cwd=directory,
    )  # fmt: skip
