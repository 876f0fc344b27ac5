from __future__ import annotations

import threading

import pytest

from edgevox.agents.base import AgentResult, AgentStream
from edgevox.agents.events import AgentReply
from edgevox.agents.llm_agent import LLMAgent
from edgevox.orchestration.workflows import Fallback, Parallel, Repeat, Retry, Router, Sequence, Timeout
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


class Echo:
    """A tiny agent: replies with a function of the task; records the contexts it ran in."""

    def __init__(self, name, fn=lambda t: t, ok=True):
        self.name, self.fn, self.ok, self.contexts = name, fn, ok, []

    def run(self, task, ctx=None):
        return self.stream(task, ctx).result()

    def stream(self, task, ctx=None):
        def gen():
            self.contexts.append(ctx)
            text = self.fn(task)
            yield AgentReply(agent=self.name, text=text)
            return AgentResult(text=text, agent=self.name, ok=self.ok, error="" if self.ok else "failed")

        return AgentStream(gen())


class Blocking:
    """Waits until its context is cancelled (or 10 s), then reports."""

    def __init__(self, name, started):
        self.name, self.started, self.contexts = name, started, []

    def run(self, task, ctx=None):
        self.contexts.append(ctx)
        self.started.release()
        cancelled = ctx.cancel_token.wait(10)
        return AgentResult(agent=self.name, text="", cancelled=cancelled)

    def stream(self, task, ctx=None):
        def gen():
            return self.run(task, ctx)
            yield  # pragma: no cover

        return AgentStream(gen())


def test_sequence_passes_output_and_children_share_bus_and_blackboard(bus):
    board = Blackboard()
    a, b = Echo("upper", str.upper), Echo("exclaim", lambda t: t + "!")
    ctx = AgentContext(bus=bus, blackboard=board, session_id="s")
    result = Sequence([a, b]).run("hi", ctx)
    assert result.text == "HI!"
    for child in (a.contexts[0], b.contexts[0]):
        assert child.bus is bus and child.blackboard is board and child.session_id == "s" and child.depth == 1
    assert a.contexts[0].agent_name == "upper"


def test_fallback_repeat_and_retry():
    assert Fallback([Echo("bad", ok=False), Echo("good", lambda t: "fine")]).run("x").text == "fine"
    assert not Fallback([Echo("bad", ok=False)]).run("x").ok
    res = Repeat(Echo("grow", lambda t: t + "a"), until=lambda r: len(r.text) >= 4, max_iterations=10).run("a")
    assert res.text == "aaaa" and res.data["iterations"] == 3 and res.data["done"]
    attempts = []

    def flaky(task):
        attempts.append(task)
        return task

    agent = Echo("flaky", flaky, ok=False)
    res = Retry(agent, attempts=3).run("go")
    assert len(attempts) == 3 and not res.ok and res.data["attempts"] == 3


def test_timeout_cancels_only_its_child_and_never_poisons_the_callers_context():
    started = threading.Semaphore(0)
    slow = Blocking("slow", started)
    ctx = AgentContext()
    res = Timeout(slow, timeout_s=0.05).run("wait", ctx)
    assert not res.ok and res.data["timed_out"] and "timed out after 0.05 s" in res.error
    assert slow.contexts[0].cancelled
    assert not ctx.cancelled
    # The same context still works for the next run.
    llm = ScriptedLLM(["still here"])
    assert LLMAgent("chat", llm=llm).run("hello?", ctx).text == "still here"


def test_cancelling_the_parent_cancels_every_parallel_branch():
    started = threading.Semaphore(0)
    branches = [Blocking(f"b{i}", started) for i in range(3)]
    ctx = AgentContext()
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", Parallel(branches).run("go", ctx)), name="test-parallel")
    t.start()
    for _ in branches:
        assert started.acquire(timeout=5)
    ctx.cancel_token.cancel("barge-in")
    t.join(5)
    assert not t.is_alive()
    assert box["r"].cancelled and all(r.cancelled for r in box["r"].data["branches"])
    assert all(b.contexts[0].cancel_token.reason == "barge-in" for b in branches)


def test_parallel_reduce_merges_results():
    res = Parallel(
        [Echo("a", lambda t: "1"), Echo("b", lambda t: "2")], reduce=lambda rs: "+".join(r.text for r in rs)
    ).run("x")
    assert res.text == "1+2" and res.ok


def test_router_choice_is_grammar_constrained_to_route_names():
    llm = ScriptedLLM(["cook"])
    cook, nav = Echo("cook", lambda t: "recipe"), Echo("nav", lambda t: "route")
    cook.description, nav.description = "cooking questions", "navigation"
    res = Router({"cook": cook, "nav": nav}, llm).run("how to boil an egg")
    assert res.text == "recipe" and res.data["route"] == "cook"
    assert llm.calls[0].grammar == 'root ::= "cook" | "nav" | "none"\n'
    assert not Router([cook, nav], ScriptedLLM(["none"])).run("?").ok
    assert Router([cook, nav], ScriptedLLM(["none"]), default="nav").run("?").text == "route"


def test_workflow_arguments_are_validated():
    with pytest.raises(ValueError, match="Timeout timeout_s = 0"):
        Timeout(Echo("a"), 0)
    with pytest.raises(ValueError, match="Router default 'x' is not a route"):
        Router([Echo("a")], None, default="x")
