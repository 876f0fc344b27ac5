from __future__ import annotations

import json
import threading

import pytest

from edgevox.errors import Cancelled
from edgevox.orchestration import (
    Coordinator,
    Immediate,
    Loop,
    Orchestration,
    Pipeline,
    Supervisor,
    Swarm,
)
from edgevox.orchestration.events import WorkflowSuspended
from edgevox.orchestration.tools import delegate, handoff_conversation
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext


def test_pipeline_feeds_each_answer_to_the_next_agent(Scripted):
    a = Scripted("triage", "billing problem")
    b = Scripted("handler", lambda task, ctx: "refund issued" if "billing problem" in task else "?")
    c = Scripted("resolver", lambda task, ctx: f"Done: {task.splitlines()[-1]}")
    result = Pipeline([a, b, c]).run("I was charged twice", AgentContext())
    assert result.text == "Done: handler said: refund issued"
    assert [s.agent for s in result.steps] == ["triage", "handler", "resolver"]
    assert b.tasks == ["User request: I was charged twice\ntriage said: billing problem"]


def test_pipeline_cancelled_mid_way_keeps_partial_state_and_resumes(Scripted, bus, recorded, of_kind):
    board = Blackboard()
    ctx = AgentContext(bus=bus, blackboard=board, session_id="s9")
    a = Scripted("a", "A done")

    def cancel_me(task, c):
        ctx.cancel_token.cancel("user said stop")
        raise Cancelled("user said stop")

    b = Scripted("b", cancel_me)
    pipe = Pipeline([a, b, Scripted("c", lambda t, c: "C:" + t.splitlines()[-1])])
    with pytest.raises(Cancelled):
        pipe.run("job", ctx)
    [ev] = of_kind(recorded, WorkflowSuspended)
    assert ev.session_id == "s9" and ev.completed_steps == 1
    assert pipe.suspended(ctx) == {"task": "job", "completed": [{"agent": "a", "text": "A done"}]}
    assert pipe.suspended(AgentContext(blackboard=board, session_id="other")) is None
    b.behaviour = "B done"
    resumed = pipe.resume(AgentContext(bus=bus, blackboard=board, session_id="s9"))
    assert resumed.text == "C:b said: B done" and len(a.tasks) == 1
    assert pipe.suspended(ctx) is None
    board.close()


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
    result = Supervisor(boss, [w1, w2], strategy=mode).run("question", AgentContext())
    assert result.agent == "boss" and result.data["missing"] == []
    assert "- researcher: fact 1" in result.text and "- analyst: analysis of question" in result.text
    if mode == "sequential":
        assert w2.tasks == ["question\nresearcher found: fact 1"]


def test_parallel_workers_really_run_at_the_same_time(Scripted):
    both_in = threading.Barrier(2, timeout=5)
    w1 = Scripted("w1", lambda t, c: (both_in.wait(), "one")[1])
    w2 = Scripted("w2", lambda t, c: (both_in.wait(), "two")[1])
    sup = Supervisor(Scripted("boss", "ok"), [w1, w2], strategy="parallel", max_concurrency=2)
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


def test_supervisor_with_refine_task_and_without_auto_delegate_uses_the_delegate_tool(Scripted):
    worker = Scripted("worker", lambda t, c: f"did {t}")
    calls = []

    def boss_behaviour(task, ctx):
        if task.startswith("Rewrite"):
            return "measure the room"
        calls.append(task)
        return boss.call_tool(delegate, {"agent": "worker", "task": "measure"}, ctx)

    boss = Scripted("boss", boss_behaviour)
    result = Supervisor(boss, [worker], auto_delegate=False, refine_task=True).run("how big is it", AgentContext())
    assert calls[0].startswith("measure the room")
    assert json.loads(result.text) == {"ok": True, "agent": "worker", "output": "did measure"}


def test_supervisor_with_async_delivery_answers_at_once_and_delivers_later(Scripted, bus, recorded):
    delivered = []
    done = threading.Event()
    gate = threading.Event()
    worker = Scripted("worker", lambda t, c: (gate.wait(5), "found it")[1])
    boss = Scripted("boss", lambda t, c: "The answer: found it")
    delivery = Immediate(lambda items: (delivered.extend(i.text for i in items), done.set()), publish=bus.publish)
    sup = Supervisor(boss, [worker], async_delivery=True, delivery=delivery)
    result = sup.run("search", AgentContext(bus=bus, session_id="s3"))
    assert result.text.startswith("I'm working on it") and delivered == []
    handle = result.data["handles"][0]
    assert handle.status == "active"
    gate.set()
    assert done.wait(5) and handle.wait(5)
    assert delivered == ["The answer: found it"] and handle.status == "completed"
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


@pytest.mark.parametrize(("strategy", "approved"), [("all", False), ("any", True), ("majority", True)])
def test_loop_review_strategies(Scripted, strategy, approved):
    reviewers = [Scripted("a", "APPROVED"), Scripted("b", "APPROVED"), Scripted("c", "no")]
    result = Loop(Scripted("w", "text"), reviewers, strategy=strategy, max_iterations=1).run("x", AgentContext())
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
