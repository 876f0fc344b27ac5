"""Orchestrated answers stream: the agent that speaks the answer (the routed agent, a
pipeline's last stage, a supervisor's synthesis) yields its reply while it generates,
so the voice loop can start speaking before the reply is finished."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from edgevox.agents.base import AgentResult, AgentStream
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import stream_child
from edgevox.errors import Cancelled
from edgevox.orchestration import Coordinator, Pipeline, Supervisor, Swarm
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.context import AgentContext

from .conftest import ScriptedAgent


class Streamer:
    """Streams ``first``, then waits for ``release`` (or its cancel token), then streams ``rest``."""

    def __init__(self, name: str, first: str = "Hello", rest: str = " there.") -> None:
        self.name = name
        self.first, self.rest = first, rest
        self.release = threading.Event()
        self.closed = threading.Event()
        self.tasks: list[str] = []

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        ctx = ctx or AgentContext()
        self.tasks.append(task)

        def gen() -> Iterator[ReplyDelta]:
            try:
                yield ReplyDelta(source=self.name, text=self.first)
                remove = ctx.cancel_token.on_cancel(lambda _r: self.release.set())
                try:
                    self.release.wait(10)
                finally:
                    remove()
                if ctx.cancel_token.cancelled:
                    return AgentResult(text=self.first, agent=self.name, cancelled=True)
                yield ReplyDelta(source=self.name, text=self.rest)
                return AgentResult(text=self.first + self.rest, agent=self.name)
            finally:
                self.closed.set()

        return AgentStream(gen())

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult:
        return self.stream(task, ctx).result()


def first_delta_then_finish(stream: AgentStream, agent: Streamer) -> tuple[str, AgentResult]:
    """The first text piece arrives while ``agent`` is still generating; then let it finish."""
    deltas = stream.text_deltas()
    first = next(deltas)
    assert not agent.release.is_set(), "the first piece should come before the agent finished"
    agent.release.set()
    rest = "".join(deltas)
    return first + rest, stream.result()


def test_the_routed_agent_reply_streams_while_it_is_generated():
    agent = Streamer("helper")
    coordinator = Coordinator({"helper": agent})
    spoken, result = first_delta_then_finish(coordinator.stream("hi", AgentContext()), agent)
    assert spoken == "Hello there." and result.text == "Hello there." and result.agent == "helper"
    assert coordinator.state("default").active_agent == "helper"


def test_a_pipeline_streams_the_reply_of_the_agent_holding_the_session():
    resolver = Streamer("resolver", "Your bill", " is paid.")
    stream = Pipeline([resolver, ScriptedAgent("closer")]).stream("why was I charged?", AgentContext())
    spoken, result = first_delta_then_finish(stream, resolver)
    assert spoken == result.text == "Your bill is paid." and result.agent == "resolver"


def test_a_pipeline_whose_agent_fails_says_so_in_its_result():
    def broken(_task: str, _ctx: AgentContext) -> str:
        raise RuntimeError("model crashed")

    result = Pipeline([ScriptedAgent("first", broken), Streamer("second")]).run("q", AgentContext())
    assert not result.ok and "model crashed" in result.error and result.agent == "first"


def test_a_supervisor_streams_its_synthesis_and_says_which_worker_is_missing():
    def broken(_task: str, _ctx: AgentContext) -> str:
        raise RuntimeError("sensor offline")

    boss = Streamer("boss", "The kitchen", " is clear.")
    supervisor = Supervisor(
        boss,
        [ScriptedAgent("camera", "no obstacles"), ScriptedAgent("lidar", broken)],
        strategy="parallel",
        auto_delegate=True,  # every turn runs the team (RoomKit's default is False: the supervisor decides)
        refine_task=False,
    )
    spoken, result = first_delta_then_finish(supervisor.stream("is the kitchen clear?", AgentContext()), boss)
    assert spoken.startswith("The kitchen is clear.") and "lidar" in spoken
    assert result.text == spoken.strip() and result.data["missing"] == ["lidar"]
    assert "camera: no obstacles" in boss.tasks[0]


def test_a_swarm_streams_the_agent_that_answers_and_holds_back_the_one_that_hands_off():
    sales = ScriptedAgent("sales")

    def hand_to_support(_task: str, ctx: AgentContext) -> AgentResult:
        sales.call_tool(handoff_conversation, {"target": "support", "reason": "printer", "summary": "Broken."}, ctx)
        return AgentResult(text="Passing you to support.", agent="sales")

    sales.behaviour = hand_to_support
    support = Streamer("support", "Let us fix", " your printer.")
    stream = Swarm([sales, support], entry="sales").stream("my printer is broken", AgentContext())
    spoken, result = first_delta_then_finish(stream, support)
    # The handing-off agent's words are held; the handoff notification, then the peer, are spoken.
    assert spoken.strip() == "Connecting you with support... " + result.text
    assert result.text == "Let us fix your printer." and result.agent == "support"


def test_a_swarm_handing_to_a_human_speaks_the_parting_words():
    desk = ScriptedAgent("desk")

    def to_human(_task: str, ctx: AgentContext) -> AgentResult:
        desk.call_tool(handoff_conversation, {"target": "human", "reason": "angry", "summary": "Refund."}, ctx)
        return AgentResult(text="A person will call you back.", agent="desk")

    desk.behaviour = to_human
    stream = Swarm([desk]).stream("I want a refund now", AgentContext())
    assert "".join(stream.text_deltas()) == "A person will call you back."
    assert stream.result().text == "A person will call you back."


def test_closing_the_stream_closes_the_agents_stream_and_keeps_the_handoff_state():
    agent = Streamer("helper")
    coordinator = Coordinator({"helper": agent})
    stream = coordinator.stream("hi", AgentContext())
    assert next(stream.text_deltas()) == "Hello"
    stream.close()  # the voice loop stops reading on barge-in
    assert agent.closed.is_set()
    assert coordinator.state("default").active_agent == "helper"


def test_stream_child_times_out_a_cooperative_agent_and_keeps_what_it_said():
    agent = Streamer("slow")
    gen = stream_child(agent, "go", AgentContext(), timeout_s=0.05)
    events = []
    try:
        while True:
            events.append(next(gen))
    except StopIteration as stop:
        outcome = stop.value
    assert [e.text for e in events] == ["Hello"]
    assert outcome.timed_out and not outcome.ok and "timed out after 0.05 s" in outcome.error
    assert outcome.text == "Hello"
    assert not [t for t in threading.enumerate() if t.name == "edgevox-timer-timeout-slow"]


def test_stream_child_raises_cancelled_when_the_caller_is_cancelled():
    agent = Streamer("helper")
    ctx = AgentContext()
    gen = stream_child(agent, "go", ctx)
    assert next(gen).text == "Hello"
    ctx.cancel_token.cancel("stop")
    with pytest.raises(Cancelled):
        next(gen)


def test_stream_child_turns_an_agent_failure_into_a_result():
    def broken(_task: str, _ctx: AgentContext) -> str:
        raise ValueError("bad")

    class StreamOnly:
        name = "chat"

        def stream(self, task: str, ctx: AgentContext) -> AgentStream:
            def gen() -> Iterator[ReplyDelta]:
                yield ReplyDelta(source=self.name, text="partial")
                raise ValueError("lost the model")

            return AgentStream(gen())

    gen = stream_child(ScriptedAgent("plain", broken), "x", AgentContext())
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert not stop.value.value.ok and "ValueError: bad" in stop.value.value.error

    gen = stream_child(StreamOnly(), "x", AgentContext())
    assert next(gen).text == "partial"
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value.text == "partial" and "lost the model" in stop.value.value.error
