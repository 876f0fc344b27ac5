"""Voice tools for an autonomous orchard / vineyard sprayer tractor.

All tools are stubs: they describe what the tractor would do and return it as text.
"""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents import tool


@tool
def drive_to_row(row: int) -> str:
    """Drive to a tree row and line up at its start.

    Args:
        row: Number of the tree row to drive to, between 1 and 60.
    """
    return f"Driving to row {row}."


@tool
def turn_at_row_end(direction: Literal["left", "right"]) -> str:
    """Turn at the end of the current row (the headland) into the next row.

    Args:
        direction: Which way to turn at the headland, left or right.
    """
    return f"Will turn {direction} at the end of the row."


@tool
def adjust_hitch(change_cm: float) -> str:
    """Raise or lower the three-point hitch that carries the sprayer.

    Args:
        change_cm: How far to move the hitch, in centimetres, between -30 and 30.
            Positive raises the implement, negative lowers it.
    """
    if change_cm >= 0:
        return f"Raised the hitch by {change_cm:g} cm."
    return f"Lowered the hitch by {-change_cm:g} cm."


@tool
def set_boom_section(side: Literal["left", "right", "both"], on: bool) -> str:
    """Switch a boom sprayer section on or off.

    Args:
        side: Which boom section: the left one, the right one, or both.
        on: True to open the section and spray, False to shut it off.
    """
    state = "on" if on else "off"
    return f"Boom section {side} switched {state}."


@tool
def set_headlights(on: bool) -> str:
    """Turn the tractor's headlights on or off."""
    return "Headlights on." if on else "Headlights off."


@tool
def set_spray_rate(
    litres_per_hectare: Annotated[float, "Application rate in litres per hectare (L/ha), from 100 to 1000."],
) -> str:
    """Set the sprayer's application rate."""
    return f"Spray rate set to {litres_per_hectare:g} L/ha."


@tool
def set_speed(speed_kmh: float) -> str:
    """Set the tractor's ground speed while driving along the rows.

    Args:
        speed_kmh: target ground speed in km/h (kilometres per hour). Must be between 1 and 12.
    """
    return f"Ground speed set to {speed_kmh:g} km/h."


DropletSize = Literal["fine", "medium", "coarse"]


@tool
def set_droplet_size(size: DropletSize) -> str:
    """Change the nozzle droplet size.

    Coarse droplets drift less in wind; fine droplets give better coverage.

    Args:
        size: fine, medium or coarse.
    """
    return f"Nozzles set to {size} droplets."


@tool
def get_tank_level() -> str:
    """Report how much spray mix is left in the tank."""
    return "The tank is at 640 litres, about 43 percent full."


@tool
def return_to_barn() -> str:
    """Return to the barn: stop spraying, lift the implement and drive home to the shed."""
    return "Shutting off the sprayer and heading back to the barn."


@tool
def emergency_stop() -> str:
    """Stop the engine immediately and apply the parking brake.

    Emergency use only: everything halts where it is.
    """
    return "Emergency stop: engine off, brake on."
