"""A simulated robotic lawn mower: cutting blade, garden zones and a charging dock."""

from dataclasses import dataclass
from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Zone = Literal["front_lawn", "back_lawn", "side_strip", "orchard"]
Pattern = Literal["stripes", "spiral", "checkerboard", "random"]


@dataclass
class Mower:
    x_m: float = 0.0
    heading_deg: float = 0.0
    battery_pct: int = 87
    blade_height_mm: int = 45
    blade_on: bool = False
    pattern: str = "stripes"
    zone: str = "dock"
    docked: bool = True
    grass_wet: bool = False
    halted: bool = False


MOWER = Mower()


@tool
def get_status() -> str:
    """Report the mower's battery charge, where it is, the blade height and whether it is docked."""
    where = "on the dock" if MOWER.docked else f"in the {MOWER.zone.replace('_', ' ')}"
    blade = "spinning" if MOWER.blade_on else "off"
    return (
        f"Battery {MOWER.battery_pct}%, {where}, blade at {MOWER.blade_height_mm} mm and {blade}, "
        f"pattern {MOWER.pattern}."
    )


@tool
def check_rain_sensor() -> str:
    """Check the rain sensor to tell whether the grass is wet."""
    return "The grass is wet, better wait." if MOWER.grass_wet else "The grass is dry."


@tool
def emergency_stop() -> str:
    """Emergency stop: halt the wheels and brake the blade at once."""
    MOWER.blade_on = False
    MOWER.halted = True
    return "Emergency stop. Wheels halted, blade braked."


@tool
def drive(distance_m: float) -> str:
    """Drive the mower straight ahead or in reverse.

    Args:
        distance_m: How far to drive, in metres. Positive drives forward, negative backs up.
            At most 10 metres either way.
    """
    if abs(distance_m) > 10:
        raise ValueError("I can drive at most 10 metres at a time.")
    MOWER.x_m += distance_m
    MOWER.docked = False
    way = "forward" if distance_m >= 0 else "back"
    return f"Drove {abs(distance_m):g} m {way}."


@tool
def turn(degrees: float) -> str:
    """Turn the mower on the spot.

    Args:
        degrees: Angle to turn, in degrees, between -180 and 180. Positive turns left,
            negative turns right.
    """
    if abs(degrees) > 180:
        raise ValueError("Turn at most 180 degrees.")
    MOWER.heading_deg = (MOWER.heading_deg + degrees) % 360
    side = "left" if degrees >= 0 else "right"
    return f"Turned {abs(degrees):g} degrees {side}."


@tool
def set_blade_height(height_mm: int) -> str:
    """Raise or lower the cutting blade.

    Args:
        height_mm: Cutting height above the ground in millimetres, from 20 to 80.
    """
    if not 20 <= height_mm <= 80:
        raise ValueError("The blade height goes from 20 to 80 mm.")
    MOWER.blade_height_mm = height_mm
    return f"Blade set to {height_mm} mm."


@tool
def set_blade(on: bool) -> str:
    """Switch the cutting blade on or off.

    Args:
        on: True spins the blade up, False switches it off.
    """
    MOWER.blade_on = on
    return "Blade on." if on else "Blade off."


@tool
def set_mowing_pattern(pattern: Pattern) -> str:
    """Choose the pattern the mower follows across a zone.

    Args:
        pattern: stripes are straight parallel lanes, spiral works from the edge inwards,
            checkerboard crosses the lanes at right angles, random wanders about.
    """
    MOWER.pattern = pattern
    return f"Pattern set to {pattern}."


@skill(timeout_s=120)
def mow_zone(zone: Zone, goal: GoalHandle) -> str:
    """Mow one zone of the garden.

    Args:
        zone: The zone to mow: the front lawn, the back lawn, the side strip along the fence,
            or the orchard under the fruit trees.
    """
    MOWER.docked = False
    MOWER.blade_on = True
    MOWER.zone = zone
    for _ in range(20):
        goal.sleep(0.02)
        MOWER.battery_pct = max(0, MOWER.battery_pct - 1)
    return f"Finished mowing the {zone.replace('_', ' ')}."


@skill(timeout_s=60)
def return_to_dock(goal: GoalHandle) -> str:
    """Go back to the charging dock and park there."""
    MOWER.blade_on = False
    for _ in range(10):
        goal.sleep(0.02)
    MOWER.docked = True
    MOWER.zone = "dock"
    MOWER.x_m = 0.0
    return "Parked on the dock, charging."
