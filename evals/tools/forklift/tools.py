"""Tools for an autonomous warehouse forklift (simulated)."""

from types import SimpleNamespace
from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Location = Literal["dock 1", "dock 2", "aisle A", "aisle B", "aisle C", "charging station"]


_truck = SimpleNamespace(
    location="aisle A",
    heading_deg=0.0,
    odometer_m=0.0,
    fork_height_cm=0.0,
    has_pallet=False,
    load_kg=0.0,
    battery_pct=64,
    warning_lights=False,
    stopped=False,
)


@skill(timeout_s=120)
def drive(meters: float, goal: GoalHandle, speed: Literal["slow", "normal"] = "normal") -> str:
    """Drive straight ahead or in reverse.

    Args:
        meters: distance in metres; positive drives forward, negative reverses. At most 10 either way.
        speed: travel speed, "slow" for tight spots.
    """
    steps = 10
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    _truck.odometer_m += abs(meters)
    word = "forward" if meters >= 0 else "in reverse"
    return f"Drove {abs(meters):g} m {word} at {speed} speed."


@tool
def turn(degrees: float) -> str:
    """Turn on the spot. Positive is left (counter-clockwise), negative is right.

    Args:
        degrees: angle to turn, from -180 to 180.
    """
    _truck.heading_deg = (_truck.heading_deg + degrees) % 360
    return f"Turned {degrees:g} degrees."


@skill(timeout_s=300)
def go_to(destination: Location, goal: GoalHandle) -> str:
    """Navigate to a named spot in the warehouse."""
    for i in range(20):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 20})
    _truck.location = destination
    return f"Arrived at {destination}."


@tool
def set_fork_height(height_cm: float) -> str:
    """Raise or lower the forks to an absolute height.

    Args:
        height_cm: fork height above the floor in centimetres, between 0 and 450.
    """
    _truck.fork_height_cm = height_cm
    return f"Forks at {height_cm:g} cm."


@tool
def pick_up_pallet() -> str:
    """Slide the forks under the pallet in front and lift it."""
    if _truck.has_pallet:
        return "Already carrying a pallet."
    _truck.has_pallet = True
    _truck.load_kg = 480.0
    return "Pallet picked up."


@tool
def put_down_pallet() -> str:
    """Set the carried pallet down where the truck is and back the forks out."""
    if not _truck.has_pallet:
        return "Not carrying anything."
    _truck.has_pallet = False
    _truck.load_kg = 0.0
    return "Pallet set down."


@tool
def sound_horn(times: int = 1) -> str:
    """Honk the horn.

    Args:
        times: number of honks, 1 to 5.
    """
    return "Honk! " * times


@tool
def set_warning_lights(on: bool) -> str:
    """Switch the flashing amber warning lights on or off."""
    _truck.warning_lights = on
    return "Warning lights on." if on else "Warning lights off."


@tool
def get_status() -> str:
    """Report battery, location, fork height and what the truck is carrying."""
    load = f"carrying a pallet of {_truck.load_kg:g} kg" if _truck.has_pallet else "no load"
    return (
        f"Battery {_truck.battery_pct}%, at {_truck.location}, "
        f"forks at {_truck.fork_height_cm:g} cm, {load}."
    )


@tool
def emergency_stop() -> str:
    """Stop all motion immediately and lock the brakes."""
    _truck.stopped = True
    return "Emergency stop engaged."
