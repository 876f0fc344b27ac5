"""Autonomous harbour workboat: engine, steering, anchor, horn, lights and waypoints."""

from typing import Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "throttle": 0,
    "heading": 0,
    "speed_knots": 0.0,
    "anchor": "raised",
    "nav_lights": False,
    "fuel_percent": 72,
    "battery_v": 12.6,
    "depth_m": 6.4,
    "position": "inner harbour",
    "engine_running": True,
}

Waypoint = Literal["harbour_mouth", "fuel_dock", "north_buoy", "fishing_grounds", "slipway"]


@tool
def set_throttle(percent: int) -> str:
    """Set the engine throttle.

    Args:
        percent: -50 (full astern) to 100 (full ahead). 0 is idle/neutral, negative
            values drive the boat in reverse.
    """
    if not -50 <= percent <= 100:
        return "Throttle must be between -50 and 100."
    _state["throttle"] = percent
    _state["speed_knots"] = round(abs(percent) * 0.12, 1)
    return f"Throttle {percent}%."


@tool
def set_heading(degrees: int) -> str:
    """Steer to an absolute compass heading.

    Args:
        degrees: Compass heading, 0 to 359. 0 is north, 90 east, 180 south, 270 west.
    """
    if not 0 <= degrees <= 359:
        return "Heading must be 0 to 359 degrees."
    _state["heading"] = degrees
    return f"Steering {degrees:03d}."


@tool
def turn(degrees: float) -> str:
    """Turn relative to the current heading. Positive turns to starboard (right),
    negative turns to port (left). At most 180 degrees either way.
    """
    if abs(degrees) > 180:
        return "I can turn at most 180 degrees at a time."
    _state["heading"] = int(_state["heading"] + degrees) % 360
    return f"Turned {degrees:+.0f} degrees, now heading {_state['heading']:03d}."


@tool
def anchor(action: Literal["drop", "raise"]) -> str:
    """Drop or raise the anchor."""
    _state["anchor"] = "down" if action == "drop" else "raised"
    return f"Anchor {_state['anchor']}."


@tool
def sound_horn(pattern: Literal["short", "long", "five_short"] = "short") -> str:
    """Sound the horn.

    Args:
        pattern: short (one short blast, the default), long (one long blast) or
            five_short (five short blasts, the danger/doubt signal).
    """
    return f"Horn: {pattern.replace('_', ' ')}."


@tool
def set_nav_lights(on: bool) -> str:
    """Turn the navigation (running) lights on or off."""
    _state["nav_lights"] = on
    return f"Navigation lights {'on' if on else 'off'}."


@skill(timeout_s=600)
def go_to_waypoint(waypoint: Waypoint, goal: GoalHandle, speed_knots: float = 5.0) -> str:
    """Navigate to a named waypoint in the harbour.

    Args:
        waypoint: harbour_mouth, fuel_dock, north_buoy, fishing_grounds or slipway.
        speed_knots: Cruising speed in knots, 1 to 12. Default 5.
    """
    if _state["anchor"] == "down":
        return "The anchor is down; raise it first."
    for i in range(20):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 20})
    _state["position"] = waypoint.replace("_", " ")
    return f"Arrived at the {_state['position']}."


@skill(timeout_s=900)
def return_to_mooring(goal: GoalHandle) -> str:
    """Drop whatever the boat is doing and navigate straight back to its home mooring."""
    for i in range(20):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 20})
    _state["position"] = "home mooring"
    _state["throttle"] = 0
    return "Back on the mooring."


@tool
def kill_engine() -> str:
    """Cut the engine immediately. The boat will drift until it is restarted."""
    _state["engine_running"] = False
    _state["throttle"] = 0
    return "Engine off. We are drifting."


@tool
def get_status() -> str:
    """Report position, heading, speed, throttle, fuel, battery, depth under the keel,
    anchor and lights."""
    s = _state
    return (
        f"At {s['position']}, heading {s['heading']:03d}, {s['speed_knots']} knots, "
        f"throttle {s['throttle']}%, fuel {s['fuel_percent']}%, battery {s['battery_v']} V, "
        f"depth {s['depth_m']} m, anchor {s['anchor']}, nav lights {'on' if s['nav_lights'] else 'off'}."
    )
