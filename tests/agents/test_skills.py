from __future__ import annotations

import threading

import pytest

from edgevox.agents.events import SkillStateEvent
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.skills import GoalHandle, GoalState, SkillExecutor, skill
from edgevox.errors import Cancelled, ToolArgumentError
from edgevox.runtime.context import AgentContext

started = threading.Event()


@skill(timeout_s=30)
def patrol(laps: int, goal: GoalHandle) -> str:
    """Patrol the house until done or cancelled.

    Args:
        laps: Number of laps.
    """
    started.set()
    for lap in range(laps):
        goal.publish_feedback({"lap": lap})
        goal.sleep(0.05)
    return f"patrolled {laps} laps"


@pytest.fixture
def executor():
    ex = SkillExecutor(max_workers=2)
    yield ex
    assert ex.shutdown(5)


def test_skill_schema_hides_the_goal_handle():
    assert patrol.tool.is_skill and list(patrol.tool.parameters["properties"]) == ["laps"]


def test_skill_succeeds_with_feedback_and_state_events(executor, recorded):
    bus, events = recorded
    handle = patrol.start({"laps": 2}, AgentContext(bus=bus), executor)
    assert handle.result(5) == "patrolled 2 laps"
    assert handle.state is GoalState.SUCCEEDED and handle.feedback == {"lap": 1}
    states = [e.state for e in events if isinstance(e, SkillStateEvent) and e.feedback is None]
    assert states == ["running", "succeeded"]


def test_cancelling_the_context_cancels_a_running_skill_mid_flight(executor):
    started.clear()
    ctx = AgentContext()
    handle = patrol.start({"laps": 10_000}, ctx, executor)
    assert started.wait(5)
    assert handle.state is GoalState.RUNNING
    ctx.cancel_token.cancel("stop phrase")
    assert handle.wait(5)
    assert handle.state is GoalState.CANCELLED and handle.error == "stop phrase"
    with pytest.raises(Cancelled):
        handle.result(0)


def test_cancel_through_the_handle_and_timeout(executor):
    started.clear()
    handle = patrol.start({"laps": 10_000}, AgentContext(), executor)
    assert started.wait(5)
    assert handle.cancel("user said so") and handle.wait(5)
    assert handle.state is GoalState.CANCELLED and not handle.cancel()

    @skill(timeout_s=0.1)
    def forever(goal: GoalHandle) -> None:
        """Never finishes on its own."""
        while True:
            goal.sleep(0.02)

    slow = forever.start({}, AgentContext(), executor)
    assert slow.wait(5) and slow.state is GoalState.CANCELLED and "timed out" in slow.error


def test_failing_skill_fails_its_goal_and_bad_arguments_raise_before_start(executor):
    @skill
    def broken(goal: GoalHandle) -> None:
        """Fails."""
        raise RuntimeError("motor fault")

    handle = broken.start({}, AgentContext(), executor)
    assert handle.wait(5) and handle.state is GoalState.FAILED and "motor fault" in handle.error
    with pytest.raises(ToolArgumentError, match="expected integer, got true"):
        patrol.start({"laps": True}, AgentContext(), executor)


def test_pending_goal_cancelled_before_a_worker_picks_it_up():
    ex = SkillExecutor(max_workers=1)
    release = threading.Event()

    @skill
    def block(goal: GoalHandle) -> None:
        """Holds the only worker."""
        release.wait(5)

    try:
        first = block.start({}, AgentContext(), ex)
        second = block.start({}, AgentContext(), ex)
        assert second.state is GoalState.PENDING
        assert second.cancel("no longer needed") and second.state is GoalState.CANCELLED
    finally:
        release.set()
        assert first.wait(5)
        assert ex.shutdown(5)


def test_agent_starts_skill_and_returns_while_it_runs_then_close_cancels_it():
    started.clear()
    agent = LLMAgent("robot", skills=[patrol], speak_tool_results=True)
    try:
        result = agent.run("patrol 9999 laps")
        assert started.wait(5)
        (handle,) = result.skills
        assert result.first_call.name == "patrol" and result.first_call.arguments == {"laps": 9999}
        assert not handle.done
    finally:
        agent.close()
    assert handle.state is GoalState.CANCELLED
