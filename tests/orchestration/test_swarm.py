"""Swarm: each peer is given ``handoff_conversation`` listing exactly its peers; when the peer
handed to fails, the handing-off agent's words are spoken with what happened and it keeps the
conversation. Mutual handoffs in config wire both directions. Class and YAML."""

from __future__ import annotations

from edgevox.agents.base import AgentRef
from edgevox.config import load_config
from edgevox.config.build import make_agents
from edgevox.orchestration import Swarm, build_orchestration
from edgevox.orchestration.events import HandoffFailed
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


def handoff_tool(ctx):
    return next((t for t in ctx.tools if t.name == "handoff_conversation"), None)


def hands_to(me, target, reply):
    def behaviour(task, ctx):
        me.call_tool(handoff_tool(ctx), {"target": target, "reason": "theirs", "summary": "over to you"}, ctx)
        return reply

    return behaviour


def test_each_peer_is_given_a_handoff_tool_listing_exactly_its_peers(Scripted):
    names = ("concierge", "chef", "gardener")
    agents = {n: Scripted(n) for n in names}
    offered = {}
    for n, agent in agents.items():
        agent.behaviour = lambda t, ctx, n=n: (offered.setdefault(n, handoff_tool(ctx)), f"{n} here")[1]
    swarm = Swarm(list(agents.values()))
    for n in names:
        swarm.store_for(AgentContext()).update("s", lambda s, n=n: s.transition(to_agent=n))
        swarm.run("hi", AgentContext(session_id="s"))
    enums = {n: offered[n].parameters["properties"]["target"]["enum"] for n in names}
    assert enums == {
        "concierge": ["chef", "gardener"],
        "chef": ["concierge", "gardener"],
        "gardener": ["concierge", "chef"],
    }
    refused = agents["chef"].call_tool(
        offered["chef"], {"target": "chef", "reason": "r", "summary": "s"}, AgentContext()
    )
    assert "expected one of 'concierge', 'gardener'" in refused


def test_when_the_peer_handed_to_fails_the_user_hears_the_first_agent_and_what_happened(Scripted):
    sales = Scripted("sales")
    sales.behaviour = hands_to(sales, "support", "Let me get support for you.")

    def broken(task, ctx):
        raise RuntimeError("model crashed")

    support = Scripted("support", broken)
    swarm = Swarm([sales, support])
    ctx = AgentContext(session_id="u", blackboard=Blackboard())
    stream = swarm.stream("my printer is broken", ctx)
    spoken = "".join(stream.text_deltas())
    result = stream.result()
    # Was: the sales agent's words were held and dropped, and the user heard nothing.
    words, sorry = "Let me get support for you.", "Sorry, support ran into a problem and could not finish that."
    assert words in spoken and sorry in spoken and spoken.index(words) < spoken.index(sorry)
    assert "sales here again" in spoken and result.text.startswith(words)
    assert result.agent == "sales" and not result.ok and "model crashed" in result.error
    assert result.data["failed_agent"] == "support"
    # The conversation stays with the agent that handed off.
    sales.behaviour = "Sales again."
    assert swarm.run("hello?", ctx).text == "Sales again."
    ctx.blackboard.close()


def test_yaml_swarm_mutual_peers_hand_off_both_ways_across_turns(Scripted):
    a, b = Scripted("a"), Scripted("b")
    a.behaviour = hands_to(a, "b", "to b")
    b.behaviour = hands_to(b, "a", "to a")
    config = {"strategy": "swarm", "swarm": {"agents": ["a", "b"], "entry": "a", "max_handoffs": 1}}
    coord = build_orchestration(config, {"a": a, "b": b}, blackboard=Blackboard())
    result = coord.run("go", AgentContext(session_id="s"))
    swarm_result = result.steps[0]
    # a handed to b, b handed back to a: both directions were accepted (then the handoff cap ends the turn).
    assert [s.agent for s in swarm_result.steps] == ["a", "b"]
    assert all('"ok": true' in r for r in a.tool_results + b.tool_results)


def test_yaml_agents_with_mutual_handoffs_get_both_directions(tmp_path):
    path = tmp_path / "mutual.yaml"
    path.write_text(
        "name: mutual\n"
        "agents:\n"
        "  a: {instructions: You are A., handoffs: [b]}\n"
        "  b: {instructions: You are B., handoffs: [a]}\n"
    )
    app = load_config(path)
    llm = ScriptedLLM(lambda messages, grammar: messages[0]["content"].replace("You are", "I am"))
    agents = make_agents(app, llm)
    a_targets, b_targets = agents["a"].handoffs, agents["b"].handoffs
    assert list(a_targets) == ["handoff_to_b"] and list(b_targets) == ["handoff_to_a"]
    resolved = {
        n: (t.target if isinstance(t, AgentRef) else t)
        for n, t in (("a", b_targets["handoff_to_a"]), ("b", a_targets["handoff_to_b"]))
    }
    assert resolved == {"a": agents["a"], "b": agents["b"]}
    # Each direction runs the other agent.
    assert b_targets["handoff_to_a"].run("hi").text.startswith("I am A")
    assert a_targets["handoff_to_b"].run("hi").text.startswith("I am B")


