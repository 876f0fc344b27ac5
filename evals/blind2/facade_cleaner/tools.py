"""Tools for a facade/window-cleaning robot hanging from a roof winch.

The cradle hangs on a winch cable from a trolley that runs along the roof rail.
Everything here is simulated with a module-level ``_state`` dict.
"""

from __future__ import annotations

from typing import Literal

from edgevox.agents import GoalHandle, skill, tool

_state: dict = {
    "height_m": 0.0,  # metres below the roof edge (0 = at the roof)
    "rail_position_m": 0.0,  # metres along the roof rail, right is positive
    "brush_rpm": 0,
    "spray_on": False,
    "detergent_percent": 2.0,
    "wind_speed_ms": 4.2,
    "water_tank_litres": 140.0,
    "water_tank_capacity_litres": 200.0,
    "parked": True,
    "last_section": None,
}


@tool
def move_vertical(distance_m: float) -> str:
    """Raise or lower the cleaning cradle on the roof winch.

    Positive distances raise the cradle, negative distances lower it.

    Args:
        distance_m: how far to move the cradle, in metres.
    """
    _state["height_m"] = max(0.0, _state["height_m"] - distance_m)
    _state["parked"] = False
    verb = "raised" if distance_m >= 0 else "lowered"
    return f"{verb} the cradle {abs(distance_m):g} m, now {_state['height_m']:g} m below the roof"


@tool
def traverse(direction: Literal["left", "right"], distance_m: float) -> str:
    """Traverse the winch trolley left or right along the roof rail.

    Args:
        direction: which way to travel along the rail.
        distance_m: how far to travel, in metres (at most 30).
    """
    sign = 1 if direction == "right" else -1
    _state["rail_position_m"] += sign * distance_m
    _state["parked"] = False
    return f"moved {distance_m:g} m {direction} along the rail"


@tool
def set_brush_speed(rpm: int) -> str:
    """Set the rotating brush speed.

    Args:
        rpm: brush speed in revolutions per minute, between 0 and 400.
    """
    _state["brush_rpm"] = rpm
    return f"brush speed set to {rpm} rpm"


@tool
def set_water_spray(on: bool) -> str:
    """Turn the water spray on or off.

    Args:
        on: True to turn the spray on, False to turn it off.
    """
    _state["spray_on"] = on
    return "water spray on" if on else "water spray off"


@tool
def set_detergent_mix(percent: float) -> str:
    """Set how much detergent is mixed into the spray water.

    Args:
        percent: detergent concentration in percent, between 0 and 10.
    """
    _state["detergent_percent"] = percent
    return f"detergent mix set to {percent:g} percent"


@skill(timeout_s=600)
def clean_section(
    section: Literal["north", "east", "south", "west", "atrium"],
    goal: GoalHandle,
    passes: int = 1,
) -> str:
    """Clean a named section of the facade.

    Args:
        section: which facade section to clean.
        passes: how many cleaning passes to make over the section.
    """
    _state["parked"] = False
    steps = 20 * passes
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    _state["last_section"] = section
    return f"cleaned the {section} section in {passes} pass(es)"


@skill(timeout_s=300)
def return_to_park(goal: GoalHandle) -> str:
    """Return the cradle to its park position on the roof."""
    goal.sleep(0.05)
    _state["brush_rpm"] = 0
    _state["spray_on"] = False
    goal.publish_feedback({"progress": 0.5})
    goal.sleep(0.05)
    _state["height_m"] = 0.0
    _state["rail_position_m"] = 0.0
    _state["parked"] = True
    return "parked on the roof"


@tool
def get_wind_speed() -> str:
    """Report the current wind speed at the roof anemometer, in metres per second."""
    return f"wind speed is {_state['wind_speed_ms']:g} metres per second"


@tool
def get_water_tank_level() -> str:
    """Report how much water is left in the water tank."""
    litres = _state["water_tank_litres"]
    cap = _state["water_tank_capacity_litres"]
    return f"water tank holds {litres:g} of {cap:g} litres"
