"""Identity for a fleet (issue 26): ``edgevox fleet init`` writes a CA, certificates and Zenoh
configs (mutual TLS, access control) with which the operator stops its robots and nobody else
can; a peer that names another as its sender is refused; a fleet member that would take
commands from anyone does not start. Real Zenoh on loopback, real certificates."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml

from edgevox.cli.bench_fleet_robot import BenchPing
from edgevox.errors import BridgeError, ConfigError
from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.serialization import encode_event
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.integrations.zenoh_identity import FleetMember, init_fleet, parse_robot
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import StopEvent
from edgevox.runtime.runtime import Runtime
from tests.integrations.conftest import free_port

pytestmark = pytest.mark.zenoh
SITE = "edgevox/site"


def _member(directory: Path, name: str, **kinds: list[str]) -> ZenohBridgeConfig:
    section = yaml.safe_load((directory / f"{name}.yaml").read_text())["bridges"]["zenoh"]
    return ZenohBridgeConfig(**section, **kinds)


def _raw_session(directory: Path, name: str, connect: str):
    """A plain Zenoh session holding ``name``'s certificate (a member acting on its own)."""
    import zenoh

    conf = zenoh.Config()
    tls = "transport/link/tls"
    for path, value in (
        ("mode", "peer"),
        ("scouting/multicast/enabled", False),
        ("listen/endpoints", []),
        ("connect/endpoints", [connect]),
        (f"{tls}/root_ca_certificate", str(directory / "ca.pem")),
        (f"{tls}/enable_mtls", True),
        (f"{tls}/connect_certificate", str(directory / f"{name}.pem")),
        (f"{tls}/connect_private_key", str(directory / f"{name}.key")),
    ):
        conf.insert_json5(path, json.dumps(value))
    return zenoh.open(conf)


@pytest.fixture
def site(tmp_path):
    ports = {"r1": free_port(), "r2": free_port()}
    init_fleet(
        tmp_path,
        fleet=SITE,
        operator="base",
        robots=[FleetMember(name, f"localhost:{port}") for name, port in ports.items()],
        days=1,
    )
    robots = {}
    for name in ports:
        runtime = Runtime(name).start()
        bridge = ZenohBridge(
            runtime.bus,
            _member(tmp_path, name, subscribe_kinds=["control.*", "bench.*"], publish_kinds=["bench.*"]),
            activities=runtime.activities,
        ).start()
        robots[name] = (runtime, bridge)
    op_bus = EventBus("base")
    operator = ZenohBridge(
        op_bus, _member(tmp_path, "base", publish_kinds=["control.*", "bench.*"], subscribe_kinds=["bench.*"])
    ).start()
    assert operator.bridge_id == "base" and robots["r1"][1].bridge_id == "r1"  # the ids the certificates name
    assert operator.wait_for_peers(2, 20), operator.peers
    yield tmp_path, ports, robots, op_bus, operator
    operator.stop(), op_bus.close()
    for runtime, bridge in robots.values():
        bridge.stop(), runtime.stop()


def test_the_written_fleet_lets_its_operator_stop_every_robot(site):
    directory, _ports, robots, _op_bus, operator = site
    skills = {name: runtime.activities.start("skill", "drive") for name, (runtime, _) in robots.items()}
    delivery = operator.safety_stop("site stop")
    assert delivery.peers == {"r1": "stopped", "r2": "stopped"}, delivery.describe()
    assert all(skill.token.cancelled for skill in skills.values())
    assert (directory / "ca.key").stat().st_mode & 0o077 == 0  # keys readable by their owner only
    assert "access_control" in (directory / "r1.zenoh.json5").read_text()


def test_another_member_cannot_command_a_robot_and_its_stop_never_arrives(site):
    directory, ports, robots, _op_bus, operator = site
    runtime, bridge = robots["r1"]
    stops: list[StopEvent] = []
    pinged = threading.Event()
    runtime.bus.subscribe(StopEvent, stops.append)
    runtime.bus.subscribe(BenchPing, lambda e: pinged.set() if e.n == 2 else None)
    session = _raw_session(directory, "r2", f"tls/localhost:{ports['r1']}")  # r2's own, valid certificate
    try:
        assert list(session.info.peers_zid()), "r2's certificate passes the TLS handshake: access control refuses"
        stop = encode_event(StopEvent(reason="r2 poses as the operator", stop_id="forged"), "base")
        session.put(f"{SITE}/events/control.stop", stop)
        session.put(f"{SITE}/r1/events/control.stop", stop)
        session.put(f"{SITE}/r1/events/bench.ping", encode_event(BenchPing(n=1), "base"))
        # The operator's own ping, sent after: once it arrived, r2's puts had every chance to.
        operator.send(BenchPing(source="base", n=2), namespace=f"{SITE}/r1")
        assert pinged.wait(10)
    finally:
        session.close()
    assert stops == [] and bridge.counters["received"] == 1  # only the operator's ping


