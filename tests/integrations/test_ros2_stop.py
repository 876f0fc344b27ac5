"""What the ROS stop service answers: the goals started through the bridge and what the voice
loop's ``voice.stopped`` reports, each named once; without a voice loop, the goals alone."""

from __future__ import annotations

import json
import threading

from edgevox.agents.skills import GoalHandle, skill
from edgevox.integrations.config import Ros2BridgeConfig
from edgevox.integrations.ros2_stop import describe, safety_stop
from edgevox.integrations.ros_common import RosBridgeCore
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import StopEvent
from edgevox.voice.events import Stopped


def test_the_answer_names_each_thing_stopped_once_and_what_ignored_the_cancel():
    report = Stopped(cancelled_turns=[4], cancelled=["skill hold", "tool move"], ignored=["tool weld"])
    assert describe({"g1": "hold"}, report) == (
        "stopped: goal g1 (skill hold), turn 4, tool move; still running (ignored the cancel): tool weld"
    )
    assert describe({}, Stopped(cancelled_turns=[], cancelled=[])) == "stopped: nothing was running"


def test_without_a_voice_loop_the_stop_cancels_the_bridge_goals_and_names_them():
    bus = EventBus("stop-service")
    running, cancelled = threading.Event(), threading.Event()

    @skill
    def hold(goal: GoalHandle) -> str:
        """Hold position until cancelled."""
        running.set()
        try:
            while True:
                goal.sleep(0.05)
        finally:
            cancelled.set()

    core = RosBridgeCore(bus, Ros2BridgeConfig(enabled=True), bridge="ros2", skills=[hold])
    stops = []
    bus.subscribe(StopEvent, stops.append)
    core.start(wake=lambda: None)
    try:
        core.handle("/edgevox/skill/goal", json.dumps({"goal_id": "g1", "skill": "hold"}))
        assert running.wait(5)
        assert (
            safety_stop(bus, core, "ROS 2 stop service /edgevox/stop", wait_s=0.05) == "stopped: goal g1 (skill hold)"
        )
        assert [s.reason for s in stops] == ["ROS 2 stop service /edgevox/stop"]
        assert cancelled.wait(5)  # the body itself saw the cancel
    finally:
        assert core.stop(2.0)
        bus.close()


def test_a_stop_on_the_topic_is_answered_on_stop_ack_with_what_it_cancelled_also_over_the_rate_limit():
    """The topic path's acknowledgement (issue 26): every message on ``stop`` gets an answer on
    ``stop/ack`` after it acted, naming what was cancelled; one over the rate limit too."""
    bus = EventBus("stop-ack")
    running = threading.Event()

    @skill
    def hold(goal: GoalHandle) -> str:
        """Hold position until cancelled."""
        running.set()
        while True:
            goal.sleep(0.05)

    core = RosBridgeCore(bus, Ros2BridgeConfig(enabled=True, max_messages_per_s=1.0), bridge="ros2", skills=[hold])
    core.start(wake=lambda: None)
    try:
        core.handle("/edgevox/skill/goal", json.dumps({"goal_id": "g1", "skill": "hold"}))
        assert running.wait(5)
        core.handle("/edgevox/stop", "bumper")
        core.handle("/edgevox/stop", "again, over the limit")
        acks = [json.loads(d) for t, d in core.drain() if t == "/edgevox/stop/ack"]
        assert acks[0] == {"stop": "bumper", "stopped": ["goal g1 (skill hold)"], "rate_limited": False}
        # The second names the goal too while its body is still winding down from the first cancel.
        assert acks[1]["stop"] == "again, over the limit" and acks[1]["rate_limited"] is True
        assert set(acks[1]["stopped"]) <= {"goal g1 (skill hold)"} and len(acks) == 2
        assert "/edgevox/stop/ack" in core.outgoing_topics()
    finally:
        assert core.stop(2.0)
        bus.close()


def test_a_say_message_is_answered_on_say_done_when_its_turn_ended():
    """``say`` was fire-and-forget (issue 26): each message now gets one answer on ``say/done``
    once the robot finished speaking it (real App, typed input, no speaker), or at once when
    there was nothing to speak."""
    from edgevox.app import App, Engines
    from edgevox.config.loader import parse_config
    from edgevox.testing import ScriptedLLM

    head = "name: say-test\naudio:\n  input: {source: text}\n  output: {sink: none}\nagents:\n  a: {instructions: Be brief.}\n"
    app = App.build(parse_config(head, env={}), engines=Engines(llm=ScriptedLLM(default="x")))
    app.start()
    answers: list[dict] = []
    cond = threading.Condition()

    def wake() -> None:
        with cond:
            answers.extend(json.loads(d) for t, d in core.drain() if t == "/edgevox/say/done")
            cond.notify_all()

    core = RosBridgeCore(app.bus, Ros2BridgeConfig(enabled=True), bridge="ros2", on_say=app.say)
    core.start(wake=wake)
    try:
        assert "/edgevox/say/done" in core.outgoing_topics()
        core.handle("/edgevox/say", json.dumps({"text": "Dinner is at seven."}))
        core.handle("/edgevox/say", "...")  # nothing speakable
        with cond:
            assert cond.wait_for(lambda: len(answers) == 2, 10), answers
        by_text = {a["say"]: a for a in answers}
        spoken = by_text["Dinner is at seven."]
        assert spoken["status"] == "completed" and spoken["turn_id"] >= 0 and spoken["error"] == ""
        assert by_text["..."] == {"say": "...", "turn_id": -1, "status": "refused", "error": "nothing speakable in it"}
    finally:
        assert core.stop(2.0)
        assert app.stop(3.0)
