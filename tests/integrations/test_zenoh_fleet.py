"""A fleet that always stops (issue 26): stop ids, acknowledgements, retries, the dead-man, and
every dropped data sample counted. Real Zenoh on loopback; robots in separate processes where
the fault needs one (a frozen or killed process)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from edgevox.cli.bench_fleet import Robot, killed_operator, paused_robot
from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.events import StopDeliveryEvent
from edgevox.integrations.serialization import encode_event
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.integrations.zenoh_control import StopDelivery
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import StopEvent
from edgevox.runtime.runtime import Runtime
from tests.integrations.conftest import free_port

pytestmark = pytest.mark.zenoh
NS = "edgevox/fleet-test"


# -- StopDelivery: what a status means -------------------------------------------------------------


def test_a_delivery_says_stopped_late_unreachable_or_pending_per_peer():
    d = StopDelivery("s1", "why", frozenset({"a", "b", "c", "d"}), sent_at=100.0, deadline_at=101.0)
    assert d.ack("a", ["skill go_to"], 100.2)
    assert not d.ack("a", [], 100.3)  # the first acknowledgement counts
    assert not d.ack("stranger", [], 100.3)  # only expected peers
    d.peer_left("c")
    assert d.status("a", 100.5) == "stopped"
    assert d.status("b", 100.5) == "pending"
    assert d.status("c", 100.5) == "unreachable"  # left: unreachable at once
    assert d.status("b", 101.0) == "unreachable"  # the deadline passed
    d.ack("b", [], 103.0)
    assert d.status("b", 103.1) == "late"
    assert d.latency_s("b") == pytest.approx(3.0)
    assert d.unacknowledged == {"c", "d"}  # c left but may come back: still retried
    assert d.waiting == {"d"}
    assert not d.delivered
    event = d.event("zenoh")
    assert event.stopped == ["a"] and event.late == ["b"] and sorted(event.unreachable) == ["c", "d"]
    assert event.cancelled == {"a": ["skill go_to"], "b": []}


def test_a_stop_to_nobody_is_said_so():
    d = StopDelivery("s2", "why", frozenset(), sent_at=0.0, deadline_at=1.0)
    assert d.delivered and d.wait(0.0)
    assert "no robot" in d.describe()


# -- in one process: operator and robot bridges ----------------------------------------------------------


@pytest.fixture
def fleet():
    """A robot (runtime + bridge taking stops) and an operator bridge, in one namespace."""
    port = free_port()
    robot = Runtime("robot").start()
    robot_bridge = ZenohBridge(
        robot.bus,
        ZenohBridgeConfig(
            enabled=True, namespace=NS, listen=[f"tcp/127.0.0.1:{port}"], subscribe_kinds=["control.*", "bench.*"]
        ),
        activities=robot.activities,
        bridge_id="robot",
    ).start()
    op_bus = EventBus("operator")
    operator = ZenohBridge(
        op_bus,
        ZenohBridgeConfig(
            enabled=True, namespace=NS, connect=[f"tcp/127.0.0.1:{port}"], publish_kinds=["control.*", "bench.*"]
        ),
        bridge_id="operator",
    ).start()
    assert operator.wait_for_peers(1, 20) and robot_bridge.wait_for_peers(1, 20)
    yield robot, robot_bridge, op_bus, operator, port
    operator.stop(), robot_bridge.stop(), robot.stop(), op_bus.close()


def test_safety_stop_is_acknowledged_with_what_the_robot_cancelled(fleet):
    robot, _robot_bridge, op_bus, operator, _ = fleet
    reports: list[StopDeliveryEvent] = []
    got = threading.Event()
    op_bus.subscribe(StopDeliveryEvent, lambda e: (reports.append(e), got.set()))
    skill = robot.activities.start("skill", "go_to")
    delivery = operator.safety_stop("operator says stop")
    assert delivery.peers == {"robot": "stopped"}, delivery.describe()
    assert delivery.cancelled == {"robot": ["skill go_to"]}
    assert skill.token.cancelled
    assert got.wait(10)
    assert reports[0].stop_id == delivery.stop_id and reports[0].stopped == ["robot"]
    assert operator.counters["stops_stopped"] == 1


def test_a_stop_published_on_the_operator_bus_gets_an_id_and_is_acknowledged(fleet):
    robot, _robot_bridge, op_bus, _operator, _ = fleet
    got = threading.Event()
    reports: list[StopDeliveryEvent] = []
    op_bus.subscribe(StopDeliveryEvent, lambda e: (reports.append(e), got.set()))
    seen: list[StopEvent] = []
    robot.bus.subscribe(StopEvent, seen.append)
    op_bus.publish(StopEvent(reason="button"))
    assert got.wait(10)
    assert reports[0].stopped == ["robot"] and reports[0].stop_id
    assert [e.stop_id for e in seen] == [reports[0].stop_id]


def test_a_repeated_stop_is_acknowledged_again_without_acting_twice_and_stops_are_not_rate_limited(fleet):
    import zenoh

    robot, robot_bridge, *_rest, port = fleet
    seen: list[StopEvent] = []
    robot.bus.subscribe(StopEvent, seen.append)
    conf = zenoh.Config()
    conf.insert_json5("mode", '"peer"')
    conf.insert_json5("scouting/multicast/enabled", "false")
    conf.insert_json5("connect/endpoints", json.dumps([f"tcp/127.0.0.1:{port}"]))
    acks: list[dict] = []
    cond = threading.Condition()

    def on_ack(sample) -> None:
        with cond:
            acks.append(json.loads(sample.payload.to_bytes()))
            cond.notify_all()

    session = zenoh.open(conf)
    try:
        session.declare_subscriber(f"{NS}/acks/raw-peer", on_ack)
        token_seen = threading.Event()
        session.liveliness().declare_subscriber(f"{NS}/bridges/robot", lambda _s: token_seen.set(), history=True)
        assert token_seen.wait(20)
        key = f"{NS}/events/control.stop"
        session.put(key, encode_event(StopEvent(reason="once", stop_id="same-id"), "raw-peer"))
        session.put(key, encode_event(StopEvent(reason="once", stop_id="same-id"), "raw-peer"))
        # 30 distinct stops at once: far over max_control_per_s (10), none may be dropped.
        for i in range(30):
            session.put(key, encode_event(StopEvent(reason="burst", stop_id=f"burst-{i}"), "raw-peer"))
        want = {"same-id"} | {f"burst-{i}" for i in range(30)}
        with cond:
            assert cond.wait_for(lambda: want <= {a["stop_id"] for a in acks}, 20), acks
            first = sum(a["stop_id"] == "same-id" for a in acks)  # the repeat may join the first's ack
        # A retry of a stop the robot already acted on (its acknowledgement was lost, say) is
        # acknowledged again, and does not act again.
        session.put(key, encode_event(StopEvent(reason="once", stop_id="same-id"), "raw-peer"))
        with cond:
            assert cond.wait_for(lambda: sum(a["stop_id"] == "same-id" for a in acks) == first + 1, 20), acks
        assert sum(e.stop_id == "same-id" for e in seen) == 1  # acted once
        assert robot_bridge.counters["stop_repeats"] >= 1
        assert robot_bridge.counters["rate_limited"] == 0
        assert all(a["bridge"] == "robot" for a in acks)
    finally:
        session.close()


def test_the_operator_is_not_stopped_by_a_robot_leaving(fleet):
    """The dead-man guards a bridge that takes stops (a robot); the operator's does not."""
    _robot, robot_bridge, op_bus, operator, _ = fleet
    stops: list[StopEvent] = []
    op_bus.subscribe(StopEvent, stops.append)
    left = threading.Event()
    op_bus.subscribe("bridge.peer", lambda e: left.set() if e.state == "left" else None)
    op_bus.publish(StopEvent(reason="so the robot has sent something back"))
    assert robot_bridge.stop()
    assert left.wait(20)
    assert operator.counters["deadman_stops"] == 0
    assert [s.reason for s in stops] == ["so the robot has sent something back"]