def test_a_sample_naming_another_peer_as_its_sender_is_refused():
    """Without a certificate in the way: r1 puts in its own namespace an event whose envelope
    says it comes from r2. The operator knows r2's token lives in another namespace."""
    import zenoh

    ports = [free_port(), free_port()]
    op_port = free_port()
    bridges = []
    op_bus = EventBus("base")
    try:
        for name, port in zip(("r1", "r2"), ports, strict=True):
            bridges.append(
                ZenohBridge(
                    EventBus(name),
                    ZenohBridgeConfig(namespace=f"{SITE}/{name}", fleet=SITE, listen=[f"tcp/127.0.0.1:{port}"]),
                    bridge_id=name,
                ).start()
            )
        operator = ZenohBridge(
            op_bus,
            ZenohBridgeConfig(
                namespace=SITE,
                robots="*",
                listen=[f"tcp/127.0.0.1:{op_port}"],
                connect=[f"tcp/127.0.0.1:{p}" for p in ports],
                subscribe_kinds=["bench.*"],
            ),
            bridge_id="base",
        ).start()
        bridges.append(operator)
        assert operator.wait_for_peers(2, 20)
        got: list[BenchPing] = []
        done = threading.Event()
        op_bus.subscribe(BenchPing, lambda e: (got.append(e), done.set() if e.n == 2 else None))
        conf = zenoh.Config()
        for path, value in (("mode", "peer"), ("scouting/multicast/enabled", False), ("listen/endpoints", []),
                            ("connect/endpoints", [f"tcp/127.0.0.1:{op_port}"])):  # fmt: skip
            conf.insert_json5(path, json.dumps(value))
        session = zenoh.open(conf)
        try:
            # The operator is reached (its token answers), so its subscriber is known to this session.
            assert list(session.liveliness().get(f"{SITE}/bridges/base", timeout=10))
            session.put(f"{SITE}/r1/events/bench.ping", encode_event(BenchPing(n=1), "r2"))  # forged
            session.put(f"{SITE}/r1/events/bench.ping", encode_event(BenchPing(n=2), "r1"))  # true
            assert done.wait(10)
        finally:
            session.close()
        assert [e.n for e in got] == [2]
        assert operator.counters["invalid"] == 1
    finally:
        for bridge in reversed(bridges):
            bridge.stop()
        op_bus.close()


def test_a_fleet_member_that_would_take_commands_from_anyone_does_not_start():
    bus = EventBus("r1")
    bridge = ZenohBridge(
        bus, ZenohBridgeConfig(namespace=f"{SITE}/r1", fleet=SITE, listen=[f"tcp/0.0.0.0:{free_port()}"])
    )
    with pytest.raises(
        BridgeError, match=r"without a tls/ endpoint, enable_mtls, access_control\. Run `edgevox fleet init`"
    ):
        bridge.start()
    bus.close()


@pytest.mark.parametrize("text", ["r1", "r1=host", "r1=host:0", "bad name=h:1", "=h:7447", "r1=:7447"])
def test_a_bad_robot_gets_one_line_saying_what_to_write(text):
    with pytest.raises(ConfigError, match="write NAME=HOST:PORT"):
        parse_robot(text)


def test_init_refuses_a_directory_that_holds_a_fleet_and_names_that_clash(tmp_path):
    robots = [FleetMember("r1", "localhost:7447")]
    init_fleet(tmp_path, fleet=SITE, operator="base", robots=robots, days=1)
    with pytest.raises(ConfigError, match="a fleet is already there"):
        init_fleet(tmp_path, fleet=SITE, operator="base", robots=robots, days=1)
    with pytest.raises(ConfigError, match="names must be distinct"):
        init_fleet(tmp_path / "b", fleet=SITE, operator="r1", robots=robots, days=1)


def test_edgevox_check_says_how_a_fleet_member_is_secured_or_why_it_would_not_start(tmp_path):
    from edgevox.integrations import BridgesConfig, check_bridges

    port = free_port()
    init_fleet(tmp_path, fleet=SITE, operator="base", robots=[FleetMember("r1", f"localhost:{port}")], days=1)
    section = yaml.safe_load((tmp_path / "r1.yaml").read_text())["bridges"]
    [(name, ok, message)] = check_bridges(BridgesConfig.model_validate(section))
    assert (name, ok) == ("zenoh", True), message
    assert f"fleet {SITE}" in message and f"tls/0.0.0.0:{port}" in message and "access control on" in message
    open_fleet = {"zenoh": {"enabled": True, "namespace": f"{SITE}/r1", "fleet": SITE, "listen": ["tcp/0.0.0.0:7447"]}}
    [(name, ok, message)] = check_bridges(BridgesConfig.model_validate(open_fleet))
    assert not ok and "Run `edgevox fleet init`" in message


def test_edgevox_fleet_init_writes_the_files_and_a_bad_robot_gets_one_line(tmp_path):
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "edgevox", "fleet", "init", *args], capture_output=True, text=True, timeout=120
        )

    done = run(str(tmp_path / "f"), "--operator", "base", "--robot", "r1=robot1.local:7447")
    assert done.returncode == 0, done.stderr
    assert {p.name for p in (tmp_path / "f").iterdir()} == {
        "ca.pem", "ca.key", "base.pem", "base.key", "base.zenoh.json5", "base.yaml",
        "r1.pem", "r1.key", "r1.zenoh.json5", "r1.yaml",
    }  # fmt: skip
    bad = run(str(tmp_path / "g"), "--robot", "r1:7447")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "edgevox: error: --robot 'r1:7447': write NAME=HOST:PORT, e.g. r1=robot1.local:7447 (NAME: letters, digits, "
        "'_', '.', '-')"
    ]
