"""The handoff protocol, driven through the real ``handoff_conversation`` tool."""

from __future__ import annotations

import json

import pytest

from edgevox.orchestration import ConversationPipeline, Coordinator, HandoffHandler, PipelineStage, SessionStore
from edgevox.orchestration.events import HandoffAccepted, HandoffRejected, PhaseChanged, WorkflowSuspended
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.context import AgentContext


def hands_off(agent_box, **args):
    """Behaviour: call handoff_conversation with ``args`` and answer with what the tool said."""

    def behaviour(task, ctx):
        return agent_box[0].call_tool(handoff_conversation, args, ctx)

    return behaviour


@pytest.fixture
def desk(Scripted, bus):
    """triage -> handler -> resolver, handler may return to triage; aliases; a coordinator."""
    pipeline = ConversationPipeline(
        [
            PipelineStage("intake", "triage", next="handling"),
            PipelineStage("handling", "handler", next="resolution", can_return_to=("intake",)),
            PipelineStage("resolution", "resolver"),
        ]
    )
    agents = {n: Scripted(n, f"{n} here") for n in ("triage", "handler", "resolver")}
    store = SessionStore()
    handler = HandoffHandler(
        agents,
        store,
        aliases={"support": "handler", "Closer": "resolver"},
        allowed_transitions=pipeline.agent_transitions(),
        phase_of=pipeline.phase_of,
        publish=bus.publish,
    )
    coord = Coordinator(agents, router=pipeline.to_router(), handoff=handler, store=store, bus=bus)
    return coord, agents


def script(agent, **args):
    box = [agent]
    agent.behaviour = hands_off(box, **args)


def ctx(session="s1"):
    return AgentContext(session_id=session)


def test_accepted_handoff_moves_the_next_turn_and_passes_the_summary(desk, recorded, of_kind):
    coord, agents = desk
    script(agents["triage"], target="support", reason="billing issue", summary="User was charged twice.")
    first = coord.run("I was charged twice", ctx())
    assert json.loads(first.steps[0].text) == {  # what triage said (the tool's answer) ...
        "ok": True,
        "message": "Handoff to handler accepted; handler takes the next turn.",
    }
    assert first.text.endswith("} Connecting you with handler...")  # ... then the notification
    state = coord.state("s1")
    assert (state.active_agent, state.phase, state.handoff_count) == ("handler", "handling", 1)
    second = coord.run("hello?", ctx())
    assert second.agent == "handler" and second.data["why"] == "affinity"
    # The summary and the user's own words travel (issue 13: the summary alone made users repeat themselves).
    assert agents["handler"].tasks[0] == (
        "Context from the previous agent: User was charged twice. The last turn: user: I was charged twice"
        "\n\nUser: hello?"
    )
    third = coord.run("and now?", ctx())
    assert agents["handler"].tasks[1] == "and now?"  # context is delivered once
    assert third.text == "handler here"
    [accepted] = of_kind(recorded, HandoffAccepted)
    assert (accepted.from_agent, accepted.to_agent, accepted.session_id) == ("triage", "handler", "s1")
    assert any(e.to_agent == "handler" for e in of_kind(recorded, PhaseChanged))


def test_unknown_target_is_rejected_with_a_reason_the_agent_sees(desk, recorded, of_kind):
    coord, agents = desk
    script(agents["triage"], target="plumber", reason="x", summary="y")
    result = coord.run("hi", ctx())
    seen = json.loads(result.text)
    assert seen["ok"] is False and "unknown target 'plumber'" in seen["error"] and "handler" in seen["error"]
    [rejected] = of_kind(recorded, HandoffRejected)
    assert rejected.requested_target == "plumber" and rejected.reason == seen["error"]
    assert coord.state("s1").active_agent == "triage"


def test_forbidden_transition_is_rejected(desk):
    coord, agents = desk
    script(agents["triage"], target="Closer", reason="skip", summary="")
    seen = json.loads(coord.run("hi", ctx()).text)
    assert seen["ok"] is False
    assert "transition from triage to resolver is not allowed" in seen["error"]


