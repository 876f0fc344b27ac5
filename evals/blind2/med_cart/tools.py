"""Tools for a hospital medication-delivery cart robot (simulated)."""

from __future__ import annotations

from typing import Literal

from edgevox.agents import GoalHandle, skill, tool

Location = Literal[
    "pharmacy",
    "ward A",
    "ward B",
    "ward C",
    "ICU",
    "emergency department",
    "nurses station",
]

_state: dict = {
    "location": "dock",
    "room": None,
    "floor": 1,
    "battery_percent": 82,
    "charging": True,
    "locked_drawers": {1, 2, 3, 4, 5, 6},
    "screen_on": True,
    "chime_volume_percent": 60,
    "speed_limit_m_s": 0.8,
    "odometer_m": 0.0,
}


@skill(timeout_s=120)
def go_to_location(location: Location, goal: GoalHandle) -> str:
    """Drive the cart to a named hospital location.

    Args:
        location: Where to drive: the pharmacy, a ward, the ICU, the emergency
            department or the nurses station.
    """
    _state["charging"] = False
    for i in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 10})
    _state["location"] = location
    _state["room"] = None
    return f"Arrived at the {location}."


@skill(timeout_s=120)
def drive_to_room(room_number: int, goal: GoalHandle) -> str:
    """Drive the cart to a patient room by its number.

    Args:
        room_number: The room number on the door, e.g. 214.
    """
    _state["charging"] = False
    for i in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 10})
    _state["location"] = f"room {room_number}"
    _state["room"] = room_number
    return f"Arrived at room {room_number}."


@tool
def move(distance_m: float) -> str:
    """Drive the cart straight a short distance.

    Args:
        distance_m: Distance in meters. Positive drives forward, negative backs up.
    """
    _state["charging"] = False
    _state["odometer_m"] += abs(distance_m)
    direction = "forward" if distance_m >= 0 else "backward"
    return f"Moved {abs(distance_m):g} m {direction}."


@tool
def unlock_drawer(drawer: int) -> str:
    """Unlock one medication drawer so staff can open it.

    Args:
        drawer: Drawer number, between 1 and 6 (1 is the top drawer).
    """
    if not 1 <= drawer <= 6:
        return f"There is no drawer {drawer}."
    _state["locked_drawers"].discard(drawer)
    return f"Drawer {drawer} unlocked."


@tool
def lock_drawer(drawer: int) -> str:
    """Lock one medication drawer.

    Args:
        drawer: Drawer number, between 1 and 6 (1 is the top drawer).
    """
    if not 1 <= drawer <= 6:
        return f"There is no drawer {drawer}."
    _state["locked_drawers"].add(drawer)
    return f"Drawer {drawer} locked."


@tool
def set_touchscreen(on: bool) -> str:
    """Turn the cart's touchscreen on or off.

    Args:
        on: True to turn the screen on, False to turn it off.
    """
    _state["screen_on"] = on
    return f"Touchscreen {'on' if on else 'off'}."


@tool
def set_chime_volume(percent: int) -> str:
    """Set the speaker volume used for chimes and announcements.

    Args:
        percent: Volume in percent, between 0 and 100.
    """
    _state["chime_volume_percent"] = max(0, min(100, percent))
    return f"Volume set to {_state['chime_volume_percent']} percent."


@tool
def set_speed_limit(speed_m_s: float) -> str:
    """Set the cart's maximum driving speed.

    Args:
        speed_m_s: Speed limit in meters per second, between 0.1 and 1.2.
    """
    _state["speed_limit_m_s"] = speed_m_s
    return f"Speed limit set to {speed_m_s:g} m/s."


@tool
def call_elevator(floor: int) -> str:
    """Call an elevator and ride it to a floor.

    Args:
        floor: Target floor number. Negative numbers are basement levels
            (-1 is the first basement level); 0 is the ground floor.
    """
    _state["floor"] = floor
    return f"Elevator called; going to floor {floor}."


@tool
def return_to_dock() -> str:
    """Return to the docking station and start charging."""
    _state["location"] = "dock"
    _state["room"] = None
    _state["charging"] = True
    return "Back on the dock, charging."


@tool
def get_status(topic: Literal["battery", "drawers", "location", "all"] = "all") -> str:
    """Report the cart's status: battery level, locked drawers or location.

    Args:
        topic: What to report; "all" reports everything.
    """
    locked = sorted(_state["locked_drawers"])
    parts = {
        "battery": f"battery at {_state['battery_percent']} percent",
        "drawers": "locked drawers: " + (", ".join(map(str, locked)) if locked else "none"),
        "location": f"at {_state['location']}, floor {_state['floor']}",
    }
    if topic == "all":
        return "; ".join(parts.values()) + "."
    return parts[topic] + "."
