"""Going somewhere and going back, and who is spoken to: a return said with "back" and a place,
"go" + a bare verb, a general verb of motion for a tool whose verb is a way of moving, a form
of address before a command, an ordinal that picks one of a row, a degree adverb that says an
act goes to its end, and the object a light verb in a tool's name takes. Each test is one
principle of English or of the tool's schema."""

from __future__ import annotations

from typing import Literal

import pytest

from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tools import tool
from edgevox.language.clauses import is_vocative
from edgevox.language.extremes import extreme
from edgevox.language.lexicon import kind_of
from edgevox.language.numbers import find_numbers

Place = Literal["front_desk", "cafeteria", "pharmacy", "nurses station"]


@tool
def walk_to(place: Place) -> str:
    """Walk to a named place in the building."""
    return "ok"


@tool
def return_to_dock() -> str:
    """Abandon the current task and walk straight back to the charging dock."""
    return "ok"


@tool
def unlock_drawer(drawer: int) -> str:
    """Unlock one of the cart's drawers.

    Args:
        drawer: Drawer number, 1 to 6.
    """
    return "ok"


@tool
def set_vents(opening_percent: int) -> str:
    """Open or close the roof vents. 0 is fully closed and 100 is fully open."""
    return "ok"


@tool
def park() -> str:
    """Stop what you are doing and drive back to the docking station."""
    return "ok"


LOBBY = SchemaResolver([walk_to, return_to_dock, unlock_drawer, set_vents])


@pytest.mark.parametrize("text", ["head back to your dock", "go back to the dock", "come on back to the dock"])
def test_a_verb_of_motion_with_back_before_a_place_is_a_return(text):
    # WordNet's return.v.01 is "go or come back to a place"
    p = LOBBY.propose(text)
    assert p.call == ("return_to_dock", {}) and p.clarify is None, p


def test_a_return_to_a_place_another_tool_takes_is_asked_not_run():
    # a return takes no place: "the pharmacy" is a value of walk_to, likelier meant
    p = LOBBY.propose("go back to the pharmacy")
    assert p.call == ("walk_to", {"place": "pharmacy"}) and p.clarify is not None, p


def test_go_names_a_tool_whose_verb_is_a_way_of_going():
    # WordNet: walking is a way to travel ("travel, go, move"); asked, "go" is general
    assert kind_of("walk", "go") and kind_of("fly", "go") and not kind_of("drive", "go")
    p = SchemaResolver([walk_to, unlock_drawer]).propose("go to the cafeteria")
    assert p.call == ("walk_to", {"place": "cafeteria"}), p


def test_go_and_a_bare_verb_does_that_verb():
    # "go park yourself": the second verb is the act, "go" the motion to it
    p = SchemaResolver([park, walk_to]).propose("ok, go park yourself back at the dock")
    assert p.call == ("park", {}) and p.clarify is None, p


@pytest.mark.parametrize(
    ("text", "address"),
    [("Rex", True), ("alright mate", True), ("hey buddy", True), ("the lights", False), ("kitchen", False)],
)
def test_a_name_or_a_word_for_a_person_alone_is_a_form_of_address(text, address):
    assert is_vocative(text) is address


def test_the_one_spoken_to_is_no_verb_of_the_command():
    # "mate" is also a verb; set off by a comma before a command it is the one spoken to
    p = SchemaResolver([park, walk_to]).propose("alright mate, park yourself")
    assert p.call == ("park", {}) and p.clarify is None, p


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("unlock the fourth drawer", [4]),
        ("the twenty first floor", [21]),
        ("bed 3rd", [3]),
        ("a third of a metre", [1 / 3]),  # after "a": a fraction ("of a" before the unit is its)
        ("first, lower the arm", []),  # no determiner: the order of steps
        ("the second metre", []),  # before a unit: a stretch of the way
    ],
)
def test_an_ordinal_after_a_definite_determiner_is_a_number(text, values):
    assert [s.value for s in find_numbers(text.split())] == pytest.approx(values)


def test_an_ordinal_picks_one_of_a_row():
    p = LOBBY.propose("could you unlock the fourth drawer for me?")
    assert p.call == ("unlock_drawer", {"drawer": 4}) and p.clarify is None, p


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("shut the vents completely", -1),  # "shut" means close (WordNet): the closed end
        ("close it fully", -1),
        ("open them entirely", 1),
        ("full volume", 1),  # "full" of a noun is its most
    ],
)
def test_an_adverb_of_completeness_goes_to_the_end_the_verb_goes(text, end):
    assert extreme(text.split()) == end


def test_shutting_completely_is_the_closed_end_of_the_scale():
    p = LOBBY.propose("shut the roof vents completely, it's getting cold")
    assert p.call == ("set_vents", {"opening_percent": 0}) and p.clarify is None, p


def test_a_return_to_a_place_no_tool_takes_whole_is_a_return():
    # "the charging station" is not the "nurses station": a value is said when all its words are
    p = LOBBY.propose("head back to the charging station")
    assert p.call == ("return_to_dock", {}) and p.clarify is None, p


@tool
def set_zoom(focal_length_mm: int) -> str:
    """Zoom the lens to a focal length, 24 to 70 millimetres."""
    return "ok"


@tool
def set_focus(distance_m: float) -> str:
    """Set the focus distance of the lens in metres, 0.3 to 50."""
    return "ok"


def test_the_word_after_a_light_verb_in_a_name_is_its_object_even_when_the_summary_makes_it_a_verb():
    # "set_zoom": "Zoom the lens" makes "zoom" a verb of the tool; "set" still takes it as object,
    # so "set the focus" names set_focus, not set_zoom by its light verb alone
    lens = SchemaResolver([set_zoom, set_focus])
    assert lens.propose("set the focus").call == ("set_focus", {}), lens.propose("set the focus")
    assert lens.propose("zoom to 50 mm").call == ("set_zoom", {"focal_length_mm": 50})
    assert lens.propose("set the zoom to 35").call == ("set_zoom", {"focal_length_mm": 35})


@pytest.mark.parametrize("text", ["ease her back to idle", "go back to work", "come back to zero"])
def test_back_to_a_state_an_act_or_a_quantity_is_no_return(text):
    # WordNet's classes of nouns that name no place: a state, an act, a quantity
    from edgevox.language.requests import read_request

    assert "return" not in [v.verb for v in read_request(text).verbs]
