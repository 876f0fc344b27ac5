"""The dashboard's state, collected from a real App on scripted engines: the conversation with
its latency marks, the event log, skills, supervision, background agents, the blackboard, and
pages that fall behind. No web server here (``test_server.py`` has it)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import ClassVar

from edgevox.dashboard.state import DashboardState
from edgevox.dashboard.views import jsonable
from edgevox.runtime.events import AgentEvent, Event
from edgevox.testing import ScriptedLLM
from edgevox.voice.latency import MARKS

from .conftest import Page, home_robot, skill_in, text_app, turn_done

BATTERY_WATCH = """\
agents:
  assistant: {instructions: Be brief.}
  monitor: {instructions: Watch the battery.}
background_agents:
  - name: battery-watch
    agent: monitor
    trigger: {events: [dash.battery], task: "Battery at {level} percent."}
    restart: permanent
"""


@dataclass(kw_only=True)
class DashBattery(Event):
    kind: ClassVar[str] = "dash.battery"
    level: int = 0


def attached(app) -> DashboardState:
    return DashboardState(app).attach()


def test_typed_turns_are_recorded_with_what_was_said_the_reply_and_ordered_latency_marks(running):
    answers = {"hi robot": "Hello there, I am the robot.", "and again": "Second answer."}
    app = text_app(llm=ScriptedLLM(lambda messages, _grammar: answers.get(messages[-1]["content"], "warm")))
    running(app)
    state = attached(app)
    try:
        page = Page(state)
        first = app.submit_text("hi robot")
        page.wait_for(turn_done(first))
        second = app.submit_text("and again")
        page.wait_for(turn_done(second))
        snap = state.snapshot()
    finally:
        state.close(2.0)

    assert [(t["user"], t["reply"], t["status"]) for t in snap["turns"]] == [
        ("hi robot", "Hello there, I am the robot.", "completed"),
        ("and again", "Second answer.", "completed"),
    ]
    for turn in snap["turns"]:
        marks = [turn["marks"][m] for m in MARKS if m in turn["marks"]]
        assert list(turn["marks"]) == ["transcript", "first_token", "first_chunk"]  # typed: no speech, no audio out
        assert marks == sorted(marks)
    kinds = [e["kind"] for e in snap["events"]]
    assert kinds.count("voice.turn_done") == 2 and "voice.transcript" in kinds
    assert "voice.token" not in kinds and snap["stream_events"] >= 2  # streamed pieces are counted, not logged
    done = next(e for e in snap["events"] if e["kind"] == "voice.turn_done")
    assert "status=completed" in done["summary"] and done["fields"]["reply_text"] == "Hello there, I am the robot."
    json.dumps(snap, allow_nan=False)  # what the page parses: plain JSON


def test_a_running_skill_and_its_cancellation_by_the_safety_stop_are_shown(running):
    app = home_robot()
    running(app)
    state = attached(app)
    try:
        page = Page(state)
        app.submit_text("go to the kitchen")
        running_goal = page.wait_for(skill_in("running"))["skill"]
        assert running_goal["skill"] == "go_to"
        assert [a["name"] for a in state.status()["activities"] if a["kind"] == "skill"] == ["go_to"]

        app.loop.safety_stop(reason="test stop")
        cancelled = page.wait_for(skill_in("cancelled"))["skill"]
        stop_line = page.wait_for(lambda m: m["type"] == "turn" and m["turn"]["kind"] == "stop")["turn"]
        snap = state.snapshot()
    finally:
        state.close(2.0)
    assert cancelled["goal_id"] == running_goal["goal_id"] and cancelled["error"] == "safety stop"
    assert stop_line["stopped"]["reason"] == "test stop" and "skill go_to" in stop_line["stopped"]["cancelled"]
    assert [(s["skill"], s["state"]) for s in snap["skills"]] == [("go_to", "cancelled")]


def test_the_status_shows_supervision_background_agents_blackboard_and_running_work(running):
    seen = threading.Event()

    def reply(messages, _grammar):
        if "Battery at 12 percent" in messages[-1]["content"]:
            seen.set()
        return "noted"

    app = text_app(BATTERY_WATCH, llm=ScriptedLLM(reply))
    running(app)
    state = attached(app)
    try:
        app.blackboard.set("robot.pose", {"x_m": 1.5, "y_m": float("nan")})
        app.bus.publish(DashBattery(level=12))
        assert seen.wait(5.0)
        status = state.status()
    finally:
        state.close(2.0)

    tree = status["tree"]
    assert tree["name"] == "App dash-test" and tree["state"] == "running"
    (supervisor,) = [c for c in tree["children"] if c["kind"] == "supervisor"]
    assert supervisor["state"] == "running" and supervisor["restarts"] == 0
    assert [(c["name"], c["state"], c["restarts"]) for c in supervisor["children"]] == [("battery-watch", "running", 0)]
    (row,) = status["background"]
    assert row["name"] == "battery-watch" and row["state"] == "running" and row["dropped"] == 0
    assert row["max_queue"] >= 1 and row["queued"] >= 0
    assert status["blackboard"] == {"robot.pose": {"x_m": 1.5, "y_m": "nan"}}  # NaN is no JSON: shown as text
    json.dumps(status, allow_nan=False)


def test_a_page_that_falls_behind_is_shed_counted_and_its_next_connection_gets_the_present(running):
    app = text_app()
    running(app)
    state = DashboardState(app, client_queue=10).attach()
    try:
        slow = Page(state)  # never reads until the end
        fast = Page(state)
        for i in range(40):
            app.bus.publish(AgentEvent("robot.tick", {"i": i}))
        last = {"payload": {"i": 39}}
        fast.wait_for(lambda m: any(e["kind"] == "robot.tick" and e["fields"] == last for e in logged(m)))

        assert slow.feed.shed and slow.feed.closed and slow.feed.take() == []  # nothing queued for it any more
        assert slow.feed.dropped == 11  # its full queue (10) and the message that did not fit
        pages = state.status()["pages"]
        assert pages["open"] == 1 and pages["shed"] == 1 + len(fast.shed)  # the fast one may have been cut too
        assert pages["dropped"] == slow.feed.dropped + sum(f.dropped for f in fast.shed)
        again = Page(state)  # the browser reconnects: the present first
        snapshot = again.wait_for(lambda m: m["type"] == "snapshot")
        assert [e["fields"]["payload"]["i"] for e in snapshot["events"] if e["kind"] == "robot.tick"][-1] == 39
    finally:
        state.close(2.0)


def test_pages_beyond_max_pages_are_refused_and_counted(running):
    app = text_app()
    running(app)
    state = DashboardState(app, max_pages=2).attach()
    try:
        first, _second = Page(state), Page(state)
        assert state.connect() is None and state.connect() is None
        assert state.status()["pages"] == {"open": 2, "max": 2, "dropped": 0, "shed": 0, "refused": 2}
        state.disconnect(first.feed)
        assert state.connect() is not None  # a closed page frees its place
    finally:
        state.close(2.0)


def logged(message):
    """Event-log rows in a page message (an event, or a snapshot's history)."""
    if message["type"] == "event":
        return [message["event"]]
    return message.get("events", [])


def test_history_is_bounded_by_the_configured_sizes(running):
    app = text_app()
    running(app)
    state = DashboardState(app, max_events=10, max_turns=2).attach()
    try:
        page = Page(state)
        for text in ("one", "two", "three"):
            page.wait_for(turn_done(app.submit_text(text)))
        snap = state.snapshot()
    finally:
        state.close(2.0)
    assert [t["user"] for t in snap["turns"]] == ["two", "three"]
    assert len(snap["events"]) == 10


def test_values_the_page_cannot_parse_are_made_json():
    long = "x" * 1000
    value = jsonable({"inf": float("inf"), "long": long, "items": list(range(80)), 3: object})
    assert value["inf"] == "inf" and len(value["long"]) == 400 and value["long"].endswith("…")
    assert len(value["items"]) == 51 and value["items"][-1] == "… 30 more"
    assert value["3"].startswith("<class")
    json.dumps(value, allow_nan=False)


def test_the_status_shows_what_each_bridge_lost_and_nothing_for_a_bridge_that_lost_nothing():
    from edgevox.dashboard.views import bridge_losses
    from edgevox.integrations.config import ZenohBridgeConfig
    from edgevox.integrations.zenoh_bridge import ZenohBridge
    from edgevox.runtime.bus import EventBus

    bus = EventBus("losses")
    lossy = ZenohBridge(bus, ZenohBridgeConfig(enabled=True, namespace="edgevox/a"), bridge_id="a")
    clean = ZenohBridge(bus, ZenohBridgeConfig(enabled=True, namespace="edgevox/b"), bridge_id="b")
    lossy.counters.add("data_lost", 57)
    lossy.counters.add("stops_late", 3)
    lossy.counters.add("received", 10)  # not a loss
    try:
        assert bridge_losses([("zenoh", lossy), ("zenoh-b", clean), ("custom", object())]) == {
            "zenoh": {"data_lost": 57, "stops_late": 3},
            "zenoh-b": {},
        }
    finally:
        bus.close()


def test_the_status_lists_the_robots_a_zenoh_bridge_hears_with_their_goals():
    from edgevox.agents.events import SkillStateEvent
    from edgevox.dashboard.views import fleet_rows
    from edgevox.integrations.config import ZenohBridgeConfig
    from edgevox.integrations.zenoh_bridge import ZenohBridge
    from edgevox.runtime.bus import EventBus

    bus = EventBus("fleet")
    operator = ZenohBridge(bus, ZenohBridgeConfig(namespace="edgevox/site", robots="*"), bridge_id="base")
    operator.roster.join("r1", "edgevox/site/r1", 10.0)
    operator.roster.heard("r1", 12.0, SkillStateEvent(skill="go_to", goal_id="g1", state="running"))
    operator.roster.join("r2", "edgevox/site/r2", 10.0)
    operator.roster.leave("r2", 11.0)
    try:
        assert fleet_rows([("zenoh", operator), ("custom", object())], now=13.0) == [
            {"bridge": "zenoh", "id": "r1", "namespace": "edgevox/site/r1", "present": True, "heard_s": 1.0,
             "goals": ["go_to:g1"]},
            {"bridge": "zenoh", "id": "r2", "namespace": "edgevox/site/r2", "present": False, "heard_s": 3.0,
             "goals": []},
        ]  # fmt: skip
    finally:
        bus.close()
