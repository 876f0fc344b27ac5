"""The safety stop, as a user meets it: start an action, keep talking, then say stop.

Every test drives the App built from the real ``configs/home_robot.yaml`` (typed input,
no audio output, a scripted LLM so the run is deterministic) through its public
surfaces: ``submit_text`` (what the voice loop does with a transcript), a
``StopEvent`` published from another thread (what the ROS 2 / ROS 1 stop topics,
the Zenoh bridge and a bumper agent do), and ``App.stop``.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from edgevox.agents.events import ToolCallStarted
from edgevox.agents.skills import GoalState
from edgevox.agents.tools import tool
from edgevox.app import App, Engines
from edgevox.config import load_config
from edgevox.runtime.events import Event, StopEvent
from edgevox.testing import ScriptedLLM
from edgevox.voice.events import Stopped, TurnDone


def home_app(llm: ScriptedLLM | None = None, **overrides) -> App:
    config = load_config(
        "home_robot",
        overrides={"audio.input.source": "text", "audio.output.sink": "none", **overrides},
        env={},
    )
    return App.build(config, engines=Engines(llm=llm or ScriptedLLM(default="Happy to help.")))


@pytest.fixture
def home():
    """A running home-robot App whose robot drives slowly (a drive lasts ~30 s), and its events."""
    apps: list[App] = []

    def start(llm: ScriptedLLM | None = None, **overrides) -> tuple[App, list[Event]]:
        app = home_app(llm, **overrides)
        events: list[Event] = []
        app.add_observer(events.append)
        app.agents["home_robot"].deps["robot"].speed_m_s = 0.2
        app.start()
        apps.append(app)
        return app, events

    yield start
    for app in apps:
        assert app.stop(3.0), app.stop_report


def when(app: App, predicate) -> threading.Event:
    """An Event set when an event matching ``predicate`` is published."""
    seen = threading.Event()
    app.add_observer(lambda e: predicate(e) and seen.set())
    return seen


def robot_of(app: App):
    return app.agents["home_robot"].deps["robot"]


def running_goal(app: App):
    (activity,) = app.runtime.activities.running("skill")
    return activity


def turns(events: list[Event]) -> list[TurnDone]:
    return [e for e in events if isinstance(e, TurnDone)]


def start_drive_then_talk(app: App) -> None:
    """Turn 1 starts the drive; turns 2 and 3 are about other things; all have finished."""
    app.submit_text("go to the kitchen")
    assert app.wait_idle(5.0)
    assert running_goal(app).name == "go_to"
    app.submit_text("what is the battery level")
    assert app.wait_idle(5.0)
    app.submit_text("how are you today")
    assert app.wait_idle(5.0)


def test_a_spoken_stop_cancels_a_skill_started_two_turns_earlier_within_100_ms(home):
    app, events = home()
    robot = robot_of(app)
    start_drive_then_talk(app)
    goal = running_goal(app)
    assert goal.token.cancelled is False and robot.room != "kitchen"

    said = time.monotonic()
    app.submit_text("stop")
    assert goal.wait(0.1), "the skill did not end within 100 ms of the stop"
    stop_s = time.monotonic() - said

    assert app.wait_idle(5.0)
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert "skill go_to" in stopped.cancelled and stopped.ignored == []
    assert app.runtime.activities.running() == []
    position = (robot.x_m, robot.y_m)
    assert robot.room != "kitchen"
    # The robot does not move on after the stop, and the stop is confirmed once, in words.
    assert [t.reply_text for t in turns(events)][-1] == "Stopped."
    assert [t.reply_text for t in turns(events)].count("Stopped.") == 1
    assert (robot.x_m, robot.y_m) == position
    assert stop_s < 0.5  # the whole stop call, including the 100 ms settle wait


def test_a_stop_event_from_another_thread_cancels_skills_of_earlier_turns(home):
    app, events = home()
    start_drive_then_talk(app)
    goal = running_goal(app)

    def ros_stop_topic() -> None:  # what the ROS 2 / ROS 1 / Zenoh bridges publish
        app.bus.publish(StopEvent(source="ros2", reason="operator pressed stop"))

    thread = threading.Thread(target=ros_stop_topic, name="test-ros-stop")
    thread.start()
    thread.join(5.0)
    assert goal.wait(0.1)
    assert app.wait_idle(5.0)
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert "skill go_to" in stopped.cancelled
    assert [t.reply_text for t in turns(events)][-1] == "Stopped."


def test_the_skill_result_after_a_stop_is_cancelled_not_succeeded(home):
    app, events = home()
    robot = robot_of(app)
    app.submit_text("go to the kitchen")
    assert app.wait_idle(5.0)
    handle = robot._goals[-1]
    app.submit_text("halt")
    assert handle.wait(1.0)
    assert handle.state is GoalState.CANCELLED
    with pytest.raises(Exception, match="cancelled"):
        handle.result(0)


def test_stop_phrases_in_a_sentence_stop_but_negated_ones_do_not(home):
    app, events = home()
    start_drive_then_talk(app)
    goal = running_goal(app)
    app.submit_text("don't stop, keep going")
    assert app.wait_idle(5.0)
    assert not goal.done and not any(isinstance(e, Stopped) for e in events)
    app.submit_text("hey robot STOP!!!")
    assert goal.wait(0.1)


TOOLS_APP = """\
name: tools-app
audio:
  input: {source: text}
  output: {sink: none}
