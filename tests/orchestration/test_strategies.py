from __future__ import annotations

import json
import threading

import pytest

from edgevox.orchestration import (
    Coordinator,
    Immediate,
    Loop,
    Orchestration,
    Pipeline,
    Supervisor,
    Swarm,
)
from edgevox.orchestration.tools import delegate, handoff_conversation
from edgevox.runtime.context import AgentContext


def test_pipeline_runs_only_the_agent_holding_the_session_not_every_agent(Scripted):
    # Was: every agent ran on every turn, each fed the previous answer (that pattern is the
    # workflow Sequence). Now as in RoomKit: the entry agent answers; handoffs move the session on.
    a, b, c = Scripted("triage", "billing problem"), Scripted("handler"), Scripted("resolver")
    result = Pipeline([a, b, c]).run("I was charged twice", AgentContext())
    assert (result.text, result.agent) == ("billing problem", "triage")
    assert (b.tasks, c.tasks) == ([], [])


def test_swarm_passes_the_turn_to_a_peer_who_answers_with_the_summary(Scripted):
    sales = Scripted("sales")
    support = Scripted("support", lambda task, ctx: f"support answers: {task}")

    def to_support(task, ctx):
        sales.call_tool(
            handoff_conversation, {"target": "support", "reason": "tech", "summary": "Printer broken."}, ctx
        )
        return "Passing you to support."

    sales.behaviour = to_support
    swarm = Swarm([sales, support], entry="sales")
    ctx = AgentContext(session_id="u1")
    result = swarm.run("my printer is broken", ctx)
    assert result.agent == "support"
    assert (
        result.text == "support answers: Context from the previous agent: Printer broken.\n\nUser: my printer is broken"
    )
    # The swarm remembers who holds the session; another session starts at the entry.
    swarm.run("and the toner?", ctx)
    assert support.tasks[-1] == "and the toner?"
    swarm.run("hello", AgentContext(session_id="u2"))
    assert sales.tasks[-1] == "hello"


def test_swarm_stops_after_max_handoffs(Scripted):
    a, b = Scripted("a"), Scripted("b")
    for me, other in ((a, "b"), (b, "a")):
        me.behaviour = lambda t, c, me=me, other=other: me.call_tool(
            handoff_conversation, {"target": other, "reason": "ping", "summary": "pong"}, c
        )
    result = Swarm([a, b], max_handoffs=3).run("go", AgentContext())
    assert result.ok is False and "more than 3 handoffs" in result.error


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
def test_supervisor_delegates_to_workers_and_answers_itself(Scripted, mode):
    boss = Scripted("boss", lambda t, c: "SUMMARY<" + t.replace("\n", "|") + ">")
    w1 = Scripted("researcher", "fact 1")
    w2 = Scripted("analyst", lambda t, c: "analysis of " + t.splitlines()[0])
    # auto_delegate=True (every turn runs the team): RoomKit's default is False, the supervisor decides.
    result = Supervisor(boss, [w1, w2], strategy=mode, auto_delegate=True, refine_task=False).run(
        "question", AgentContext()
    )
    assert result.agent == "boss" and result.data["missing"] == []
    assert "- researcher: fact 1" in result.text and "- analyst: analysis of question" in result.text
    if mode == "sequential":
        assert w2.tasks == ["question\nresearcher found: fact 1"]


def test_parallel_workers_really_run_at_the_same_time(Scripted):
    both_in = threading.Barrier(2, timeout=5)
    w1 = Scripted("w1", lambda t, c: (both_in.wait(), "one")[1])
    w2 = Scripted("w2", lambda t, c: (both_in.wait(), "two")[1])
    sup = Supervisor(
        Scripted("boss", "ok"), [w1, w2], strategy="parallel", auto_delegate=True, refine_task=False, max_concurrency=2
    )
    assert sup.run("x", AgentContext()).data["missing"] == []
    assert sup.delegator.peak_concurrency == 2


def test_orchestrator_answers_with_what_it_has_when_a_worker_fails_or_times_out(Scripted):
    release = threading.Event()

    def slow(task, ctx):
        ctx.cancel_token.wait(5)  # a cooperative agent stops when its token is cancelled
        release.set()
        return "too late"

    def broken(task, ctx):
        raise RuntimeError("sensor offline")

    boss = Scripted("boss", lambda t, c: "Partial answer from the facts I have.")
    sup = Supervisor(
        boss,
        [Scripted("fast", "fact"), Scripted("slow", slow), Scripted("broken", broken)],
        strategy="parallel",
        auto_delegate=True,
        refine_task=False,
        max_concurrency=3,
        timeout_s=0.2,
    )
    result = sup.run("status?", AgentContext())
    assert release.wait(2)
    assert result.ok and set(result.data["missing"]) == {"slow", "broken"}
    assert result.text.startswith("Partial answer from the facts I have.")
    assert "could not get an answer from slow, broken" in result.text
    synthesis_prompt = boss.tasks[-1]
    assert (
        "- fast: fact" in synthesis_prompt and "slow did not answer (slow: timed out after 0.2 s)" in synthesis_prompt
    )
    assert "RuntimeError: sensor offline" in synthesis_prompt


def given_tool(ctx, name):
    return next(t for t in ctx.tools if t.name == name)