def test_target_human_clears_the_active_agent_and_no_agent_answers(desk):
    coord, agents = desk
    script(agents["triage"], target="HUMAN", reason="angry user", summary="wants a person")
    coord.run("let me talk to a person", ctx())
    state = coord.state("s1")
    assert state.active_agent is None and state.phase == "escalation"
    nobody = coord.run("hello?", ctx())
    assert nobody.agent == "" and nobody.data["why"] == "human" and nobody.text == ""
    coord.handoff.release_human("s1", to_agent="triage")
    assert coord.run("back", ctx()).agent == "triage"


def test_only_one_handoff_per_turn_wins(desk, recorded, of_kind):
    coord, agents = desk
    box = [agents["handler"]]
    coord.store.save_state(coord.state("s1").transition(to_agent="handler", to_phase="handling"))

    def twice(task, c):
        a = box[0].call_tool(handoff_conversation, {"target": "resolver", "reason": "done", "summary": "s"}, c)
        b = box[0].call_tool(handoff_conversation, {"target": "triage", "reason": "oops", "summary": "s"}, c)
        return a + "|" + b

    agents["handler"].behaviour = twice
    first, second = (json.loads(x) for x in coord.run("fix it", ctx()).steps[0].text.split("|"))
    assert first["ok"] is True
    assert second["ok"] is False and "only one handoff per turn" in second["error"]
    assert coord.state("s1").active_agent == "resolver"
    assert len(of_kind(recorded, HandoffAccepted)) == 1


def test_handoff_with_return_hands_back_and_refuses_a_second_one_in_progress(desk):
    coord, agents = desk
    script(agents["triage"], target="handler", reason="specialist", summary="needs a refund", with_return=True)
    coord.run("refund please", ctx())
    assert coord.state("s1").return_stack == ("triage",)
    # While the workflow is open, another handoff with return is refused with an explanation.
    script(agents["handler"], target="resolver", reason="x", summary="y", with_return=True)
    refused = json.loads(coord.run("go on", ctx()).text)
    assert refused["ok"] is False and "still in progress" in refused["error"]
    # Handing back: target "return" goes to the caller even without an allowed transition.
    script(agents["handler"], target="return", reason="refund done", summary="Refund issued.")
    coord.run("thanks", ctx())
    state = coord.state("s1")
    assert state.active_agent == "triage" and state.return_stack == ()
    agents["triage"].behaviour = "triage here"
    coord.run("anything else?", ctx())
    assert agents["triage"].tasks[-1].startswith("Context from the previous agent: Refund issued.")


def test_cancel_mid_workflow_keeps_partial_state_and_resumes(desk, recorded, of_kind):
    coord, agents = desk
    script(agents["triage"], target="handler", reason="specialist", summary="refund", with_return=True)
    coord.run("refund please", ctx())

    def step(task, c):
        c.state["collected"] = c.state.get("collected", []) + [task.split("User: ")[-1]]
        return "noted"

    agents["handler"].behaviour = step
    coord.run("order 17", ctx())
    coord.run("blue shirt", ctx())
    state = coord.cancel_workflow("s1", reason="user said never mind")
    assert state.active_agent == "triage" and state.return_stack == ()
    assert coord.handoff.suspended("s1")["partial"] == {"collected": ["order 17", "blue shirt"]}
    [suspended] = of_kind(recorded, WorkflowSuspended)
    assert suspended.session_id == "s1" and suspended.workflow == "handler"
    # Another session has nothing suspended.
    assert coord.handoff.suspended("s2") is None
    # Resume later: the specialist is active again with its partial state and can return.
    assert coord.resume_workflow("s1") == {"collected": ["order 17", "blue shirt"]}
    coord.run("size M", ctx())
    assert coord.state("s1").active_agent == "handler" and coord.state("s1").return_stack == ("triage",)
    assert agents["handler"].contexts[-1].state["collected"] == ["order 17", "blue shirt", "size M"]


def test_tool_without_a_handler_reports_it_cannot_hand_off():
    out = handoff_conversation.invoke({"target": "x", "reason": "r", "summary": "s"}, AgentContext())
    assert json.loads(out.value)["ok"] is False


