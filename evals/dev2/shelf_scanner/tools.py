"""Tools for an autonomous warehouse shelf-scanning robot (camera on a telescoping mast)."""

from __future__ import annotations

from typing import Annotated, Literal

from edgevox.agents import GoalHandle, skill, tool

_state = {
    "aisle": 1,
    "shelf": 1,
    "mast_cm": 60.0,
    "beacon": None,
    "mission": None,
    "paused": False,
    "docked": True,
    "counts": {"4417": 36, "B-220": 12, "7781": 5, "1200": 48},
}


@skill(timeout_s=300)
def go_to_shelf(aisle: int, shelf: int, goal: GoalHandle) -> str:
    """Drive to a shelf and face it.

    Args:
        aisle: Aisle number, 1 to 24.
        shelf: Shelf number within the aisle, 1 to 12.
    """
    if not (1 <= aisle <= 24 and 1 <= shelf <= 12):
        return "No such shelf: aisles are 1-24, shelves 1-12."
    _state["docked"] = False
    for step in range(30):
        goal.sleep(0.05)
        goal.publish_feedback({"progress": (step + 1) / 30})
    _state["aisle"], _state["shelf"] = aisle, shelf
    return f"At aisle {aisle}, shelf {shelf}."


@tool
def move_mast(delta_cm: Annotated[float, "centimetres; positive raises, negative lowers"]) -> str:
    """Raise or lower the camera mast by some centimetres (at most 50 cm per move).
    The mast itself travels between 0 and 180 cm."""
    if abs(delta_cm) > 50:
        return "Move the mast at most 50 cm at a time."
    _state["mast_cm"] = min(180.0, max(0.0, _state["mast_cm"] + delta_cm))
    return f"Mast now at {_state['mast_cm']:g} cm."


@tool
def scan_shelf(mode: Literal["barcode", "photo", "both"] = "both") -> str:
    """Scan the shelf in front of the robot with the mast camera.

    Args:
        mode: Read barcodes, take photos, or do both.
    """
    return f"Scanned aisle {_state['aisle']} shelf {_state['shelf']} ({mode}): 14 facings, 2 gaps."


@tool
def count_items(sku: str) -> str:
    """Count how many units of one SKU are on the shelf in front of the robot.

    Args:
        sku: The SKU code, e.g. "4417" or "B-220".
    """
    n = _state["counts"].get(sku.upper(), 0)
    return f"{n} units of SKU {sku} on this shelf."


@tool
def get_inventory_report(aisle: int | None = None) -> str:
    """Report inventory totals and low-stock items for one aisle, or for the whole warehouse
    when no aisle is given."""
    where = f"aisle {aisle}" if aisle is not None else "the whole warehouse"
    return f"Inventory for {where}: 1,284 units counted, 3 SKUs low on stock."


@tool
def set_beacon(on: bool, color: Literal["amber", "blue", "red"] = "amber") -> str:
    """Flash the warning beacon on top of the robot, or switch it off.

    Args:
        on: True to start flashing, False to switch it off.
        color: Beacon colour.
    """
    _state["beacon"] = color if on else None
    return f"Beacon {'flashing ' + color if on else 'off'}."


@skill(timeout_s=3600)
def run_scan_mission(first_aisle: int, last_aisle: int, goal: GoalHandle) -> str:
    """Scan every shelf in a range of aisles, one after another (aisles 1 to 24).

    Args:
        first_aisle: Aisle to start with.
        last_aisle: Last aisle to scan (inclusive).
    """
    _state["mission"] = (first_aisle, last_aisle)
    _state["docked"] = False
    aisles = range(first_aisle, last_aisle + 1)
    for i, a in enumerate(aisles):
        while _state["paused"]:
            goal.sleep(0.05)
        goal.sleep(0.05)
        goal.publish_feedback({"aisle": a, "progress": (i + 1) / len(aisles)})
    _state["mission"] = None
    return f"Mission done: aisles {first_aisle} to {last_aisle} scanned."


@tool
def pause_mission() -> str:
    """Pause the scan mission that is running; the robot waits where it is."""
    if _state["mission"] is None:
        return "No mission is running."
    _state["paused"] = True
    return "Mission paused."


@skill(timeout_s=3600)
def resume_mission(goal: GoalHandle) -> str:
    """Resume a paused scan mission from where it left off."""
    _state["paused"] = False
    for _ in range(20):
        goal.sleep(0.05)
    return "Mission resumed and finished."


@tool
def dock() -> str:
    """Abandon whatever the robot is doing and drive straight back to its charging dock."""
    _state["mission"] = None
    _state["paused"] = False
    _state["docked"] = True
    return "Heading to the dock."
