"""Security patrol robot on wheels.

Drives patrol routes and numbered waypoints around the site, carries a spotlight, a siren
and a pan camera, and keeps track of which doors it saw open or locked on its last pass.
"""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Door = Literal["front_entrance", "loading_dock", "server_room", "fire_exit", "back_gate"]
Route = Literal["perimeter", "building_interior", "parking_lot"]

_state = {
    "battery": 64,
    "speed_mps": 0.8,
    "waypoint": 3,
    "spotlight": False,
    "brightness": 100,
    "siren": False,
    "camera_deg": 0.0,
    "doors": {
        "front_entrance": "locked",
        "loading_dock": "closed",
        "server_room": "locked",
        "fire_exit": "open",
        "back_gate": "locked",
    },
    "halted": False,
}


@tool
def get_status() -> str:
    """Battery level, driving speed, last waypoint reached and whether the spotlight and siren are on."""
    s = _state
    return (
        f"battery {s['battery']}%, speed {s['speed_mps']} m/s, at waypoint {s['waypoint']}, "
        f"spotlight {'on' if s['spotlight'] else 'off'}, siren {'on' if s['siren'] else 'off'}"
    )


@tool
def check_door(door: Annotated[Door, "Which door to report on."]) -> str:
    """Report whether a door was open, closed or locked on the last camera pass."""
    return f"the {door.replace('_', ' ')} is {_state['doors'][door]}"


@tool
def emergency_stop() -> str:
    """Emergency stop: brake the wheels and cut drive power immediately."""
    _state["halted"] = True
    return "emergency stop engaged"


@skill(timeout_s=60)
def patrol(
    route: Annotated[Route, "The patrol route to drive."],
    goal: GoalHandle,
    laps: Annotated[int, "How many laps of the route, from 1 to 5."] = 1,
) -> str:
    """Drive a patrol route, watching with the camera as it goes."""
    _state["halted"] = False
    for _ in range(laps * 5):
        goal.sleep(0.02)
    return f"finished {laps} lap(s) of the {route.replace('_', ' ')}"


@skill(timeout_s=40)
def go_to_waypoint(waypoint: Annotated[int, "Waypoint number, 1 to 12."], goal: GoalHandle) -> str:
    """Drive to one of the numbered waypoints on the site map."""
    _state["halted"] = False
    for _ in range(8):
        goal.sleep(0.02)
    _state["waypoint"] = waypoint
    return f"arrived at waypoint {waypoint}"


@tool
def set_spotlight(
    on: Annotated[bool, "True to light it, False to switch it off."],
    brightness: Annotated[int, "Brightness in percent, between 10 and 100."] = 100,
) -> str:
    """Switch the spotlight on or off, and set its brightness."""
    _state["spotlight"] = on
    if on:
        _state["brightness"] = brightness
        return f"spotlight on at {brightness}%"
    return "spotlight off"


@tool
def set_siren(on: bool) -> str:
    """Sound the siren, or silence it."""
    _state["siren"] = on
    return "siren sounding" if on else "siren off"


@tool
def pan_camera(angle_deg: Annotated[float, "Degrees to pan: positive pans left, negative pans right. Up to 170 each way."]) -> str:
    """Pan the camera head left or right from where it points now."""
    _state["camera_deg"] = max(-170.0, min(170.0, _state["camera_deg"] + angle_deg))
    return f"camera at {_state['camera_deg']:g} degrees"


@tool
def set_speed(speed_mps: Annotated[float, "Driving speed in metres per second, from 0.2 to 1.5."]) -> str:
    """Set the driving speed used for patrols and waypoints."""
    _state["speed_mps"] = speed_mps
    return f"speed set to {speed_mps:g} m/s"


@tool
def return_to_dock() -> str:
    """Abandon the patrol and drive straight back to the charging dock."""
    _state["waypoint"] = 0
    _state["siren"] = False
    return "heading back to the dock"
