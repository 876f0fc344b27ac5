"""Routing that means what RoomKit means (issue 13), through the class, the Coordinator and YAML:
rules in ascending priority, a ``channel_types`` condition fed by the channel a turn came from
(spoken, typed, a ROS bridge), and answer events that name the agent that spoke."""

from __future__ import annotations

import numpy as np
import pytest

from edgevox.config.build_bridges import make_bridges
from edgevox.integrations.config import BridgesConfig
from edgevox.orchestration import (
    ConversationRouter,
    ConversationState,
    Coordinator,
    Loop,
    OrchestrationConfig,
    Pipeline,
    RoutingConditions,
    RoutingRule,
    Supervisor,
    Swarm,
    build_orchestration,
)
from edgevox.orchestration.events import Routed, TurnAnswered, UserTurn
from edgevox.runtime.context import AgentContext
from edgevox.runtime.runtime import Runtime
from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, FakeVAD, MemoryAudioOut
from edgevox.voice.loop import VoiceLoop, VoiceSettings

# -- priority: RoomKit's own example, translated -----------------------------------------------


def is_premium(event, state):
    return state.data.get("customer_tier") == "premium"


def is_urgent(event, state):
    return any(w in event.text.lower() for w in ("urgent", "emergency", "asap"))


ROOMKIT_RULES = [
    RoutingRule("senior-agent", RoutingConditions(predicate=is_premium), priority=-1),
    RoutingRule("escalation-agent", RoutingConditions(predicate=is_urgent), priority=0),
]
AGENTS = ["senior-agent", "escalation-agent", "general-agent"]


def test_roomkit_priority_example_routes_a_premium_urgent_request_to_the_senior_agent():
    # RoomKit evaluates rules in ascending priority: priority=-1 first. Before issue 13 edgevox
    # tried the highest first and sent this turn to escalation-agent.
    router = ConversationRouter(AGENTS, rules=ROOMKIT_RULES, default_agent="general-agent")
    premium = ConversationState().with_data(customer_tier="premium")
    assert router.route(UserTurn(text="This is urgent!"), premium).agent == "senior-agent"
    assert router.route(UserTurn(text="This is urgent!"), ConversationState()).agent == "escalation-agent"
    assert router.route(UserTurn(text="hello"), ConversationState()).agent == "general-agent"


def test_equal_priorities_keep_declaration_order_whatever_the_order_given():
    rules = [
        RoutingRule("general-agent", RoutingConditions(intent="pay"), priority=3, name="late"),
        RoutingRule("escalation-agent", RoutingConditions(intent="pay"), name="first"),
        RoutingRule("senior-agent", RoutingConditions(intent="pay"), name="second"),
    ]
    decision = ConversationRouter(AGENTS, rules=rules).route(UserTurn(intent="pay"), ConversationState())
    assert (decision.agent, decision.why) == ("escalation-agent", "rule:first")


def test_roomkit_priority_example_through_the_coordinator_across_turns(Scripted, bus, recorded, of_kind):
    agents = {n: Scripted(n, f"{n} here") for n in AGENTS}
    coord = Coordinator(
        agents, router=ConversationRouter(AGENTS, rules=ROOMKIT_RULES, default_agent="general-agent"), bus=bus
    )
    coord.store.update("vip", lambda s: s.with_data(customer_tier="premium"))
    ctx = AgentContext(session_id="vip", bus=bus)
    assert coord.run("hello", ctx).text == "senior-agent here"
    assert coord.run("it is urgent now", ctx).text == "senior-agent here"
    other = AgentContext(session_id="walk-in", bus=bus)
    assert coord.run("hello", other).text == "general-agent here"
    # Routing never made general-agent "hold" the conversation: the urgent turn still goes by rule.
    assert coord.run("this is an emergency", other).text == "escalation-agent here"
    assert [e.why for e in of_kind(recorded, Routed)][-1] == "rule:escalation-agent@0"


