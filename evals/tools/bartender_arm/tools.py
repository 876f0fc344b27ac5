"""A bartending robot arm.

The arm stands behind a counter with a rack of pour bottles, an ice bin, a cocktail
shaker and three glass positions in front of it (left, middle and right).
"""

from typing import Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool

Bottle = Literal[
    "vodka",
    "gin",
    "white_rum",
    "dark_rum",
    "tequila",
    "bourbon",
    "triple_sec",
    "lime_juice",
    "simple_syrup",
    "tonic",
    "cola",
    "soda_water",
]
Glass = Literal["left_glass", "middle_glass", "right_glass"]
Vessel = Literal["shaker", "left_glass", "middle_glass", "right_glass"]


class Bar:
    levels_ml = {
        "vodka": 640, "gin": 410, "white_rum": 700, "dark_rum": 220, "tequila": 530,
        "bourbon": 380, "triple_sec": 300, "lime_juice": 250, "simple_syrup": 480,
        "tonic": 900, "cola": 1200, "soda_water": 1000,
    }
    contents: dict[str, float] = {"shaker": 0, "left_glass": 0, "middle_glass": 0, "right_glass": 0}
    glasses_present = {"left_glass": True, "middle_glass": True, "right_glass": False}
    holding = "nothing"
    gripper_height_cm = 20.0
    chiller_on = True
    halted = False


bar = Bar()


@tool
def get_inventory() -> str:
    """List the loaded bottles and how many millilitres are left in each."""
    return ", ".join(f"{name.replace('_', ' ')} {ml} ml" for name, ml in bar.levels_ml.items())


@tool
def get_arm_status() -> str:
    """Tell what the arm is holding, its gripper height and which glass positions have a glass in them."""
    glasses = [g.replace("_", " ") for g, present in bar.glasses_present.items() if present]
    return (
        f"holding {bar.holding}, gripper at {bar.gripper_height_cm:g} cm, "
        f"glasses at: {', '.join(glasses) or 'none'}"
    )


@tool
def emergency_halt() -> str:
    """Emergency halt. Freezes the arm where it is and shuts every pour valve at once."""
    bar.halted = True
    return "arm halted, valves shut"


@tool
def pour(bottle: Bottle, volume_ml: int, into: Vessel = "shaker") -> str:
    """Pour a measured amount from one of the bottles.

    The volume is measured by the flow meter; anything from 5 ml to 200 ml per pour.

    Args:
        bottle: which bottle to pour from.
        volume_ml: how much to pour, in millilitres.
        into: where to pour. Goes into the shaker unless a glass is named.
    """
    bar.levels_ml[bottle] -= volume_ml
    bar.contents[into] += volume_ml
    return f"poured {volume_ml} ml of {bottle.replace('_', ' ')} into the {into.replace('_', ' ')}"


@tool
def add_ice(into: Vessel, cubes: int = 4) -> str:
    """Scoop ice cubes from the ice bin into the shaker or a glass.

    Args:
        into: the shaker or the glass that gets the ice.
        cubes: number of cubes, 1 to 10.
    """
    return f"{cubes} cubes into the {into.replace('_', ' ')}"


@skill(timeout_s=45)
def shake(goal: GoalHandle, seconds: int = 10) -> str:
    """Clamp the lid on the cocktail shaker and shake it.

    Args:
        seconds: how long to shake; 5 to 30 seconds.
    """
    bar.holding = "shaker"
    for _ in range(10):
        goal.sleep(0.02)
    bar.holding = "nothing"
    return f"shaken for {seconds} s"


@tool
def strain(into: Glass) -> str:
    """Strain the shaker's contents into a glass, holding the ice back.

    Args:
        into: the glass to strain into.
    """
    bar.contents[into] += bar.contents["shaker"]
    bar.contents["shaker"] = 0
    return f"strained into the {into.replace('_', ' ')}"


@tool
def lift(height_cm: float) -> str:
    """Raise or lower the gripper.

    Positive values move it up, negative values move it down, by no more than 25 cm
    either way.

    Args:
        height_cm: how far to move the gripper, in centimetres.
    """
    bar.gripper_height_cm += height_cm
    return f"gripper at {bar.gripper_height_cm:g} cm"


@tool
def set_chiller(on: bool) -> str:
    """Switch the ice bin chiller on or off.

    Args:
        on: whether the chiller should run.
    """
    bar.chiller_on = on
    return "chiller on" if on else "chiller off"


@skill(timeout_s=30)
def park_arm(goal: GoalHandle) -> str:
    """Close the bar: dump the shaker, rinse the nozzles and fold the arm into its parked position."""
    bar.contents["shaker"] = 0
    for _ in range(8):
        goal.sleep(0.02)
    bar.holding = "nothing"
    return "arm parked"
