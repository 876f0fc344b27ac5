"""How a docstring is read, and how amounts are heard: the rules of this round, each a principle
of English or of docstring writing, each with its own tools (none from an evaluation set)."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field

from edgevox.agents import tool
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tool_calls import collect_tools
from edgevox.language.frames import read_frame
from edgevox.language.lexicon import changes_nothing
from edgevox.language.numbers import find_numbers, spoken_unit
from edgevox.language.value_words import value_words
from edgevox.testing import ScriptedLLM


def resolver(*tools) -> SchemaResolver:
    return SchemaResolver(collect_tools("bot", tools, (), ())[0])


# -- numbers: fractions named by ordinals; unit names written as two words -------------------


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("a tenth of a metre", 0.1, "meter"),  # an ordinal after "a" names a fraction
        ("one fifth of a second", 0.2, "second"),
        ("three quarters of a turn", 0.75, "turn"),  # a count of fractions
        ("two thirds of a litre", 2 / 3, "liter"),
        ("twelve arc minutes", 12, "arcminute"),  # a unit's name written as two words
        ("five arc seconds", 5, "arcsecond"),
    ],
)
def test_a_fraction_or_a_two_word_unit_is_one_amount(text, value, unit):
    words = text.split()
    spans = find_numbers(words)
    assert [s.value for s in spans] == pytest.approx([value])
    said = spoken_unit(words, spans[0].end)
    assert said is not None and said.pint_name == unit


@pytest.mark.parametrize(("text", "value"), [("the third floor", 3), ("your fifth drawer", 5)])
def test_an_ordinal_after_a_definite_determiner_stays_a_place_in_a_row(text, value):
    assert [s.value for s in find_numbers(text.split())] == [value]


# -- a direction of motion is never guessed ----------------------------------------------------


@tool
def creep(distance_mm: Annotated[float, Field(ge=-200, le=200)]) -> str:
    """Creep the carriage along its rail.

    Args:
        distance_mm: millimetres; positive moves toward the motor end (forward), negative back.
    """
    return "ok"


def test_a_distance_without_a_direction_is_asked_even_where_positive_is_forward():
    r = resolver(creep)
    p = r.propose("creep the carriage forty millimetres")
    assert p.call == ("creep", {}) and p.clarify == "Which way should I creep: forward or back?"
    assert r.propose("creep the carriage forward forty millimetres").call == ("creep", {"distance_mm": 40})
    assert r.propose("creep the carriage back forty millimetres").call == ("creep", {"distance_mm": -40})


@pytest.mark.parametrize(("answer", "call"), [("back", -40), ("minus forty", -40), ("the furthest it goes then", None)])
def test_an_answer_to_which_way_must_say_a_way(answer, call):
    a = LLMAgent("bot", "A robot.", tools=[creep], llm=ScriptedLLM(default="Done."))
    assert a.run("creep the carriage forty millimetres").data["clarify"].startswith("Which way")
    done = a.run(answer).first_call
    assert (done.arguments["distance_mm"] if done is not None else None) == call


# -- what a docstring says a tool handles ---------------------------------------------------------


@tool
def check_tank() -> str:
    """Report the tank's readings: water level, temperature and pump pressure."""
    return "ok"


@tool
def run_pump(litres_per_minute: Annotated[float, Field(ge=0, le=20)]) -> str:
    """Run the pump at a flow rate, in litres per minute."""
    return "ok"


def test_a_list_after_a_verb_clause_and_a_colon_names_topics_not_verbs():
    # "water" is a verb in English; after "Report ...:" the list names what is reported
    frame = read_frame("check_tank", check_tank.description, check_tank.parameters)
    assert {v.verb for v in frame.verbs} >= {"check", "report"} and "water" not in {v.verb for v in frame.verbs}
    # and so "can you water the pump" is no reading of the tank
    assert resolver(check_tank, run_pump).propose("could you change the pump flow").call == ("run_pump", {})


@tool
def shut_down() -> str:
    """Shut the station down: cut power to the heaters and close every valve."""
    return "ok"


def test_a_clause_after_a_verb_clause_and_a_colon_says_how_and_names_the_tool():
    assert resolver(shut_down, check_tank).propose("close every valve").call == ("shut_down", {})


@tool
def stir(seconds: Annotated[int, Field(ge=1, le=60)]) -> str:
    """Stir (whisk) the bowl for some seconds."""
    return "ok"


def test_a_verb_in_parentheses_after_the_summary_verb_is_another_name_for_it():
    frame = read_frame("stir", stir.description, stir.parameters)
    assert "whisk" in {v.verb for v in frame.verbs if v.own}


