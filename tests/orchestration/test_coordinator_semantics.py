"""The Coordinator across turns, as RoomKit / OmniForge users expect it: workflows with return
start fresh, "cancel" said or typed cancels them, a failing agent gives the conversation back,
the supervisor observes every exchange, escalation names the channel, orchestration can be
switched off per session (class and YAML)."""

from __future__ import annotations

import pytest

from edgevox.errors import ConfigError
from edgevox.orchestration import (
    ConversationPipeline,
    Coordinator,
    HandoffHandler,
    Orchestration,
    PipelineStage,
    SessionStore,
    build_orchestration,
)
from edgevox.orchestration.events import (
    Escalated,
    HandoffFailed,
    SessionModeChanged,
    SupervisorObserved,
    TurnAnswered,
    WorkflowCancelled,
    WorkflowSuspended,
)
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.context import AgentContext


def ctx(session="s1", **kw):
    return AgentContext(session_id=session, **kw)


def hand(agent, **args):
    """Make ``agent`` call the real handoff_conversation tool with ``args`` and say ``said``."""

    def behaviour(task, c):
        agent.call_tool(handoff_conversation, args, c)
        return f"{agent.name} passing you on"

    agent.behaviour = behaviour


@pytest.fixture
def desk(Scripted, bus):
    """A front desk (triage) and a refund specialist (handler) that may hand back; a supervisor."""
    pipeline = ConversationPipeline(
        [
            PipelineStage("intake", "triage", next="handling"),
            PipelineStage("handling", "handler", can_return_to=("intake",)),
        ]
    )
    agents = {n: Scripted(n, f"{n} here") for n in ("triage", "handler", "watcher")}
    agents["watcher"].behaviour = lambda task, c: "looks fine"
    store = SessionStore()
    handler = HandoffHandler(
        ["triage", "handler"],
        store,
        allowed_transitions=pipeline.agent_transitions(),
        phase_of=pipeline.phase_of,
        publish=bus.publish,
    )
    coord = Coordinator(agents, router=pipeline.to_router(supervisor="watcher"), handoff=handler, store=store, bus=bus)
    return coord, agents


def counting_specialist(agent):
    """The specialist's multi-step task: each turn is one step of its scratch state."""

    def step(task, c):
        c.state["step"] = c.state.get("step", 0) + 1
        return f"skill step {c.state['step']}/5"

    agent.behaviour = step


def start_workflow(coord, agents, session="s1"):
    hand(agents["triage"], target="handler", reason="refund", summary="wants a refund", with_return=True)
    coord.run("I want a refund", ctx(session))
    agents["triage"].behaviour = "triage here"
    assert coord.state(session).return_stack == ("triage",)


# -- 1. workflows with return start with fresh scratch state --------------------------------------


def test_a_second_workflow_after_a_completed_one_starts_fresh(desk):
    coord, agents = desk
    start_workflow(coord, agents)
    counting_specialist(agents["handler"])
    assert coord.run("order 17", ctx()).text == "skill step 1/5"
    assert coord.run("blue shirt", ctx()).text == "skill step 2/5"
    hand(agents["handler"], target="return", reason="done", summary="refund issued")
    coord.run("thanks", ctx())
    assert coord.state("s1").active_agent == "triage" and coord.state("s1").return_stack == ()
    # A second refund: the specialist starts at step 1, not where the first workflow left off.
    start_workflow(coord, agents)
    counting_specialist(agents["handler"])
    assert coord.run("order 18", ctx()).text == "skill step 1/5"


def test_a_workflow_cancelled_from_code_keeps_its_partial_state_and_the_next_one_starts_fresh(desk):
    coord, agents = desk
    start_workflow(coord, agents)
    counting_specialist(agents["handler"])
    coord.run("order 17", ctx())
    coord.cancel_workflow("s1")
    assert coord.handoff.suspended("s1")["partial"] == {"step": 1}
    start_workflow(coord, agents)
    counting_specialist(agents["handler"])
    assert coord.run("order 18", ctx()).text == "skill step 1/5"


