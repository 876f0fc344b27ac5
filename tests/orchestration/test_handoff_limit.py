"""The one limit on handoffs per turn (``orchestration.handoff.max_handoffs_per_turn``).

Was: two LLM agents that hand the turn to each other (``a: [b]``, ``b: [a]``) with a small
model that always hands off made 141 handoffs and 282 LLM calls in one turn and ended in a
``RecursionError``. Now every same-turn handoff counts on ``ctx.handoff_chain``; the one past
the limit is refused, a ``HandoffLimitReached`` event and a warning name the chain, and the
robot says it could not settle who handles the request."""

from __future__ import annotations

import logging
import re

import pytest

from edgevox.agents.base import AgentRef
from edgevox.agents.decoders import TwoStageDecoder
from edgevox.agents.events import HandoffEvent, HandoffLimitReached
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tool_calls import DEFAULT_MAX_HANDOFFS_PER_TURN, HANDOFF_LIMIT_REPLY
from edgevox.config import load_config
from edgevox.config.build import make_agents
from edgevox.errors import ArgumentError, ConfigError
from edgevox.orchestration import Swarm
from edgevox.orchestration.handoff_context import HandoffOptions
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


def always_hands_off(messages, grammar):
    """A small model that picks a handoff whenever it is offered one, and talks otherwise."""
    if grammar:
        match = re.search(r"handoff_to_\w+", grammar)
        if match:
            return match.group(0)
    return "Let me pass you on."


def cycle(llm, **options):
    """``a`` and ``b``, each able to hand the turn to the other (the back edge by name, as config wires it)."""
    agents: dict = {}
    for me, other in (("a", "b"), ("b", "a")):
        agents[me] = LLMAgent(
            me, f"You are {me}.", handoffs=[AgentRef(other, agents)], llm=llm, decoder=TwoStageDecoder(), **options
        )
    return agents


def run_counting(agent, ctx):
    stream = agent.stream("take me to the kitchen", ctx)
    handoffs = [e for e in stream if isinstance(e, HandoffEvent)]
    return stream.result(), handoffs


def test_a_two_agent_handoff_cycle_stops_at_the_limit_and_says_so(bus, recorded, caplog):
    llm = ScriptedLLM(always_hands_off)
    agents = cycle(llm)
    with caplog.at_level(logging.WARNING, logger="edgevox.agents.tool_calls"):
        result, handoffs = run_counting(agents["a"], AgentContext(bus=bus, session_id="s"))
    limit = DEFAULT_MAX_HANDOFFS_PER_TURN
    assert len(handoffs) == limit == 8
    # Each agent that had the turn made one decision of two short decodes: bounded, no recursion.
    assert len(llm.calls) == 2 * (limit + 1)
    assert result.text == HANDOFF_LIMIT_REPLY and not result.ok
    assert "RecursionError" not in result.error and "max_handoffs_per_turn = 8" in result.error
    [event] = [e for e in recorded if isinstance(e, HandoffLimitReached)]
    assert event.chain == ("a", "b") * 4 + ("a",) and event.to_agent == "b" and event.max_handoffs == 8
    [line] = [r.getMessage() for r in caplog.records if "handoff limit" in r.getMessage()]
    assert "a -> b -> a -> b -> a -> b -> a -> b -> a -> b refused (a cycle)" in line
    # What was spoken is the apology, once, and no model text of the refused hop.
    from edgevox.agents.events import ReplyDelta

    assert [e.text for e in recorded if isinstance(e, ReplyDelta)] == [HANDOFF_LIMIT_REPLY]


def test_the_limit_is_per_turn_and_configurable():
    llm = ScriptedLLM(always_hands_off)
    agents = cycle(llm, max_handoffs_per_turn=3)
    for _turn in range(2):  # a fresh turn starts with no handoffs counted
        before = len(llm.calls)
        result, handoffs = run_counting(agents["a"], AgentContext(session_id="s"))
        assert len(handoffs) == 3 and len(llm.calls) - before == 8
        assert result.text == HANDOFF_LIMIT_REPLY


