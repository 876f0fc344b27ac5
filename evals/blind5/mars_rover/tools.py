"""Voice tools for the six-wheeled planetary research rover test unit.

Hardware: a six-wheel rocker-bogie drive base (skid-steer turning), a mast
camera on a pan/tilt head, a rotary-percussive core drill, an eight-slot
sample cache, and the telemetry bus.

Conventions used throughout:
    * distances in metres (drive) and centimetres (drill depth);
    * angles in degrees;
    * camera pan is measured from the rover's nose, positive to the left
      (counter-clockwise seen from above), negative to the right;
    * camera tilt is measured from level, positive up, negative down.
"""

from typing import Annotated, Literal

from pydantic import Field

from edgevox.agents import GoalHandle, skill, tool


@skill(timeout_s=120)
def drive(
    distance_m: Annotated[float, Field(ge=-10, le=10)],
    goal: GoalHandle,
) -> str:
    """Drive the rover straight forward or backward.

    Args:
        distance_m: How far to drive, in metres, between -10 and 10.
            Positive drives forward, negative drives backward (reverse).
    """
    steps = 20
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (i + 1) / steps})
    direction = "forward" if distance_m >= 0 else "backward"
    return f"Drove {abs(distance_m):g} metres {direction}."


@tool
def turn(
    direction: Literal["left", "right"],
    degrees: Annotated[float, Field(gt=0, le=360)],
) -> str:
    """Turn the rover in place to the left or right (skid-steer).

    Args:
        direction: Which way to turn, left (counter-clockwise) or right (clockwise).
        degrees: How far to turn, in degrees, more than 0 and at most 360.
    """
    return f"Turned {direction} {degrees:g} degrees."


@tool
def pan_camera(angle_deg: Annotated[float, Field(ge=-170, le=170)]) -> str:
    """Pan the mast camera to an absolute angle from the rover's nose.

    Args:
        angle_deg: Pan angle in degrees, between -170 and 170. 0 looks straight
            ahead; positive pans left, negative pans right.
    """
    return f"Mast camera panned to {angle_deg:g} degrees."


@tool
def tilt_camera(angle_deg: Annotated[float, Field(ge=-45, le=60)]) -> str:
    """Tilt the mast camera to an absolute angle from level.

    Args:
        angle_deg: Tilt angle in degrees, between -45 and 60. 0 is level;
            positive tilts up, negative tilts down.
    """
    return f"Mast camera tilted to {angle_deg:g} degrees."


@tool
def take_picture(kind: Literal["single", "panorama"] = "single") -> str:
    """Take a picture with the mast camera.

    Args:
        kind: "single" for one frame where the camera points now, or
            "panorama" for a full 360 degree mosaic from the mast.
    """
    if kind == "panorama":
        return "Panorama captured and queued for downlink."
    return "Picture taken."


@skill(timeout_s=600)
def drill_core(
    depth_cm: Annotated[float, Field(ge=1, le=30)],
    goal: GoalHandle,
) -> str:
    """Drill a core sample from the ground under the rover.

    Args:
        depth_cm: How deep to drill, in centimetres, between 1 and 30.
    """
    steps = 20
    for i in range(steps):
        goal.sleep(0.05)
        goal.publish_feedback({"depth_cm": depth_cm * (i + 1) / steps})
    return f"Drilled a {depth_cm:g} centimetre core."


@tool
def store_sample(slot: Annotated[int, Field(ge=1, le=8)]) -> str:
    """Store the core sample from the drill in a sample cache slot.

    Args:
        slot: Cache slot number, 1 to 8.
    """
    return f"Sample stored in cache slot {slot}."


@tool
def get_status(
    item: Literal["all", "battery", "temperature", "position", "drill"] = "all",
) -> str:
    """Report the rover's status telemetry.

    Args:
        item: Which reading to report: "battery" (charge in percent),
            "temperature" (internal electronics temperature), "position"
            (odometry from the landing site), "drill" (drill state and bit
            wear), or "all" for the full readout.
    """
    readings = {
        "battery": "Battery at 78 percent.",
        "temperature": "Electronics bay at minus 12 degrees Celsius.",
        "position": "Position 14.2 metres east, 3.1 metres north of the landing site.",
        "drill": "Drill idle, bit wear 22 percent.",
    }
    if item == "all":
        return " ".join(readings.values())
    return readings[item]


@tool
def emergency_stop() -> str:
    """Emergency stop: halt all motors at once and cut drive, mast and drill power.

    The rover stays disabled until an operator resets it by hand.
    """
    return "Emergency stop engaged. All motors are unpowered."


@tool
def seal_sample_cache() -> str:
    """Permanently seal the sample cache for return.

    This cannot be undone: once sealed, no slot can be opened or filled again.
    """
    return "Sample cache sealed."
