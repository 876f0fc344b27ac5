"""Tools for a 6-axis arm with a parallel gripper, bolted to a kitchen counter.

Frame used for straight-line moves: x points toward the front edge of the
counter (where people stand), y points toward the sink, z points up.
Everything here is simulated.
"""

from types import SimpleNamespace
from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

JointName = Literal["base", "shoulder", "elbow", "wrist_pitch", "wrist_yaw", "wrist_roll"]

_arm = SimpleNamespace(
    joints={"base": 0.0, "shoulder": 45.0, "elbow": -90.0, "wrist_pitch": 45.0, "wrist_yaw": 0.0, "wrist_roll": 0.0},
    tool_xyz_cm=[30.0, 0.0, 25.0],
    gripper_width_mm=80.0,
    grip_force_n=0.0,
    holding=None,
    halted=False,
)


@tool
def rotate_joint(joint: JointName, degrees: float) -> str:
    """Rotate one joint relative to where it is now.

    Args:
        joint: which joint to move.
        degrees: how far to turn it, at most 90 either way. Positive is
            counter-clockwise (for shoulder, elbow and wrist_pitch that lifts
            the arm), negative is clockwise.
    """
    if _arm.halted:
        return "I'm halted; reset me before moving."
    if abs(degrees) > 90:
        return "That's more than 90 degrees; split it into smaller moves."
    _arm.joints[joint] += degrees
    return f"Rotated the {joint.replace('_', ' ')} by {degrees:+g} degrees."


@tool
def move_gripper(axis: Literal["x", "y", "z"], distance_cm: float) -> str:
    """Move the gripper in a straight line along one axis, keeping its orientation.

    x is toward the front edge of the counter, y is toward the sink, z is up.
    Positive moves along the axis, negative moves the opposite way
    (so negative z goes down).

    Args:
        axis: x, y or z.
        distance_cm: distance in centimetres, at most 30 either way.
    """
    if _arm.halted:
        return "I'm halted; reset me before moving."
    if abs(distance_cm) > 30:
        return "Too far; 30 centimetres is the most in one move."
    _arm.tool_xyz_cm["xyz".index(axis)] += distance_cm
    return f"Moved {distance_cm:+g} cm along {axis}."


@tool
def open_gripper(width_mm: float = 85) -> str:
    """Open the fingers, letting go of anything held.

    Args:
        width_mm: how wide to open in millimetres, between 0 and 85.
    """
    if not 0 <= width_mm <= 85:
        return "Width must be between 0 and 85 mm."
    _arm.gripper_width_mm = width_mm
    _arm.grip_force_n = 0.0
    _arm.holding = None
    return f"Gripper open to {width_mm:g} mm."


@tool
def close_gripper(force_n: float = 15) -> str:
    """Close the fingers on whatever is between them.

    Args:
        force_n: grip force in newtons, between 5 and 40.
    """
    if not 5 <= force_n <= 40:
        return "Grip force must be between 5 and 40 newtons."
    _arm.gripper_width_mm = 0.0
    _arm.grip_force_n = force_n
    return f"Gripper closed at {force_n:g} N."


@skill(timeout_s=45)
def pick_up(
    item: Literal["mug", "glass", "bowl", "plate", "bottle", "spatula", "sponge"],
    goal: GoalHandle,
    gentle: bool = False,
) -> str:
    """Find an item on the counter and pick it up.

    Args:
        item: what to pick up.
        gentle: use a slow approach and a light grip, for fragile things.
    """
    if _arm.halted:
        return "I'm halted; reset me before moving."
    for i in range(8):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 8})
    _arm.holding = item
    _arm.grip_force_n = 8.0 if gentle else 15.0
    return f"Picked up the {item}."


@skill(timeout_s=45)
def put_down(spot: Literal["sink", "dish_rack", "tray", "stove", "cutting_board"], goal: GoalHandle) -> str:
    """Set down whatever the gripper is holding at a spot on the counter."""
    if _arm.holding is None:
        return "I'm not holding anything."
    for i in range(8):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / 8})
    item, _arm.holding = _arm.holding, None
    return f"Put the {item} down at the {spot.replace('_', ' ')}."


@skill(timeout_s=60)
def pour(into: Literal["mug", "glass", "bowl", "pot", "sink"], goal: GoalHandle, amount_ml: int = 100) -> str:
    """Pour from the container being held into another one.

    Args:
        into: the container to pour into.
        amount_ml: how much to pour in millilitres, between 10 and 500.
    """
    if _arm.holding is None:
        return "I'm not holding anything to pour from."
    if not 10 <= amount_ml <= 500:
        return "I can pour between 10 and 500 millilitres."
    for i in range(10):
        goal.sleep(0.05)
        goal.publish_feedback({"poured_ml": amount_ml * (i + 1) / 10})
    return f"Poured {amount_ml} ml into the {into}."


@tool
def get_gripper_state() -> str:
    """Report whether the gripper is open or closed and what it is holding."""
    if _arm.holding:
        return f"Gripper closed at {_arm.grip_force_n:g} N, holding the {_arm.holding}."
    if _arm.gripper_width_mm > 0:
        return f"Gripper open to {_arm.gripper_width_mm:g} mm, holding nothing."
    return "Gripper closed, holding nothing."


@tool
def get_joint_angles() -> str:
    """Report the current angle of every joint, in degrees."""
    return ", ".join(f"{name.replace('_', ' ')} {deg:g}" for name, deg in _arm.joints.items())


@tool
def halt() -> str:
    """Stop all motion immediately and hold position with the brakes on."""
    _arm.halted = True
    return "Halted. All joints braked."
