"""Reception humanoid for an office lobby: greets, gestures, walks, guides visitors."""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "place": "front_desk",
    "head_deg": 0,
    "volume": 5,
    "display": "welcome",
    "message": "",
    "battery_percent": 81,
    "task": "idle",
}

Place = Literal[
    "front_desk",
    "lobby_entrance",
    "elevators",
    "meeting_room_a",
    "meeting_room_b",
    "cafeteria",
    "restrooms",
]


@tool
def wave(hand: Literal["left", "right"] = "right") -> str:
    """Wave hello (or goodbye) with one hand. Uses the right hand unless told otherwise."""
    return f"Waved with my {hand} hand."


@tool
def nod(times: int = 1) -> str:
    """Nod the head.

    Args:
        times: How many nods, 1 to 5. Default 1.
    """
    if not 1 <= times <= 5:
        return "I can nod between 1 and 5 times."
    return f"Nodded {times} time{'s' if times != 1 else ''}."


@tool
def turn_head(degrees: Annotated[int, "-90 to 90; positive is the robot's left"]) -> str:
    """Turn the head to an angle relative to the body.

    0 faces straight ahead. Positive angles turn the head to the robot's left, negative
    angles to its right. The neck allows at most 90 degrees either way.
    """
    if abs(degrees) > 90:
        return "My neck only turns 90 degrees each way."
    _state["head_deg"] = degrees
    return f"Head at {degrees} degrees."


@skill(timeout_s=180)
def walk_to(place: Place, goal: GoalHandle) -> str:
    """Walk to a named place in the building.

    Args:
        place: front_desk, lobby_entrance, elevators, meeting_room_a, meeting_room_b,
            cafeteria or restrooms.
    """
    _state["task"] = f"walking to {place}"
    for i in range(20):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 20})
    _state["place"] = place
    _state["task"] = "idle"
    return f"I'm at the {place.replace('_', ' ')}."


@skill(timeout_s=300)
def guide_visitor(destination: Place, goal: GoalHandle, visitor_name: str | None = None) -> str:
    """Walk a visitor to a place, talking to them on the way, then come back to the front desk.

    Args:
        destination: Where to take them (same places as walk_to).
        visitor_name: The visitor's name, if known, so I can greet them by name.
    """
    who = visitor_name or "our visitor"
    _state["task"] = f"guiding {who} to {destination}"
    for i in range(30):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 30})
    _state["task"] = "idle"
    _state["place"] = "front_desk"
    return f"Took {who} to the {destination.replace('_', ' ')} and came back."


@tool
def show_message(message: str) -> str:
    """Show a text message on the chest screen."""
    _state["display"] = "message"
    _state["message"] = message
    return f'Showing "{message}".'


@tool
def set_display(mode: Literal["welcome", "map", "wifi_info", "off"]) -> str:
    """Change what the chest screen shows: the welcome screen, the building map, the guest
    wifi details, or turn the screen off."""
    _state["display"] = mode
    return f"Screen: {mode}."


@tool
def set_volume(level: int) -> str:
    """Set the speaking volume.

    Args:
        level: 0 (muted) to 10 (loudest).
    """
    if not 0 <= level <= 10:
        return "Volume goes from 0 to 10."
    _state["volume"] = level
    return f"Volume {level}."


@tool
def get_status() -> str:
    """Say where I am, what I'm doing, my battery level, volume and what the screen shows."""
    s = _state
    return (
        f"At the {s['place'].replace('_', ' ')}, {s['task']}, battery {s['battery_percent']}%, "
        f"volume {s['volume']}, screen {s['display']}."
    )


@tool
def return_to_dock() -> str:
    """Abandon the current task and walk straight back to the charging dock."""
    _state["task"] = "returning to dock"
    _state["place"] = "charging_dock"
    return "Heading back to my charging dock."
