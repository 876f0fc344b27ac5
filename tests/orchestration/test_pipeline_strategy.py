"""Pipeline is RoomKit's handoff chain: the holder of the session answers and hands on with
``handoff_conversation``; the next turn goes to the agent handed to. Class and YAML."""

from __future__ import annotations

import logging
import re

import pytest

from edgevox.agents.decoders import TwoStageDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.errors import Cancelled, ConfigError
from edgevox.orchestration import Pipeline, PipelineStage, build_orchestration
from edgevox.orchestration.events import HandoffAccepted, HandoffFailed, SupervisorObserved
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


def handoff_tool(ctx):
    """The handoff tool the strategy gave this run (None if none)."""
    return next((t for t in ctx.tools if t.name == "handoff_conversation"), None)


def hands_to(me, target, reply, summary="summary"):
    """A behaviour: hand the conversation to ``target`` with the given tool, then say ``reply``."""

    def behaviour(task, ctx):
        me.call_tool(handoff_tool(ctx), {"target": target, "reason": "next stage", "summary": summary}, ctx)
        return reply

    return behaviour


def test_the_entry_agent_answers_and_the_next_turn_goes_to_the_agent_handed_to(Scripted):
    triage, handler, resolver = Scripted("triage"), Scripted("handler", "Refund issued."), Scripted("resolver")
    triage.behaviour = hands_to(triage, "handler", "Let me pass you to billing.", summary="charged twice")
    pipe = Pipeline([triage, handler, resolver])
    ctx = AgentContext(session_id="u1", blackboard=Blackboard())

    first = pipe.run("I was charged twice", ctx)
    # Only the entry agent ran this turn (the old pipeline ran all three and fed answers forward).
    # Its words, then the handoff notification (the target speaks from the next turn).
    assert (first.text, first.agent) == ("Let me pass you to billing. Connecting you with handler...", "triage")
    assert (len(triage.tasks), handler.tasks, resolver.tasks) == (1, [], [])
    assert first.data == {"phase": "handler", "next_agent": "handler"}

    second = pipe.run("when will I get it?", ctx)
    assert (second.text, second.agent) == ("Refund issued.", "handler")
    [told] = handler.tasks  # the summary and the recent turns travel with the handoff
    assert told.startswith("Context from the previous agent: charged twice") and "I was charged twice" in told
    assert told.endswith("\n\nUser: when will I get it?")
    assert len(triage.tasks) == 1 and resolver.tasks == []
    # Without a handoff the holder keeps the conversation; another session starts at the entry.
    pipe.run("thanks", ctx)
    assert handler.tasks[-1] == "thanks"
    pipe.run("hello", AgentContext(session_id="u2", blackboard=ctx.blackboard))
    assert triage.tasks[-1] == "hello"
    ctx.blackboard.close()


def test_each_agent_gets_a_handoff_tool_listing_exactly_the_agents_it_may_reach(Scripted):
    a, b, c = Scripted("a"), Scripted("b"), Scripted("c")
    stages = [
        PipelineStage("intake", "a", next="work"),
        PipelineStage("work", "b", next="wrap", can_return_to=("intake",)),
        PipelineStage("wrap", "c"),
    ]
    seen = {}

    def record_then(me, target):
        def behaviour(task, ctx):
            seen[me.name] = handoff_tool(ctx)
            return hands_to(me, target, "ok")(task, ctx) if target else "done"

        return behaviour

    a.behaviour, b.behaviour, c.behaviour = record_then(a, "b"), record_then(b, "c"), record_then(c, None)
    pipe = Pipeline([a, b, c], stages=stages)
    ctx = AgentContext(session_id="s", blackboard=Blackboard())
    assert [pipe.run("next", ctx).agent for _ in range(3)] == ["a", "b", "c"]
    assert seen["a"].parameters["properties"]["target"]["enum"] == ["b"]
    assert seen["b"].parameters["properties"]["target"]["enum"] == ["c", "a"]  # next first, then can_return_to
    assert seen["b"].parameters["properties"]["next_phase"]["anyOf"][0]["enum"] == ["wrap", "intake"]
    assert seen["b"].description == "Hand this conversation to another agent: c; a."
    assert seen["c"] is None  # the last stage reaches nobody: no handoff tool
    # A target outside the enum is refused before the tool runs: the model cannot name it.
    assert "expected one of 'b'" in a.call_tool(seen["a"], {"target": "c", "reason": "r", "summary": "s"}, ctx)
    ctx.blackboard.close()