@tool
def shelve_book(shelf: Annotated[int, Field(ge=1, le=8)]) -> str:
    """Put the book on a numbered shelf."""
    return "ok"


@tool
def bin_book(box: Literal["donate", "repair"]) -> str:
    """Put the book in a named box instead of on a shelf.

    Args:
        box: "donate" (books in good condition) or "repair" (torn books).
    """
    return "ok"


def test_a_noun_after_instead_of_is_not_what_the_tool_handles():
    frame = read_frame("bin_book", bin_book.description, bin_book.parameters)
    assert "shelf" not in frame.objects


def test_a_noun_naming_a_tools_parameter_points_to_that_tool():
    p = resolver(shelve_book, bin_book).propose("put this book on a shelf")
    assert p.call == ("shelve_book", {}) and p.clarify == "Which shelf?"


def test_a_word_of_what_the_tool_handles_is_no_word_of_one_value():
    # "books" is in both glosses, and "book" is what both tools handle: never a box
    p = resolver(shelve_book, bin_book).propose("put the torn book in a box")
    assert p.call == ("bin_book", {"box": "repair"})
    assert resolver(bin_book).propose("put the book away").call != ("bin_book", {"box": "donate"})


def test_a_quoted_value_has_its_gloss():
    words = value_words(["day", "night"], '"day" is the bright ceiling lamp; "night" is the dim floor strip.')
    assert words["night"] >= {"dim", "floor", "strip"} and "ceil" in words["day"]


@tool
def set_awning(extended: bool) -> str:
    """Roll the awning out or in.

    Args:
        extended: True rolls it out.
    """
    return "ok"


@tool
def extend_arm(reach: Literal["short", "long"]) -> str:
    """Extend the arm to a preset reach."""
    return "ok"


def test_the_thing_said_outranks_a_verb_of_a_tool_that_does_not_handle_it():
    # "extend the awning": "extend" is extend_arm's verb, but the awning is set_awning's
    p = resolver(set_awning, extend_arm).propose("extend the awning")
    assert p.call is not None and p.call[0] == "set_awning"


# -- tools that only read ---------------------------------------------------------------------


@pytest.mark.parametrize(("verb", "reads"), [("weigh", True), ("detect", True), ("scan", False), ("hold", False)])
def test_a_verb_that_changes_nothing_is_told_apart_by_wordnet(verb, reads):
    assert changes_nothing(verb) is reads


@tool
def weigh_load() -> str:
    """Weigh the load on the hook and report its weight in kilograms."""
    return "ok"


@tool
def hoist(metres: Annotated[float, Field(ge=-5, le=5)]) -> str:
    """Hoist the hook. Positive raises it, negative lowers it."""
    return "ok"


def test_a_tool_that_measures_and_reports_answers_a_question_about_its_attribute():
    frame = read_frame("weigh_load", weigh_load.description, weigh_load.parameters)
    assert frame.reads and not frame.drastic
    assert resolver(weigh_load, hoist).propose("how heavy is the load?").call == ("weigh_load", {})


# -- the centre of a scale whose points are named ----------------------------------------------


@tool
def swivel(angle: Annotated[float, Field(ge=-90, le=90)]) -> str:
    """Swivel the seat to an angle.

    Args:
        angle: degrees from the desk; 0 faces the desk, positive turns left, negative right.
    """
    return "ok"


@tool
def raise_seat(delta_cm: Annotated[float, Field(ge=-10, le=10)]) -> str:
    """Raise or lower the seat by some centimetres. Positive raises it."""
    return "ok"


def test_the_centre_of_a_named_scale_is_its_midpoint_and_a_change_has_none():
    r = resolver(swivel, raise_seat)
    assert r.propose("swivel the seat back to the centre").call == ("swivel", {"angle": 0})
    assert r.propose("raise the seat to the middle").call != ("raise_seat", {"delta_cm": 0})


@tool
def set_fan(percent: Annotated[float, Field(ge=-100, le=100)]) -> str:
    """Set the ventilation fan. Positive blows forward (out), negative back (in).

    Args:
        percent: fan power in percent.
    """
    return "ok"


def test_a_level_whose_positive_is_forward_is_set_as_said_and_a_motion_is_not():
    assert resolver(set_fan).propose("set the fan to seventy percent").call == ("set_fan", {"percent": 70})
    assert resolver(creep).propose("creep seventy millimetres").clarify.startswith("Which way")


def test_an_answer_to_how_far_goes_forward_where_forward_is_positive():
    a = LLMAgent("bot", "A robot.", tools=[creep], llm=ScriptedLLM(default="Done."))
    assert a.run("creep the carriage").data["clarify"].startswith("How far")
    done = a.run("twenty millimetres").first_call
    assert done is not None and done.arguments == {"distance_mm": 20}


