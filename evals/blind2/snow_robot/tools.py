"""Tools for a snow-clearing / salt-spreading yard robot (simulated)."""

from __future__ import annotations

from typing import Literal

from edgevox.agents import GoalHandle, skill, tool

Zone = Literal["driveway", "sidewalk", "parking_lot", "patio"]

_state: dict = {
    "x_m": 0.0,
    "heading_deg": 0.0,
    "blade": "up",
    "blade_angle_deg": 0.0,
    "auger_on": False,
    "salt_rate_percent": 0.0,
    "headlights": False,
    "beacon": False,
    "battery_percent": 82,
    "salt_hopper_percent": 64,
    "location": "shed",
}


@tool
def drive(distance_m: float) -> str:
    """Drive the robot forward or backward in a straight line.

    Args:
        distance_m: Distance to drive in metres. Positive drives forward,
            negative drives backward (reverse).
    """
    _state["x_m"] += distance_m
    _state["location"] = "yard"
    return f"drove {distance_m:g} m"


@tool
def turn(angle_deg: float) -> str:
    """Turn the robot in place.

    Args:
        angle_deg: Angle to turn in degrees, between -180 and 180. Positive turns
            left (counter-clockwise), negative turns right (clockwise).
    """
    _state["heading_deg"] = (_state["heading_deg"] + angle_deg) % 360
    return f"turned {angle_deg:g} degrees"


@tool
def set_blade(position: Literal["up", "down"]) -> str:
    """Raise or lower the plough blade.

    Args:
        position: "up" lifts the blade off the ground, "down" lowers it to plough.
    """
    _state["blade"] = position
    return f"blade {position}"


@tool
def angle_blade(angle_deg: float) -> str:
    """Angle the plough blade to throw snow to one side.

    Args:
        angle_deg: Blade angle in degrees, between -30 and 30. Positive angles the
            blade to the right, negative to the left, 0 is straight.
    """
    _state["blade_angle_deg"] = angle_deg
    return f"blade angled to {angle_deg:g} degrees"


@tool
def set_auger(on: bool) -> str:
    """Switch the snow-blower auger on or off.

    Args:
        on: True to start the auger, False to switch it off.
    """
    _state["auger_on"] = on
    return "auger on" if on else "auger off"


@tool
def set_salt_rate(rate_percent: float) -> str:
    """Set the salt spreader rate.

    Args:
        rate_percent: Spread rate as a percentage of the maximum, between 0 and 100.
            0 turns the spreader off.
    """
    _state["salt_rate_percent"] = rate_percent
    return f"salt spreader at {rate_percent:g} percent"


@tool
def set_light(light: Literal["headlights", "beacon"], on: bool) -> str:
    """Turn the headlights or the amber warning beacon on or off.

    Args:
        light: Which light to switch.
        on: True for on, False for off.
    """
    _state[light] = on
    return f"{light} {'on' if on else 'off'}"


@skill(timeout_s=600)
def clear_zone(zone: Zone, goal: GoalHandle, passes: int = 1) -> str:
    """Clear the snow from a named zone of the yard.

    Args:
        zone: Which zone to clear.
        passes: How many times to go over the zone.
    """
    for _ in range(passes * 20):
        goal.sleep(0.05)
    _state["location"] = zone
    return f"cleared the {zone} ({passes} pass{'es' if passes != 1 else ''})"


@skill(timeout_s=300)
def return_to_shed(goal: GoalHandle) -> str:
    """Drive back to the shed and park on the charger."""
    for _ in range(20):
        goal.sleep(0.05)
    _state["location"] = "shed"
    _state["x_m"] = 0.0
    return "parked in the shed"


@tool
def get_status() -> str:
    """Report the battery charge and the salt hopper level."""
    return (
        f"battery {_state['battery_percent']} percent, "
        f"salt hopper {_state['salt_hopper_percent']} percent full"
    )
