"""Simulated telepresence robot: a screen on a height-adjustable mast, riding on two wheels."""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Room = Literal["meeting_room", "reception", "break_room", "lab", "open_office"]
View = Literal["wide", "normal", "close_up"]


class Bot:
    def __init__(self) -> None:
        self.room = "reception"
        self.position_cm = 0
        self.heading_deg = 0.0
        self.battery = 64
        self.volume = 50
        self.mast_cm = 130
        self.camera_on = True
        self.view = "normal"
        self.in_call = True


BOT = Bot()


@tool
def get_status() -> str:
    """Get the robot's status: battery, current room, speaker volume, mast height and camera state."""
    cam = f"camera on ({BOT.view} view)" if BOT.camera_on else "camera off"
    return (
        f"Battery {BOT.battery}%, in the {BOT.room.replace('_', ' ')}, volume {BOT.volume}, "
        f"mast at {BOT.mast_cm} cm, {cam}."
    )


@tool
def halt() -> str:
    """Halt the wheels and the mast immediately (emergency stop)."""
    return "Halted."


@tool
def drive(distance_cm: Annotated[int, "how far to roll, in centimetres; negative rolls backward"]) -> str:
    """Roll forward or backward in a straight line, no more than 300 cm in one go."""
    if abs(distance_cm) > 300:
        raise ValueError("300 cm is the longest single move.")
    BOT.position_cm += distance_cm
    return f"Rolled {abs(distance_cm)} cm {'forward' if distance_cm >= 0 else 'backward'}."


@tool
def rotate(
    angle_deg: Annotated[
        float, "degrees to rotate; positive is clockwise (to the right), negative is counter-clockwise (to the left)"
    ],
) -> str:
    """Rotate the robot in place."""
    BOT.heading_deg = (BOT.heading_deg + angle_deg) % 360
    return f"Rotated {abs(angle_deg):g} degrees to the {'right' if angle_deg >= 0 else 'left'}."


@tool
def set_mast_height(height_cm: int) -> str:
    """Raise or lower the telescopic mast that carries the screen.

    Args:
        height_cm: Height of the screen above the floor in cm. The mast goes from 90 to 170.
    """
    if not 90 <= height_cm <= 170:
        raise ValueError("The mast only goes from 90 to 170 cm.")
    BOT.mast_cm = height_cm
    return f"Screen now at {height_cm} cm."


@tool
def set_volume(level: int) -> str:
    """Set the speaker volume between 0 and 100; 0 mutes the speaker.

    Args:
        level: volume in percent.
    """
    if not 0 <= level <= 100:
        raise ValueError("Volume is 0 to 100.")
    BOT.volume = level
    return "Muted." if level == 0 else f"Volume {level}."


@tool
def set_camera(on: bool) -> str:
    """Turn the camera on or off.

    Args:
        on: whether the camera should be streaming video.
    """
    BOT.camera_on = on
    return "Camera on." if on else "Camera off."


@tool
def set_camera_view(view: View) -> str:
    """Change the camera framing.

    Args:
        view: "wide" shows the whole room, "normal" frames the people in front of the robot,
            "close_up" zooms in tight on one face or object.
    """
    BOT.view = view
    return f"Camera view: {view.replace('_', ' ')}."


@skill(timeout_s=90)
def go_to_room(room: Room, goal: GoalHandle) -> str:
    """Drive to a room in the office.

    Args:
        room: where to go. reception is the front desk by the entrance; break_room is the
            kitchen area with the coffee machine.
    """
    for _ in range(15):
        goal.sleep(0.02)
    BOT.room = room
    return f"Arrived at the {room.replace('_', ' ')}."


@tool
def end_call() -> str:
    """Hang up the current video call."""
    if not BOT.in_call:
        return "There is no call to end."
    BOT.in_call = False
    return "Call ended."
