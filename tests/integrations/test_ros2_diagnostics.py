"""The diagnostics a ROS 2 node publishes, from bus events (no rclpy needed): the state, the
last user turn's latencies, and the level: errors and restarts WARN, a supervised agent that
gave up ERROR."""

from __future__ import annotations

from edgevox.integrations.ros2_diagnostics import ERROR, OK, RECENT_S, WARN, DiagnosticsCollector
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import AgentStateEvent, ErrorEvent
from edgevox.voice.events import Chunk, Stopped, Token, TranscriptEvent, TurnDone, TurnStarted


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def collector(bus: EventBus, clock: Clock) -> DiagnosticsCollector:
    return DiagnosticsCollector(
        node="edgevox", hardware_id="robot", counters=lambda: {"invalid": 0}, clock=clock
    ).attach(bus)


def by_name(c: DiagnosticsCollector) -> dict:
    return {s.name.split(": ")[1]: s for s in c.statuses()}


def test_state_and_latencies_follow_a_turn_and_a_stop():
    bus, clock = EventBus("diag"), Clock()
    c = collector(bus, clock)
    try:
        assert by_name(c)["voice"].message == "listening" and by_name(c)["voice"].level == OK
        bus.publish(TranscriptEvent(turn_id=1, text="hello", timestamp=10.0))
        bus.publish(TurnStarted(turn_id=1, text="hello", timestamp=10.01))
        assert by_name(c)["voice"].values["state"] == "thinking"
        bus.publish(Token(turn_id=1, text="Hi", timestamp=10.25))
        bus.publish(Chunk(turn_id=1, text="Hi.", timestamp=10.5))
        bus.publish(TurnDone(turn_id=1, status="completed", timestamp=11.0))
        voice = by_name(c)["voice"].values
        assert voice["state"] == "listening" and voice["turns"] == "1" and voice["last_turn_id"] == "1"
        assert voice["transcript->first_token"] == "0.250" and voice["first_token->first_chunk"] == "0.250"
        assert "speech_end->transcript" not in voice  # a typed turn has no end of speech
        bus.publish(Stopped(reason="e-stop", timestamp=12.0))
        bus.publish(TurnDone(turn_id=2, status="completed", timestamp=12.5))  # "Stopped." spoken
        voice = by_name(c)["voice"].values
        assert voice["stops"] == "1" and voice["last_turn_id"] == "1"  # the confirmation has no latencies
    finally:
        c.close()
        bus.close()


def test_errors_and_restarts_warn_for_a_while_and_an_agent_that_gave_up_is_an_error():
    bus, clock = EventBus("diag"), Clock()
    c = collector(bus, clock)
    try:
        bus.publish(ErrorEvent(where="tool move", error="RuntimeError('motor')"))
        voice = by_name(c)["voice"]
        assert voice.level == WARN and "recent: error" in voice.message
        assert voice.values["last_error"] == "tool move: RuntimeError('motor')"
        clock.now += RECENT_S + 1
        assert by_name(c)["voice"].level == OK  # an old error no longer warns; the count stays
        assert by_name(c)["voice"].values["errors"] == "1"

        bus.publish(AgentStateEvent(agent="patrol", state="running", restart_count=1))
        status = by_name(c)
        assert status["supervision"].level == WARN and status["supervision"].values["patrol"] == "running restarts=1"
        bus.publish(AgentStateEvent(agent="patrol", state="failed", restart_count=5))
        status = by_name(c)
        assert status["supervision"].level == ERROR and status["voice"].level == ERROR
        assert "gave up: patrol" in status["supervision"].message
        assert status["bridge"].values == {"invalid": "0"}
    finally:
        c.close()
        bus.close()


def test_another_bridge_shows_what_it_lost_and_warns_while_its_losses_grow():
    """The Zenoh bridge's losses (data lost on a congested link, stops unreachable) reach ROS
    diagnostics too: WARN for RECENT_S after a loss counter grew, then OK with the totals kept."""
    clock = Clock()
    zenoh = {"sent": 10, "data_lost": 0, "stops_unreachable": 0}
    c = DiagnosticsCollector(node="edgevox", hardware_id="robot", others=lambda: {"zenoh": dict(zenoh)}, clock=clock)
    status = by_name(c)["zenoh bridge"]
    assert (status.level, status.message, status.values["sent"]) == (OK, "ok", "10")
    zenoh.update(data_lost=68, stops_unreachable=1)
    status = by_name(c)["zenoh bridge"]
    assert (status.level, status.message) == (WARN, "lost: data_lost=68, stops_unreachable=1")
    clock.now += RECENT_S + 1
    status = by_name(c)["zenoh bridge"]
    assert (status.level, status.message) == (OK, "lost: data_lost=68, stops_unreachable=1")
    zenoh["data_lost"] = 69
    assert by_name(c)["zenoh bridge"].level == WARN


def test_the_config_wiring_hands_the_zenoh_bridges_counters_to_the_ros2_diagnostics():
    from edgevox.config.build_bridges import make_bridges
    from edgevox.integrations.config import BridgesConfig
    from edgevox.runtime.runtime import Runtime

    runtime = Runtime("wiring").start()
    try:
        cfg = BridgesConfig.model_validate({"zenoh": {"enabled": True}, "ros2": {"enabled": True}})
        bridges = dict(make_bridges(cfg, runtime))
        assert bridges["ros2"].other_bridges == {"zenoh": bridges["zenoh"].counters}
    finally:
        runtime.stop()
