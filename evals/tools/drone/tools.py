"""Tools for a small indoor/outdoor quadcopter (simulated)."""

from types import SimpleNamespace
from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool


_state = SimpleNamespace(
    airborne=False,
    altitude_m=0.0,
    x_m=0.0,
    y_m=0.0,
    heading_deg=0.0,
    battery_pct=87,
    camera_tilt_deg=0.0,
    recording=False,
    speed_mode="normal",
)


@tool
def take_off(height: float = 1.5) -> str:
    """Take off and hover.

    Args:
        height: hover height after takeoff in metres, between 0.5 and 5.
    """
    if _state.airborne:
        return "Already flying."
    _state.airborne = True
    _state.altitude_m = height
    return f"Taking off, hovering at {height:g} m."


@tool
def land() -> str:
    """Land right where the drone is now and stop the motors."""
    _state.airborne = False
    _state.altitude_m = 0.0
    return "Landing now."


@tool
def return_home() -> str:
    """Fly straight back to the launch point and land there."""
    _state.x_m = _state.y_m = 0.0
    _state.airborne = False
    _state.altitude_m = 0.0
    return "Returning to home and landing."


@skill(timeout_s=60)
def fly(
    direction: Literal["forward", "backward", "left", "right"],
    distance: float,
    goal: GoalHandle,
) -> str:
    """Fly horizontally relative to where the drone is facing.

    Args:
        direction: which way to fly, relative to the nose.
        distance: how far to go, in metres (at most 20).
    """
    steps = 10
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    if direction == "forward":
        _state.x_m += distance
    elif direction == "backward":
        _state.x_m -= distance
    elif direction == "left":
        _state.y_m += distance
    else:
        _state.y_m -= distance
    return f"Flew {direction} {distance:g} m."


@tool
def change_altitude(meters: float) -> str:
    """Climb or descend by a relative amount. Positive climbs, negative descends.

    Args:
        meters: altitude change in metres, between -10 and 10.
    """
    _state.altitude_m = max(0.0, _state.altitude_m + meters)
    return f"Altitude now {_state.altitude_m:g} m."


@tool
def rotate(degrees: float) -> str:
    """Yaw in place. Positive turns clockwise (right), negative turns counter-clockwise (left).

    Args:
        degrees: how much to turn, between -180 and 180.
    """
    _state.heading_deg = (_state.heading_deg + degrees) % 360
    return f"Heading {_state.heading_deg:g} degrees."


@tool
def tilt_camera(angle: float) -> str:
    """Point the gimbal camera up or down.

    Args:
        angle: gimbal pitch in degrees; 0 is level, negative points down, range -90 to 30.
    """
    _state.camera_tilt_deg = angle
    return f"Camera tilted to {angle:g} degrees."


@tool
def set_recording(on: bool) -> str:
    """Start or stop video recording.

    Args:
        on: true to start recording, false to stop.
    """
    _state.recording = on
    return "Recording started." if on else "Recording stopped."


@tool
def set_speed_mode(mode: Literal["slow", "normal", "sport"]) -> str:
    """Choose how fast the drone flies: slow (indoors), normal, or sport."""
    _state.speed_mode = mode
    return f"Speed mode set to {mode}."


@tool
def get_status() -> str:
    """Report battery level, altitude and whether the drone is flying or recording."""
    state = "flying" if _state.airborne else "on the ground"
    rec = ", recording" if _state.recording else ""
    return f"Battery {_state.battery_pct}%, altitude {_state.altitude_m:g} m, {state}{rec}."