def test_supervisor_without_auto_delegate_calls_its_workers_through_the_tools_it_is_given(Scripted):
    # Was: auto_delegate=False gave no tool (only a "(You can delegate to: ...)" line) and
    # refine_task rewrote the request first; RoomKit gives delegate_to_<worker> tools and
    # refines only when the framework runs the team itself (auto_delegate=True).
    worker = Scripted("worker", lambda t, c: f"did {t}")
    offered, own_tool = [], []

    def boss_behaviour(task, ctx):
        offered.append(sorted(t.name for t in ctx.tools))
        own_tool.append(boss.call_tool(delegate, {"agent": "worker", "task": "count"}, ctx))  # its own tool still works
        return boss.call_tool(given_tool(ctx, "delegate_to_worker"), {"task": "measure"}, ctx)

    boss = Scripted("boss", boss_behaviour)
    result = Supervisor(boss, [worker], auto_delegate=False, refine_task=True).run("how big is it", AgentContext())
    assert offered == [["delegate_to_worker"]] and boss.tasks == ["how big is it"]
    assert json.loads(result.text) == {"worker": "worker", "status": "completed", "result": "did measure"}
    assert json.loads(own_tool[0]) == {"ok": True, "agent": "worker", "output": "did count"}
    assert worker.tasks == ["count", "measure"]


def test_supervisor_with_async_delivery_delegates_in_the_background_and_delivers_later(Scripted, bus, recorded):
    # Was: every turn was backgrounded with an acknowledgement; now the supervisor's
    # delegate_workers tool starts the team and small talk is answered at once.
    delivered = []
    done = threading.Event()
    gate = threading.Event()
    worker = Scripted("worker", lambda t, c: (gate.wait(5), "found it")[1])

    def boss_behaviour(task, ctx):
        if task.startswith("User request:"):
            return "The answer: found it"
        if task == "search":
            boss.call_tool(given_tool(ctx, "delegate_workers"), {"task": "search"}, ctx)
            return "Searching."
        return "Hello."

    boss = Scripted("boss", boss_behaviour)
    delivery = Immediate(lambda items: (delivered.extend(i.text for i in items), done.set()), publish=bus.publish)
    sup = Supervisor(boss, [worker], strategy="sequential", async_delivery=True, delivery=delivery)
    result = sup.run("search", AgentContext(bus=bus, session_id="s3"))
    assert result.text == "I'm dispatching my team to work on this. Searching." and delivered == []
    assert sup.run("hello", AgentContext(bus=bus, session_id="s3")).text == "Hello."
    handle = result.data["handles"][0]
    assert handle.status == "active"
    gate.set()
    assert done.wait(5) and handle.wait(5)
    assert delivered == ["The answer: found it"] and handle.status == "completed" and worker.tasks == ["search"]
    assert sup.close() == []
    assert {e.session_id for e in recorded if e.kind.startswith("orchestration.delivery")} == {"s3"}


def test_loop_revises_until_reviewers_approve(Scripted):
    writer = Scripted("writer", lambda t, c: "draft v2" if "Reviewer feedback" in t else "draft v1")
    r1 = Scripted("style", lambda t, c: "APPROVED" if "draft v2" in t else "Too long.")
    r2 = Scripted("facts", "approved, looks right")
    result = Loop(writer, [r1, r2]).run("write a note", AgentContext())
    assert (result.text, result.data["approved"], result.data["iteration"]) == ("draft v2", True, 2)
    assert "- style: Too long." in writer.tasks[1] and "facts" not in writer.tasks[1]


def test_loop_gives_up_after_max_iterations_and_says_it_was_not_approved(Scripted):
    result = Loop(Scripted("w", "meh"), [Scripted("r", "no")], max_iterations=2).run("x", AgentContext())
    assert (result.data["approved"], result.data["iteration"], result.text) == (False, 2, "meh")


@pytest.mark.parametrize(("approval", "approved"), [("all", False), ("any", True), ("majority", True)])
def test_loop_approval_counts_votes(Scripted, approval, approved):
    # Vote counting was ``strategy=`` before issue 13; ``strategy`` now means how reviewers run (RoomKit).
    reviewers = [Scripted("a", "APPROVED"), Scripted("b", "APPROVED"), Scripted("c", "no")]
    result = Loop(Scripted("w", "text"), reviewers, approval=approval, max_iterations=1).run("x", AgentContext())
    assert result.data["approved"] is approved


def test_custom_strategy_through_the_base_class_and_per_session_override(Scripted):
    class Echo(Orchestration):
        name = "echo"

        def _run(self, task, ctx):
            return (yield from self.stream_call(Scripted("inner", lambda t, c: t.upper()), task, ctx))

    main = Scripted("main", "main answer")
    coord = Coordinator({"main": main})
    coord.set_strategy(Echo())
    coord.set_session_strategy("plain", Coordinator.ROUTE)
    assert coord.run("hi", AgentContext(session_id="a")).text == "HI"
    assert coord.run("hi", AgentContext(session_id="plain")).text == "main answer"
    coord.set_session_strategy("a", Loop(Scripted("w", "w"), [Scripted("r", "APPROVED")]))
    assert coord.run("hi", AgentContext(session_id="a")).text == "w"
    assert coord.run("hi", AgentContext(session_id="b")).text == "HI"


def test_strategies_stream_like_agents(Scripted):
    stream = Pipeline([Scripted("a", "hello there")]).stream("x", AgentContext())
    assert list(stream.text_deltas()) == ["hello there"]
    assert stream.result().text == "hello there"