def test_a_same_turn_handoff_target_runs_in_an_isolated_child_context():
    from edgevox.agents.base import AgentBase, AgentResult, AgentStream
    from edgevox.agents.decoders import TwoStageDecoder
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.testing import ScriptedLLM

    class Specialist(AgentBase):
        name = "kitchen_expert"

        def stream(self, task, ctx):
            def gen():
                ctx.state["expert_notes"] = "private"
                return AgentResult("Boil it.", agent=self.name)
                yield  # pragma: no cover

            return AgentStream(gen())

    llm = ScriptedLLM(["handoff_to_kitchen_expert", '{"reason": "cooking"}'])
    front = LLMAgent("front", tools=[], handoffs=[Specialist()], llm=llm, decoder=TwoStageDecoder())
    outer = AgentContext(session_id="s1", state={"front_notes": 1})
    result = front.run("how do I cook pasta?", outer)
    assert result.handoff == "kitchen_expert" and result.text == "Boil it."
    assert outer.state == {"front_notes": 1}  # the target's scratch state stayed its own


def test_a_handoff_cycle_in_config_wires_both_edges():
    from edgevox.config.build import make_agents
    from edgevox.config.loader import parse_config
    from edgevox.testing import ScriptedLLM

    app = parse_config("agents:\n  a: {handoffs: [b]}\n  b: {handoffs: [a]}\n")
    agents = make_agents(app, ScriptedLLM(["Hello from a."]))
    assert set(agents["a"].handoffs) == {"handoff_to_b"}
    assert set(agents["b"].handoffs) == {"handoff_to_a"}
    # The back edge is resolved by name when it runs: it reaches the real agent a.
    back = agents["b"].handoffs["handoff_to_a"]
    assert back.name == "a" and back.run("hello?", AgentContext()).text == "Hello from a."


def test_a_refused_handoff_raises_handoff_error_naming_the_valid_targets(desk):
    from edgevox.errors import HandoffError

    coord, _agents = desk
    with pytest.raises(HandoffError, match=r"unknown target 'plumber'; valid targets: handler, human$"):
        coord.handoff.request(session_id="s1", from_agent="triage", target="plumber", reason="x", summary="y")
    with pytest.raises(HandoffError, match="transition from triage to resolver is not allowed; allowed targets"):
        coord.handoff.request(session_id="s1", from_agent="triage", target="resolver", reason="x", summary="y")


def test_both_handoff_tools_produce_the_one_handoff_description_with_its_timing(Scripted, bus, recorded, of_kind):
    from edgevox.agents.base import Handoff
    from edgevox.agents.decoders import TwoStageDecoder
    from edgevox.agents.events import HandoffEvent
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.agents.run import stream_handoff
    from edgevox.orchestration import Swarm
    from edgevox.testing import ScriptedLLM

    # handoff_conversation under a coordinator: next turn.
    coordinator = HandoffHandler({"a", "b"}, SessionStore())
    next_turn = coordinator.request(session_id="s", from_agent="a", target="B", reason="r", summary="Printer broken.")
    assert next_turn == Handoff(
        from_agent="a", target="b", timing="next_turn", reason="r", summary="Printer broken.", thread_id="s"
    )
    assert next_turn.context() == "Context from the previous agent: Printer broken."
    # ... and in a swarm: same turn.
    swarm = Swarm([Scripted("a"), Scripted("b")]).handler(AgentContext())
    same = swarm.request(session_id="s", from_agent="a", target="b", reason="r", summary="Printer broken.")
    assert same.timing == "same_turn" and swarm.accepted_message(same) == "Handoff to b accepted; b answers now."
    # handoff_to_<name>: same turn, executed by stream_handoff (which refuses a next-turn one).
    llm = ScriptedLLM(["handoff_to_b", '{"reason": "printer"}'])
    front = LLMAgent("a", tools=[], handoffs=[Scripted("b", "Fixed.")], llm=llm, decoder=TwoStageDecoder())
    result = front.run("my printer is broken", AgentContext(bus=bus))
    assert result.handoff == "b" and result.text == "Fixed."
    [event] = of_kind(recorded, HandoffEvent)
    assert (event.from_agent, event.to_agent) == ("a", "b") and "user now asks: my printer is broken" in event.summary
    with pytest.raises(ValueError, match="same-turn handoffs"):
        next(stream_handoff(next_turn, Scripted("b"), "x", AgentContext()))
