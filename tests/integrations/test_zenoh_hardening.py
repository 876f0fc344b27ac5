"""A hostile peer on loopback: each attack on the Zenoh bridge from a second process.

The attacker (``zenoh_attacker.py``) speaks raw Zenoh, so nothing of edgevox filters what it
sends; the robot is a real bridge in this process. After an attack the attacker publishes a
valid "marker" transcript: Zenoh delivers one link's messages in order, so once the marker is
on the robot's bus everything sent before it has been handled (counted or delivered).
"""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("zenoh", reason="eclipse-zenoh is not installed: pip install 'edgevox[zenoh]'")

from edgevox.integrations.config import ZenohBridgeConfig  # noqa: E402
from edgevox.integrations.zenoh_bridge import ZenohBridge  # noqa: E402
from edgevox.integrations.zenoh_session import build_zenoh_config, exposure_warnings  # noqa: E402
from edgevox.runtime.blackboard import Blackboard, Request  # noqa: E402
from edgevox.runtime.bus import EventBus  # noqa: E402
from edgevox.runtime.events import InterruptEvent, StopEvent  # noqa: E402
from edgevox.voice.events import TranscriptEvent  # noqa: E402

from . import tls_certs  # noqa: E402
from .conftest import HERE, PYTHON, Collector, free_port  # noqa: E402

pytestmark = pytest.mark.zenoh

NS = "edgevox/robot1"
EVENTS = f"{NS}/events"
BOARD = f"{NS}/blackboard"


class Attacker:
    """Drives ``zenoh_attacker.py``: one JSON command per line."""

    def __init__(self, child) -> None:
        self.child = child
        self._ids = iter(range(1, 10_000))

    def _do(self, **cmd) -> None:
        self.child.send(json.dumps(cmd))
        self.child.wait_line(lambda line: line == f"DONE {cmd['op']}", 60)

    def put(self, kind: str, repeat: int = 1, pad: int = 0, key: str | None = None, **fields) -> None:
        self._do(op="put", key=key or f"{EVENTS}/{kind}", event={"kind": kind, **fields}, repeat=repeat, pad=pad)

    def raw(self, kind: str, text: str) -> None:
        self._do(op="raw", key=f"{EVENTS}/{kind}", text=text)

    def deep(self, depth: int) -> None:
        self._do(op="deep", key=f"{EVENTS}/voice.transcript", depth=depth)

    def marker(self, text: str = "marker") -> None:
        self.put("voice.transcript", text=text)

    def query_async(self, key: str, body=None, timeout: float = 20.0) -> str:
        qid = str(next(self._ids))
        self.child.send(
            json.dumps({"op": "query", "id": qid, "key": f"{BOARD}/{key}", "body": body, "timeout": timeout})
        )
        self.child.wait_line(lambda line: line == f"QUERYING {qid}")
        return qid

    def reply(self, qid: str, timeout_s: float = 60.0) -> dict:
        line = self.child.wait_line(lambda line: line.startswith(f"REPLY {qid} "), timeout_s)
        return json.loads(line[len(f"REPLY {qid} ") :])

    def query(self, key: str, body=None, timeout: float = 20.0) -> dict:
        return self.reply(self.query_async(key, body, timeout), timeout + 30)


@pytest.fixture
def robot():
    """A robot: bus, blackboard and a bridge listening on a free loopback port."""
    made = []

    def make(**kw):
        port = free_port()
        bus, board = EventBus("robot"), Blackboard(name="robot")
        config = ZenohBridgeConfig(enabled=True, namespace=NS, listen=kw.pop("listen", [f"tcp/127.0.0.1:{port}"]), **kw)
        bridge = ZenohBridge(bus, config, blackboard=board, bridge_id="robot")
        seen = Collector(bus)
        bridge.start()
        made.append(SimpleNamespace(bus=bus, board=board, bridge=bridge, seen=seen, port=port))
        return made[-1]

    yield make
    for r in made:
        assert r.bridge.stop()
        r.bus.close(), r.board.close()


