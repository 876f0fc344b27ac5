"""Identity for a fleet: who may connect, and what each member may say (``edgevox fleet init``).

A robot must take commands and stops only from its operator, and an event must say truly which
robot sent it. Zenoh does both when configured: mutual TLS (every member holds a certificate of
the fleet's own CA; nobody else completes the handshake) and ``access_control`` by the
certificate's common name. Writing that by hand is error-prone, so :func:`init_fleet` writes it
for a small fleet: one operator (a base station) and N robots, each robot listening on a
``tls/<host>:<port>`` endpoint the operator connects to.

It writes into one directory:

* ``ca.pem`` / ``ca.key``: the fleet's CA. ``ca.key`` signs new members; keep it off the robots.
* ``<member>.pem`` / ``<member>.key``: each member's certificate (common name = the member's
  name = its bridge id) and key, for server and client use, valid for the robot's host.
* ``<member>.zenoh.json5``: its Zenoh config: TLS with ``enable_mtls``, and access control with
  ``default_permission: "deny"``. What each member accepts (ingress), by the sender's certificate:

  - a robot, from the operator only: puts on the fleet's events (``<fleet>/events/**``) and its
    own (``<fleet>/<robot>/events/**``), blackboard queries on its own keys, the operator's
    liveliness token in ``<fleet>/bridges/*``, and declarations under ``<fleet>/**``;
  - the operator, from each robot: puts on that robot's own events and acknowledgements
    (``<fleet>/<robot>/events/**``, ``<fleet>/<robot>/acks/**``), its liveliness token in
    ``<fleet>/<robot>/bridges/*``, replies from its keys, and declarations under ``<fleet>/**``.

  So a robot can publish only in its own namespace: an event that arrives from
  ``<fleet>/r1`` was sent by the holder of ``r1``'s key. The bridge then refuses an event whose
  envelope names another peer than the one whose token lives in that namespace
  (``ZenohBridge``: "claims to be"), so a robot cannot pose as another or as the operator.
  Robots accept nothing from each other.
* ``<member>.yaml``: the ``bridges.zenoh`` section for that member (namespace, ``fleet`` or
  ``robots``, ``bridge_id``-matching name, ``zenoh_config_file``), to merge into its config.

Paths written into the configs are where the files will be on each machine (``install_dir``,
default: the output directory). Certificates are EC P-256, made with ``cryptography``.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgevox.errors import ConfigError, MissingDependencyError
from edgevox.integrations.config import BRIDGE_ID, KEY_CHUNK

ALL_MESSAGES = (
    "put",
    "delete",
    "declare_subscriber",
    "query",
    "declare_queryable",
    "reply",
    "liveliness_token",
    "declare_liveliness_subscriber",
    "liveliness_query",
)
_DECLARATIONS = ("declare_subscriber", "declare_queryable", "declare_liveliness_subscriber", "liveliness_query")


@dataclass(frozen=True)
class FleetMember:
    """One member of the fleet: its name (certificate common name and bridge id) and, for a
    robot, the ``host:port`` it listens on."""

    name: str
    endpoint: str = ""

    @property
    def host(self) -> str:
        return self.endpoint.rsplit(":", 1)[0].strip("[]")


def parse_robot(text: str) -> FleetMember:
    """``r1=robot1.local:7447`` -> a robot member; one clear error when it is not that."""
    name, sep, endpoint = text.partition("=")
    host, colon, port = endpoint.rpartition(":")
    if not (sep and BRIDGE_ID.match(name) and host and colon and port.isdigit() and 0 < int(port) < 65536):
        raise ConfigError(
            f"--robot {text!r}: write NAME=HOST:PORT, e.g. r1=robot1.local:7447 (NAME: letters, digits, '_', '.', '-')"
        )
    return FleetMember(name, endpoint)


def init_fleet(
    out_dir: Path,
    *,
    fleet: str,
    operator: str,
    robots: list[FleetMember],
    days: int = 365,
    install_dir: str | None = None,
) -> list[Path]:
    """Write the CA, each member's certificate, key, Zenoh config and ``bridges.zenoh`` section
    (see the module docstring). Returns the files written. Refuses to overwrite an existing CA."""
    fleet = fleet.strip("/")
    if not fleet or not all(KEY_CHUNK.match(c) for c in fleet.split("/")):
        raise ConfigError(f"--fleet {fleet!r}: a namespace such as 'edgevox/site1' (no '*', '$', '?', '#', spaces)")
    names = [operator, *(r.name for r in robots)]
    bad = [n for n in names if not BRIDGE_ID.match(n)]
    if bad or not robots or len(set(names)) != len(names):
        raise ConfigError(
            f"edgevox fleet init: names must be distinct, at least one robot, letters, digits, '_', '.', '-' "
            f"(got operator {operator!r} and robots {[r.name for r in robots]})"
        )
    if not 1 <= days <= 3650:
        raise ConfigError(f"--days {days}: certificates last 1 to 3650 days")
    out_dir.mkdir(parents=True, exist_ok=True)
    if (out_dir / "ca.key").exists():
        raise ConfigError(
            f"{out_dir / 'ca.key'} exists: a fleet is already there. Use another directory (a new CA means "
            f"new certificates for every member)"
        )
    where = install_dir.rstrip("/") if install_dir else str(out_dir.resolve())
    written = [make_ca(out_dir, "ca", days)]
    written.append(out_dir / "ca.key")
    for member in [FleetMember(operator), *robots]:
        hosts = [member.host] if member.host else []
        make_leaf(out_dir, member.name, out_dir / "ca.pem", hosts=hosts, days=days)
        written += [out_dir / f"{member.name}.pem", out_dir / f"{member.name}.key"]
    op_conf = _zenoh_config(
        where, operator, connect=[f"tls/{r.endpoint}" for r in robots], acl=_operator_acl(fleet, robots)
    )
    written.append(_write_json(out_dir / f"{operator}.zenoh.json5", op_conf))
    written.append(
        _write_yaml_section(
            out_dir / f"{operator}.yaml", namespace=fleet, bridge_id=operator, extra={"robots": "*"},
            zenoh_file=f"{where}/{operator}.zenoh.json5",
        )
    )  # fmt: skip
    for robot in robots:
        port = robot.endpoint.rsplit(":", 1)[1]
        conf = _zenoh_config(where, robot.name, listen=[f"tls/0.0.0.0:{port}"], acl=_robot_acl(fleet, operator, robot))
        written.append(_write_json(out_dir / f"{robot.name}.zenoh.json5", conf))
        written.append(
            _write_yaml_section(
                out_dir / f"{robot.name}.yaml", namespace=f"{fleet}/{robot.name}", bridge_id=robot.name,
                extra={"fleet": fleet}, zenoh_file=f"{where}/{robot.name}.zenoh.json5",
            )
        )  # fmt: skip
    return written


# -- access control ------------------------------------------------------------------------------


def _rule(
    rule_id: str, messages: tuple[str, ...] | list[str], key_exprs: list[str], flow: str = "ingress"
) -> dict[str, Any]:
    return {"id": rule_id, "permission": "allow", "flows": [flow], "messages": list(messages), "key_exprs": key_exprs}


def _robot_acl(fleet: str, operator: str, robot: FleetMember) -> dict[str, Any]:
    own = f"{fleet}/{robot.name}"
    rules = [
        _rule("egress", ALL_MESSAGES, ["**"], flow="egress"),
        _rule("operator-puts", ("put",), [f"{fleet}/events/**", f"{own}/events/**"]),
        _rule("operator-queries", ("query",), [f"{own}/blackboard/**"]),
        _rule("operator-replies", ("reply",), [f"{fleet}/blackboard/**"]),
        _rule("operator-token", ("liveliness_token",), [f"{fleet}/bridges/{operator}"]),
        _rule("operator-declarations", _DECLARATIONS, [f"{fleet}/**"]),
    ]
    return _acl(rules, {"operator": [operator]}, {"operator": [r["id"] for r in rules[1:]]}, everyone=[operator])


def _operator_acl(fleet: str, robots: list[FleetMember]) -> dict[str, Any]:
    rules = [_rule("egress", ALL_MESSAGES, ["**"], flow="egress")]
    subjects: dict[str, list[str]] = {}
    policies: dict[str, list[str]] = {}
    for robot in robots:
        own = f"{fleet}/{robot.name}"
        mine = [
            _rule(f"{robot.name}-puts", ("put",), [f"{own}/events/**", f"{own}/acks/**"]),
            _rule(f"{robot.name}-replies", ("reply",), [f"{own}/blackboard/**"]),
            _rule(f"{robot.name}-queries", ("query",), [f"{fleet}/blackboard/**"]),
            _rule(f"{robot.name}-token", ("liveliness_token",), [f"{own}/bridges/{robot.name}"]),
            _rule(f"{robot.name}-declarations", _DECLARATIONS, [f"{fleet}/**"]),
        ]
        rules += mine
        subjects[robot.name] = [robot.name]
        policies[robot.name] = [r["id"] for r in mine]
    return _acl(rules, subjects, policies, everyone=[r.name for r in robots])


def _acl(
    rules: list[dict[str, Any]], subjects: dict[str, list[str]], policies: dict[str, list[str]], everyone: list[str]
) -> dict[str, Any]:
    return {
        "enabled": True,
        "default_permission": "deny",
        "rules": rules,
        "subjects": [{"id": sid, "cert_common_names": names} for sid, names in subjects.items()]
        + [{"id": "members", "cert_common_names": everyone}],
        "policies": [{"rules": ids, "subjects": [sid]} for sid, ids in policies.items()]
        + [{"rules": ["egress"], "subjects": ["members"]}],
    }


def _zenoh_config(
    where: str, name: str, *, acl: dict[str, Any], listen: list[str] | None = None, connect: list[str] | None = None
) -> dict[str, Any]:
    tls = {
        "root_ca_certificate": f"{where}/ca.pem",
        "enable_mtls": True,
        "listen_certificate": f"{where}/{name}.pem",
        "listen_private_key": f"{where}/{name}.key",
        "connect_certificate": f"{where}/{name}.pem",
        "connect_private_key": f"{where}/{name}.key",
    }
    conf: dict[str, Any] = {"transport": {"link": {"tls": tls}}, "access_control": acl}
    if listen:
        conf["listen"] = {"endpoints": listen}
    if connect:
        conf["connect"] = {"endpoints": connect}
    return conf


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text("// written by `edgevox fleet init`; see docs/distributed.md\n" + json.dumps(data, indent=2) + "\n")
    return path


def _write_yaml_section(path: Path, *, namespace: str, bridge_id: str, extra: dict[str, str], zenoh_file: str) -> Path:
    lines = [
        "# written by `edgevox fleet init`: merge into this member's config (docs/distributed.md)",
        "bridges:",
        "  zenoh:",
        "    enabled: true",
        f"    namespace: {namespace}",
        *(f"    {key}: {json.dumps(value)}" for key, value in extra.items()),
        f"    bridge_id: {bridge_id}",
        f"    zenoh_config_file: {json.dumps(zenoh_file)}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- certificates -----------------------------------------------------------------------------------


def _crypto() -> Any:
    try:
        import cryptography  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "edgevox fleet init needs the cryptography package: pip install cryptography (or edgevox[zenoh])"
        ) from exc


def make_ca(directory: Path, name: str, days: int = 365) -> Path:
    """``<name>.pem`` (a CA certificate) and ``<name>.key`` in ``directory``; returns the ``.pem``."""
    _crypto()
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    usage = x509.KeyUsage(
        digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, encipher_only=False, decipher_only=False,
    )  # fmt: skip
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .sign(key, hashes.SHA256())
    )
    _write_pem(directory, name, key, cert)
    return directory / f"{name}.pem"


def make_leaf(directory: Path, name: str, ca: Path, *, hosts: list[str] | None = None, days: int = 365) -> None:
    """``<name>.pem`` and ``<name>.key`` signed by the CA ``ca`` (its ``.pem``; the key beside it):
    common name ``name``, valid as server and client for ``hosts`` and this machine's loopback."""
    _crypto()
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert = x509.load_pem_x509_certificate(ca.read_bytes())
    ca_key = serialization.load_pem_private_key(ca.with_suffix(".key").read_bytes(), password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ConfigError(f"{ca.with_suffix('.key')}: not an EC key made by edgevox fleet init")
    now = datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in [*(hosts or []), "localhost", "127.0.0.1"]:
        try:
            entry: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            entry = x509.DNSName(host)
        if entry not in names:
            names.append(entry)
    usage = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH])
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(usage, critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    _write_pem(directory, name, key, cert)


def _write_pem(directory: Path, name: str, key: Any, cert: Any) -> None:
    from cryptography.hazmat.primitives import serialization

    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key_path = directory / f"{name}.key"
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # readable by its owner only
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    (directory / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
