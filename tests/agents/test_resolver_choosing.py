"""Which tool, which number: a parameter's text given in pydantic's ``Field``, the number said in
a parameter's dimension, the object that decides between two tools of one verb, a pronoun
with several tools it could stand for, a measure a tool without numbers would lose, a delay
said with "in", an answer that names the tool, and "'s" as "is" or a possessive. Each test is
one principle of English or of the tool's schema."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field

from edgevox.agents.decoders import Clarifications, Decision
from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tools import ToolCall, tool
from edgevox.language.words import words


@tool
def tilt_camera(
    angle_deg: Annotated[
        float, Field(ge=-90, le=90, description="Tilt angle. Positive tilts up, negative tilts down.")
    ],
) -> str:
    """Tilt the camera head up or down to a given angle."""
    return "ok"


def test_a_fields_description_is_the_parameters_text():
    assert tilt_camera.parameters["properties"]["angle_deg"]["description"].startswith("Tilt angle")
    p = SchemaResolver([tilt_camera]).propose("tilt the camera down forty-five degrees")
    assert p.call == ("tilt_camera", {"angle_deg": -45}) and p.clarify is None


@tool
def adjust_hitch(change_cm: float) -> str:
    """Raise or lower the three-point hitch.

    Args:
        change_cm: How far, in centimetres, between -30 and 30. Positive raises, negative lowers.
    """
    return "ok"


def test_the_number_said_in_the_parameters_dimension_is_its_value():
    # "three-point" is a bare number; "a hundred millimetres" is a length
    p = SchemaResolver([adjust_hitch]).propose("raise the three-point linkage a hundred millimetres")
    assert p.call == ("adjust_hitch", {"change_cm": 10})


@tool
def switch_lights(on: bool) -> str:
    """Turn the crawler's LED lights on or off."""
    return "ok"


@tool
def set_laser_profiler(enabled: bool) -> str:
    """Switch the laser ring profiler on or off.

    Args:
        enabled: True to start profiling, False to switch the laser off.
    """
    return "ok"


@tool
def set_light_brightness(percent: int) -> str:
    """Set the brightness of the LED lights.

    Args:
        percent: Brightness in percent, between 10 and 100.
    """
    return "ok"


CRAWLER = SchemaResolver([switch_lights, set_laser_profiler, set_light_brightness])


def test_the_object_said_decides_between_two_tools_of_one_verb():
    p = CRAWLER.propose("turn the laser off")
    assert p.call == ("set_laser_profiler", {"enabled": False}) and p.sure and p.clarify is None


def test_a_pronoun_with_several_tools_its_verb_fits_is_asked_about():
    p = CRAWLER.propose("turn it off")
    assert p.clarify is not None and p.clarify.startswith("Did you mean")
    assert CRAWLER.propose("turn the lights off").clarify is None


def test_a_tool_without_numbers_does_not_lose_a_measure_another_tool_of_the_object_takes():
    p = CRAWLER.propose("dim the lights to five percent")  # below the documented 10: refused, asked
    assert p.call is not None and p.call[0] == "set_light_brightness" and "from 10 to 100" in (p.clarify or "")


@tool
def crawl(distance_m: float) -> str:
    """Drive the crawler along the pipe.

    Args:
        distance_m: How far, in metres. Positive drives forward, negative reverses.
    """
    return "ok"


def test_a_measure_in_the_unit_of_one_tool_no_word_named_is_asked_about():
    p = SchemaResolver([crawl, switch_lights]).propose("nudge the crawler forward two metres")
    assert p.call == ("crawl", {"distance_m": 2}) and p.clarify == "Did you mean crawl 2 meters?"
    # without a direction, which way is asked first: a robot never guesses a way to move
    p = SchemaResolver([crawl, switch_lights]).propose("nudge the crawler two metres")
    assert p.call == ("crawl", {}) and p.clarify == "Which way should I crawl: forward or back?"


@tool
def start_disinfection(minutes: int, dose: Literal["low", "standard", "high"] = "standard") -> str:
    """Start a timed UV disinfection cycle.

    Args:
        minutes: Length of the cycle in minutes, between 5 and 60.
    """
    return "ok"


@tool
def abort_cycle() -> str:
    """Abort the running disinfection cycle and switch the UV lamps off immediately."""
    return "ok"


@tool
def set_speaker_volume(level: int) -> str:
    """Set the speaker volume, 1 to 10."""
    return "ok"


