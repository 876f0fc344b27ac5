from __future__ import annotations

from typing import Literal

import pytest

from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tools import tool
from edgevox.language.numbers import find_numbers
from edgevox.language.terms import stem, tokenize


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
        ("a metre and a half", 1.5),  # the fraction after the unit
        ("two hours and a quarter", 2.25),
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


# -- spoken numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("one eighty", [180]),
        ("two seventy", [270]),
        ("one twenty five", [125]),
        ("nineteen ninety", [1990]),
        ("one oh five", [105]),
        ("two point oh five", [2.05]),
        ("minus two", [-2]),
        ("negative two point five", [-2.5]),
        ("-2", [-2]),
        ("a hundred and five", [105]),
        ("three hundred and sixty", [360]),
        ("oh move forward two", [2]),  # "oh" alone is an interjection
        ("oh", []),
        ("one two", [1, 2]),
        ("two seven zero", [270]),  # digits one by one: a heading
        ("zero four five degrees", [45]),
        ("one oh one two", [1012]),
        ("ten five", [10, 5]),  # "water bed ten, five litres": no "ten five" in English
        ("fifteen six", [15, 6]),
        ("room four twelve please", [412]),  # a units word and a teen: hundreds, as "one eighty"
        ("bed two ten litres", [2, 10]),  # ... not before a unit: a measure follows a label
        ("twenty five", [25]),
        ("forty five", [45]),
        ("a full turn", [1]),  # one of the unit that follows: 360 degrees once converted
        ("two full turns", [2]),
    ],
)
def test_spoken_numbers_table(text, values):
    spans = find_numbers([t for t, _, _ in tokenize(text)])
    assert [s.value for s in spans] == pytest.approx(values)


def test_an_explicit_sign_is_flagged():
    (minus,) = find_numbers("minus two".split())
    (plain,) = find_numbers("two".split())
    assert minus.signed and minus.start == 0 and not plain.signed


# -- sign conventions from docstrings ---------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "utterance", "sign"),
    [
        ("Distance in meters. Negative for backwards (back, reverse).", "back up two", -1),
        ("Distance in meters. Negative for backwards (back, reverse).", "go forward two", 1),
        ("Height change in cm. Negative lowers it.", "lower it two", -1),
        ("Height change in cm. Negative lowers it.", "move it down two", -1),
        ("Height change in cm. Negative lowers it.", "raise it two", 1),
        ("Height change in cm. Negative lowers it.", "lift it two", 1),
        ("Positive raises, negative lowers.", "drop it two", -1),
        ("Lowers the arm when negative.", "descend two", -1),
        ("Angle, negative = counter-clockwise.", "two counter clockwise", -1),
        ("Angle, negative = counter-clockwise.", "two anticlockwise", -1),
        ("Angle, negative = counter-clockwise.", "two clockwise", 1),
        ("Offset, negative = left.", "two to the left", -1),
        ("Offset, negative = left.", "two to the right", 1),
        ("Offset, negative = left.", "two", 0),
        ("Height change in cm. Negative lowers it.", "up and down two", 2),
    ],
)
def test_sign_conventions_are_read_from_the_parameter_docstring(description, utterance, sign):
    from edgevox.language.terms import sign_rule

    rule = sign_rule(description)
    assert rule is not None
    assert rule.sign([stem(t) for t, _, _ in tokenize(utterance)]) == sign


def test_a_description_without_a_sign_convention_has_no_rule():
    from edgevox.language.terms import sign_rule

    assert sign_rule("How far to drive, in meters.") is None
    # Words other than directions do not become cues when a direction is named.
    rule = sign_rule("Lowers the arm when negative.")
    assert rule is not None and "arm" not in rule.negative


@tool
def lift(height_cm: float) -> str:
    """Raise or lower the platform.

    Args:
        height_cm: Change of height in centimeters, from -20 to 20. Negative lowers it.
    """
    return ""


