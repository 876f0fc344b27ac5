"""The App as a whole, on scripted engines: the runtime it owns, background agents and the
pool from config, orchestration strategies answering voice turns, announcements, and stops
or interrupts that arrive from outside the voice loop (a ROS topic, a Zenoh peer)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from edgevox.agents.base import AgentBase, AgentResult, AgentStream
from edgevox.app import App, Engines
from edgevox.config.loader import parse_config
from edgevox.errors import LifecycleError
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event, InterruptEvent, StopEvent
from edgevox.runtime.lifecycle import ComponentState, StopReport
from edgevox.testing import ScriptedLLM
from edgevox.voice.events import Interrupted, Stopped, TurnDone

HERE = Path(__file__).resolve().parent

HEAD = """\
name: app-test
audio:
  input: {source: text}
  output: {sink: none}
"""


def build(text: str, llm: ScriptedLLM) -> App:
    return App.build(parse_config(HEAD + text, env={}), engines=Engines(llm=llm))


@pytest.fixture
def running():
    """``running(app)`` starts the app, records its events, and stops it at the end."""
    apps: list[tuple[App, list[Event]]] = []

    def start(app: App) -> list[Event]:
        events: list[Event] = []
        app.add_observer(events.append)
        app.start()
        apps.append((app, events))
        return events

    yield start
    for app, _ in apps:
        assert app.stop(3.0), app.stop_report


def by_system_prompt(replies: dict[str, str]):
    """A scripted LLM reply chosen by a word of the agent's instructions."""

    def reply(messages, _grammar):
        system = messages[0]["content"]
        for word, text in replies.items():
            if word in system:
                return text
        return "unscripted"

    return reply


@dataclass(kw_only=True)
class Battery(Event):
    kind: ClassVar[str] = "robot.battery"
    level: int = 0


def done(events: list[Event]) -> list[TurnDone]:
    return [e for e in events if isinstance(e, TurnDone)]


def test_the_app_owns_a_runtime_whose_pool_holds_the_configured_agents(running):
    llm = ScriptedLLM(default="pool answer")
    app = build(
        """\
agents:
  helper: {instructions: Be brief.}
  other: {instructions: Be kind.}
pool: {agents: [helper], max_concurrency: 1}
""",
        llm,
    )
    running(app)
    assert app.bus is app.runtime.bus and app.blackboard is app.runtime.blackboard
    assert app.pool.names() == ["helper"] and app.pool.max_concurrency == 1
    assert app.pool.run("helper", "hi").text == "pool answer"  # the one AgentResult (the chat agent is an LLMAgent)


def test_a_configured_background_agent_runs_supervised_on_matching_events(running):
    seen = threading.Event()

    def reply(messages, _grammar):
        if "Battery at 12 percent" in messages[-1]["content"]:
            seen.set()
        return "noted"

    app = build(
        """\
agents:
  assistant: {instructions: Be brief.}
  monitor: {instructions: Watch the battery.}
background_agents:
  - name: battery-watch
    agent: monitor
    trigger: {events: [robot.battery], task: "Battery at {level} percent."}
    restart: permanent
""",
        ScriptedLLM(reply),
    )
    running(app)
    assert "battery-watch" in [c.name for c in app.runtime.supervisor.which_children()]

    app.bus.publish(Battery(level=12))
    assert seen.wait(5.0), "the background agent never ran the templated task"


def test_a_pipeline_strategy_from_config_answers_voice_turns_as_a_handoff_chain(running):
    """RoomKit's pipeline through the App's voice loop: the entry agent answers and hands on;
    the next turn goes to the agent handed to, which reads the summary and the user's words."""

    def model(messages, grammar):
        system, last = messages[0]["content"], messages[-1]["content"]
        triage = "You triage" in system
        if grammar and '"none"' in grammar:  # which tool, if any
            return "handoff_conversation" if triage and "wheel" in last and "tool ran" not in last else "none"
        if grammar:  # the handoff's arguments
            return '{"target": "resolver", "reason": "hardware", "summary": "squeaky wheel"}'
        return "It is a wheel problem." if triage else "Oil the wheel."

    llm = ScriptedLLM(model)
    app = build(
        """\
agents:
  triage: {instructions: You triage., decoder: two_stage}
  resolver: {instructions: You resolve.}
orchestration:
  strategy: pipeline
  pipeline: {agents: [triage, resolver]}
""",
        llm,
    )
    events = running(app)
    assert type(app.agent).__name__ == "Coordinator"
    app.submit_text("My wheel squeaks.")
    assert app.wait_idle(10.0)
    app.submit_text("What now?")
    assert app.wait_idle(10.0)
    first, second = done(events)
    # Turn 1: only triage answered, then the handoff notice; turn 2: the resolver holds the session.
    assert first.status == "completed" and first.reply_text.startswith("It is a wheel problem.")
    assert "Connecting you with resolver" in first.reply_text
    assert second.status == "completed" and second.reply_text == "Oil the wheel."
    resolver_calls = [c for c in llm.calls if "You resolve" in c.messages[0]["content"] and c.grammar is None]
    assert len(resolver_calls) == 1  # not run on the first turn (the old pipeline ran every agent)
    told = "\n".join(str(m["content"]) for m in resolver_calls[0].messages)
    assert "squeaky wheel" in told and "My wheel squeaks." in told and "What now?" in told


