"""How a tool is read from its author's own code (``edgevox.language.frames``), one principle a row."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from edgevox.agents.tools import tool
from edgevox.language.frame_report import describe_frame, frame_warnings
from edgevox.language.frames import read_frame


def frame_of(t):
    return read_frame(t.name, t.description, t.parameters)


@tool
def take_off(height: float = 1.5) -> str:
    """Take off and hover.

    Args:
        height: hover height after takeoff in metres, between 0.5 and 5.
    """
    return ""


@tool
def change_altitude(meters: float) -> str:
    """Climb or descend by a relative amount. Positive climbs, negative descends.

    Args:
        meters: altitude change in metres.
    """
    return ""


@tool
def drive(distance_m: float, speed_mps: float = 0.5) -> str:
    """Drive straight ahead, or back up.

    Positive distance drives forward, negative distance reverses.

    Args:
        distance_m: how far to drive in metres, at most 5 either way.
        speed_mps: cruising speed in metres per second, between 0.1 and 1.2.
    """
    return ""


@tool
def get_status() -> str:
    """Report battery level, altitude and whether the drone is flying or recording."""
    return ""


@tool
def move_gripper(axis: Literal["x", "y", "z"], distance_cm: float) -> str:
    """Move the gripper in a straight line along one axis.

    x is toward the front edge of the counter, y is toward the sink, z is up.

    Args:
        axis: x, y or z.
        distance_cm: distance in centimetres, at most 30 either way. Negative goes down.
    """
    return ""


@tool
def set_recording(on: bool) -> str:
    """Start or stop video recording.

    Args:
        on: true to start recording, false to stop.
    """
    return ""


@tool
def tilt(degrees: float) -> str:
    """Tilt the camera up or down by a relative angle in degrees.
    Positive tilts up, negative tilts down; the head can only go between
    -30 (looking down) and 90 (straight up)."""
    return ""


@tool
def go_to(place: Literal["kitchen", "office"]) -> str:
    """Go to a place."""
    return ""


@tool
def set_level(level: Annotated[float, "how strong"]) -> str:
    """Set it."""
    return ""


def test_the_name_gives_the_verb_with_its_particle_and_the_objects():
    f = frame_of(take_off)
    assert f.verbs[0].text == "take off" and f.verbs[0].own
    f = frame_of(move_gripper)
    assert f.verbs[0].verb == "move" and "gripper" in f.own_objects
    assert frame_of(go_to).own_objects == frozenset()  # "to" is a preposition, not an object


def test_alternative_docstring_verbs_are_the_tools_own_and_further_steps_are_not():
    verbs = {v.verb: v.own for v in frame_of(change_altitude).verbs}
    assert verbs["change"] and verbs["climb"] and verbs["descend"]  # "Climb or descend": alternatives
    verbs = {v.text: v.own for v in frame_of(take_off).verbs}
    assert verbs["take off"] and not verbs["hover"]  # "Take off and hover": a further step


def test_a_reading_tool_is_told_by_its_verb_and_reports_its_whole_docstring():
    f = frame_of(get_status)
    assert f.reads and not f.drastic
    assert {"battery", "altitude"} <= f.objects and any(v.verb == "fly" for v in f.verbs)


def test_an_action_with_no_required_argument_is_drastic():
    assert frame_of(take_off).drastic
    assert not frame_of(change_altitude).drastic


def test_a_sign_convention_in_the_function_docstring_applies_to_the_number_it_names():
    f = frame_of(drive)
    assert f.param("distance_m").signs is not None and f.param("speed_mps").signs is None
    assert "forward" in f.param("distance_m").signs.positive
    assert f.param("distance_m").minimum == -5 and f.param("distance_m").maximum == 5  # "at most 5 either way"


def test_units_and_bounds_come_from_names_and_text():
    f = frame_of(take_off)
    assert f.param("height").unit.pint_name == "meter" and (f.param("height").minimum, f.param("height").maximum) == (
        0.5,
        5,
    )
    assert frame_of(drive).param("speed_mps").unit.dimension == "speed"


def test_bounds_in_the_function_docstring_bound_its_only_number():
    f = frame_of(tilt)
    assert (f.param("degrees").minimum, f.param("degrees").maximum) == (-30, 90)


def test_enum_values_get_the_words_the_docstring_gives_them():
    words = frame_of(move_gripper).param("axis").value_words
    assert "sink" in words["y"] and "up" in words["z"] and "down" in words["z"]  # one axis, both ways


def test_warnings_say_where_a_docstring_leaves_a_request_ambiguous():
    warnings = frame_warnings(frame_of(set_level))
    assert any("no unit" in w for w in warnings) and any("sign convention" in w for w in warnings)
    assert frame_warnings(frame_of(change_altitude)) == []
    line = describe_frame(frame_of(change_altitude))
    assert "verb change (also" not in line and "+ is up, - is down" in line and "in meters" in line


@pytest.mark.parametrize("t", [take_off, change_altitude, drive, get_status, move_gripper, set_recording, tilt, go_to])
def test_reading_a_frame_is_pure_and_repeatable(t):
    assert frame_of(t) == frame_of(t)