def test_a_peer_holding_the_session_that_fails_later_gives_it_back_to_the_entry_agent(Scripted, bus, recorded, of_kind):
    concierge, chef = Scripted("concierge"), Scripted("chef", "Boil it for ten minutes.")
    concierge.behaviour = hands_to(concierge, "chef", "Our chef will help.")
    swarm = Swarm([concierge, chef], entry="concierge")
    ctx = AgentContext(session_id="u", bus=bus, blackboard=Blackboard())
    assert swarm.run("pasta?", ctx).agent == "chef"

    def broken(task, c):
        raise RuntimeError("model crashed")

    chef.behaviour = broken
    failed = swarm.run("and the sauce?", ctx)
    # Was: the chef kept the session and the user heard nothing, on this turn and every later one.
    assert failed.agent == "concierge" and not failed.ok
    assert failed.text.startswith("Sorry, chef ran into a problem") and "concierge here again" in failed.text
    [event] = of_kind(recorded, HandoffFailed)
    assert (event.agent, event.returned_to) == ("chef", "concierge")
    concierge.behaviour = "Concierge here."
    assert swarm.run("hello?", ctx).text == "Concierge here."
    ctx.blackboard.close()


def test_a_question_about_the_only_target_of_a_two_agent_swarm_reads_well():
    from edgevox.agents.resolver import SchemaResolver
    from edgevox.orchestration.tools import handoff_tool as only_target_tool

    tool = only_target_tool(["concierge"])
    # Was "Which target:  or concierge?" (an empty option before "or").
    assert SchemaResolver([tool]).question(tool.name, "target") == "Which target: concierge?"


def test_a_turn_never_bounces_back_to_a_peer_that_already_had_it(Scripted):
    """Two small models that each want the other to answer: the turn goes concierge -> chef and
    stops there (chef's enum leaves out concierge, who already passed it on), instead of
    bouncing between them until max_handoffs and ending with no answer."""
    offered: dict[str, list] = {}

    def wants_the_other(me, other):
        def behaviour(task, ctx):
            tool = handoff_tool(ctx)
            offered.setdefault(me.name, []).append(tool.parameters["properties"]["target"]["enum"] if tool else None)
            if tool is not None and other in tool.parameters["properties"]["target"]["enum"]:
                me.call_tool(tool, {"target": other, "reason": "theirs", "summary": "over to you"}, ctx)
                return "Passing you on."
            return f"{me.name} answers."

        return behaviour

    a, b, c = Scripted("concierge"), Scripted("chef"), Scripted("gardener")
    a.behaviour, b.behaviour, c.behaviour = (
        wants_the_other(a, "chef"),
        wants_the_other(b, "concierge"),
        wants_the_other(c, "chef"),
    )
    swarm = Swarm([a, b, c], max_handoffs=5)
    ctx = AgentContext(session_id="s", blackboard=Blackboard())
    result = swarm.run("pasta?", ctx)
    assert result.ok and (result.agent, result.text) == ("chef", "chef answers.")
    # chef could still reach the gardener, never the concierge who passed the turn on.
    assert offered == {"concierge": [["chef", "gardener"]], "chef": [["gardener"]]}
    # The next turn starts again with the full set of peers (chef now holds the session).
    swarm.run("and salt?", ctx)
    assert offered["chef"][-1] == ["concierge", "gardener"] and b.tasks[-1] == "and salt?"
    ctx.blackboard.close()


def test_an_llm_agent_that_handed_the_turn_on_decides_nothing_more(Scripted):
    """After an accepted handoff an LLMAgent makes no more tool decisions: in a Swarm (same
    turn) it ends at once, since the target answers and its words would go unheard; under a
    Pipeline (next turn) it says one reply. A small model otherwise asked for the same handoff
    again on every tool hop (refused each time), three LLM calls wasted per handoff."""
    from edgevox.agents.decoders import TwoStageDecoder
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.orchestration import Pipeline

    def model(messages, grammar):
        if grammar and '"none"' in grammar:
            return "handoff_conversation"  # a small model that would hand off at every hop
        if grammar:
            return '{"target": "chef", "reason": "food", "summary": "wants pasta"}'
        return "Over to our chef."

    for strategy, calls in ((Swarm, ["tool", "args"]), (Pipeline, ["tool", "args", "reply"])):
        llm = ScriptedLLM(model)
        concierge = LLMAgent("concierge", "You greet.", llm=llm, decoder=TwoStageDecoder(), max_tool_hops=3)
        chef = Scripted("chef", "Boil it for ten minutes.")
        result = strategy([concierge, chef]).run("pasta?", AgentContext(session_id="s", blackboard=Blackboard()))
        kinds = ["reply" if c.grammar is None else "tool" if '"none"' in c.grammar else "args" for c in llm.calls]
        assert kinds == calls, strategy.__name__
        if strategy is Swarm:
            assert (result.agent, result.text) == ("chef", "Boil it for ten minutes.")
        else:
            assert result.agent == "concierge" and result.text.startswith("Over to our chef.")