# -- robots in their own processes ----------------------------------------------------------------------


@pytest.fixture
def robot_process():
    made: list[Robot] = []

    def make(name: str = "r1") -> Robot:
        made.append(Robot(name))
        return made[-1]

    yield make
    for r in made:
        r.close()


def test_stops_to_a_frozen_robot_with_a_full_link_are_delivered_late_and_no_data_loss_goes_uncounted(robot_process):
    """The issue's fault: 5 of 8 stops were lost. The robot is frozen 3 s while 8 MB of data are
    queued towards it and 20 stops are sent: each is acknowledged (late) once it resumes, its
    skill ends, and every data sample that did not arrive is counted."""
    robot = robot_process()
    result = paused_robot(robot, stops=20, pause_s=3.0, blob_mb=8)
    assert result["lost"] == 0 and result["unreachable"] == 0, result
    assert result["stopped"] + result["late"] == 20, result
    assert result["skill_ended"], result
    assert "(uncounted: 0)" in result["data"], result


def test_killing_the_operator_stops_the_skill_it_started(robot_process):
    robot = robot_process()
    took = killed_operator(robot)
    assert took is not None and took < 2.0, took  # a killed process closes its sockets: seen at once


def test_a_stop_to_a_robot_that_died_reports_it_unreachable(robot_process):
    robot = robot_process()
    assert robot.start_skill()
    robot.proc.kill()
    robot.proc.wait()
    started = time.monotonic()
    delivery = robot.bridge.safety_stop("after the crash", timeout_s=20)
    assert delivery.peers == {"r1": "unreachable"}, delivery.describe()
    assert time.monotonic() - started < 20
    again = robot.bridge.safety_stop("and again", timeout_s=0)  # a robot seen before is never left out
    assert again.peers == {"r1": "unreachable"}
