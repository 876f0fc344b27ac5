"""Tools for a wheeled delivery base that runs errands around a hospital floor.

The bodies are simulated: they update a small state object and return a short
sentence the robot can say back.
"""

from types import SimpleNamespace
from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Destination = Literal[
    "reception",
    "pharmacy",
    "lab",
    "ward_a",
    "ward_b",
    "nurses_station",
    "cafeteria",
    "charging_dock",
]

_robot = SimpleNamespace(
    location="charging_dock",
    heading_deg=0.0,
    odometer_m=0.0,
    battery_pct=82,
    charging=False,
    volume=60,
    locked={"top": True, "bottom": True},
    estopped=False,
)


@tool
def drive(distance_m: float, speed_mps: float = 0.5) -> str:
    """Drive straight ahead, or back up.

    Positive distance drives forward, negative distance reverses.

    Args:
        distance_m: how far to drive in metres, at most 5 either way.
        speed_mps: cruising speed in metres per second, between 0.1 and 1.2.
    """
    if _robot.estopped:
        return "I can't move, the emergency stop is engaged."
    if abs(distance_m) > 5:
        return "That's too far for one move; the limit is 5 metres."
    if not 0.1 <= speed_mps <= 1.2:
        return "Speed must be between 0.1 and 1.2 metres per second."
    _robot.odometer_m += abs(distance_m)
    _robot.location = "corridor"
    way = "forward" if distance_m >= 0 else "backward"
    return f"Drove {abs(distance_m):g} m {way} at {speed_mps:g} m/s."


@tool
def turn(degrees: float) -> str:
    """Turn the base on the spot. Positive degrees turn left (counter-clockwise),
    negative turn right (clockwise); the range is -180 to 180."""
    if _robot.estopped:
        return "I can't move, the emergency stop is engaged."
    if not -180 <= degrees <= 180:
        return "I can only turn between -180 and 180 degrees at a time."
    _robot.heading_deg = (_robot.heading_deg + degrees) % 360
    side = "left" if degrees >= 0 else "right"
    return f"Turned {abs(degrees):g} degrees to the {side}."


@skill(timeout_s=300)
def go_to(destination: Destination, goal: GoalHandle) -> str:
    """Navigate to a named place on the floor, avoiding people on the way.

    Args:
        destination: where to go. charging_dock is the charger by the lifts.
    """
    if _robot.estopped:
        return "I can't move, the emergency stop is engaged."
    for i in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 10})
    _robot.location = destination
    _robot.charging = destination == "charging_dock"
    return f"Arrived at the {destination.replace('_', ' ')}."


@tool
def set_drawer_lock(drawer: Literal["top", "bottom"], locked: bool) -> str:
    """Lock or unlock one of the two delivery drawers.

    Args:
        drawer: which drawer.
        locked: True locks it, False unlocks it so someone can take the contents.
    """
    _robot.locked[drawer] = locked
    return f"The {drawer} drawer is now {'locked' if locked else 'unlocked'}."


@tool
def say(message: str) -> str:
    """Speak a message out loud through the front speaker.

    Args:
        message: the exact words to say.
    """
    return f'Said: "{message}"'


@tool
def set_volume(level: Annotated[int, "speaker volume in percent, between 0 and 100"]) -> str:
    """Change how loud the speaker is. 0 mutes it."""
    if not 0 <= level <= 100:
        return "Volume must be between 0 and 100."
    _robot.volume = level
    return f"Volume set to {level} percent."


@tool
def get_battery() -> str:
    """Report the battery charge and whether the base is on the charger."""
    state = "charging" if _robot.charging else "not charging"
    return f"Battery at {_robot.battery_pct} percent, {state}."


@tool
def get_location() -> str:
    """Report where the robot is right now."""
    return f"I'm at the {_robot.location.replace('_', ' ')}."


@tool
def emergency_stop() -> str:
    """Cut power to the drive motors immediately. Someone has to reset it by hand afterwards."""
    _robot.estopped = True
    return "Emergency stop engaged. Motors are off."