def test_a_handoff_still_keeps_the_conversation_against_the_rules(Scripted):
    agents = {n: Scripted(n, f"{n} here") for n in AGENTS}
    coord = Coordinator(agents, router=ConversationRouter(AGENTS, rules=ROOMKIT_RULES, default_agent="general-agent"))
    coord.store.update("s", lambda s: s.transition(to_agent="senior-agent", reason="handoff", handoff=True))
    result = coord.run("this is urgent", AgentContext(session_id="s"))
    assert (result.text, result.data["why"]) == ("senior-agent here", "affinity")


def test_yaml_rules_go_in_ascending_priority(Scripted):
    agents = {n: Scripted(n, f"{n} here") for n in ("main", "billing", "boss")}
    section = {
        "routing": {
            "rules": [
                {"agent": "boss", "intents": ["pay"], "priority": 5, "name": "later"},
                {"agent": "billing", "intents": ["pay"], "priority": -1, "name": "first"},
            ]
        }
    }
    coord = build_orchestration(section, agents, main_agent="main")
    result = coord.handle("my invoice", AgentContext(session_id="u"), intent="pay")
    assert (result.text, result.data["why"]) == ("billing here", "rule:first")
    assert coord.run("hello", AgentContext(session_id="u2")).text == "main here"


# -- channel_types --------------------------------------------------------------------------------

CHANNEL_RULES = [
    RoutingRule("pilot", RoutingConditions(channel_types={"voice"}), name="spoken"),
    RoutingRule("clerk", RoutingConditions(channel_types={"text"}), name="typed"),
    RoutingRule("ops", RoutingConditions(channel_types={"ros2", "ros1"}), name="ros"),
]


def channel_coordinator(Scripted, **kw):
    agents = {n: Scripted(n, lambda t, c, n=n: f"{n}: {c.channel}") for n in ("main", "pilot", "clerk", "ops")}
    router = ConversationRouter(agents, rules=CHANNEL_RULES, default_agent="main")
    return Coordinator(agents, router=router, **kw)


def test_channel_types_condition_on_the_router():
    router = ConversationRouter(["pilot", "clerk", "ops", "main"], rules=CHANNEL_RULES, default_agent="main")
    for channel, agent in [("voice", "pilot"), ("text", "clerk"), ("ros2", "ops"), ("ros1", "ops"), ("", "main")]:
        assert router.route(UserTurn(text="hi", channel=channel), ConversationState()).agent == agent, channel
    with pytest.raises(ValueError, match="name at least one channel"):
        RoutingConditions(channel_types=set())


def test_channel_from_the_context_or_given_to_handle_in_one_session(Scripted):
    coord = channel_coordinator(Scripted)
    answers = [
        coord.run("turn left", AgentContext(session_id="s", channel="voice")).text,
        coord.run("status?", AgentContext(session_id="s", channel="text")).text,
        coord.handle("dock", AgentContext(session_id="s"), channel="ros2").text,
        coord.run("who?", AgentContext(session_id="s")).text,
    ]
    assert answers == ["pilot: voice", "clerk: text", "ops: ", "main: "]


