"""Phases (ConversationPipeline) as in RoomKit: a handoff's next_phase is checked against the
allowed transitions, a stage may loop on itself, get_phase_map() is agent -> phase; the
conversation strategy gives each agent a handoff tool listing exactly its transitions."""

from __future__ import annotations

import json

import pytest

from edgevox.errors import HandoffError
from edgevox.orchestration import ConversationPipeline, PipelineStage, SessionStore, build_orchestration
from edgevox.orchestration.events import HandoffRejected
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext

STAGES = [
    {"phase": "intake", "agent": "triage", "next": "handling"},
    {"phase": "handling", "agent": "handler", "next": "resolution", "can_return_to": ["intake"]},
    {"phase": "resolution", "agent": "resolver"},
]


def desk():
    return ConversationPipeline(
        [PipelineStage(s["phase"], s["agent"], s.get("next"), tuple(s.get("can_return_to", ()))) for s in STAGES]
    )


def test_a_handoff_to_a_phase_the_current_phase_may_not_move_to_is_refused(bus, recorded, of_kind):
    handler = desk().handoff_handler(SessionStore(), publish=bus.publish)
    # triage may hand to handler, but not jump to the resolution phase on the way (was accepted).
    with pytest.raises(HandoffError, match=r"phase 'intake' may move to 'handling', not 'resolution'"):
        handler.request(session_id="s", from_agent="triage", target="handler", next_phase="resolution")
    [rejected] = of_kind(recorded, HandoffRejected)
    assert "may move to 'handling'" in rejected.reason
    accepted = handler.request(session_id="s", from_agent="triage", target="handler", next_phase="handling")
    assert accepted.next_phase == "handling"
    assert handler.commit("s").phase == "handling"
    # From handling, the way back to intake is allowed; the phase defaults to the target's own.
    handler.begin_turn("s")
    assert handler.request(session_id="s", from_agent="handler", target="triage").target == "triage"


def test_a_stage_may_name_itself_as_next_a_phase_that_repeats():
    loop = ConversationPipeline(
        [
            PipelineStage("draft", "writer", next="review"),
            PipelineStage("review", "reviewer", next="review", can_return_to=("draft",)),
        ]
    )
    assert loop.get_allowed_transitions() == {"draft": ("review",), "review": ("review", "draft")}
    assert loop.reachable_agents() == {"writer": ("reviewer",), "reviewer": ("writer",)}


def test_get_phase_map_is_agent_to_phase_as_in_roomkit():
    p = desk()
    assert p.get_phase_map() == {"triage": "intake", "handler": "handling", "resolver": "resolution"}
    assert p.get_phase_owners()["handling"] == "handler"


def test_yaml_conversation_gives_each_agent_its_transitions_and_checks_next_phase(Scripted, bus, recorded, of_kind):
    agents = {n: Scripted(n, f"{n} here") for n in ("triage", "handler", "resolver")}
    offered: dict[str, object] = {}

    def record(name, then=None):
        def behaviour(task, ctx):
            tool = next((t for t in ctx.tools if t.name == "handoff_conversation"), None)
            offered[name] = tool
            return then(task, ctx) if then else f"{name} here"

        return behaviour

    def triage_hands_on(task, ctx):
        me = agents["triage"]
        # The agent's own generic tool may name any phase: the handler refuses the jump.
        jump = me.call_tool(
            handoff_conversation, {"target": "handler", "reason": "r", "summary": "s", "next_phase": "resolution"}, ctx
        )
        assert json.loads(jump)["ok"] is False
        given = offered["triage"]
        me.call_tool(given, {"target": "handler", "reason": "billing", "summary": "charged twice"}, ctx)
        return "One moment."

    agents["triage"].behaviour = record("triage", triage_hands_on)
    agents["handler"].behaviour = record("handler")
    agents["resolver"].behaviour = record("resolver")
    config = {"strategy": "conversation", "conversation": {"stages": STAGES}}
    coord = build_orchestration(config, agents, bus=bus, blackboard=Blackboard())
    ctx = AgentContext(session_id="u", bus=bus)
    assert coord.run("I was charged twice", ctx).text.startswith("One moment.")
    assert "may move to 'handling', not 'resolution'" in agents["triage"].tool_results[0]
    assert coord.run("so?", ctx).text == "handler here"
    assert offered["triage"].parameters["properties"]["target"]["enum"] == ["handler"]
    assert offered["triage"].parameters["properties"]["next_phase"]["anyOf"][0]["enum"] == ["handling"]
    assert offered["handler"].parameters["properties"]["target"]["enum"] == ["resolver", "triage"]
    assert len(of_kind(recorded, HandoffRejected)) == 1


def test_yaml_conversation_accepts_a_stage_that_loops_on_itself(Scripted):
    stages = [
        {"phase": "draft", "agent": "writer", "next": "review"},
        {"phase": "review", "agent": "reviewer", "next": "review", "can_return_to": ["draft"]},
    ]
    agents = {"writer": Scripted("writer"), "reviewer": Scripted("reviewer")}
    coord = build_orchestration({"strategy": "conversation", "conversation": {"stages": stages}}, agents)
    assert coord.handoff_tools.targets("reviewer") == ("writer",)


def test_default_phase_is_where_a_conversation_starts_as_in_roomkit():
    p = ConversationPipeline(
        [PipelineStage(s["phase"], s["agent"], s.get("next")) for s in STAGES], default_phase="handling"
    )
    assert p.first.agent == "handler" and p.to_router().default_agent == "handler"
    with pytest.raises(ValueError, match="default_phase 'nowhere' is not one of its phases"):
        ConversationPipeline([PipelineStage("a", "x")], default_phase="nowhere")


def test_yaml_conversation_escalation_adds_a_person_to_every_agents_targets(Scripted, bus, recorded, of_kind):
    from edgevox.orchestration.events import Escalated

    agents = {n: Scripted(n, f"{n} here") for n in ("triage", "handler", "resolver")}
    triage = agents["triage"]

    def escalate(task, ctx):
        tool = next(t for t in ctx.tools if t.name == "handoff_conversation")
        triage.tool_results.append(str(tool.parameters["properties"]["target"]["enum"]))
        triage.call_tool(tool, {"target": "human", "reason": "angry", "summary": "wants a manager"}, ctx)
        return "Let me get someone."

    triage.behaviour = escalate
    config = {"strategy": "conversation", "conversation": {"stages": STAGES, "escalation": True}}
    coord = build_orchestration(config, agents, bus=bus)
    coord.run("I want a manager", AgentContext(session_id="u", bus=bus))
    assert triage.tool_results[0] == "['handler', 'human']" and '"ok": true' in triage.tool_results[1]
    assert coord.handoff_tools.targets("resolver") == ("human",)
    assert of_kind(recorded, Escalated)[0].from_agent == "triage"
    # Without it (RoomKit's enum), a person is not among the targets.
    plain = build_orchestration({"strategy": "conversation", "conversation": {"stages": STAGES}}, agents)
    assert plain.handoff_tools.targets("triage") == ("handler",) and plain.handoff_tools.tool("resolver") is None
