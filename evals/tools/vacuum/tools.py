"""Home robot vacuum + mop. Simulated: state lives in a small module-level object."""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Room = Literal["kitchen", "living_room", "bedroom", "bathroom", "hallway"]


class _Robot:
    battery = 82
    bin_full_pct = 40
    water_tank_pct = 65
    suction = "standard"
    water_flow = 2
    do_not_disturb = False
    docked = True
    busy = None
    heading = 0.0


_bot = _Robot()


@skill(timeout_s=120)
def clean_room(
    room: Room,
    goal: GoalHandle,
    mode: Literal["vacuum", "mop", "both"] = "vacuum",
    passes: int = 1,
) -> str:
    """Clean one room.

    Args:
        room: the room to clean.
        mode: vacuum only, mop only, or vacuum and mop together.
        passes: how many times to go over the room, 1 to 3.
    """
    _bot.docked = False
    _bot.busy = room
    steps = 8 * passes
    for i in range(steps):
        goal.sleep(0.02)
        goal.publish_feedback({"progress": (i + 1) / steps})
    _bot.busy = None
    return f"finished cleaning the {room.replace('_', ' ')} ({mode}, {passes} pass{'es' if passes > 1 else ''})"


@tool
def spot_clean(radius_cm: float = 50) -> str:
    """Do an intensive spiral clean around where the robot is now.

    Args:
        radius_cm: radius of the spiral in centimetres, between 20 and 150.
    """
    _bot.docked = False
    return f"spot cleaning a {radius_cm:g} cm circle"


@tool
def drive(meters: Annotated[float, "distance in metres; positive is forward, negative reverses. Max 2 m either way"]) -> str:
    """Drive straight forward or backward."""
    _bot.docked = False
    return f"drove {'forward' if meters >= 0 else 'backward'} {abs(meters):g} m"


@tool
def turn(degrees: float) -> str:
    """Rotate in place. Positive turns left (counter-clockwise), negative turns right (clockwise).

    Args:
        degrees: angle to rotate, in degrees, at most 360 either way.
    """
    _bot.heading = (_bot.heading + degrees) % 360
    return f"turned {abs(degrees):g} degrees {'left' if degrees >= 0 else 'right'}"


@tool
def set_suction(power: Literal["quiet", "standard", "turbo", "max"]) -> str:
    """Change the vacuum suction power."""
    _bot.suction = power
    return f"suction set to {power}"


@tool
def set_water_flow(level: int) -> str:
    """Set how wet the mop pad is.

    Args:
        level: water flow from 1 (barely damp) to 3 (wet).
    """
    _bot.water_flow = level
    return f"water flow set to {level}"


@tool
def set_do_not_disturb(enabled: bool) -> str:
    """Turn do-not-disturb (no voice prompts, no scheduled cleans) on or off."""
    _bot.do_not_disturb = enabled
    return f"do not disturb {'on' if enabled else 'off'}"


@tool
def get_status() -> str:
    """Report battery level, dust bin and water tank levels, and what the robot is doing."""
    doing = "docked" if _bot.docked else (f"cleaning the {_bot.busy}" if _bot.busy else "idle")
    return (
        f"battery {_bot.battery}%, bin {_bot.bin_full_pct}% full, "
        f"water tank {_bot.water_tank_pct}%, {doing}"
    )


@tool
def return_to_dock() -> str:
    """Abandon whatever it is doing and go back to the charging dock."""
    _bot.busy = None
    _bot.docked = True
    return "heading back to the dock"


@tool
def emergency_stop() -> str:
    """Stop all motors, brushes and the pump immediately."""
    _bot.busy = None
    return "stopped everything"