agents:
  helper:
    instructions: You help in the house.
    tools: ["tests.safety.slow_tools:water_plants", "tests.safety.slow_tools:scan_room"]
"""


@pytest.fixture
def tools_app():
    from edgevox.config.loader import parse_config
    from tests.safety import slow_tools

    slow_tools.RELEASE.clear()
    slow_tools.EFFECTS.clear()
    app = App.build(parse_config(TOOLS_APP, env={}), engines=Engines(llm=ScriptedLLM(default="Done.")))
    events: list[Event] = []
    app.add_observer(events.append)
    app.start()
    yield app, events, slow_tools
    slow_tools.RELEASE.set()
    assert app.stop(3.0), app.stop_report


def test_a_tool_that_ignores_the_stop_is_named_and_its_late_result_never_spoken(tools_app):
    app, events, slow_tools = tools_app
    tool_started = when(app, lambda e: isinstance(e, ToolCallStarted) and e.tool == "water_plants")
    app.submit_text("water the plants with two litres")
    assert tool_started.wait(5.0), "the tool call never started"
    (call,) = app.runtime.activities.running("tool")
    said = time.monotonic()
    app.submit_text("stop")
    assert app.wait_idle(2.0), "the turn stayed alive behind a tool that ignores the stop"
    assert time.monotonic() - said < 1.0
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert "tool water_plants" in stopped.ignored
    slow_tools.RELEASE.set()
    assert call.wait(5.0)
    # Python cannot un-run it, but nothing acts on or speaks what it returned after the stop.
    assert slow_tools.EFFECTS == ["watered"]
    assert not any("watered" in t.reply_text for t in turns(events))


def test_a_tool_past_its_deadline_is_reported_and_the_turn_goes_on(tools_app):
    app, events, _ = tools_app
    started = time.monotonic()
    app.submit_text("scan the room with the camera")
    assert app.wait_idle(5.0)
    assert time.monotonic() - started < 2.0
    (turn,) = turns(events)
    assert turn.status == "completed" and "late" not in turn.reply_text
    finished = [e for e in events if getattr(e, "kind", "") == "agent.tool_call_finished"]
    assert finished and finished[0].error_kind == "timeout"


def test_async_tools_run_and_a_stop_cancels_them():
    @tool
    async def fetch_weather(city: str) -> str:
        """Fetch the weather for a city."""
        await asyncio.sleep(0)
        return f"Sunny in {city}."

    assert fetch_weather.is_async
    result = fetch_weather.invoke({"city": "Oslo"})
    assert result.ok and result.value == "Sunny in Oslo."

    from edgevox.runtime.activities import ActivityRegistry
    from edgevox.runtime.context import AgentContext

    started = threading.Event()

    @tool
    async def slow_scan() -> str:
        """Scan slowly."""
        started.set()
        await asyncio.sleep(30)
        return "done"

    registry = ActivityRegistry("t")
    ctx = AgentContext(activities=registry)
    box = []
    worker = threading.Thread(target=lambda: box.append(slow_scan.invoke({}, ctx)), name="test-async-tool")
    worker.start()
    assert started.wait(5.0)
    report = registry.cancel_all("stop")
    worker.join(5.0)
    assert report.cancelled == ["tool slow_scan"] and report.ignored == []
    assert box[0].error_kind == "cancelled"


def test_generator_tools_are_rejected_with_a_clear_message():
    with pytest.raises(TypeError, match="generator functions cannot be tools"):

        @tool
        def stream_numbers() -> int:  # type: ignore[misc]
            """Count."""
            yield 1


def test_app_stop_names_work_that_ignores_every_cancel():
    release = threading.Event()
    app = home_app()
    app.start()
    registry = app.runtime.activities
    activity = registry.start("worker", "stuck driver")
    thread = threading.Thread(target=lambda: (release.wait(10.0), activity.finish()), name="edgevox-test-stuck")
    thread.start()
    assert not app.stop(0.5)
    assert "worker stuck driver" in app.stop_report.abandoned
    release.set()
    thread.join(5.0)


@pytest.mark.models
def test_with_the_real_smollm2_a_stop_cancels_a_drive_started_two_turns_earlier(home, real_llm):
    """The same promise on the embedded model: the chat turn in between runs on SmolLM2."""
    app, events = home(llm=real_llm)
    start_drive_then_talk(app)
    goal = running_goal(app)
    app.submit_text("Stop!")
    assert goal.wait(0.1)
    assert app.wait_idle(10.0)
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert "skill go_to" in stopped.cancelled and stopped.ignored == []
    assert robot_of(app).room != "kitchen"
    assert [t.reply_text for t in turns(events)][-1] == "Stopped."


def test_a_stop_cancels_a_background_agents_run_and_it_runs_again_on_the_next_event():
    """A supervised background agent (a patrol planner on a slow LLM) is mid-run when "stop"
    is said: the run is cancelled and named; the agent itself keeps serving later events."""
    from dataclasses import dataclass
    from typing import ClassVar

    from edgevox.config.loader import parse_config

    @dataclass(kw_only=True)
    class Patrol(Event):
        kind: ClassVar[str] = "robot.patrol"
        area: str = ""

    gate = threading.Semaphore(0)
    llm = ScriptedLLM(default="Plan: check every room and report back to the user.")
    app = App.build(
        parse_config(
            """\
