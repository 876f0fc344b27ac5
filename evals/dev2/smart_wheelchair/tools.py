"""Tools for a smart powered wheelchair used at home."""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "battery_pct": 64,
    "speed_level": 2,
    "backrest_deg": 10.0,
    "seat_cm": 5.0,
    "lights": False,
    "brake": False,
    "room": "living_room",
}


@tool
def get_status() -> str:
    """Report the chair's battery, speed level, backrest angle, seat height, brake, lights and
    which room it is in."""
    s = _state
    return (
        f"Battery {s['battery_pct']}%, speed level {s['speed_level']}, backrest at "
        f"{s['backrest_deg']:g} degrees, seat at {s['seat_cm']:g} cm, brake "
        f"{'on' if s['brake'] else 'off'}, lights {'on' if s['lights'] else 'off'}, in the "
        f"{s['room'].replace('_', ' ')}."
    )


@tool
def drive(distance_m: float) -> str:
    """Drive the chair straight ahead or in reverse.

    Args:
        distance_m: Distance in metres. Positive drives forward, negative reverses.
            At most 10 metres in one go.
    """
    if _state["brake"]:
        return "The brake is on; release it first."
    if abs(distance_m) > 10:
        return "I only drive up to 10 metres at a time."
    return f"Drove {abs(distance_m):g} m {'forward' if distance_m >= 0 else 'in reverse'}."


@tool
def rotate(direction: Literal["left", "right"], degrees: float = 90) -> str:
    """Rotate the chair in place.

    Args:
        direction: Which way to rotate.
        degrees: How far to rotate, in degrees (up to 180).
    """
    return f"Rotated {degrees:g} degrees to the {direction}."


@tool
def set_speed_level(level: Annotated[int, "1 is the slowest, 5 the fastest"]) -> str:
    """Set the maximum driving speed level, from 1 (slowest) to 5 (fastest)."""
    if not 1 <= level <= 5:
        return "Speed level must be between 1 and 5."
    _state["speed_level"] = level
    return f"Speed level {level}."


@tool
def recline_backrest(angle_deg: float) -> str:
    """Tilt the backrest to an angle measured from upright. 0 is fully upright and the
    backrest reclines at most 40 degrees.

    Args:
        angle_deg: Target backrest angle in degrees, 0 to 40.
    """
    if not 0 <= angle_deg <= 40:
        return "The backrest goes from 0 to 40 degrees."
    _state["backrest_deg"] = angle_deg
    return f"Backrest at {angle_deg:g} degrees."


@tool
def set_seat_height(height_cm: float) -> str:
    """Raise or lower the seat. Height is in centimetres above the lowest position (0), up to 25 cm."""
    if not 0 <= height_cm <= 25:
        return "Seat height must be 0 to 25 cm."
    _state["seat_cm"] = height_cm
    return f"Seat at {height_cm:g} cm."


@skill(timeout_s=300)
def go_to_room(
    room: Literal["kitchen", "bedroom", "bathroom", "living_room", "front_door", "garden"],
    goal: GoalHandle,
) -> str:
    """Drive by itself to a room of the house, avoiding obstacles on the way.

    Args:
        room: Where to go.
    """
    for step in range(40):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (step + 1) / 40})
    _state["room"] = room
    return f"We're in the {room.replace('_', ' ')}."


@tool
def set_lights(on: bool) -> str:
    """Turn the chair's front and rear lights on or off."""
    _state["lights"] = on
    return f"Lights {'on' if on else 'off'}."


@tool
def sound_horn() -> str:
    """Sound the horn once to warn people nearby."""
    return "Beep beep!"


@tool
def engage_brake() -> str:
    """Emergency brake: cut drive power and lock both wheels immediately."""
    _state["brake"] = True
    return "Brake engaged, wheels locked."
