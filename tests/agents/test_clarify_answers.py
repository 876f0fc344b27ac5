"""Answers to the robot's questions as people give them: "the left one", "make it ten",
"three is fine". Each is read together with the request it completes."""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tools import tool
from edgevox.testing import ScriptedLLM


@tool
def strain(into: Literal["left_glass", "right_glass"]) -> str:
    """Strain the shaker into a glass."""
    return "strained"


@tool
def change_altitude(meters: Annotated[float, "Relative change in meters, between -10 and 10."]) -> str:
    """Climb or descend. Positive climbs, negative descends."""
    return "changed"


@tool
def clean_room(room: Literal["kitchen", "hall"], passes: Annotated[int, "How many passes, 1 to 3."] = 1) -> str:
    """Vacuum one room."""
    return "cleaned"


def agent() -> LLMAgent:
    return LLMAgent("bot", "A robot.", tools=[strain, change_altitude, clean_room], llm=ScriptedLLM(default="Done."))


def test_a_value_named_after_a_determiner_answers_which_one():
    a = agent()
    assert a.run("strain it").data["clarify"].startswith("Which into")
    assert a.run("the left one").first_call.arguments == {"into": "left_glass"}  # no past tense of "leave"


def test_a_new_number_answers_a_bounds_question_and_the_requests_direction_verb_still_holds():
    a = agent()
    assert a.run("climb fifteen metres").data["clarify"].startswith("I can change the altitude from -10 to 10")
    done = a.run("make it ten")
    assert done.first_call.name == "change_altitude" and done.first_call.arguments == {"meters": 10}


def test_the_value_as_the_subject_of_an_approval_is_the_answer_but_a_remark_is_not():
    a = agent()
    a.run("vacuum the kitchen five times")
    assert a.run("three is fine").first_call.arguments == {"room": "kitchen", "passes": 3}
    a.run("vacuum the kitchen five times")
    assert a.run("my friend cleaned it three times").first_call is None


@tool
def count_items(sku: str) -> str:
    """Count the items of one SKU on the shelf in front."""
    return "12"


@tool
def go_to_shelf(aisle: int, shelf: int) -> str:
    """Drive to a shelf. Aisles 1 to 24, shelves 1 to 12."""
    return "there"


def test_a_verbless_answer_is_the_string_value_without_the_parameters_name():
    a = LLMAgent("bot", "A robot.", tools=[count_items, go_to_shelf], llm=ScriptedLLM(default="Done."))
    a.run("count the items")
    assert a.run("SKU 1200").first_call.arguments == {"sku": "1200"}


def test_a_number_after_the_parameters_name_answers_for_that_parameter():
    a = LLMAgent("bot", "A robot.", tools=[count_items, go_to_shelf], llm=ScriptedLLM(default="Done."))
    assert a.run("go to aisle 6").data["clarify"] == "Which shelf?"
    assert a.run("shelf two").first_call.arguments == {"aisle": 6, "shelf": 2}