def test_an_llm_agent_is_offered_the_enum_in_its_grammar_and_hands_off(Scripted):
    llm = ScriptedLLM(
        [
            "handoff_conversation",
            '{"target": "handler", "reason": "billing", "summary": "charged twice"}',
            "none",
            "Passing you to billing.",
        ]
    )
    triage = LLMAgent("triage", "Route the user.", llm=llm, decoder=TwoStageDecoder())
    handler = Scripted("handler", "Refund issued.")
    pipe = Pipeline([triage, handler, Scripted("resolver")])
    ctx = AgentContext(session_id="u", blackboard=Blackboard())
    assert pipe.run("I was charged twice", ctx).agent == "triage"
    args_grammar = llm.calls[1].grammar
    assert "handler" in args_grammar and "resolver" not in args_grammar
    # The compact tool menu the model picks from names the reachable agent (was "Available targets: -").
    assert (
        "handoff_conversation: Hand this conversation to another agent: handler" in llm.calls[0].messages[-1]["content"]
    )
    assert pipe.run("so?", ctx).text == "Refund issued."
    ctx.blackboard.close()


def test_an_agent_that_cannot_take_tools_is_named_in_one_warning(Scripted, caplog):
    pipe = Pipeline([Scripted("a", "hi"), Scripted("b")])
    with caplog.at_level(logging.WARNING, logger="edgevox.orchestration.tools"):
        pipe.run("one", AgentContext(session_id="x"))
        pipe.run("two", AgentContext(session_id="y"))
    warnings = [r.getMessage() for r in caplog.records if "cannot take tools" in r.getMessage()]
    assert len(warnings) == 1 and "'a'" in warnings[0] and "targets: b" in warnings[0]


def test_a_supervisor_observes_every_exchange_and_never_answers(Scripted, bus, recorded, of_kind):
    boss = Scripted("boss", lambda t, c: "note: " + t.splitlines()[-1])
    triage = Scripted("triage", "Hello.")
    pipe = Pipeline([triage, Scripted("handler"), boss], supervisor_id="boss")
    assert pipe.supervisor is boss and set(pipe.agents) == {"triage", "handler"}
    result = pipe.run("hi", AgentContext(session_id="s", bus=bus))
    assert (result.text, result.agent) == ("Hello.", "triage")
    [note] = of_kind(recorded, SupervisorObserved)
    assert (note.supervisor, note.agent, note.note) == ("boss", "triage", "note: triage: Hello.")
    with pytest.raises(ValueError, match="supervisor_id 'nobody' is not one of the agents"):
        Pipeline([triage], supervisor_id="nobody")


def test_a_cancelled_turn_hands_nothing_on(Scripted):
    a, b = Scripted("a"), Scripted("b", "B here.")
    board = Blackboard()
    ctx = AgentContext(session_id="s", blackboard=board)

    def hand_then_stop(task, c):
        a.call_tool(handoff_tool(c), {"target": "b", "reason": "r", "summary": "s"}, c)
        ctx.cancel_token.cancel("user said stop")
        raise Cancelled("user said stop")

    a.behaviour = hand_then_stop
    pipe = Pipeline([a, b])
    with pytest.raises(Cancelled):
        pipe.run("go", ctx)
    assert '"ok": true' in a.tool_results[0]
    again = AgentContext(session_id="s", blackboard=board)
    assert pipe.holder(again) == "a"
    a.behaviour = "A again."
    assert pipe.run("go", again).text == "A again."
    board.close()


def test_yaml_pipeline_with_stages_supervisor_and_aliases_across_turns(Scripted, bus, recorded, of_kind):
    triage, handler, resolver = Scripted("triage"), Scripted("handler"), Scripted("resolver", "All set.")
    boss = Scripted("boss", "fine")
    triage.behaviour = hands_to(triage, "handler", "One moment.")
    handler.behaviour = hands_to(handler, "resolver", "Fixed.")
    agents = {a.name: a for a in (triage, handler, resolver, boss)}
    config = {
        "strategy": "pipeline",
        "pipeline": {
            "stages": [
                {"phase": "intake", "agent": "triage", "next": "handling"},
                {"phase": "handling", "agent": "handler", "next": "resolution", "can_return_to": ["intake"]},
                {"phase": "resolution", "agent": "resolver"},
            ],
            "supervisor_id": "boss",
            "aliases": {"billing": "handler"},
        },
    }
    coord = build_orchestration(config, agents, bus=bus, blackboard=Blackboard())
    ctx = AgentContext(session_id="u", bus=bus)
    answers = [coord.run(t, ctx) for t in ("help", "my bill", "ok?")]
    assert [a.agent for a in answers] == ["triage", "handler", "resolver"]
    assert [a.text.split(" Connecting")[0] for a in answers] == ["One moment.", "Fixed.", "All set."]
    assert [(e.from_agent, e.to_agent) for e in of_kind(recorded, HandoffAccepted)] == [
        ("triage", "handler"),
        ("handler", "resolver"),
    ]
    assert len(of_kind(recorded, SupervisorObserved)) == 3
    assert boss.tasks[0].startswith("Observe this exchange")
    # The old spelling still builds a chain in order.
    chain = build_orchestration({"strategy": "pipeline", "pipeline": {"agents": ["triage", "handler"]}}, agents)
    assert chain.strategy_for("x").pipeline.get_allowed_transitions() == {"triage": ("handler",), "handler": ()}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({}, "give `agents: [...]`"),
        ({"agents": ["a"], "stages": [{"phase": "p", "agent": "a"}]}, "exactly one"),
        ({"agents": ["a", "b"], "supervisor_id": "zed"}, "no agent named 'zed'"),
    ],
)
def test_yaml_pipeline_mistakes_are_clear_config_errors(Scripted, section, message):
    agents = {"a": Scripted("a"), "b": Scripted("b")}
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_orchestration({"strategy": "pipeline", "pipeline": section}, agents)


