"""Uncertain -> ask, don't guess: the clarifying question, and the turn that answers it."""

from __future__ import annotations

from typing import Literal

import pytest

from edgevox.agents.decoders import DECLINED_REPLY, Clarifications, Decision, SchemaFirstDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tools import ToolCall, tool
from edgevox.examples.home_robot import SimulatedRobot, build_home_robot_agent
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


@pytest.fixture
def home():
    robot = SimulatedRobot()
    robot.speed_m_s = 50.0
    agent = build_home_robot_agent(ScriptedLLM(default="Sure."), robot)
    yield agent, robot
    agent.close()


def test_a_unit_of_another_dimension_is_asked_about_and_the_answer_completes_the_call(home):
    agent, robot = home
    asked = agent.run("go forward for ten seconds")
    assert asked.text == "How far should I move, in meters?"
    assert asked.data["clarify"] == asked.text and asked.first_call is None and robot.x_m == 0
    done = agent.run("two meters")
    assert done.first_call.name == "move" and done.first_call.arguments == {"distance_m": 2}
    assert robot.x_m == pytest.approx(2.0) and done.data["decided_by"] == "clarified"


def test_a_shared_enum_word_asks_which_value_and_the_named_value_completes_it(home):
    agent, robot = home
    asked = agent.run("go to my room")
    assert asked.text.startswith("Which room:") and asked.first_call is None
    done = agent.run("the bedroom")
    (goal,) = done.skills
    assert goal.result(10) == "Arrived in the bedroom." and robot.room == "bedroom"


def test_a_yes_cannot_complete_a_call_that_lacks_a_value_and_the_question_is_dropped(home):
    agent, robot = home
    agent.run("set a timer")
    assert agent._clarifications.pending("default") is not None
    assert agent.run("yes").first_call is None and not robot.timers
    assert agent._clarifications.pending("default") is None  # dropped with the "yes"


def test_the_answer_belongs_to_its_session_only(home):
    agent, robot = home
    agent.run("go to my room", AgentContext(session_id="kitchen-speaker"))
    assert agent.run("the bedroom", AgentContext(session_id="hall-speaker")).first_call is None
    assert agent.run("the bedroom", AgentContext(session_id="kitchen-speaker")).first_call.name == "go_to"


# -- a value the LLM filled in is asked for, never executed -------------------------------


@tool
def turn(direction: Literal["left", "right"], degrees: float = 90) -> str:
    """Turn or rotate the robot in place.

    Args:
        direction: Which way.
        degrees: How far, in degrees.
    """
    return f"Turned {direction} {degrees:g}."


@tool
def rotate_camera(direction: Literal["left", "right"]) -> str:
    """Turn or rotate the camera.

    Args:
        direction: Which way.
    """
    return f"Camera {direction}."


@tool
def beep() -> str:
    """Make a short beep sound."""
    return "Beep."


@tool
def say_hello() -> str:
    """Wave and greet someone."""
    return "Hello."


class GuessingFallback:
    """Stands in for the LLM stage: picks ``turn`` and guesses the direction and angle."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, request, *, candidates=None, fixed=None, string_choices=None) -> Decision:
        self.calls += 1
        return Decision(ToolCall("turn", {"direction": "left", "degrees": 45}), decided_by="llm")


@pytest.fixture
def guessing_agent():
    fallback = GuessingFallback()
    agent = LLMAgent(
        "robot",
        tools=[turn, rotate_camera, beep, say_hello],
        llm=ScriptedLLM(default="Okay."),
        decoder=SchemaFirstDecoder(fallback),
        speak_tool_results=True,
    )
    yield agent, fallback
    agent.close()


def test_a_guessed_required_value_is_asked_for_and_a_yes_never_runs_it(guessing_agent):
    agent, fallback = guessing_agent
    asked = agent.run("turn or rotate a bit please")
    assert fallback.calls == 1 and asked.first_call is None
    # The guessed optional angle is dropped (its default applies); the guessed direction is
    # asked for, never proposed: a "yes" cannot run a value nobody said.
    assert asked.text == "Which direction: left or right?"
    assert agent.run("yes").first_call is None
    agent.run("turn or rotate a bit please")
    done = agent.run("left")
    assert done.first_call.name == "turn" and done.first_call.arguments == {"direction": "left"}
    assert done.text == "Turned left 90."


def test_no_declines_the_proposed_call(guessing_agent):
    agent, _ = guessing_agent
    agent.run("turn or rotate a bit please")
    declined = agent.run("no")
    assert declined.text == DECLINED_REPLY and declined.first_call is None
    assert agent.run("yes").first_call is None  # nothing is pending any more


def test_anything_else_drops_the_question_and_is_a_normal_turn(guessing_agent):
    agent, _ = guessing_agent
    agent.run("turn or rotate a bit please")
    other = agent.run("rotate the camera to the right")
    assert other.first_call.name == "rotate_camera" and other.first_call.arguments == {"direction": "right"}
    assert agent.run("yes").first_call is None


def test_negations_and_questions_never_reach_the_llm(guessing_agent):
    agent, fallback = guessing_agent
    for text in ("don't turn or rotate", "what would happen if you turned or rotated", "did you turn or rotate?"):
        assert agent.run(text).first_call is None
    assert fallback.calls == 0


# -- the store ----------------------------------------------------------------------------


def _question(name: str = "turn") -> Decision:
    return Decision(None, clarify="Did you mean turn left?", proposed=ToolCall(name, {"direction": "left"}))


def test_an_unanswered_question_expires():
    now = [100.0]
    store = Clarifications(ttl_s=30.0, clock=lambda: now[0])
    store.ask("s", _question())
    now[0] += 31.0
    assert store.pending("s") is None
    assert store.answer("s", "yes", [turn]).kind == "none"


def test_the_store_keeps_a_bounded_number_of_sessions():
    store = Clarifications(max_sessions=3)
    for i in range(10):
        store.ask(f"s{i}", _question())
    assert [store.pending(f"s{i}") is not None for i in range(10)] == [False] * 7 + [True] * 3
    assert store.answer("s9", "sure", [turn]).call.arguments == {"direction": "left"}


def test_a_new_request_for_another_tool_is_not_taken_as_the_answer_to_a_pending_question(home):
    agent, robot = home
    asked = agent.run("set a timer")  # "How many minutes ...?" is pending
    assert asked.first_call is None
    new = agent.run("move forward three meters")  # a new request: the number is not the timer's
    assert new.first_call.name == "move" and new.first_call.arguments == {"distance_m": 3}
    assert not robot.timers


def test_a_remark_after_a_question_is_not_its_answer(home):
    agent, robot = home
    agent.run("set a timer")
    assert agent.run("my friend set a timer for five minutes").first_call is None
    assert not robot.timers