@pytest.fixture
def attacker(child_process):
    def start(robot, *extra: str, endpoint: str | None = None) -> Attacker:
        argv = [PYTHON, str(HERE / "zenoh_attacker.py"), "--connect", endpoint or f"tcp/127.0.0.1:{robot.port}"]
        child = child_process([*argv, "--must-connect", "--wait-token", f"{NS}/bridges/robot", *extra])
        child.expect("READY", 60)
        return Attacker(child)

    return start


def seen_marker(robot, text: str = "marker", timeout_s: float = 30.0) -> bool:
    return robot.seen.wait_for(lambda e: isinstance(e, TranscriptEvent) and e.text == text, timeout_s)


class Posted:
    """Counts requests posted on a blackboard under a prefix (a watcher, no polling)."""

    def __init__(self, board: Blackboard, prefix: str) -> None:
        self.count = 0
        self._cond = threading.Condition()
        board.watch(prefix, self._on)

    def _on(self, _key, _old, new) -> None:
        if isinstance(new, Request):
            with self._cond:
                self.count += 1
                self._cond.notify_all()

    def wait(self, n: int, timeout_s: float = 30.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.count >= n, timeout_s)


# -- blackboard requests --------------------------------------------------------------------------


def test_with_the_default_config_a_peer_query_reaches_no_blackboard(robot, attacker):
    r = robot()
    r.board.set("robot/pose", {"x": 1.0})
    atk = attacker(r)
    assert atk.query("robot/pose", {"payload": "evil", "timeout_s": 1e300}, timeout=1.0) == {"none": True}
    assert r.board.snapshot() == {"robot/pose": {"x": 1.0}}


def test_a_peer_may_not_overwrite_a_key_or_post_outside_the_allowlist(robot, attacker):
    r = robot(serve_blackboard=True, serve_keys=["plan", "robot/*"])
    r.board.set("robot/pose", {"x": 1.0})
    version = r.board.version("robot/pose")
    atk = attacker(r)
    assert "already holds a value" in atk.query("robot/pose", {"payload": "evil"})["err"]["error"]
    assert "not in bridges.zenoh.serve_keys" in atk.query("battery", {"payload": 1})["err"]["error"]
    assert "wildcards" in atk.query("**", {"payload": 1})["err"]["error"]
    assert r.board.snapshot() == {"robot/pose": {"x": 1.0}} and r.board.version("robot/pose") == version
    assert r.bridge.counters["requests_refused"] == 3


def test_a_peer_cannot_answer_the_robots_own_pending_request(robot, attacker):
    r = robot(serve_blackboard=True, serve_keys=["plan*"])
    future = r.board.post_request("plan", {"goal": "kitchen"}, timeout=60)
    request = r.board.get("plan")
    atk = attacker(r)
    for guess in (request.reply_key, "plan/reply/1", "plan/reply/2", "plan/x/reply/1"):
        reply = atk.query(guess, {"payload": {"route": "off the stairs"}})
        assert "is a reply key" in reply["err"]["error"], reply
    assert "already holds a value or a pending request" in atk.query("plan", {"payload": 1})["err"]["error"]
    assert not future.done() and r.board.get("plan") is request
    r.board.reply_to(request, {"route": ["hall", "kitchen"]})
    assert future.result(5) == {"route": ["hall", "kitchen"]}


def test_a_peer_timeout_is_refused_or_clamped_and_the_timer_survives(robot, attacker):
    r = robot(serve_blackboard=True, serve_keys=["plan", "nobody"], max_request_timeout_s=0.5)
    r.board.watch("plan", lambda _k, _o, new: r.board.reply_to(new, "planned") if isinstance(new, Request) else None)
    atk = attacker(r)
    for bad in ("soon", -1, 0, True, float("inf")):
        error = atk.query("plan", {"payload": 1, "timeout_s": bad})["err"]["error"]
        assert "timeout_s" in error or "not a number JSON allows" in error, error
    started = time.monotonic()
    error = atk.query("nobody", {"payload": 1, "timeout_s": 1e300}, timeout=30)["err"]["error"]
    assert "TimeoutError" in error and time.monotonic() - started < 20  # clamped to 0.5 s, not 1e300 s
    assert atk.query("plan", {"payload": 1, "timeout_s": 1e300}) == {
        "ok": {"v": 1, "origin": "robot", "value": "planned"}
    }
    with pytest.raises(TimeoutError):  # the blackboard's timer still runs
        r.board.post_request("local", 1, timeout=0.2).result(10)


