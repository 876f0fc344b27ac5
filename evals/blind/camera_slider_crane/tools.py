"""Motion-control camera crane on a slider track: slide, boom, pan/tilt head, lens, presets."""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "slider_cm": 0.0,
    "boom_deg": 0.0,
    "pan_deg": 0.0,
    "tilt_deg": 0.0,
    "focus_m": 3.0,
    "zoom_mm": 35,
    "recording": False,
    "card_minutes_left": 94,
    "battery_percent": 66,
    "presets": {n: {"slider_cm": n * 20.0, "boom_deg": n * 2.0, "pan_deg": 0.0, "tilt_deg": 0.0} for n in range(1, 9)},
}


@tool
def slide(distance_cm: float) -> str:
    """Move the dolly along the slider track.

    Args:
        distance_cm: How far to slide, in centimetres. Positive slides to the right and
            negative to the left (as seen from behind the camera). The track is 200 cm long,
            so at most 200 per move.
    """
    if abs(distance_cm) > 200:
        return "The track is only 200 cm long."
    _state["slider_cm"] = min(200.0, max(0.0, _state["slider_cm"] + distance_cm))
    return f"Slider at {_state['slider_cm']:.0f} cm."


@tool
def boom(degrees: Annotated[float, "positive raises the arm, negative lowers it"]) -> str:
    """Raise or lower the crane arm by some degrees. At most 30 degrees per move."""
    if abs(degrees) > 30:
        return "The boom moves at most 30 degrees at a time."
    _state["boom_deg"] += degrees
    return f"Boom at {_state['boom_deg']:+.0f} degrees."


@tool
def pan_tilt(pan_deg: float = 0.0, tilt_deg: float = 0.0) -> str:
    """Pan and/or tilt the camera head relative to where it points now.

    Args:
        pan_deg: Degrees to pan. Positive pans left, negative pans right.
        tilt_deg: Degrees to tilt. Positive tilts up, negative tilts down.
    """
    _state["pan_deg"] += pan_deg
    _state["tilt_deg"] += tilt_deg
    return f"Head at pan {_state['pan_deg']:+.0f}, tilt {_state['tilt_deg']:+.0f}."


@tool
def set_focus(distance_m: float) -> str:
    """Set the focus distance of the lens in metres, 0.3 to 50."""
    _state["focus_m"] = distance_m
    return f"Focus at {distance_m:g} m."


@tool
def set_zoom(focal_length_mm: int) -> str:
    """Zoom the lens to a focal length.

    Args:
        focal_length_mm: 24 (widest) to 70 (tightest) millimetres.
    """
    if not 24 <= focal_length_mm <= 70:
        return "The lens zooms from 24 to 70 mm."
    _state["zoom_mm"] = focal_length_mm
    return f"Zoom {focal_length_mm} mm."


@tool
def set_recording(on: bool) -> str:
    """Start (True) or end (False) recording on the camera."""
    _state["recording"] = on
    return "Rolling." if on else "Recording ended."


@skill(timeout_s=60)
def go_to_preset(number: int, goal: GoalHandle) -> str:
    """Move every axis to a saved preset position.

    Args:
        number: Preset number, 1 to 8.
    """
    if number not in _state["presets"]:
        return "Presets are numbered 1 to 8."
    for i in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 10})
    _state.update(_state["presets"][number])
    return f"At preset {number}."


@skill(timeout_s=300)
def run_move(start_preset: int, end_preset: int, duration_s: float, goal: GoalHandle) -> str:
    """Run a smooth timed camera move from one preset to another.

    Args:
        start_preset: Preset to start from, 1 to 8.
        end_preset: Preset to end at, 1 to 8.
        duration_s: How long the move takes, in seconds (1 to 120).
    """
    steps = 20
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    _state.update(_state["presets"].get(end_preset, {}))
    return f"Move from preset {start_preset} to {end_preset} done in {duration_s:g} s."


@tool
def get_status() -> str:
    """Report slider position, boom angle, pan/tilt, focus, zoom, whether we are recording,
    card space left and battery."""
    s = _state
    return (
        f"Slider {s['slider_cm']:.0f} cm, boom {s['boom_deg']:+.0f}, pan {s['pan_deg']:+.0f}, "
        f"tilt {s['tilt_deg']:+.0f}, focus {s['focus_m']:g} m, zoom {s['zoom_mm']} mm, "
        f"{'recording' if s['recording'] else 'not recording'}, {s['card_minutes_left']} min of card "
        f"left, battery {s['battery_percent']}%."
    )


@tool
def home_all() -> str:
    """Send every axis back to its home position at once: slider to the left end, boom level,
    head centred. Ruins any shot in progress."""
    _state.update(slider_cm=0.0, boom_deg=0.0, pan_deg=0.0, tilt_deg=0.0)
    return "All axes homed."
