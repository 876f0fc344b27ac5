from __future__ import annotations

from typing import Literal

import pytest

from edgevox.agents.numbers import UnitMismatch, convert, find_numbers, parameter_unit, spoken_unit
from edgevox.agents.resolver import SchemaResolver, stem, tokenize
from edgevox.agents.tools import tool


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("two", 2),
        ("forty five", 45),
        ("one point five", 1.5),
        ("half a", 0.5),
        ("two and a half", 2.5),
        ("a hundred and five", 105),
        ("2.75", 2.75),
        ("twenty", 20),
        ("a couple of", 2),
    ],
)
def test_number_words(text, value):
    spans = find_numbers([t for t, _, _ in tokenize(text)])
    assert len(spans) == 1 and spans[0].value == pytest.approx(value)


def test_separate_numbers_stay_separate():
    assert [s.value for s in find_numbers("one two".split())] == [1, 2]
    assert [s.value for s in find_numbers("twenty five thirty".split())] == [25, 30]


def test_stemming_matches_spelling_and_inflection_variants():
    assert stem("metres") == stem("meters") == stem("meter")
    assert stem("lights") == stem("light") and stem("moving") == stem("move")


# A tool set that has nothing to do with the home robot: the resolver reads only schemas.
@tool
def set_temperature(celsius: float, zone: Literal["upstairs", "downstairs"] = "downstairs") -> str:
    """Set the thermostat (heating) temperature.

    Args:
        celsius: Target temperature in degrees celsius. Negative for below zero (freezing).
        zone: Heating zone.
    """
    return ""


@tool
def play_music(genre: Literal["jazz", "rock", "classical"], volume: int = 5) -> str:
    """Play music or a song on the speaker.

    Args:
        genre: Kind of music.
        volume: Loudness from 1 to 10.
    """
    return ""


@tool
def add_to_list(item: str) -> str:
    """Add an item to the shopping list.

    Args:
        item: What to buy.
    """
    return ""


RESOLVER = SchemaResolver([set_temperature, play_music, add_to_list])


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("set the heating upstairs to twenty one degrees", ("set_temperature", {"celsius": 21, "zone": "upstairs"})),
        ("thermostat to 19.5", ("set_temperature", {"celsius": 19.5})),
        ("play some jazz music at volume seven", ("play_music", {"genre": "jazz", "volume": 7})),
        ("put oat milk on the shopping list please", ("add_to_list", {"item": "oat milk"})),
        ("add eggs to the shopping list", ("add_to_list", {"item": "eggs"})),
        ("how are you today?", None),
    ],
)
def test_resolver_works_on_any_tool_set_from_schemas_alone(text, call):
    proposal = RESOLVER.propose(text)
    if call is None:
        assert proposal.call is None and proposal.sure
    else:
        assert proposal.call == call


def test_argument_words_alone_never_trigger_a_tool_and_a_missing_value_is_asked_for():
    p = RESOLVER.propose("rock please")
    assert p.call is None and not p.sure and p.candidates == ["play_music"]
    assert RESOLVER.propose("I like rock").call is None  # a statement: answered in words
    p = RESOLVER.propose("play music")
    assert p.call == ("play_music", {}) and p.missing["play_music"] == ["genre"]
    assert p.clarify == "Which genre: jazz, rock or classical?"


def test_negative_clause_in_a_parameter_description_sets_the_sign():
    assert RESOLVER.propose("set the heating to five degrees below freezing").call == (
        "set_temperature",
        {"celsius": -5},
    )


def test_units_come_from_parameter_names_and_descriptions_and_convert_within_a_dimension():
    assert parameter_unit("distance_m") == ("length", 1.0)
    assert parameter_unit("timeout_s") == ("time", 1.0)
    assert parameter_unit("minutes") == ("time", 60.0)
    assert parameter_unit("duration", "Duration in minutes.") == ("time", 60.0)
    assert parameter_unit("count", "How many items to fetch.") is None
    assert parameter_unit("margin", "Kept in m.") is None  # abbreviations only as name suffixes
    assert spoken_unit("half an hour".split(), 1) == ("time", 3600.0)
    assert spoken_unit("ninety second timer".split(), 1) == ("time", 1.0)
    assert spoken_unit("five apples".split(), 1) is None
    assert convert(90, ("time", 1.0), ("time", 60.0)) == 1.5
    assert convert(50, ("length", 0.01), ("length", 1.0)) == 0.5
    with pytest.raises(UnitMismatch):
        convert(3, ("time", 1.0), ("length", 1.0))  # never across dimensions
    assert convert(3, None, ("time", 60.0)) == 3


def test_quantities_said_in_another_unit_are_converted_to_the_declared_one():
    @tool
    def set_timer(minutes: float) -> str:
        """Set a countdown timer.

        Args:
            minutes: Duration in minutes.
        """
        return ""

    @tool
    def drive(distance_m: float) -> str:
        """Drive straight ahead.

        Args:
            distance_m: How far to drive.
        """
        return ""

    r = SchemaResolver([set_timer, drive])
    assert r.propose("start a ninety second timer").call == ("set_timer", {"minutes": 1.5})
    assert r.propose("set a timer for half an hour").call == ("set_timer", {"minutes": 30})
    assert r.propose("set a timer for two hours").call == ("set_timer", {"minutes": 120})
    assert r.propose("set a timer for 5 minutes").call == ("set_timer", {"minutes": 5})
    assert r.propose("drive fifty centimeters").call == ("drive", {"distance_m": 0.5})
    assert r.propose("drive 2 meters").call == ("drive", {"distance_m": 2})


def test_a_statement_about_the_speaker_is_answered_in_words_but_requests_still_act():
    from edgevox.agents.resolver import is_statement

    @tool
    def go_to(room: Literal["kitchen", "office"]) -> str:
        """Go, drive or head to a room of the house.

        Args:
            room: Destination room.
        """
        return ""

    r = SchemaResolver([go_to])
    statement = r.propose("I love the kitchen in this house")
    assert statement.call is None and statement.sure and "statement" in statement.reason
    assert r.propose("head to the kitchen of the house").call == ("go_to", {"room": "kitchen"})
    for request in ("I need you in the office", "I'm cold, go to the kitchen", "we should go to the office"):
        assert not is_statement(request), request
    assert is_statement("My room is a mess.") and not is_statement("Go to the office")
