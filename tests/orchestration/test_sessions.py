"""One session's history and state are never visible to another."""

from __future__ import annotations

import json
import threading

from edgevox.orchestration import ConversationPipeline, Coordinator, HandoffHandler, PipelineStage, SessionStore
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext


def build(Scripted, bus, board):
    pipeline = ConversationPipeline([PipelineStage("intake", "front"), PipelineStage("handling", "expert")])
    agents = {"front": Scripted("front"), "expert": Scripted("expert")}

    def front(task, ctx):
        if "expert" in task:
            agents["front"].call_tool(
                handoff_conversation, {"target": "expert", "reason": "r", "summary": f"secret of {ctx.session_id}"}, ctx
            )
        ctx.state["seen"] = ctx.state.get("seen", []) + [task]
        return f"front saw {len(ctx.state['seen'])}"

    agents["front"].behaviour = front
    agents["expert"].behaviour = lambda task, ctx: task
    store = SessionStore(board)
    handler = HandoffHandler(agents, store, phase_of=pipeline.phase_of, publish=bus.publish)
    return Coordinator(agents, router=pipeline.to_router(), handoff=handler, store=store, bus=bus), agents


def test_state_history_and_context_do_not_leak_between_sessions(Scripted, bus, recorded):
    board = Blackboard()
    coord, agents = build(Scripted, bus, board)
    coord.run("I need the expert", AgentContext(session_id="alice", bus=bus))
    coord.run("hello", AgentContext(session_id="bob", bus=bus))
    assert coord.state("alice").active_agent == "expert" and coord.state("bob").active_agent == "front"
    assert coord.state("bob").history[-1].to_agent == "front" and len(coord.state("bob").history) == 1
    bob_reply = coord.run("again", AgentContext(session_id="bob", bus=bus))
    assert bob_reply.text == "front saw 2"  # bob's scratch state has only bob's turns
    alice_reply = coord.run("hi", AgentContext(session_id="alice", bus=bus))
    # The handoff carries alice's recent turns (the user never repeats themselves), never bob's.
    assert alice_reply.text == (
        "Context from the previous agent: secret of alice The last turn: user: I need the expert\n\nUser: hi"
    )
    assert not any("secret of alice" in t for t in agents["front"].tasks)
    # Every orchestration event carries its session id.
    orch = [e for e in recorded if e.kind.startswith("orchestration.")]
    assert orch and all(e.session_id in ("alice", "bob") for e in orch)
    assert all("alice" not in json.dumps(e.to_dict()) for e in orch if e.session_id == "bob")
    board.close()


def test_concurrent_sessions_stay_isolated(Scripted, bus):
    board = Blackboard()
    coord, _ = build(Scripted, bus, board)
    errors = []

    def talk(session):
        try:
            for i in range(20):
                coord.run(f"msg {i}", AgentContext(session_id=session))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=talk, args=(f"s{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors
    for i in range(4):
        scratch = coord.store.get_record(f"s{i}", "scratch/front")
        assert scratch["seen"] == [f"msg {k}" for k in range(20)]
    board.close()
