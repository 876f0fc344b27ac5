"""Tools for a quadruped robot dog (a pet-sized four-legged robot called Rex)."""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "posture": "standing",
    "x_m": 0.0,
    "heading_deg": 0.0,
    "battery_pct": 78,
    "head_light": False,
    "activity": "idle",
    "holding": None,
    "locked": False,
}


@tool
def get_status() -> str:
    """Report the dog's battery level, posture, head light and what it is currently doing."""
    return (
        f"Battery {_state['battery_pct']}%, {_state['posture']}, head light "
        f"{'on' if _state['head_light'] else 'off'}, activity: {_state['activity']}."
    )


@tool
def set_posture(posture: Literal["sit", "stand", "lie_down"]) -> str:
    """Make the dog sit, stand up or lie down.

    Args:
        posture: The pose to take.
    """
    if _state["locked"]:
        return "Legs are locked after an emergency; reset me first."
    _state["posture"] = {"sit": "sitting", "stand": "standing", "lie_down": "lying down"}[posture]
    return f"Now {_state['posture']}."


@tool
def walk(distance_m: Annotated[float, "metres to walk; negative walks backwards"]) -> str:
    """Walk in a straight line.

    Args:
        distance_m: Distance in metres. Positive walks forward, negative backs up.
            At most 20 metres either way.
    """
    if abs(distance_m) > 20:
        return "That's too far for one walk; 20 metres at most."
    _state["x_m"] += distance_m
    _state["posture"] = "standing"
    return f"Walked {abs(distance_m):g} m {'forward' if distance_m >= 0 else 'backward'}."


@tool
def turn(degrees: float) -> str:
    """Turn on the spot by some number of degrees. Positive turns left (counter-clockwise),
    negative turns right. No more than one full turn (360 degrees) either way."""
    if abs(degrees) > 360:
        return "I can turn at most 360 degrees at a time."
    _state["heading_deg"] = (_state["heading_deg"] + degrees) % 360
    return f"Turned {abs(degrees):g} degrees {'left' if degrees >= 0 else 'right'}."


@skill(timeout_s=900)
def follow_person(goal: GoalHandle, person: str = "me") -> str:
    """Follow a person around, staying about a metre behind them, until told otherwise.

    Args:
        person: Name of the person to follow. Defaults to whoever is speaking ("me").
    """
    _state["activity"] = f"following {person}"
    for _ in range(200):
        goal.sleep(0.05)
        goal.publish_feedback({"following": person})
    _state["activity"] = "idle"
    return f"Lost sight of {person}, waiting here."


@skill(timeout_s=120)
def fetch_toy(toy: Literal["ball", "rope", "frisbee", "squeaky_bone"], goal: GoalHandle) -> str:
    """Find one of the dog's toys, pick it up in the mouth and bring it back."""
    _state["activity"] = f"fetching the {toy}"
    for step in range(20):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (step + 1) / 20})
    _state["holding"] = toy
    _state["activity"] = "idle"
    return f"Here's the {toy.replace('_', ' ')}!"


@tool
def bark(volume: Literal["quiet", "normal", "loud"] = "normal", times: int = 1) -> str:
    """Bark through the speaker.

    Args:
        volume: How loud to bark.
        times: Number of barks, 1 to 5.
    """
    if not 1 <= times <= 5:
        return "I only bark 1 to 5 times in a row."
    return " ".join(["Woof!"] * times) + f" ({volume})"


@tool
def set_head_light(on: bool) -> str:
    """Switch the LED light on the dog's head on or off."""
    _state["head_light"] = on
    return f"Head light {'on' if on else 'off'}."


@tool
def emergency_lock() -> str:
    """Emergency: instantly lock all four legs where they are and cut motor power.
    The dog cannot move again until someone resets it by hand."""
    _state["locked"] = True
    _state["activity"] = "locked (emergency)"
    return "Emergency lock engaged. All motors off."