# -- 2. "cancel" said or typed ----------------------------------------------------------------------


@pytest.mark.parametrize("said", ["cancel", "Never mind.", "stop that", "forget it", "cancel that please"])
def test_saying_cancel_during_a_workflow_cancels_it_and_confirms(desk, recorded, of_kind, said):
    coord, agents = desk
    start_workflow(coord, agents)
    counting_specialist(agents["handler"])
    coord.run("order 17", ctx())
    runs = len(agents["handler"].tasks)
    result = coord.run(said, ctx())
    assert "cancelled" in result.text and result.agent == "triage"
    assert len(agents["handler"].tasks) == runs  # the specialist never saw the command
    state = coord.state("s1")
    assert state.active_agent == "triage" and state.return_stack == ()
    [event] = of_kind(recorded, WorkflowCancelled)
    assert (event.agent, event.returned_to, event.said) == ("handler", "triage", said)
    assert of_kind(recorded, WorkflowSuspended)[-1].workflow == "handler"
    assert coord.handoff.suspended("s1")["partial"] == {"step": 1}  # as cancel_workflow() keeps it
    # The next turn is the front desk's again.
    assert coord.run("what else can you do?", ctx()).agent == "triage"


@pytest.mark.parametrize("said", ["cancel my order", "please cancel the subscription", "don't cancel"])
def test_a_request_that_contains_cancel_goes_to_the_agent(desk, said):
    coord, agents = desk
    start_workflow(coord, agents)
    result = coord.run(said, ctx())
    assert result.agent == "handler" and agents["handler"].tasks[-1].endswith(said)
    assert coord.state("s1").return_stack == ("triage",)


def test_cancel_outside_a_workflow_is_an_ordinary_request(desk):
    coord, agents = desk
    assert coord.run("cancel", ctx()).text == "triage here"
    assert agents["triage"].tasks[-1] == "cancel"


def test_when_unsure_the_coordinator_asks_and_the_answer_decides(desk, recorded, of_kind):
    coord, agents = desk
    start_workflow(coord, agents)  # reason: "refund"
    question = coord.run("cancel the refund", ctx())
    assert question.text.startswith("Do you want me to stop what handler is doing?")
    assert coord.state("s1").return_stack == ("triage",) and not of_kind(recorded, WorkflowCancelled)
    assert coord.run("yes", ctx()).text.startswith("OK, I cancelled that.")
    assert coord.state("s1").active_agent == "triage"
    # "No": the specialist takes the turn and the workflow goes on.
    start_workflow(coord, agents)
    coord.run("cancel the refund", ctx())
    result = coord.run("no, just change the size", ctx())
    assert result.agent == "handler" and coord.state("s1").return_stack == ("triage",)


def test_cancel_phrases_are_configurable_and_can_be_turned_off(Scripted, bus):
    agents = {n: Scripted(n, f"{n} here") for n in ("triage", "handler")}
    coord = Coordinator(agents, bus=bus, cancel_phrases=["abandon ship"])
    hand(agents["triage"], target="handler", reason="refund", summary="s", with_return=True)
    coord.run("refund", ctx())
    assert coord.run("cancel", ctx()).agent == "handler"
    assert "cancelled" in coord.run("abandon ship!", ctx()).text
    off = Coordinator(agents, cancel_phrases=[])
    hand(agents["triage"], target="handler", reason="refund", summary="s", with_return=True)
    off.run("refund", ctx("s2"))
    assert off.run("never mind", ctx("s2")).agent == "handler"


# -- 3. a handoff to an agent that fails ------------------------------------------------------------