def test_every_channel_end_to_end_through_the_voice_loop_and_the_ros_bridge_wiring(Scripted, bus, recorded, of_kind):
    coord = channel_coordinator(Scripted, bus=bus)
    mic = FakeAudioIn()
    loop = VoiceLoop(
        bus, FakeVAD(frame_ms=20), FakeSTT(["turn left"]), coord, FakeTTS(), mic, MemoryAudioOut(), VoiceSettings()
    )
    runtime = Runtime("channels")
    cfg = BridgesConfig.model_validate({"ros2": {"enabled": True}})
    [(name, bridge)] = make_bridges(cfg, runtime, on_text=loop.submit_text)
    loop.start()
    try:
        loop.submit_text("status?")
        assert loop.wait_idle(10)
        bridge.core.on_text("dock")  # what the bridge's inbox thread does with a ROS text_input message
        assert loop.wait_idle(10)
        rate = 16000
        speech = (0.3 * np.sin(2 * np.pi * 300.0 * np.arange(rate // 2) / rate)).astype(np.float32)
        mic.feed(np.concatenate([np.zeros(rate // 4, np.float32), speech, np.zeros(rate, np.float32)]))
        mic.close()
        assert loop.wait_input_done(10)
    finally:
        assert loop.stop(5.0).clean
        runtime.stop(2.0)
    answered = [(e.agent, e.text) for e in of_kind(recorded, TurnAnswered)]
    assert answered == [("clerk", "clerk: text"), ("ops", "ops: ros2"), ("pilot", "pilot: voice")], name


def test_yaml_channel_types(Scripted):
    agents = {n: Scripted(n, f"{n} here") for n in ("main", "ops")}
    section = {"routing": {"rules": [{"agent": "ops", "channel_types": ["ros2", "ros1"]}], "default": "main"}}
    coord = build_orchestration(section, agents)
    assert coord.run("dock", AgentContext(session_id="r", channel="ros2")).text == "ops here"
    assert coord.run("dock", AgentContext(session_id="r", channel="voice")).text == "main here"
    with pytest.raises(ValueError, match="channel_types"):
        OrchestrationConfig.model_validate({"routing": {"rules": [{"agent": "ops", "channel_types": ["sms"]}]}})


# -- identity: the answer names the agent that spoke ------------------------------------------------


def strategies(Scripted):
    return {
        "pipeline": (lambda: Pipeline([Scripted("triage", "triage answers")]), "triage"),
        "swarm": (lambda: Swarm([Scripted("greeter", "hello"), Scripted("chef", "pasta")]), "greeter"),
        "supervisor": (lambda: Supervisor(Scripted("boss", "the team's answer"), [Scripted("worker", "w")]), "boss"),
        "loop": (lambda: Loop(Scripted("writer", "draft"), reviewer=Scripted("editor", "APPROVED")), "writer"),
    }


@pytest.mark.parametrize("kind", ["pipeline", "swarm", "supervisor", "loop"])
def test_the_answer_event_names_the_agent_that_spoke_not_the_strategy(Scripted, bus, recorded, of_kind, kind):
    # Before issue 13 TurnAnswered.agent was the strategy's name ("swarm").
    make, speaker = strategies(Scripted)[kind]
    strategy = make()
    coord = Coordinator({"main": Scripted("main", "main here")}, strategy=strategy, bus=bus)
    result = coord.run("hi", AgentContext(session_id="s", bus=bus))
    [answered] = of_kind(recorded, TurnAnswered)
    assert (answered.agent, answered.source, answered.strategy) == (speaker, speaker, kind)
    assert answered.agent == result.agent and answered.text == result.text
    assert strategy.close() == []


def test_a_routed_answer_names_its_agent_and_no_strategy(Scripted, bus, recorded, of_kind):
    coord = Coordinator({"main": Scripted("main", "main here")}, bus=bus)
    coord.run("hi", AgentContext(session_id="s", bus=bus))
    [answered] = of_kind(recorded, TurnAnswered)
    assert (answered.agent, answered.strategy) == ("main", "")


@pytest.mark.parametrize(
    ("section", "speaker"),
    [
        ({"strategy": "pipeline", "pipeline": {"agents": ["a"]}}, "a"),
        ({"strategy": "swarm", "swarm": {"agents": ["a", "b"]}}, "a"),
        ({"strategy": "loop", "loop": {"agent": "a", "reviewer": "b"}}, "a"),
    ],
)
def test_yaml_strategies_answer_events_name_the_agent(Scripted, bus, recorded, of_kind, section, speaker):
    agents = {"a": Scripted("a", "APPROVED answer"), "b": Scripted("b", "APPROVED")}
    coord = build_orchestration(section, agents, bus=bus)
    coord.run("hi", AgentContext(session_id="s", bus=bus))
    [answered] = of_kind(recorded, TurnAnswered)
    assert (answered.agent, answered.strategy) == (speaker, section["strategy"])
