"""The Zenoh session a bridge opens: its config, and how exposed it is.

:func:`build_zenoh_config` layers three sources, later ones winning: an optional Zenoh JSON5
file (``zenoh_config_file``: TLS, ``access_control``, user/password auth - everything edgevox
does not model), then edgevox's own fields (mode, scouting, shared memory, lease, the
reassembly limit, and ``listen``/``connect`` when not empty), then ``zenoh_config`` (Zenoh
settings by path). Endpoints nobody set are empty: Zenoh's own default for a peer would
listen on every interface.

:func:`exposure_warnings` says when a config listens beyond loopback without TLS; the bridge
logs it at start.

Rejected alternative: an authentication layer of our own on top of Zenoh - Zenoh already has
TLS with client certificates and per-key access control, reviewed and maintained upstream.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from edgevox.errors import BridgeError, MissingDependencyError
from edgevox.integrations.config import ZenohBridgeConfig

_PLAIN_PROTOCOLS = ("tcp", "udp", "ws")


def _import_zenoh() -> Any:
    try:
        import zenoh
    except ImportError as exc:
        raise MissingDependencyError("eclipse-zenoh", extra="zenoh", purpose="the Zenoh bus bridge") from exc
    return zenoh


def build_zenoh_config(cfg: ZenohBridgeConfig) -> Any:
    """A ``zenoh.Config``: ``zenoh_config_file`` (if any), then edgevox's fields, then ``zenoh_config``.

    Mode, scouting, shared memory, lease and the reassembly limit always come from edgevox's
    fields; ``listen``/``connect`` from the file when left empty here. Endpoints nobody set
    are empty (Zenoh's own default would listen on every interface).
    """
    zenoh = _import_zenoh()
    if cfg.zenoh_config_file:
        try:
            conf = zenoh.Config.from_file(cfg.zenoh_config_file)
        except Exception as exc:  # noqa: BLE001 - ZError: missing file, bad JSON5, unknown key
            raise BridgeError(
                f"bridges.zenoh.zenoh_config_file = {cfg.zenoh_config_file!r}: cannot load it as a Zenoh config: {exc}"
            ) from exc
    else:
        conf = zenoh.Config()
    settings: list[tuple[str, Any]] = [
        ("mode", cfg.mode),
        ("scouting/multicast/enabled", cfg.multicast_scouting),
        ("scouting/gossip/enabled", cfg.gossip_scouting),
        ("transport/shared_memory/enabled", cfg.shared_memory),
        ("transport/link/tx/lease", max(1, round(cfg.lease_s * 1000))),
        ("transport/link/rx/max_message_size", max(4 * cfg.max_payload_bytes, 65_536)),
    ]
    for name, endpoints in (("listen", cfg.listen), ("connect", cfg.connect)):
        from_file = json.loads(conf.get_json(f"{name}/endpoints")) if cfg.zenoh_config_file else None
        if endpoints or not isinstance(from_file, list):
            settings.append((f"{name}/endpoints", endpoints))
    settings += list(cfg.zenoh_config.items())
    for path, value in settings:
        try:
            conf.insert_json5(path, json.dumps(value))
        except Exception as exc:  # noqa: BLE001 - zenoh raises its own ZError type
            raise BridgeError(f"bridges.zenoh: invalid Zenoh setting {path} = {value!r}: {exc}") from exc
    return conf


def exposure_warnings(conf: Any) -> list[str]:
    """Lines saying how a Zenoh config exposes the robot beyond this machine (empty: it does not)."""
    acl = _flag(conf, "access_control/enabled")
    return [
        f"bridges.zenoh: listening on {endpoint} without TLS{'' if acl else ' or access_control'}: any host "
        f"that reaches it can publish events to this robot and read what it sends. Use 127.0.0.1, or a tls/ "
        f"endpoint with access_control in zenoh_config_file (docs/distributed.md)"
        for endpoint, proto in _listening_beyond_loopback(conf)
        if proto in _PLAIN_PROTOCOLS
    ]


def fleet_refusal(cfg: ZenohBridgeConfig, conf: Any) -> str | None:
    """Why a bridge with ``cfg`` (built into ``conf``) must not start, or None: a fleet member
    (``fleet`` or ``robots`` set) takes commands from its named members only."""
    unnamed = unnamed_members(conf) if cfg.fleet or cfg.robots else None
    if not unnamed:
        return None
    return (
        f"bridges.zenoh: a fleet member (fleet or robots set) must take commands from its named members only, "
        f"but {unnamed}. Run `edgevox fleet init` and use the zenoh_config_file it writes, or listen on "
        f"127.0.0.1 (docs/distributed.md, Identity)"
    )


def unnamed_members(conf: Any) -> str | None:
    """Why a fleet member with this Zenoh config would take commands from anyone (None: it would
    not): it listens beyond this machine without mutual TLS and access control."""
    acl, mtls = _flag(conf, "access_control/enabled"), _flag(conf, "transport/link/tls/enable_mtls")
    for endpoint, proto in _listening_beyond_loopback(conf):
        missing = [what for what, ok in (("a tls/ endpoint", proto == "tls"), ("enable_mtls", mtls),
                                         ("access_control", acl)) if not ok]  # fmt: skip
        if missing:
            return f"it listens on {endpoint} without {', '.join(missing)}"
    return None


def _listening_beyond_loopback(conf: Any) -> list[tuple[str, str]]:
    """``(endpoint, protocol)`` of each listen endpoint not on this machine's loopback."""
    endpoints = json.loads(conf.get_json("listen/endpoints"))
    out = []
    for endpoint in endpoints if isinstance(endpoints, list) else ():
        proto, _, address = str(endpoint).partition("/")
        if not _is_loopback(address):
            out.append((str(endpoint), proto))
    return out


def _flag(conf: Any, path: str) -> bool:
    """A boolean Zenoh setting, True only when set to true."""
    return json.loads(conf.get_json(path)) is True


def _is_loopback(address: str) -> bool:
    host = address.split("#", 1)[0].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
