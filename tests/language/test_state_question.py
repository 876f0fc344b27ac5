"""A question about the robot's own present state is answered from its record: the grammar of
such questions (the listener as subject, present "be" or "have got") and the one report that
holds the answer."""

from __future__ import annotations

import pytest

from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tools import tool
from edgevox.language.state_question import asks_robot_state


@pytest.mark.parametrize(
    "text",
    [
        "what are you doing?",
        "what are you up to right now?",  # a place or activity after present "be"
        "are you charging?",  # a progressive: what it is doing now
        "are we rolling?",  # the speaker and the robot together
        "where are you?",
        "which room are you in?",
        "have you got anything in your gripper?",  # "have got": what it holds
    ],
)
def test_questions_about_its_present_state(text):
    assert asks_robot_state(text)


@pytest.mark.parametrize(
    "text",
    [
        "do you like cats?",  # a liking
        "can you sing?",  # an ability, by a modal
        "are you able to fly?",  # an ability, by an adjective
        "are you a robot?",  # identity
        "how are you?",  # a greeting
        "were you charging an hour ago?",  # the past
        "are you going to the dock later?",  # a plan
        "are you going to pick up the cup?",  # "be going to": a plan
        "are you kidding me?",  # talk (WordNet's verb.communication), not a state
        "is the hallway clear?",  # about the world, not the robot
    ],
)
def test_questions_that_ask_no_state_of_the_robot(text):
    assert not asks_robot_state(text)


@tool
def report() -> str:
    """Report the battery and the current task."""
    return "ok"


@tool
def drive(meters: float) -> str:
    """Drive forward or back. Negative drives backwards."""
    return "ok"


@tool
def arm_state() -> str:
    """Report the arm's joint angles."""
    return "ok"


def test_a_state_question_reads_the_one_report():
    p = SchemaResolver([report, drive]).propose("what are you doing right now?")
    assert p.call == ("report", {}) and p.clarify is None, p


def test_with_two_reports_a_state_question_picks_none_by_guessing():
    p = SchemaResolver([report, drive, arm_state]).propose("what are you doing right now?")
    assert p.call is None, p


def test_small_talk_reads_nothing():
    p = SchemaResolver([report, drive]).propose("do you like cats?")
    assert p.call is None, p


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("what's a good speed for wet floors?", True),  # a judgement on the noun asked about
        ("what is the best route at night?", True),
        ("how fast should I drive?", True),  # "should": what is advisable
        ("what is your battery level?", False),
        ("what speed are you going?", False),
    ],
)
def test_a_question_asking_for_advice(text, advice):
    from edgevox.language.state_question import asks_advice

    assert asks_advice(text) is advice


def test_advice_is_answered_in_words_never_from_a_report():
    p = SchemaResolver([report, drive]).propose("what's a good battery level for the night?")
    assert p.call is None, p
