"""Tools for a pan-tilt-zoom camera head (security / streaming).

Everything is simulated: a tiny module-level state stands in for the motor
controller and the video pipeline.
"""

from __future__ import annotations

from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool


class _Head:
    pan = 0.0  # degrees, positive = right
    tilt = 0.0  # degrees, positive = up
    zoom = 1.0
    recording = False
    audio = True
    night_vision = False
    powered = True
    preset = None
    snapshots = 0


_state = _Head()


@tool
def pan(degrees: float) -> str:
    """Pan the camera head horizontally by a relative angle.

    Args:
        degrees: how far to pan, in degrees. Positive pans right (clockwise seen
            from above), negative pans left. At most 170 either way.
    """
    _state.pan = max(-170.0, min(170.0, _state.pan + degrees))
    return f"panned to {_state.pan:g} degrees"


@tool
def tilt(degrees: float) -> str:
    """Tilt the camera up or down by a relative angle in degrees.
    Positive tilts up, negative tilts down; the head can only go between
    -30 (looking down) and 90 (straight up)."""
    _state.tilt = max(-30.0, min(90.0, _state.tilt + degrees))
    return f"tilted to {_state.tilt:g} degrees"


@tool
def set_zoom(level: float) -> str:
    """Set the optical zoom.

    Args:
        level: zoom factor between 1 (wide) and 20 (full telephoto).
    """
    _state.zoom = max(1.0, min(20.0, level))
    return f"zoom set to {_state.zoom:g}x"


@skill(timeout_s=20)
def go_to_preset(spot: Literal["front_door", "driveway", "backyard", "garage"], goal: GoalHandle) -> str:
    """Swing the camera to one of the saved viewing positions."""
    for i in range(5):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 5})
    _state.preset = spot
    return f"now looking at the {spot.replace('_', ' ')}"


@tool
def start_recording(minutes: float | None = None, with_audio: bool = True) -> str:
    """Start recording video to the SD card.

    Args:
        minutes: stop automatically after this many minutes; leave empty to
            record until told to stop. At most 60.
        with_audio: also record sound from the built-in microphone.
    """
    _state.recording = True
    _state.audio = with_audio
    length = f" for {minutes:g} minutes" if minutes else ""
    return f"recording{length}" + ("" if with_audio else " without audio")


@tool
def stop_recording() -> str:
    """Stop the current video recording."""
    was = _state.recording
    _state.recording = False
    return "recording stopped" if was else "wasn't recording"


@tool
def set_night_vision(on: bool) -> str:
    """Switch the infrared night vision lamps on or off."""
    _state.night_vision = on
    return "night vision on" if on else "night vision off"


@tool
def take_snapshot(count: int = 1) -> str:
    """Save still photos of the current view.

    Args:
        count: number of photos to take in a burst, between 1 and 10.
    """
    _state.snapshots += count
    return f"took {count} photo" + ("s" if count != 1 else "")


@tool
def get_camera_status() -> str:
    """Report where the camera is pointing, the zoom, and whether it is recording or in night mode."""
    return (
        f"pan {_state.pan:g}, tilt {_state.tilt:g}, zoom {_state.zoom:g}x, "
        f"{'recording' if _state.recording else 'not recording'}, "
        f"night vision {'on' if _state.night_vision else 'off'}"
    )


@tool
def power_down() -> str:
    """Privacy shutdown: stop all streaming and recording, turn the lens into
    the housing and cut power to the head."""
    _state.recording = False
    _state.powered = False
    _state.pan, _state.tilt = 0.0, -30.0
    return "camera powered down"