def test_slow_requests_do_not_hold_the_workers_and_are_bounded(robot, attacker):
    r = robot(serve_blackboard=True, serve_keys=["slow/*", "plan"], max_served_requests=4, max_request_timeout_s=60)
    r.board.watch("plan", lambda _k, _o, new: r.board.reply_to(new, "planned") if isinstance(new, Request) else None)
    posted = Posted(r.board, "slow/*")
    atk = attacker(r)
    slow = [atk.query_async(f"slow/{i}", {"payload": i, "timeout_s": 60}, timeout=60) for i in range(4)]
    assert posted.wait(4)
    assert atk.query("plan", {"payload": 1})["ok"]["value"] == "planned"  # not stuck behind the slow ones
    assert "busy" in atk.query("slow/5", {"payload": 5})["err"]["error"]
    assert r.board.pending_requests() == 4 and r.bridge.counters["requests_busy"] == 1
    assert r.bridge.stop()  # every waiting peer is told, none is left to time out
    for qid in slow:
        assert "stopping" in atk.reply(qid)["err"]["error"]
    assert r.board.pending_requests() == 0 and r.board.keys() == []


# -- events ---------------------------------------------------------------------------------------------


def test_oversized_payloads_are_refused_and_counted(robot, attacker):
    r = robot(subscribe_kinds=["voice.*"])  # max_payload_bytes 256 KiB; Zenoh reassembles at most 1 MiB
    atk = attacker(r)
    atk.put("voice.transcript", pad=200_000)  # under the limit: accepted
    atk.put("voice.transcript", pad=1_000_000)  # over ours, under Zenoh's: refused and counted here
    atk.put("voice.transcript", pad=16_000_000)  # over Zenoh's: discarded while reassembling, never in memory here
    atk.marker()
    assert seen_marker(r)
    assert r.bridge.counters.wait_for(lambda c: c["oversized"] == 1, 10), r.bridge.counters
    assert [len(t) for t in r.seen.texts()] == [200_000, len("marker")]


def test_deeply_nested_payloads_are_refused_and_counted(robot, attacker):
    r = robot(subscribe_kinds=["voice.*"])
    atk = attacker(r)
    atk.deep(100_000)  # Python's parser would raise RecursionError inside the Zenoh callback
    atk.deep(40)
    atk.marker()
    assert seen_marker(r)
    assert r.bridge.counters["too_deep"] == 2 and r.seen.texts() == ["marker"]


def test_events_with_wrongly_typed_fields_never_reach_handlers(robot, attacker):
    r = robot(subscribe_kinds=["voice.*", "control.*"])
    atk = attacker(r)
    atk.put("voice.transcript", text="go", timestamp="yesterday")
    atk.put("voice.transcript", text="go", turn_id=True)
    atk.put("voice.transcript", text=["go"])
    atk.put("voice.transcript", text="go", volume=11)
    atk.put("control.stop", key=f"{EVENTS}/voice.transcript")  # the key says transcript
    atk.raw("voice.transcript", '{"v": 1, "origin": "robot", "event": {"kind": "voice.transcript"}}')  # our own id
    atk.raw("voice.transcript", '{"v": 1, "origin": "x", "event": {"kind": "voice.transcript", "stt_s": 1e999}}')
    atk.raw("control.stop", "stop!")
    atk.marker()
    assert seen_marker(r)
    assert r.bridge.counters["invalid"] == 8, r.bridge.counters
    assert [e.kind for e in r.seen.events if e.kind.startswith(("voice.", "control."))] == ["voice.transcript"]