def test_yaml_mutual_stages_wire_both_directions(Scripted):
    a, b = Scripted("a"), Scripted("b")
    a.behaviour = hands_to(a, "b", "to b")
    b.behaviour = hands_to(b, "a", "to a")
    config = {
        "strategy": "pipeline",
        "pipeline": {
            "stages": [{"phase": "one", "agent": "a", "next": "two"}, {"phase": "two", "agent": "b", "next": "one"}]
        },
    }
    coord = build_orchestration(config, {"a": a, "b": b}, blackboard=Blackboard())
    ctx = AgentContext(session_id="s")
    assert [coord.run("x", ctx).steps[0].agent for _ in range(4)] == ["a", "b", "a", "b"]
    assert all('"ok": true' in r for r in a.tool_results + b.tool_results)


def test_roomkit_routing_hints_are_shown_with_the_target_in_the_handoff_tool(Scripted):
    seen = []
    a = Scripted("a", lambda t, ctx: (seen.append(handoff_tool(ctx)), "hi")[1])
    b = Scripted("b")
    b.description = "the billing desk"
    Pipeline([a, b], {"b": ["refund", "invoice"]}).run("x", AgentContext())
    assert "b (the billing desk, when the user mentions: refund, invoice)" in seen[-1].description
    assert "\n" not in seen[-1].description  # one line: a compact tool menu shows the first sentence
    config = {"strategy": "pipeline", "pipeline": {"agents": ["a", "b"], "routing": {"b": ["refund"]}}}
    build_orchestration(config, {"a": a, "b": b}).run("x", AgentContext(session_id="y"))
    assert "b (the billing desk, when the user mentions: refund)." in seen[-1].description
    with pytest.raises(ValueError, match="routing names agents that are no stage"):
        Pipeline([a, b], {"zed": ["x"]})


def test_entry_names_the_agent_that_answers_a_session_first(Scripted):
    a, b = Scripted("a", "A"), Scripted("b", "B")
    assert Pipeline([a, b], entry="b").run("x", AgentContext()).agent == "b"
    coord = build_orchestration(
        {"strategy": "pipeline", "pipeline": {"agents": ["a", "b"], "entry": "b"}}, {"a": a, "b": b}
    )
    assert coord.run("x", AgentContext(session_id="s")).text == "B"
    with pytest.raises(ConfigError, match="entry 'zed' is not one of its stage agents"):
        build_orchestration({"strategy": "pipeline", "pipeline": {"agents": ["a"], "entry": "zed"}}, {"a": a, "zed": b})


def test_an_agent_handed_to_that_fails_gives_the_session_back_to_the_entry_agent(Scripted, bus, recorded, of_kind):
    triage, handler = Scripted("triage"), Scripted("handler")
    triage.behaviour = hands_to(triage, "handler", "One moment.")

    def broken(task, c):
        raise RuntimeError("model crashed")

    handler.behaviour = broken
    pipe = Pipeline([triage, handler])
    ctx = AgentContext(session_id="u", bus=bus, blackboard=Blackboard())
    pipe.run("my bill", ctx)
    failed = pipe.run("so?", ctx)
    # Was: the session stayed with the failing agent and every later turn was silent.
    assert (failed.agent, failed.ok, failed.data["failed_agent"]) == ("triage", False, "handler")
    assert failed.text.startswith("Sorry, handler ran into a problem") and "triage here again" in failed.text
    [event] = of_kind(recorded, HandoffFailed)
    assert (event.agent, event.returned_to) == ("handler", "triage")
    triage.behaviour = "Triage here."
    assert pipe.run("hello?", ctx).text == "Triage here." and pipe.holder(ctx) == "triage"
    ctx.blackboard.close()