def test_say_speaks_an_announcement_without_running_the_agent(running):
    llm = ScriptedLLM(default="agent reply")
    app = build("agents:\n  assistant: {instructions: Be brief.}\n", llm)
    events = running(app)
    warmup_calls = len(llm.calls)  # the prompt-cache warmup at build time
    app.say("Dinner is at seven.")
    assert app.wait_idle(5.0)
    (turn,) = done(events)
    assert turn.status == "completed" and turn.reply_text == "Dinner is at seven."
    assert len(llm.calls) == warmup_calls


def test_a_stop_published_by_another_component_stops_the_turn_in_progress(running):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(default="one two three four five six")
    app = build("agents:\n  assistant: {instructions: Be brief.}\n", llm)
    llm.gate = gate  # after the build-time warmup: from now on each token waits for the test
    llm.started.clear()
    events = running(app)
    app.submit_text("tell me a story")
    assert llm.started.wait(5.0)
    app.bus.publish(StopEvent(source="ros2", reason="operator pressed stop"))
    assert app.wait_idle(5.0)
    turn, confirmation = done(events)
    assert turn.status == "stopped"
    assert confirmation.reply_text == "Stopped." and confirmation.status == "completed"
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert stopped.cancelled_turns == [turn.turn_id]
    # A stop that came from the bus is not published again, and not fed back (one Stopped).
    assert sum(isinstance(e, StopEvent) for e in events) == 1
    assert stopped.reason == "operator pressed stop" and stopped.phrase == ""


def test_an_interrupt_published_by_another_component_cuts_the_reply_but_not_the_session(running):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(["warm", "one two three four five six", "second answer"])
    app = build("agents:\n  assistant: {instructions: Be brief.}\n", llm)
    llm.gate = gate  # after the build-time warmup: from now on each token waits for the test
    llm.started.clear()
    events = running(app)
    app.submit_text("tell me a story")
    assert llm.started.wait(5.0)
    app.bus.publish(InterruptEvent(source="zenoh", reason="peer asked to be quiet"))
    assert app.wait_idle(5.0)
    assert [t.status for t in done(events)] == ["interrupted"]
    assert any(isinstance(e, Interrupted) for e in events)
    for _ in range(10):
        gate.release()
    app.submit_text("and now?")
    assert app.wait_idle(5.0)
    assert [t.status for t in done(events)] == ["interrupted", "completed"]


def test_config_skills_stay_skills_and_reach_the_agent(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE / "config"))
    app = build(
        """\
agents:
  robot:
    instructions: You drive.
    tools: ["cfg_sample_tools:add"]
    skills: ["cfg_sample_tools:patrol"]
""",
        ScriptedLLM(default="ok"),
    )
    try:
        assert list(app.agents["robot"].skills) == ["patrol"]
        assert {t.name for t in app.agents["robot"].tools} == {"add", "patrol"}
    finally:
        assert app.stop(2.0) or app.state == "new"


def test_latency_settings_from_config_reach_the_voice_loop():
    default = build("", ScriptedLLM(default="x")).loop.settings
    assert default.speculative_stt and default.tts_priority_ms == 400
    assert default.segmenter.pause_ms == 60 and default.chunker.first_fragment_max_words == 4
    tuned = build(
        """\
endpointing: {pause_ms: 0, end_silence_ms: 500}
voice: {speculative_stt: false, tts_priority_ms: 0, first_fragment_words: 0}
""",
        ScriptedLLM(default="x"),
    ).loop.settings
    assert not tuned.speculative_stt and tuned.tts_priority_ms == 0
    assert tuned.segmenter.pause_ms == 0 and tuned.segmenter.end_silence_ms == 500
    assert tuned.chunker.first_fragment_max_words == 0


