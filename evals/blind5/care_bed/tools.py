"""Tools for a motorised home-care bed.

Conventions used throughout:
  * Angles are in degrees, heights in centimetres, brightness in percent.
  * "Left" and "right" are the person's own left and right while lying on
    their back in the bed (head end at the headboard).
"""

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import GoalHandle, skill, tool


@tool
def set_backrest_angle(angle_deg: Annotated[float, Field(ge=0, le=70)]) -> str:
    """Raise or lower the backrest (head section) to a given angle.

    Args:
        angle_deg: Backrest angle above horizontal, in degrees, between 0 and 70.
            0 is lying flat, 70 is sitting fully upright.
    """
    return f"Backrest moving to {angle_deg:g} degrees."


@tool
def set_knee_angle(angle_deg: Annotated[float, Field(ge=0, le=35)]) -> str:
    """Raise or lower the knee section (the knee bend) to a given angle.

    Args:
        angle_deg: Knee section angle above horizontal, in degrees, between 0 and 35.
            0 is flat.
    """
    return f"Knee section moving to {angle_deg:g} degrees."


@tool
def set_bed_height(height_cm: Annotated[float, Field(ge=35, le=80)]) -> str:
    """Raise or lower the whole bed to a given height.

    Args:
        height_cm: Height of the mattress platform above the floor, in centimetres,
            between 35 and 80.
    """
    return f"Bed moving to a height of {height_cm:g} centimetres."


@tool
def set_side_rails(up: bool, side: Literal["left", "right", "both"] = "both") -> str:
    """Raise or lower the side rails.

    Args:
        up: True raises the rail and locks it up, False lowers it.
        side: Which rail, seen from the person lying in the bed; both rails by default.
    """
    state = "up" if up else "down"
    which = "both side rails" if side == "both" else f"the {side} side rail"
    return f"Putting {which} {state}."


@tool
def set_light(
    light: Literal["reading", "night"],
    on: bool,
    brightness_pct: Annotated[int, Field(ge=1, le=100)] = 100,
) -> str:
    """Switch a bed light on or off, and set the reading light's brightness.

    Args:
        light: "reading" is the reading lamp at the headboard; "night" is the dim
            under-bed night light.
        on: True switches the light on, False switches it off.
        brightness_pct: Reading light brightness in percent, between 1 and 100.
            The night light has a fixed brightness and ignores this.
    """
    if not on:
        return f"The {light} light is off."
    if light == "reading":
        return f"Reading light on at {brightness_pct} percent."
    return "Night light on."


@skill(timeout_s=60)
def tilt_mattress(angle_deg: Annotated[float, Field(ge=-30, le=30)], goal: GoalHandle) -> str:
    """Tilt (roll) the mattress sideways to help turn the person onto one side.

    Args:
        angle_deg: Tilt angle in degrees, between -30 and 30. Positive rolls the
            person toward their right side, negative toward their left side;
            0 levels the mattress.
    """
    for step in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (step + 1) / 10})
    if angle_deg == 0:
        return "Mattress is level."
    side = "right" if angle_deg > 0 else "left"
    return f"Mattress tilted {abs(angle_deg):g} degrees toward your {side}."


@skill(timeout_s=90)
def move_to_preset(position: Literal["flat", "chair", "sleep"], goal: GoalHandle) -> str:
    """Move the whole bed into a stored preset position.

    Args:
        position: "flat" lays every section flat; "chair" raises the back and
            lowers the feet like an armchair; "sleep" is the person's saved
            sleeping position.
    """
    for step in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (step + 1) / 10})
    return f"The bed is in the {position} position."


@tool
def call_caregiver() -> str:
    """Call the caregiver: ring their phone and sound the call bell in the house."""
    return "I'm calling your caregiver now."


@tool
def stop_bed() -> str:
    """Stop all bed motors at once and cancel any movement in progress."""
    return "All bed motors stopped."


@tool
def get_bed_status() -> str:
    """Report the bed's current state: backrest and knee angles, height, tilt, rails and lights."""
    return (
        "Backrest at 30 degrees, knees at 10 degrees, height 55 centimetres, mattress level, "
        "both rails up, reading light off, night light on."
    )