name: bg-stop
audio: {input: {source: text}, output: {sink: none}}
agents:
  assistant: {instructions: Be brief.}
  planner: {instructions: Plan patrols.}
background_agents:
  - name: patrol-planner
    agent: planner
    trigger: {events: [robot.patrol], task: "Plan a patrol of the {area}."}
""",
            env={},
        ),
        engines=Engines(llm=llm),
    )
    events: list[Event] = []
    app.add_observer(events.append)
    llm.gate = gate  # from now on each token waits for the test (a cancel wakes it)
    app.start()
    try:
        llm.started.clear()
        app.bus.publish(Patrol(area="garden"))
        assert llm.started.wait(5.0)
        app.submit_text("stop")
        (stopped,) = [e for e in events if isinstance(e, Stopped)]
        assert "background patrol-planner" in stopped.cancelled and stopped.ignored == []
        assert app.wait_idle(5.0)
        llm.gate = None
        llm.started.clear()
        app.bus.publish(Patrol(area="kitchen"))
        assert llm.started.wait(5.0), "the background agent stopped serving events after the stop"
    finally:
        assert app.stop(3.0), app.stop_report


def test_stops_that_come_together_or_during_the_confirmation_confirm_once(home):
    app, events = home()
    start_drive_then_talk(app)
    goal = running_goal(app)
    stops = [
        threading.Thread(target=lambda: app.bus.publish(StopEvent(source="ros2", reason="e-stop")), name="t-ros"),
        threading.Thread(target=lambda: app.submit_text("stop"), name="t-voice"),
        threading.Thread(target=lambda: app.bus.publish(StopEvent(source="bumper", reason="bump")), name="t-bump"),
    ]
    for t in stops:
        t.start()
    for t in stops:
        t.join(5.0)
    assert goal.wait(0.1)
    app.submit_text("STOP")  # again, while the confirmation is queued or playing
    assert app.wait_idle(5.0)
    assert [t.reply_text for t in turns(events)].count("Stopped.") == 1
    stopped = [e for e in events if isinstance(e, Stopped)]
    assert len(stopped) == 4 and sum("skill go_to" in (s.cancelled or []) for s in stopped) == 1
    # A stop that came from the bus is not published on it a second time.
    assert sorted(e.reason for e in events if isinstance(e, StopEvent)) == sorted(
        ["e-stop", "bump", "stop phrase 'stop'", "stop phrase 'stop'"]
    )