def test_an_agent_that_fails_after_a_handoff_gives_the_conversation_back(desk, recorded, of_kind):
    coord, agents = desk
    hand(agents["triage"], target="handler", reason="refund", summary="wants a refund")
    coord.run("I want a refund", ctx())
    agents["triage"].behaviour = "triage here"

    def broken(task, c):
        raise RuntimeError("database unreachable")

    agents["handler"].behaviour = broken
    result = coord.run("order 17", ctx())
    assert result.agent == "triage" and result.text.startswith("Sorry, handler ran into a problem")
    assert "try another way" in result.text
    assert coord.state("s1").active_agent == "triage"
    [failed] = of_kind(recorded, HandoffFailed)
    assert failed.agent == "handler" and "database unreachable" in failed.error and failed.returned_to == "triage"
    assert of_kind(recorded, TurnAnswered)[-1].text == result.text
    # Later turns are answered again, by the main agent, not lost to the broken one.
    assert coord.run("hello?", ctx()).text == "triage here"
    assert coord.run("still there?", ctx()).text == "triage here"


def test_an_agent_that_times_out_after_a_handoff_gives_the_conversation_back(Scripted, bus, recorded, of_kind):
    from edgevox.runtime.timers import TimerWheel

    now = [0.0]
    wheel = TimerWheel("test", clock=lambda: now[0], start_thread=False)
    agents = {n: Scripted(n, f"{n} here") for n in ("front", "slow")}
    coord = Coordinator(agents, bus=bus, timeout_s=10.0, timers=wheel)
    hand(agents["front"], target="slow", reason="r", summary="s")
    coord.run("go", ctx())
    agents["front"].behaviour = "front here"

    def stuck(task, c):
        for _ in range(100):  # one second of (fake) time per step until the deadline cancels it
            now[0] += 1.0
            wheel.run_due()
            c.cancel_token.raise_if_cancelled()
        return "never"

    agents["slow"].behaviour = stuck
    result = coord.run("and then?", ctx())
    assert result.agent == "front" and "slow took too long" in result.text
    assert of_kind(recorded, HandoffFailed)[0].timed_out is True
    assert coord.state("s1").active_agent == "front" and now[0] == 10.0


# -- 4. supervisor, escalation, orchestration off ---------------------------------------------------


def test_the_supervisor_observes_every_exchange(desk, recorded, of_kind, Scripted):
    coord, agents = desk
    coord.run("hello", ctx())  # routed
    start_workflow(coord, agents)  # a handoff
    coord.run("never mind", ctx())  # a spoken cancel

    def broken(task, c):
        raise RuntimeError("boom")

    hand(agents["triage"], target="handler", reason="r", summary="s")
    coord.run("go", ctx())
    agents["handler"].behaviour = broken
    coord.run("order", ctx())  # a failure and recovery

    class Echo(Orchestration):
        def _run(self, task, c):
            return (yield from self.stream_call(agents["triage"], task, c))

    coord.set_session_strategy("s1", Echo(name="echo"))
    coord.run("via a strategy", ctx())
    seen = of_kind(recorded, SupervisorObserved)
    assert len(seen) == len(of_kind(recorded, TurnAnswered)) == 6
    assert all(s.supervisor == "watcher" and s.note == "looks fine" for s in seen)
    tasks = agents["watcher"].tasks
    assert "[handed off to handler: refund]" in tasks[1]
    assert "failed" in tasks[4] and "boom" in tasks[4]
    assert "User: via a strategy" in tasks[5]


@pytest.mark.parametrize("channel", ["voice", "text", "ros2"])
def test_escalation_to_a_human_names_the_channel(desk, recorded, of_kind, channel):
    coord, agents = desk
    hand(agents["triage"], target="human", reason="angry customer", summary="wants a manager")
    result = coord.handle("I want a manager", ctx(), channel=channel)
    line = f"I'm handing you over to a person; they will pick up on the {channel} channel."
    assert result.text.endswith(line)
    [event] = of_kind(recorded, Escalated)
    assert (event.channel, event.from_agent, event.reason, event.summary) == (
        channel,
        "triage",
        "angry customer",
        "wants a manager",
    )
    # No agent answers while the human holds the session.
    assert coord.run("hello?", ctx()).text == ""


def test_escalation_reads_the_channel_of_a_streamed_turn_from_the_context(desk, recorded, of_kind):
    coord, agents = desk
    hand(agents["triage"], target="human", reason="r", summary="s")
    stream = coord.stream("a person please", ctx(channel="voice"))
    spoken = "".join(e.text for e in stream if hasattr(e, "text") and type(e).__name__ == "ReplyDelta")
    assert "pick up on the voice channel" in spoken
    assert of_kind(recorded, Escalated)[0].channel == "voice"


