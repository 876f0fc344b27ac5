"""Voice tools for the motorised camera dolly / crane ("Dolly Parton", stage B rig).

Each function talks to the rig controller; for now they just return what they would do.
"""

from typing import Annotated, Literal

from edgevox.agents import tool


@tool
def move_dolly(distance_m: float, speed: Literal["slow", "normal", "fast"] = "normal") -> str:
    """Move the dolly along the track.

    Args:
        distance_m: How far to travel, in metres. Positive moves forward toward the
            subject (dolly in / push in), negative moves backward away from it
            (dolly out / pull back). Between -10 and 10.
        speed: Travel speed: slow, normal or fast.
    """
    return f"dolly moving {distance_m:+g} m at {speed} speed"


@tool
def boom_arm(direction: Literal["up", "down"], height_cm: float) -> str:
    """Boom the crane arm up or down to raise or lower the camera.

    Args:
        direction: Which way to boom: up raises the camera, down lowers it.
        height_cm: How far to raise or lower the camera, in centimetres, between 1 and 200.
    """
    return f"booming {direction} {height_cm:g} cm"


@tool
def pan_camera(degrees: float) -> str:
    """Pan the camera head left or right.

    Args:
        degrees: Pan angle in degrees. Positive pans right, negative pans left.
            Between -180 and 180.
    """
    return f"panning {degrees:+g} degrees"


@tool
def tilt_camera(degrees: float) -> str:
    """Tilt the camera head up or down.

    Args:
        degrees: Tilt angle in degrees, between -60 and 60. Positive tilts up,
            negative tilts down.
    """
    return f"tilting {degrees:+g} degrees"


@tool
def roll_camera(
    degrees: Annotated[
        float,
        "Roll angle in degrees, between -30 and 30. Positive rolls clockwise as seen "
        "from behind the camera, negative rolls counter-clockwise.",
    ],
) -> str:
    """Roll the camera sideways around the lens axis for a Dutch angle."""
    return f"rolling {degrees:+g} degrees"


@tool
def set_focus(distance_m: float) -> str:
    """Pull focus to a subject distance.

    Args:
        distance_m: Focus distance in metres, between 0.3 and 50.
    """
    return f"focus set to {distance_m:g} m"


@tool
def set_zoom(focal_length_mm: int) -> str:
    """Zoom the lens to a focal length.

    Args:
        focal_length_mm: Focal length in millimetres, between 24 and 290.
    """
    return f"zoomed to {focal_length_mm} mm"


@tool
def set_recording(recording: bool) -> str:
    """Start or end recording on the camera.

    Args:
        recording: True starts recording, False ends the recording.
    """
    return "recording" if recording else "recording ended"


@tool
def return_to_mark() -> str:
    """Return the dolly, crane arm and head to the saved starting mark (back to one)."""
    return "returning to first mark"


@tool
def get_rig_status(reading: Literal["battery", "position"]) -> str:
    """Report the rig's battery level or its current position.

    Args:
        reading: What to report: battery (charge in percent) or position (dolly on the
            track, arm height, head angles).
    """
    if reading == "battery":
        return "battery is at 74 percent"
    return "dolly at 3.2 m on the track, arm at 140 cm, pan 0, tilt -5, roll 0"
