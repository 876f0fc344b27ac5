"""Tools for the hospital UV disinfection robot.

These are stubs: each one returns a sentence describing what the robot would do.
Replace the bodies with calls to the real base / mast / lamp controllers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import tool

Area = Literal["icu", "emergency", "radiology", "surgery", "pharmacy", "maternity"]


@tool
def drive_to_area(area: Area) -> str:
    """Drive the robot to a named hospital department.

    Args:
        area: The department to drive to.
    """
    return f"Driving to {area}."


@tool
def go_to_room(room_number: int) -> str:
    """Go to a patient room by its number.

    Args:
        room_number: The patient room number on the door sign, from 100 to 499.
    """
    if not 100 <= room_number <= 499:
        raise ValueError("room_number must be between 100 and 499")
    return f"Heading to room {room_number}."


@tool
def move_mast(delta_cm: Annotated[float, Field(ge=-150, le=150)]) -> str:
    """Raise or lower the UV lamp mast by a relative amount.

    Positive values raise the mast, negative values lower it. The mast travels
    150 cm in total, so a single move is limited to -150..150 cm.

    Args:
        delta_cm: How far to move the mast, in centimetres (positive = up, negative = down).
    """
    direction = "Raising" if delta_cm >= 0 else "Lowering"
    return f"{direction} the lamp mast by {abs(delta_cm):g} cm."


@tool
def start_disinfection(
    minutes: int,
    dose: Literal["low", "standard", "high"] = "standard",
) -> str:
    """Start a timed UV disinfection cycle in the current room.

    The room must be empty and the door interlock engaged before the lamps come on.

    Args:
        minutes: Length of the cycle in minutes, between 5 and 60.
        dose: UV dose level for the cycle.
    """
    if not 5 <= minutes <= 60:
        raise ValueError("minutes must be between 5 and 60")
    return f"Starting a {minutes}-minute {dose}-dose disinfection cycle."


@tool
def abort_cycle() -> str:
    """Abort the running disinfection cycle and switch the UV lamps off immediately.

    Emergency action: the lamps are cut at once and the cycle cannot be resumed.
    """
    return "Cycle aborted, UV lamps are off."


@tool
def set_door_interlock(engaged: bool) -> str:
    """Engage or release the door interlock.

    While engaged, opening the room door cuts the UV lamps.

    Args:
        engaged: True to engage (arm) the interlock, False to release it.
    """
    return "Door interlock engaged." if engaged else "Door interlock released."


@tool
def set_voice_warnings(enabled: bool) -> str:
    """Turn the spoken UV warning announcements on or off.

    :param enabled: whether the speaker announces "UV disinfection in progress, do not enter".
    """
    return f"Spoken warnings {'on' if enabled else 'off'}."


@tool
def set_speaker_volume(level: Annotated[int, "Volume level from 1 (quietest) to 10 (loudest)."]) -> str:
    """Set the volume of the warning speaker."""
    if not 1 <= level <= 10:
        raise ValueError("level must be between 1 and 10")
    return f"Speaker volume set to {level}."


@tool
def get_status() -> str:
    """Report the robot's battery charge, location, mast height, lamp state and cycle time left."""
    return "Battery 78 percent, in room 204, mast at 120 cm, lamps off, no cycle running."


@tool
def check_occupancy() -> str:
    """Check the occupancy sensor for people in the current room."""
    return "Occupancy sensor: room is clear, no motion detected."


@tool
def return_to_dock() -> str:
    """Drive back to the docking station and start charging."""
    return "Returning to the dock to charge."