@pytest.mark.parametrize("bad", [0, -1, 33, True, 2.5, "8"])
def test_a_bad_limit_is_one_clear_error(bad):
    with pytest.raises(ArgumentError, match=r"max_handoffs_per_turn = .*: must be a whole number from 1 to 32"):
        LLMAgent("a", max_handoffs_per_turn=bad)
    with pytest.raises(ArgumentError, match=r"max_handoffs_per_turn = .*: must be a whole number from 1 to 32"):
        HandoffOptions(max_handoffs_per_turn=bad)


def test_yaml_max_handoffs_per_turn_reaches_every_agent(tmp_path):
    path = tmp_path / "cycle.yaml"
    path.write_text(
        "name: cycle\n"
        "agents:\n"
        "  a: {instructions: You are a., handoffs: [b], decoder: two_stage}\n"
        "  b: {instructions: You are b., handoffs: [a], decoder: two_stage}\n"
        "orchestration:\n"
        "  handoff: {max_handoffs_per_turn: 2}\n"
    )
    llm = ScriptedLLM(always_hands_off)
    agents = make_agents(load_config(path), llm)
    assert {n: a.max_handoffs_per_turn for n, a in agents.items()} == {"a": 2, "b": 2}
    result, handoffs = run_counting(agents["a"], AgentContext(session_id="s"))
    assert len(handoffs) == 2 and result.text == HANDOFF_LIMIT_REPLY


def test_yaml_default_and_bad_value(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\norchestration:\n  handoff: {max_handoffs_per_turn: 0}\n")
    with pytest.raises(ConfigError, match="max_handoffs_per_turn") as info:
        load_config(path)
    assert "Traceback" not in str(info.value)
    ok = tmp_path / "ok.yaml"
    ok.write_text("name: ok\n")
    assert load_config(ok).orchestration.handoff.max_handoffs_per_turn == 8


def test_a_swarm_counts_the_same_limit_and_keeps_the_session_with_the_agent_that_asked(Scripted, bus, recorded):
    """a -> b is applied; b -> c would be the second handoff of a turn limited to one: refused,
    the session stays with b, and the user hears the apology instead of b's "over to c"."""

    def tool(ctx):
        return next(t for t in ctx.tools if t.name == "handoff_conversation")

    def hands_to(me, target):
        def behaviour(task, ctx):
            me.call_tool(tool(ctx), {"target": target, "reason": "theirs", "summary": "over"}, ctx)
            return f"Over to {target}."

        return behaviour

    a, b, c = Scripted("a"), Scripted("b"), Scripted("c", "c answers.")
    a.behaviour, b.behaviour = hands_to(a, "b"), hands_to(b, "c")
    swarm = Swarm([a, b, c], handoff_options=HandoffOptions(max_handoffs_per_turn=1, notify=False))
    ctx = AgentContext(session_id="s", bus=bus, blackboard=Blackboard())
    result = swarm.run("help?", ctx)
    assert (result.text, result.agent, result.ok) == (HANDOFF_LIMIT_REPLY, "b", False)
    assert "more than 1 handoffs in one turn" in result.error and "a -> b -> c refused" in result.error
    assert c.tasks == [] and swarm.store_for(ctx).state("s").active_agent == "b"
    [event] = [e for e in recorded if isinstance(e, HandoffLimitReached)]
    assert event.chain == ("a", "b") and event.to_agent == "c"
    ctx.blackboard.close()


def test_a_swarm_peer_sees_the_handoffs_that_led_to_it(Scripted):
    """The chain travels: a peer reached by a handoff sees who had the turn before it, so a
    ``handoff_to_<name>`` tool inside a swarm counts on from the swarm's hops."""
    seen = []
    a, b = Scripted("a"), Scripted("b")

    def a_hands_to_b(task, ctx):
        a.call_tool(
            next(t for t in ctx.tools if t.name == "handoff_conversation"),
            {"target": "b", "reason": "theirs", "summary": "over"},
            ctx,
        )
        return "Over to b."

    a.behaviour = a_hands_to_b
    b.behaviour = lambda task, ctx: (seen.append(ctx.handoff_chain), "b answers.")[1]
    ctx = AgentContext(session_id="s", blackboard=Blackboard(), handoff_chain=("outer",))
    assert Swarm([a, b]).run("hi", ctx).text == "b answers."
    assert seen == [("outer", "a")]
    ctx.blackboard.close()
