"""Simulated underwater ROV: depth and thrusters, flood lights, a manipulator claw, sample jars."""

from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

ClawPosition = Literal["open", "half_open", "closed"]

_state = {
    "depth_m": 42.0,
    "heading_deg": 270,
    "water_temp_c": 9.5,
    "battery_pct": 71,
    "lights_on": False,
    "brightness": 100,
    "claw": "open",
    "jars": {1: True, 2: False, 3: False, 4: True, 5: False, 6: False},
    "thrusters_powered": True,
}


@tool
def get_telemetry() -> str:
    """Read the vehicle's telemetry: depth, heading, water temperature and battery."""
    s = _state
    return (
        f"Depth {s['depth_m']:g} m, heading {s['heading_deg']} degrees, water {s['water_temp_c']:g} C, "
        f"battery {s['battery_pct']}%."
    )


@tool
def get_sample_inventory() -> str:
    """List which sample jars are filled and which are still empty."""
    full = [str(j) for j, f in _state["jars"].items() if f]
    empty = [str(j) for j, f in _state["jars"].items() if not f]
    return f"Filled: jars {', '.join(full) or 'none'}. Empty: jars {', '.join(empty) or 'none'}."


@tool
def all_stop() -> str:
    """Emergency all stop: cut power to every thruster and hold position."""
    _state["thrusters_powered"] = False
    return "All stop. Thrusters unpowered."


@tool
def change_depth(delta_m: float) -> str:
    """Dive deeper or rise toward the surface.

    A positive value goes deeper, a negative value rises. Moves are limited to 50 m at a time.

    Args:
        delta_m: change of depth in metres.
    """
    if abs(delta_m) > 50:
        raise ValueError("No more than 50 m per depth change.")
    _state["depth_m"] = max(0.0, _state["depth_m"] + delta_m)
    return f"Now at {_state['depth_m']:g} m."


@tool
def move(distance_m: float) -> str:
    """Thrust ahead or astern in a straight line.

    Args:
        distance_m: metres to travel, positive ahead (forward) and negative astern (backward);
            at most 20.
    """
    if abs(distance_m) > 20:
        raise ValueError("At most 20 m per move.")
    return f"Moved {abs(distance_m):g} m {'ahead' if distance_m >= 0 else 'astern'}."


@tool
def yaw(degrees: int) -> str:
    """Yaw the vehicle, turning it in place.

    Args:
        degrees: angle in degrees from -180 to 180. Positive turns to starboard (right),
            negative to port (left).
    """
    if abs(degrees) > 180:
        raise ValueError("Yaw is limited to 180 degrees either way.")
    _state["heading_deg"] = (_state["heading_deg"] + degrees) % 360
    return f"Heading now {_state['heading_deg']} degrees."


@tool
def set_lights(on: bool, brightness: int = 100) -> str:
    """Switch the flood lights on or off.

    Args:
        on: True for on, False for off.
        brightness: brightness in percent when on, 10 to 100.
    """
    if not 10 <= brightness <= 100:
        raise ValueError("Brightness goes from 10 to 100 percent.")
    _state["lights_on"] = on
    _state["brightness"] = brightness
    return f"Lights on at {brightness}%." if on else "Lights off."


@tool
def operate_claw(position: ClawPosition) -> str:
    """Open or close the manipulator claw.

    Args:
        position: open releases whatever it holds, half_open is for delicate things,
            closed grips.
    """
    _state["claw"] = position
    return f"Claw {position.replace('_', ' ')}."


@skill(timeout_s=60)
def collect_sample(jar: int, goal: GoalHandle) -> str:
    """Collect a sediment sample from the seabed into one of the sample jars.

    Args:
        jar: number of the jar to fill, 1 to 6.
    """
    if jar not in _state["jars"]:
        raise ValueError("Jars are numbered 1 to 6.")
    if _state["jars"][jar]:
        return f"Jar {jar} is already full."
    for _ in range(20):
        goal.sleep(0.02)
    _state["jars"][jar] = True
    return f"Sample stored in jar {jar}."


@skill(timeout_s=180)
def surface(goal: GoalHandle) -> str:
    """Abort the dive and bring the vehicle back up to the surface."""
    while _state["depth_m"] > 0:
        goal.sleep(0.02)
        _state["depth_m"] = max(0.0, _state["depth_m"] - 5)
    return "On the surface."
