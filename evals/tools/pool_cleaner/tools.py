"""Tools for an underwater pool cleaning robot.

The cleaner crawls along the pool floor and up the walls on tracks, scrubs with two
rotating brushes, sucks debris into a filter canister and is powered through a floating
cable that runs to the power supply at the pool edge.
"""

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill
from edgevox.agents.tools import tool


class _Cleaner:
    def __init__(self) -> None:
        self.battery_pct = 78
        self.cycle: str | None = None
        self.filter_pct = 42
        self.water_temp_c = 26.5
        self.depth_m = 1.4
        self.surface = "floor"
        self.heading_deg = 0.0
        self.brushes_on = False
        self.brush_speed = "normal"
        self.suction_pct = 60
        self.cable_out_m = 11.0
        self.halted = False


STATE = _Cleaner()


@tool
def get_status() -> str:
    """Read the battery level, the running cleaning cycle, how full the filter is and the water temperature."""
    cycle = STATE.cycle or "no cycle running"
    return (
        f"battery {STATE.battery_pct}%, {cycle}, filter {STATE.filter_pct}% full, "
        f"water {STATE.water_temp_c:.1f} C"
    )


@tool
def get_position() -> str:
    """Report where the cleaner is: depth, whether it is on the floor or a wall, heading and how much cable is out."""
    return (
        f"{STATE.depth_m:.1f} m deep on the {STATE.surface}, heading {STATE.heading_deg:.0f} degrees, "
        f"{STATE.cable_out_m:.1f} m of cable out"
    )


@tool
def emergency_stop() -> str:
    """Emergency stop: cut the drive motors, brushes and suction pump immediately."""
    STATE.halted = True
    STATE.cycle = None
    STATE.brushes_on = False
    STATE.suction_pct = 0
    return "all motors stopped"


@skill(timeout_s=30)
def start_cycle(
    mode: Literal["floor", "walls", "waterline", "full"],
    goal: GoalHandle,
    duration_min: int = 120,
) -> str:
    """Start an automatic cleaning cycle.

    Args:
        mode: what to clean: just the floor, the walls, the waterline (the scum line at the
            surface) or the full pool.
        duration_min: how long the cycle should last, in minutes, between 30 and 240.
    """
    STATE.halted = False
    STATE.cycle = f"{mode} cycle"
    for _ in range(10):
        goal.sleep(0.02)
    STATE.cycle = None
    STATE.filter_pct = min(100, STATE.filter_pct + 5)
    return f"{mode} cycle of {duration_min} minutes finished"


@tool
def climb_wall(distance_cm: float) -> str:
    """Climb up or back down the wall the cleaner is facing.

    Args:
        distance_cm: how far to travel along the wall, in centimetres. Positive climbs up
            towards the waterline, negative goes back down towards the floor. At most 250 cm
            in one move.
    """
    STATE.surface = "wall"
    STATE.depth_m = max(0.0, STATE.depth_m - distance_cm / 100)
    direction = "up" if distance_cm >= 0 else "down"
    return f"moved {abs(distance_cm):g} cm {direction} the wall"


@tool
def turn(angle_deg: Annotated[float, "Angle in degrees. Positive turns left, negative turns right; at most 180 either way."]) -> str:
    """Rotate the cleaner in place on the floor."""
    STATE.heading_deg = (STATE.heading_deg + angle_deg) % 360
    side = "left" if angle_deg >= 0 else "right"
    return f"turned {abs(angle_deg):g} degrees {side}"


@tool
def set_brushes(on: bool, speed: Literal["slow", "normal", "fast"] = "normal") -> str:
    """Switch the scrubbing brushes on or off.

    Args:
        on: True to spin the brushes, False to stop them.
        speed: brush speed while they are on. Use slow on delicate vinyl liners.
    """
    STATE.brushes_on = on
    if on:
        STATE.brush_speed = speed
        return f"brushes on, {speed}"
    return "brushes off"


@tool
def set_suction(power_percent: int) -> str:
    """Set the suction pump power.

    Args:
        power_percent: pump power from 0 to 100 percent. 0 turns the pump off.
    """
    STATE.suction_pct = power_percent
    return f"suction at {power_percent}%"


@tool
def adjust_cable(length_m: float) -> str:
    """Reel the floating power cable in or let more of it out.

    Args:
        length_m: metres of cable. Positive reels cable in, negative pays more cable out.
            No more than 5 m at a time.
    """
    STATE.cable_out_m = max(0.0, STATE.cable_out_m - length_m)
    verb = "reeled in" if length_m >= 0 else "let out"
    return f"{verb} {abs(length_m):g} m of cable, {STATE.cable_out_m:.1f} m out"


@skill(timeout_s=20)
def return_to_surface(goal: GoalHandle) -> str:
    """Abandon any cleaning, float up to the surface and park at the pool steps for pickup."""
    STATE.cycle = None
    STATE.brushes_on = False
    for _ in range(8):
        goal.sleep(0.02)
    STATE.depth_m = 0.0
    STATE.surface = "steps"
    return "parked at the pool steps"