def test_orchestration_can_be_switched_off_for_one_session_and_back(Scripted, bus, recorded, of_kind):
    agents = {n: Scripted(n, f"{n} here") for n in ("helper", "w")}

    class Team(Orchestration):
        def _run(self, task, c):
            return (yield from self.stream_call(agents["w"], task, c))

    coord = Coordinator(agents, strategy=Team(name="team"), main_agent="helper", bus=bus)
    assert coord.run("hi", ctx("kiosk")).text == "w here"
    coord.disable_orchestration("kiosk")
    assert coord.run("hi", ctx("kiosk")).text == "helper here"
    assert coord.run("hi", ctx("other")).text == "w here"  # other sessions keep the strategy
    assert coord.orchestration_enabled("other") and not coord.orchestration_enabled("kiosk")
    coord.enable_orchestration("kiosk")
    assert coord.run("hi", ctx("kiosk")).text == "w here"
    assert [e.mode for e in of_kind(recorded, SessionModeChanged)] == ["single", "orchestrated"]


def test_a_session_with_orchestration_off_ignores_handoffs_and_routing(Scripted):
    agents = {n: Scripted(n, f"{n} here") for n in ("front", "expert")}
    coord = Coordinator(agents)
    coord.set_session_strategy("s1", Coordinator.SINGLE)
    hand(agents["front"], target="expert", reason="r", summary="s")
    coord.run("pass me on", ctx())
    agents["front"].behaviour = "front here"
    assert coord.run("hello", ctx()).agent == "front"  # no handoff was applied


YAML = {
    "strategy": "conversation",
    "conversation": {
        "stages": [
            {"phase": "intake", "agent": "triage", "next": "handling"},
            {"phase": "handling", "agent": "handler", "can_return_to": ["intake"]},
        ],
        "supervisor": "watcher",
    },
    "sessions": {"kiosk": "single"},
    "coordinator": {"cancel_phrases": ["never mind"]},
}


def test_yaml_sessions_single_cancel_phrases_and_recovery(Scripted, bus, recorded, of_kind):
    agents = {n: Scripted(n, f"{n} here") for n in ("helper", "triage", "handler", "watcher")}
    coord = build_orchestration(YAML, agents, main_agent="helper", bus=bus)
    assert coord.run("hi", ctx("kiosk")).text == "helper here"  # orchestration off
    assert coord.run("hi", ctx("u1")).text == "triage here"  # the conversation's entry agent
    assert len(of_kind(recorded, SupervisorObserved)) == 2
    hand(agents["triage"], target="handler", reason="refund", summary="s", with_return=True)
    coord.run("refund", ctx("u1"))
    agents["triage"].behaviour = "triage here"
    assert coord.run("cancel", ctx("u1")).agent == "handler"  # not a configured phrase
    assert "cancelled" in coord.run("never mind", ctx("u1")).text

    def broken(task, c):
        raise RuntimeError("down")

    hand(agents["triage"], target="handler", reason="r", summary="s")
    coord.run("go", ctx("u1"))
    agents["handler"].behaviour = broken
    assert coord.run("order", ctx("u1")).agent == "triage"
    assert of_kind(recorded, HandoffFailed)[0].returned_to == "triage"
    assert coord.close() == []


def test_yaml_rejects_bad_coordinator_values():
    with pytest.raises(ConfigError, match="progress_interval_s"):
        build_orchestration({"coordinator": {"progress_interval_s": 0}}, {"a": object()})
    with pytest.raises(ConfigError, match="cancel_phrases"):
        build_orchestration({"coordinator": {"cancel_phrases": "cancel"}}, {"a": object()})


def test_an_unknown_main_agent_is_a_clear_error(Scripted):
    from edgevox.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"main agent 'boss' is not one of the agents: \['a'\]"):
        Coordinator({"a": Scripted("a")}, main_agent="boss")
