"""Test certificates for the Zenoh TLS test (not collected): a CA and leaf certificates, made by
the product's own ``edgevox.integrations.zenoh_identity`` (EC P-256, valid one day). Each leaf's
common name is the peer's name (Zenoh's ``access_control`` matches it with ``cert_common_names``);
it is valid for ``localhost`` and ``127.0.0.1``, as server and as client (mutual TLS).
"""

from __future__ import annotations

from pathlib import Path

from edgevox.integrations import zenoh_identity


def available() -> str | None:
    """Why certificates cannot be made here, or None when they can."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return "the cryptography package is not installed"
    return None


def make_ca(directory: Path, name: str) -> Path:
    """``<name>.pem`` (a CA certificate) and ``<name>.key`` in ``directory``."""
    return zenoh_identity.make_ca(directory, name, days=1)


def make_leaf(directory: Path, name: str, ca: Path) -> None:
    """``<name>.pem`` and ``<name>.key``, signed by the CA ``ca`` (its ``.pem``; the key beside it)."""
    zenoh_identity.make_leaf(directory, name, ca, days=1)
