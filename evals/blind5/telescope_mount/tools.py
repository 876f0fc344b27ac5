"""Tools for a motorised backyard telescope on a computerised alt-azimuth mount.

Conventions used throughout:
- Altitude is the angle above the horizon, azimuth the compass bearing
  (0 = north, 90 = east), both in degrees.
- Nudges are small relative moves of at most 10 degrees per axis.
- The focuser is a stepper motor; "out" lengthens the draw tube, "in" shortens it.
"""

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import GoalHandle, skill, tool

CatalogueObject = Literal[
    "moon",
    "mercury",
    "venus",
    "mars",
    "jupiter",
    "saturn",
    "orion nebula",
    "andromeda galaxy",
    "pleiades",
    "ring nebula",
]


@skill(timeout_s=120)
def slew_to(target: CatalogueObject, goal: GoalHandle) -> str:
    """Slew the telescope to an object from the catalogue and centre it.

    Args:
        target: Name of the catalogue object to point at.
    """
    for _ in range(20):
        goal.sleep(0.05)
        goal.check()
    return f"Slewed to the {target}; it should be centred in the eyepiece."


@tool
def nudge_altitude(degrees: Annotated[float, Field(ge=-10, le=10)]) -> str:
    """Nudge the telescope up or down in altitude by a small angle.

    Args:
        degrees: How far to move, in degrees, between -10 and 10.
            Positive raises the tube towards the zenith, negative lowers it
            towards the horizon.
    """
    way = "up" if degrees >= 0 else "down"
    return f"Nudged {way} by {abs(degrees):g} degrees in altitude."


@tool
def nudge_azimuth(degrees: Annotated[float, Field(ge=-10, le=10)]) -> str:
    """Nudge the telescope left or right in azimuth by a small angle.

    Args:
        degrees: How far to turn, in degrees, between -10 and 10.
            Positive turns right (clockwise seen from above, azimuth
            increasing), negative turns left (counter-clockwise).
    """
    way = "right" if degrees >= 0 else "left"
    return f"Nudged {way} by {abs(degrees):g} degrees in azimuth."


@tool
def set_tracking(enabled: bool) -> str:
    """Turn sidereal tracking on or off.

    Args:
        enabled: True to start tracking the sky at the sidereal rate,
            False to switch tracking off and hold the motors still.
    """
    return "Sidereal tracking is on." if enabled else "Sidereal tracking is off."


@tool
def move_focuser(
    direction: Literal["in", "out"],
    steps: Annotated[int, Field(ge=1, le=5000)],
) -> str:
    """Move the focuser in or out by a number of motor steps.

    Args:
        direction: "out" racks the draw tube outwards, "in" pulls it inwards.
        steps: How many focuser motor steps to move, between 1 and 5000.
    """
    return f"Focuser moved {direction} by {steps} steps."


@tool
def set_dew_heater(level: Literal["off", "low", "medium", "high"]) -> str:
    """Set the dew heater's power level.

    Args:
        level: Heater power: off, low, medium or high.
    """
    return f"Dew heater set to {level}."


@skill(timeout_s=330)
def take_exposure(seconds: Annotated[float, Field(gt=0, le=300)], goal: GoalHandle) -> str:
    """Take a single camera exposure and save the image.

    Args:
        seconds: Exposure time in seconds, more than 0 and at most 300.
    """
    waited = 0.0
    while waited < min(seconds, 1.0):
        goal.sleep(0.05)
        waited += 0.05
    return f"Took a {seconds:g} second exposure and saved it."


@skill(timeout_s=120)
def park(goal: GoalHandle) -> str:
    """Park the telescope at its home position and switch tracking off.

    The tube is lowered level and pointed due north, the motors are
    de-energised and the current alignment is discarded, so the mount must be
    re-aligned before the next observation. This cannot be undone.
    """
    for _ in range(20):
        goal.sleep(0.05)
    return "Telescope parked; alignment cleared."


@tool
def get_status() -> str:
    """Report the telescope's current state.

    Gives where it is pointing (altitude, azimuth and the object, if any),
    whether tracking is on, the focuser position, the dew heater level and
    whether the camera is exposing.
    """
    return (
        "Pointing at Jupiter, altitude 42 degrees, azimuth 151 degrees; "
        "tracking on; focuser at step 2310; dew heater low; camera idle."
    )