def test_a_flood_of_interrupts_cannot_grow_the_inbox(robot, attacker):
    """1500 interrupts of 16 KB while the inbox worker is stuck: at most one waits, none is lost uncounted."""
    r = robot(subscribe_kinds=["control.*", "voice.*"], max_control_per_s=1e6)
    gate, first = threading.Event(), threading.Event()
    r.bus.subscribe(InterruptEvent, lambda _e: (first.set(), gate.wait(60)))
    atk = attacker(r)
    try:
        atk.put("control.interrupt", repeat=1500, pad=16_384)
        assert r.bridge.counters.wait_for(lambda c: c["received"] == 1500, 60), r.bridge.counters
        assert first.is_set()
        assert len(r.bridge._inbox) <= 1 and r.bridge.counters["control_coalesced"] >= 1498
    finally:
        gate.set()
    atk.put("control.stop", reason="then a stop")
    assert r.seen.wait_for(lambda e: isinstance(e, StopEvent) and e.reason == "then a stop", 30)


def test_control_events_from_a_peer_are_rate_limited_per_kind(robot, attacker):
    r = robot(subscribe_kinds=["control.*"], max_control_per_s=5.0)
    atk = attacker(r)
    atk.put("control.interrupt", repeat=300)
    c = r.bridge.counters
    assert c.wait_for(lambda v: v["received"] + v["rate_limited"] == 300, 30), c
    assert c["received"] < 100 and c["rate_limited"] > 200
    atk.put("control.stop", reason="a stop has its own budget")
    assert r.seen.wait_for(lambda e: isinstance(e, StopEvent), 30)


# -- Zenoh's own access control and TLS ----------------------------------------------------------------


def write_acl(path, rules, subjects) -> str:
    acl = {
        "enabled": True,
        "default_permission": "allow",
        "rules": rules,
        "subjects": subjects,
        "policies": [{"rules": [r["id"] for r in rules], "subjects": [s["id"] for s in subjects]}],
    }
    path.write_text(json.dumps({"access_control": acl}, indent=2), encoding="utf-8")
    return str(path)


DENY_STOP = {
    "id": "no-remote-stop",
    "permission": "deny",
    "flows": ["ingress"],
    "messages": ["put"],
    "key_exprs": [f"{EVENTS}/control.stop"],
}


def test_a_deny_rule_in_zenohs_access_control_blocks_a_peers_put(robot, attacker, tmp_path):
    config_file = write_acl(tmp_path / "zenoh.json5", [DENY_STOP], [{"id": "loopback", "interfaces": ["lo"]}])
    r = robot(subscribe_kinds=["control.*", "voice.*"], zenoh_config_file=config_file)
    atk = attacker(r)
    atk.put("control.stop", reason="from the LAN")
    atk.put("control.interrupt", reason="allowed")
    atk.marker()
    assert seen_marker(r)
    assert not any(isinstance(e, StopEvent) for e in r.seen.events)
    assert any(isinstance(e, InterruptEvent) and e.reason == "allowed" for e in r.seen.events)
    assert r.bridge.counters["received"] == 2  # Zenoh dropped the stop before the bridge saw it


