"""The one way to run a child agent (``edgevox.agents.run``) and its one failure policy."""

from __future__ import annotations

import math
import threading

import pytest

from edgevox.agents.base import AgentResult, AgentStream
from edgevox.agents.run import run_child
from edgevox.errors import Cancelled
from edgevox.runtime.context import AgentContext
from edgevox.runtime.timers import Deadline


def test_the_child_runs_in_a_child_context_one_level_deeper(Scripted, bus):
    agent = Scripted("worker", "done")
    parent = AgentContext(bus=bus, session_id="s", agent_name="boss", state={"plan": 1})
    result = run_child(agent, "job", parent, turn_id=7)
    [child] = agent.contexts
    assert (child.agent_name, child.depth, child.turn_id, child.bus, child.session_id) == ("worker", 1, 7, bus, "s")
    assert child.cancel_token is not parent.cancel_token
    assert result.agent == "worker" and result.ok and result.duration_s >= 0.0


def test_an_exception_becomes_a_failed_result_naming_the_agent(Scripted):
    def broken(_task, _ctx):
        raise RuntimeError("sensor offline\nwith a traceback-like second line")

    result = run_child(Scripted("lidar", broken), "scan", AgentContext())
    assert (result.ok, result.agent, result.error) == (False, "lidar", "lidar: RuntimeError: sensor offline")


def test_a_reported_failure_is_prefixed_once(Scripted):
    failed = AgentResult(agent="w", ok=False, error="no route")
    assert run_child(Scripted("w", lambda t, c: failed), "x", AgentContext()).error == "w: no route"
    again = AgentResult(agent="w", ok=False, error="w: no route")
    assert run_child(Scripted("w", lambda t, c: again), "x", AgentContext()).error == "w: no route"


def test_a_timeout_cancels_only_the_child_and_reports_timed_out(Scripted):
    seen = {}

    def slow(_task, ctx):
        seen["ctx"] = ctx
        ctx.cancel_token.wait(5)
        return "late"

    parent = AgentContext()
    result = run_child(Scripted("slow", slow), "x", parent, timeout_s=0.05)
    assert (result.ok, result.timed_out, result.cancelled) == (False, True, False)
    assert result.error == "slow: timed out after 0.05 s"
    assert seen["ctx"].cancelled and not parent.cancelled
    assert not [t for t in threading.enumerate() if t.name == "edgevox-timer-timeout-slow"]


def test_the_callers_cancellation_propagates_before_during_and_after(Scripted):
    cancelled = AgentContext()
    cancelled.cancel_token.cancel("stop")
    agent = Scripted("w", "ok")
    with pytest.raises(Cancelled):
        run_child(agent, "x", cancelled)
    assert agent.tasks == []  # never started

    parent = AgentContext()

    def stop_mid_run(_task, _ctx):
        parent.cancel_token.cancel("barge-in")
        return "finished anyway"

    with pytest.raises(Cancelled, match="barge-in"):
        run_child(Scripted("w", stop_mid_run), "x", parent)


def test_an_agent_without_stream_is_refused_with_a_clear_message():
    class RunOnly:
        name = "old"

        def run(self, task, ctx=None):
            return AgentResult("x")

    with pytest.raises(TypeError, match="agent 'old' has no stream"):
        run_child(RunOnly(), "x", AgentContext())  # type: ignore[arg-type]


def test_reply_is_a_read_only_alias_of_text():
    result = AgentResult("hello")
    assert result.reply == "hello"
    with pytest.raises(AttributeError):
        result.reply = "other"  # type: ignore[misc]


def test_a_stream_that_returns_no_result_is_a_clear_error():
    def gen():
        yield from ()

    with pytest.raises(TypeError, match="without returning an AgentResult"):
        AgentStream(gen()).result()  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_a_deadline_refuses_a_timeout_that_could_kill_the_timer(bad):
    with pytest.raises(ValueError, match="timeout_s"):
        Deadline(AgentContext().cancel_token, bad, name="t")