def test_stop_returns_one_report_that_nests_each_components_and_a_second_stop_returns_it_again():
    app = build("agents:\n  chat:\n    instructions: You chat.\n", ScriptedLLM(default="ok"))
    app.start()
    report = app.stop(timeout=3.0)  # EdgeVox's spelling of timeout_s
    assert isinstance(report, StopReport) and report, report
    assert {"voice", "agents", "runtime"} <= set(report.parts)
    assert all(part.clean for part in report.parts.values())
    assert app.stop_report is report and app.stop(1.0) is report
    assert app.state is ComponentState.STOPPED


def test_an_app_starts_once():
    app = build("agents:\n  chat:\n    instructions: You chat.\n", ScriptedLLM(default="ok"))
    app.start()
    try:
        with pytest.raises(LifecycleError, match="already running"):
            app.start()
    finally:
        assert app.stop(3.0), app.stop_report
    with pytest.raises(LifecycleError, match="make a new App"):
        app.start()


def test_stop_names_a_part_that_did_not_finish_in_the_nested_and_the_flat_report():
    app = build("agents:\n  chat:\n    instructions: You chat.\n", ScriptedLLM(default="ok"))

    class StuckBridge:
        def start(self) -> None:
            pass

        def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
            return StopReport.abandoned_threads(["edgevox-stuck-bridge"])

    app.bridges.append(("stuck", StuckBridge()))
    app.start()
    report = app.stop(3.0)
    assert not report and "edgevox-stuck-bridge" in report.abandoned
    assert report.parts["bridge stuck"].abandoned == ["edgevox-stuck-bridge"]
    assert str(report) == "abandoned: edgevox-stuck-bridge"


def test_two_threads_stopping_the_app_at_once_get_the_same_report():
    app = build("agents:\n  chat:\n    instructions: You chat.\n", ScriptedLLM(default="ok"))
    entered, release = threading.Event(), threading.Event()

    class SlowBridge:
        def start(self) -> None:
            pass

        def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
            entered.set()
            release.wait(5.0)
            return StopReport()

    app.bridges.append(("slow", SlowBridge()))
    app.start()
    reports: list[StopReport] = []
    first = threading.Thread(target=lambda: reports.append(app.stop(5.0)), name="edgevox-test-stop-1")
    first.start()
    assert entered.wait(5.0)
    second = threading.Thread(target=lambda: reports.append(app.stop(5.0)), name="edgevox-test-stop-2")
    second.start()
    assert app._stops.wait_for_waiters(1, 5.0)  # the second caller waits for the first's stop
    release.set()
    first.join(5.0)
    second.join(5.0)
    assert len(reports) == 2 and reports[0] is reports[1] and reports[0], reports


class PatientWorker(AgentBase):
    """Works until it is cancelled (a long survey); ``started`` is set when it begins."""

    started = threading.Event()
    reason: list[str] = []

    def __init__(self, llm: object = None) -> None:
        self.name = "surveyor"

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        def run():
            assert ctx is not None
            PatientWorker.started.set()
            ctx.cancel_token.wait(30.0)
            PatientWorker.reason.append(ctx.cancel_token.reason)
            return AgentResult("partial survey", agent=self.name)
            yield  # a generator

        return AgentStream(run())


def test_app_stop_cancels_a_background_delegation_the_model_started_and_reports_no_thread(running):
    """From YAML, the planner's model delegates in the background (supyagent's
    ``delegate(..., background=true)``); the turn ends; App.stop() cancels the running
    delegation and its thread is gone (the App owns the delegator)."""

    def model(messages, grammar):
        last = messages[-1]["content"]
        if grammar and '"none"' in grammar:
            return "delegate" if "survey" in last and "tool ran" not in last else "none"
        if grammar:
            return '{"agent": "surveyor", "task": "survey the kitchen", "background": true}'
        return "The surveyor is on it."

    PatientWorker.started.clear()
    PatientWorker.reason.clear()
    app = build(
        """\
agents:
  planner: {instructions: You plan., decoder: two_stage, delegates: [surveyor]}
  surveyor: {factory: "tests.test_app:PatientWorker"}
agent: planner
""",
        ScriptedLLM(model),
    )
    events = running(app)
    app.submit_text("Please survey the kitchen.")
    assert app.wait_idle(10.0)
    (turn,) = done(events)
    assert turn.reply_text == "The surveyor is on it."
    assert PatientWorker.started.wait(10.0), "the background delegation never started"
    [process] = app.delegator.processes()
    assert process.agent == "surveyor" and not process.done
    report = app.stop(timeout_s=5.0)
    assert report, report
    assert process.done and process.status == "cancelled" and PatientWorker.reason == ["app stopping"]
    assert not [t for t in threading.enumerate() if t.name.startswith("edgevox-delegate")]