UV = SchemaResolver([start_disinfection, abort_cycle, set_speaker_volume])


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("start the cycle in an hour, once the patient's been moved", {}),  # the hour is when
        ("start a 20 minute cycle in an hour", {"minutes": 20}),
        ("start a cycle in twenty minutes", {"minutes": 20}),  # how long, or when? asked
    ],
)
def test_a_time_said_with_in_is_a_delay_asked_about(text, args):
    p = UV.propose(text)
    assert p.call == ("start_disinfection", args) and p.clarify is not None


def test_a_time_said_with_for_is_the_length():
    p = UV.propose("start a cycle for twenty minutes")
    assert p.call == ("start_disinfection", {"minutes": 20}) and p.clarify is None


def test_a_range_for_a_tools_number_asks_that_tool_not_one_without_numbers():
    p = UV.propose("run a cycle for fifteen or twenty minutes")
    assert p.call is not None and p.call[0] == "start_disinfection" and p.clarify is not None


@pytest.mark.parametrize(("answer", "runs"), [("the speaker volume", True), ("the mast", False)])
def test_an_answer_naming_the_proposed_tools_object_confirms_it(answer, runs):
    # "Set it to eight." - "Did you mean set the speaker volume 8?" (the model's reading, asked)
    tools = [start_disinfection, abort_cycle, set_speaker_volume]
    store = Clarifications()
    proposed = ToolCall("set_speaker_volume", {"level": 8})
    store.ask(
        "s", Decision(None, clarify="Did you mean set the speaker volume 8?", proposed=proposed), "Set it to eight."
    )
    done = store.answer("s", answer, tools)
    call = (done.call.name, done.call.arguments) if done.call is not None else None
    assert (done.kind, call) == (("execute", ("set_speaker_volume", {"level": 8})) if runs else ("none", None))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("the left section's already off", ["the", "left", "section", "is", "already", "off"]),
        ("the tank's empty", ["the", "tank", "is", "empty"]),
        ("the kitchen's a mess", ["the", "kitchen", "is", "a", "mess"]),
        ("the robot's left arm", ["the", "robots", "left", "arm"]),  # an adjective, then a noun
        ("the cafeteria's menu", ["the", "cafeterias", "menu"]),
        ("slow down to four k's an hour", ["slow", "down", "to", "four", "ks", "an", "hour"]),  # a plural
    ],
)
def test_a_possessive_is_followed_by_what_is_possessed_else_s_is_is(text, said):
    assert words(text) == said


@tool
def set_boom_section(side: Literal["left", "right", "both"], on: bool) -> str:
    """Switch a boom sprayer section on or off."""
    return "ok"


def test_a_statement_about_a_section_being_off_does_not_switch_it():
    p = SchemaResolver([set_boom_section]).propose("The left section's already off.")
    assert p.call is None


@tool
def set_sonde(
    on: Annotated[bool, "True to switch the sonde on, False to switch it off"],
    frequency: Annotated[Literal["512Hz", "8kHz", "33kHz"] | None, "Transmit frequency; None keeps it"] = None,
) -> str:
    """Switch the sonde locator beacon on or off, optionally choosing its frequency."""
    return "ok"


def test_a_number_said_that_the_call_does_not_take_is_never_lost():
    r = SchemaResolver([set_sonde])
    p = r.propose("turn the sonde on at thirty-three k")  # "k" is no value of the frequency
    assert p.call == ("set_sonde", {"on": True}) and p.clarify is not None
    done = r.propose("turn the sonde on")
    assert done.call == ("set_sonde", {"on": True}) and done.clarify is None


@tool
def lift(height_cm: float) -> str:
    """Raise or lower the gripper. Positive values move it up, negative down, 25 cm at most."""
    return "ok"


@tool
def park_arm() -> str:
    """Fold the arm into its parked position."""
    return "ok"


def test_the_object_does_not_decide_for_a_tool_that_would_lose_the_measure_said():
    p = SchemaResolver([lift, park_arm]).propose("move the arm ten centimetres")
    assert p.call != ("park_arm", {})


@tool
def move(distance_m: float) -> str:
    """Move straight forward or backward. Positive forward, negative backward."""
    return "ok"


@tool
def go_to(room: Literal["kitchen", "office", "bedroom"]) -> str:
    """Go to a room."""
    return "ok"


def test_a_choice_said_whole_decides_between_two_tools_of_one_verb():
    # "make your way" is WordNet's travel, as near "move" as "go"; the office is a place of go_to's
    p = SchemaResolver([move, go_to]).propose("can you make your way to the office")
    assert p.call == ("go_to", {"room": "office"})
