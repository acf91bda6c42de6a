"""A self-signed certificate for 127.0.0.1 / localhost (the `cryptography` package when it is
installed, else the `openssl` CLI). Node trusts it through NODE_EXTRA_CA_CERTS."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def available() -> bool:
    try:
        import cryptography  # noqa: F401

        return True
    except ImportError:
        return shutil.which("openssl") is not None


def make_cert(directory: Path) -> tuple[str, str]:
    """(certfile, keyfile) in `directory`, made once."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "standin-cert.pem", directory / "standin-key.pem"
    if cert.exists() and key.exists():
        return str(cert), str(key)
    try:
        _with_cryptography(cert, key)
    except ImportError:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "3650", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
             "-addext", "basicConstraints=critical,CA:TRUE"],
            check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def _with_cryptography(cert: Path, key: Path) -> None:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    k = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=3650))
         .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                     x509.DNSName("localhost")]), critical=False)
         .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
         .sign(k, hashes.SHA256()))
    key.write_bytes(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    cert.write_bytes(c.public_bytes(serialization.Encoding.PEM))