def test_tls_admits_only_peers_with_a_certificate_from_the_robots_ca(robot, attacker, child_process, tmp_path):
    missing = tls_certs.available()
    if missing:
        pytest.skip(f"cannot make test certificates: {missing} (pip install cryptography)")
    ca = tls_certs.make_ca(tmp_path, "fleet-ca")
    rogue_ca = tls_certs.make_ca(tmp_path, "rogue-ca")
    for name in ("robot", "base", "visitor"):
        tls_certs.make_leaf(tmp_path, name, ca)
    tls_certs.make_leaf(tmp_path, "intruder", rogue_ca)
    tls = "transport/link/tls"
    port = free_port()
    r = robot(
        listen=[f"tls/localhost:{port}"],
        subscribe_kinds=["control.*", "voice.*"],
        zenoh_config_file=write_acl(
            tmp_path / "acl.json5", [DENY_STOP], [{"id": "visitors", "cert_common_names": ["visitor"]}]
        ),
        zenoh_config={
            f"{tls}/root_ca_certificate": str(ca),
            f"{tls}/enable_mtls": True,
            f"{tls}/listen_private_key": str(tmp_path / "robot.key"),
            f"{tls}/listen_certificate": str(tmp_path / "robot.pem"),
        },
    )
    r.port = port

    def client(name: str | None, ca_file=ca) -> list[str]:
        opts = ["--set", f"{tls}/root_ca_certificate={json.dumps(str(ca_file))}"]
        if name:
            opts += ["--set", f"{tls}/enable_mtls=true"]
            opts += ["--set", f"{tls}/connect_private_key={json.dumps(str(tmp_path / f'{name}.key'))}"]
            opts += ["--set", f"{tls}/connect_certificate={json.dumps(str(tmp_path / f'{name}.pem'))}"]
        return opts

    # Refused at the handshake: plain TCP, TLS without a client certificate, a certificate of another CA.
    for endpoint, opts in (
        (f"tcp/127.0.0.1:{port}", []),
        (f"tls/localhost:{port}", client(None)),
        (f"tls/localhost:{port}", client("intruder")),
    ):
        argv = [PYTHON, str(HERE / "zenoh_attacker.py"), "--connect", endpoint, "--must-connect"]
        child_process([*argv, "--connect-timeout-ms", "1500", *opts]).expect("OPEN_FAILED", 60)
    # A visitor's certificate connects, but access control refuses its stop.
    visitor = attacker(r, *client("visitor"), endpoint=f"tls/localhost:{port}")
    visitor.put("control.stop", reason="visitor")
    visitor.marker("from the visitor")
    assert seen_marker(r, "from the visitor")
    assert not any(isinstance(e, StopEvent) for e in r.seen.events)
    # The base station's certificate may stop the robot.
    base = attacker(r, *client("base"), endpoint=f"tls/localhost:{port}")
    base.put("control.stop", reason="base station")
    assert r.seen.wait_for(lambda e: isinstance(e, StopEvent) and e.reason == "base station", 30)


# -- configuration ------------------------------------------------------------------------------------------


def test_a_zenoh_config_file_supplies_what_edgevox_does_not_model(tmp_path):
    import zenoh  # noqa: F401 - build_zenoh_config needs it

    path = tmp_path / "zenoh.json5"
    path.write_text('{listen: {endpoints: ["tcp/127.0.0.1:7999"]}, access_control: {enabled: true}}', encoding="utf-8")
    conf = build_zenoh_config(ZenohBridgeConfig(zenoh_config_file=str(path), multicast_scouting=False))
    assert json.loads(conf.get_json("listen/endpoints")) == ["tcp/127.0.0.1:7999"]  # ours was empty
    assert json.loads(conf.get_json("access_control/enabled")) is True
    assert json.loads(conf.get_json("scouting/multicast/enabled")) is False
    assert json.loads(conf.get_json("transport/link/rx/max_message_size")) == 4 * 262_144
    # No endpoints anywhere: nothing listens (Zenoh's own default would listen on every interface).
    path.write_text("{}", encoding="utf-8")
    conf = build_zenoh_config(ZenohBridgeConfig(zenoh_config_file=str(path), zenoh_config={"connect/timeout_ms": 5}))
    assert json.loads(conf.get_json("listen/endpoints")) == []
    assert json.loads(conf.get_json("connect/timeout_ms")) == 5
    from edgevox.errors import BridgeError

    with pytest.raises(BridgeError, match="zenoh_config_file = .*nope.json5.*cannot load it"):
        build_zenoh_config(ZenohBridgeConfig(zenoh_config_file=str(tmp_path / "nope.json5")))


def test_listening_beyond_loopback_without_tls_is_called_out():
    def lines(*listen):
        return exposure_warnings(build_zenoh_config(ZenohBridgeConfig(listen=list(listen))))

    assert lines("tcp/127.0.0.1:7447", "tcp/[::1]:7447", "tcp/localhost:7447", "tls/0.0.0.0:7447") == []
    [line] = lines("tcp/0.0.0.0:7447")
    assert "tcp/0.0.0.0:7447 without TLS or access_control" in line and "docs/distributed.md" in line


def test_the_docs_examples_listen_on_loopback():
    text = (HERE.parent.parent / "docs" / "distributed.md").read_text(encoding="utf-8")
    examples = text.split("```")[1::2]
    assert examples and not any("0.0.0.0" in e or "[::]" in e for e in examples if "tls/" not in e)
