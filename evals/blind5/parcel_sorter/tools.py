"""Tools for the depot parcel-sorting cell.

The cell: a conveyor belt (adjustable speed and direction) feeding a pick point, a
suction-cup picking arm that drops parcels into twelve numbered chutes or four named
bins, a barcode scanner and a weighing scale at the pick point, and a status readout
(belt, arm, suction, jam alarms, counters).

Directions on the belt: "forward" carries parcels from the infeed toward the chutes;
"reverse" / "back" carries them back toward the infeed.
"""

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import GoalHandle, skill, tool


@tool
def run_belt(speed: Annotated[float, Field(ge=-0.5, le=1.0)]) -> str:
    """Run the conveyor belt continuously at a set speed and direction.

    Args:
        speed: belt speed in metres per second, between -0.5 and 1.0.
            Positive runs the belt forward, carrying parcels toward the chutes;
            negative runs it in reverse, back toward the infeed. Reverse is
            limited to 0.5 m/s, forward to 1.0 m/s.
    """
    if speed >= 0:
        return f"Belt running forward at {speed:g} metres per second."
    return f"Belt running in reverse at {-speed:g} metres per second."


@tool
def jog_belt(distance: Annotated[float, Field(ge=-50, le=50)]) -> str:
    """Jog (nudge) the conveyor belt a short distance, then hold it still.

    Args:
        distance: how far to move the belt, in centimetres, between -50 and 50.
            Positive moves it forward toward the chutes; negative moves it back
            toward the infeed.
    """
    way = "forward" if distance >= 0 else "back"
    return f"Jogged the belt {abs(distance):g} centimetres {way}."


@skill(timeout_s=30)
def sort_parcel(chute: Annotated[int, Field(ge=1, le=12)], goal: GoalHandle) -> str:
    """Pick the parcel at the pick point with the suction arm and drop it into a numbered chute.

    Args:
        chute: chute number, from 1 to 12.
    """
    goal.sleep(0.05)
    goal.publish_feedback({"progress": 1.0})
    return f"Parcel dropped into chute {chute}."


@skill(timeout_s=30)
def divert_parcel(
    bin: Literal["reject", "returns", "manual", "oversize"], goal: GoalHandle
) -> str:
    """Pick the parcel at the pick point with the suction arm and put it in a named bin instead of a chute.

    Args:
        bin: which bin: "reject" (damaged or unreadable parcels), "returns",
            "manual" (left for a person to handle) or "oversize".
    """
    goal.sleep(0.05)
    goal.publish_feedback({"progress": 1.0})
    return f"Parcel put in the {bin} bin."


@tool
def scan_barcode() -> str:
    """Scan the barcode on the parcel at the pick point and read out its tracking number."""
    return "Barcode reads tracking number PX 4471 0923."


@tool
def weigh_parcel() -> str:
    """Weigh the parcel on the scale and report its weight in kilograms."""
    return "The parcel weighs 2.4 kilograms."


@tool
def tare_scale() -> str:
    """Zero (tare) the weighing scale. Only do this with the scale empty."""
    return "Scale zeroed."


@tool
def get_cell_status() -> str:
    """Report the cell's status: belt speed and direction, arm position, suction, jam alarms and parcels sorted today."""
    return (
        "Belt forward at 0.5 metres per second, arm at the pick point, suction off, "
        "no jams, 312 parcels sorted today."
    )


@tool
def home_arm() -> str:
    """Park the picking arm at its home position, clear of the belt.

    Any parcel the arm is holding is released into the reject bin first.
    """
    return "Arm parked at home."


@tool
def emergency_stop() -> str:
    """Stop the whole cell at once: cut power to the belt, the arm and the suction.

    The cell stays locked out until a technician resets it by hand; it cannot be
    undone by voice.
    """
    return "Emergency stop: belt, arm and suction powered off. A technician must reset the cell."