@pytest.mark.parametrize(("text", "values"), [("bench 7 half a litre", [7, 0.5]), ("one half", [0.5])])
def test_a_count_of_a_fraction_needs_the_plural_after_two(text, values):
    assert [s.value for s in find_numbers(text.split())] == pytest.approx(values)


@tool
def go_to(place: Literal["lobby", "laundry", "gym"]) -> str:
    """Go to a named place."""
    return "ok"


@tool
def go_to_room(room: Annotated[int, Field(ge=100, le=450)]) -> str:
    """Go to a guest room by its number."""
    return "ok"


def test_a_value_said_outranks_a_parameter_kind_named():
    # "room" names go_to_room's parameter, but "laundry" is a value of go_to's
    p = resolver(go_to, go_to_room).propose("go to the laundry room")
    assert p.call == ("go_to", {"place": "laundry"})


@tool
def creep_speed(mm_per_s: Annotated[float, Field(ge=1, le=50)]) -> str:
    """Set the creep speed."""
    return "ok"


def test_the_request_verb_is_no_object_of_another_tool():
    # "creep" is creep_speed's noun, and the verb said here
    p = resolver(creep, creep_speed).propose("creep forward")
    assert p.call == ("creep", {}) and p.clarify.startswith("How far")


# -- answers, questions about acts, compounds, several tools of one unit --------------------------


@tool
def set_lamp(
    lamp: Literal["desk", "floor"], on: bool, brightness_pct: Annotated[int, Field(ge=1, le=100)] = 100
) -> str:
    """Switch a lamp on or off and set its brightness.

    Args:
        lamp: which lamp.
        on: True switches it on.
        brightness_pct: brightness in percent.
    """
    return "ok"


def test_a_value_an_answer_gives_for_another_parameter_is_kept():
    a = LLMAgent("bot", "A robot.", tools=[set_lamp], llm=ScriptedLLM(default="Done."))
    assert a.run("switch the desk lamp").data["clarify"] == "Should I set the lamp on or off?"
    done = a.run("on, at forty percent").first_call
    assert done is not None and done.arguments == {"lamp": "desk", "on": True, "brightness_pct": 40}


def test_a_closed_compound_of_a_value_and_its_thing_names_the_value():
    p = resolver(set_lamp).propose("turn the floorlamp off")
    assert p.call == ("set_lamp", {"lamp": "floor", "on": False})


@tool
def station_status() -> str:
    """Report the station's state: whether charging is on, the pump pressure and any leak alarms."""
    return "ok"


@pytest.mark.parametrize("question", ["is it charging right now?", "is anything leaking?"])
def test_a_question_about_an_act_a_reading_tool_reports_as_a_noun_reaches_it(question):
    p = resolver(station_status, run_pump).propose(question)
    assert p.call == ("station_status", {})


@tool
def slew(target: Literal["moon", "mars"]) -> str:
    """Slew the dish to a target."""
    return "ok"


@tool
def track(enabled: bool) -> str:
    """Turn sidereal tracking on or off.

    Args:
        enabled: True turns it on.
    """
    return "ok"


def test_a_word_wordnet_lists_as_a_base_verb_is_one_even_when_it_is_also_a_past():
    # "slew" is the past of "slay", and a verb of its own: the second step of the plan is kept
    p = resolver(slew, track).propose("turn tracking on and then slew to mars")
    assert [c for c in [p.call, *[(c[0], c[1]) for c in p.plan[1:]]]] == [
        ("track", {"enabled": True}),
        ("slew", {"target": "mars"}),
    ]


def test_a_demonstrative_opens_an_object_not_a_subject():
    from edgevox.language.intent import analyze

    assert analyze("give this box a shake, would you").kind == "command"
    assert analyze("this box weighs a ton").kind == "statement"


@tool
def tilt_dish(degrees: Annotated[float, Field(ge=-10, le=10)]) -> str:
    """Tilt the dish. Positive tilts up, negative down."""
    return "ok"


@tool
def pan_dish(degrees: Annotated[float, Field(ge=-10, le=10)]) -> str:
    """Pan the dish. Positive pans left, negative right."""
    return "ok"


@tool
def move_feed(steps: Annotated[int, Field(ge=1, le=500)]) -> str:
    """Move the feed horn by some motor steps."""
    return "ok"


def test_a_unit_several_other_tools_take_asks_which_of_them():
    p = resolver(tilt_dish, pan_dish, move_feed).propose("move it three degrees")
    assert p.call is None and sorted(p.candidates) == ["pan_dish", "tilt_dish"]
    assert p.clarify in (
        "What should I do: tilt the dish or pan the dish?",
        "What should I do: pan the dish or tilt the dish?",
    )