@tool
def drive(distance_m: float) -> str:
    """Drive straight ahead or back.

    Args:
        distance_m: How far, in meters. Negative for backwards.
    """
    return ""


@tool
def go(place: Literal["kitchen", "living room", "bedroom", "bathroom", "charging dock"]) -> str:
    """Go to a place in the house.

    Args:
        place: Where to go.
    """
    return ""


MOTION = SchemaResolver([lift, drive, go])


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("lower the platform five centimeters", ("lift", {"height_cm": -5})),
        ("bring the platform down 5 cm", ("lift", {"height_cm": -5})),
        ("raise the platform by 2 inches", ("lift", {"height_cm": 5.08})),
        ("drive back two meters", ("drive", {"distance_m": -2})),
        ("drive minus two meters", ("drive", {"distance_m": -2})),  # an explicit minus alone
        ("drive ahead one eighty centimeters", ("drive", {"distance_m": 1.8})),
        ("go to the dock", ("go", {"place": "charging dock"})),  # a word only one value has
        ("go to the living room", ("go", {"place": "living room"})),
    ],
)
def test_arguments_mean_what_the_schema_says(text, call):
    p = MOTION.propose(text)
    assert p.call == call and p.sure and p.clarify is None, p


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("drive forward for ten seconds", "How far should I drive, in meters?"),
        ("drive two or three meters", "How far should I drive, in meters?"),
        (
            "raise the platform one meter",
            "I can lift from -20 to 20 centimeters. How far should I lift, in centimeters?",
        ),
        ("go to my room", "Which place: kitchen, living room, bedroom, bathroom or charging dock?"),
        ("lift the platform", "How far should I lift, in centimeters?"),
        ("move the platform up and down 5 cm", "How far should I lift, in centimeters?"),
        ("drive forward minus two meters", "How far should I drive, in meters?"),  # a sign and a direction
        ("drive backward minus two meters", "How far should I drive, in meters?"),
    ],
)
def test_an_unusable_or_missing_value_is_asked_for_never_guessed(text, question):
    p = MOTION.propose(text)
    assert p.clarify == question, p
    name, args = p.call
    assert not any(k in args for k in ("height_cm", "distance_m", "place"))


@pytest.mark.parametrize(
    "text",
    [
        "don't drive back two meters",
        "never lower the platform",
        "did you lower the platform?",
        "what does the platform do",
        "my brother drove back two meters yesterday",
        "if it is dark, go to the kitchen",
        "the kitchen is nice",
    ],
)
def test_only_requests_act(text):
    p = MOTION.propose(text)
    assert p.call is None and p.sure and p.clarify is None, p


@tool
def rotate(direction: Literal["left", "right"], degrees: float = 90) -> str:
    """Rotate in place.

    Args:
        direction: Which way to rotate.
        degrees: How many degrees to rotate.
    """
    return "ok"


@pytest.mark.parametrize(
    ("text", "degrees"),
    [
        ("rotate left a full turn", 360),
        ("rotate right half a turn", 180),
        ("rotate a quarter turn to the left", 90),
        ("rotate left two full rotations", 720),
        ("rotate right one eighty degrees", 180),
    ],
)
def test_turns_and_rotations_said_as_units_convert_to_the_declared_angle(text, degrees):
    p = SchemaResolver([rotate, lift, drive, go]).propose(text)
    assert p.call is not None and p.call[1]["degrees"] == degrees, p


def test_a_proposed_call_is_described_with_each_value_said_once():
    """ "Did you mean ...?" for a call whose free-text arguments repeat a value (a small model
    filling a handoff's target, reason and summary with the same name) says it once."""

    @tool
    def handoff_conversation(target: str, reason: str, summary: str) -> str:
        """Hand this conversation to another agent."""
        return target

    resolver = SchemaResolver([handoff_conversation])
    said = resolver.describe("handoff_conversation", {"target": "handler", "reason": "handler", "summary": "handler"})
    assert said.split().count("handler") == 1, said
