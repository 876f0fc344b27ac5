"""Tools for the safety-stop tests: a driver call that ignores cancellation, and one that is slow.

Each test resets the module's events (``RELEASE``) before use; the tools block on them
instead of sleeping, so a test decides when they return.
"""

from __future__ import annotations

import threading

from edgevox.agents.tools import tool

RELEASE = threading.Event()
EFFECTS: list[str] = []


@tool
def water_plants(litres: float) -> str:
    """Water the plants in the garden.

    Args:
        litres: How much water, in litres.
    """
    RELEASE.wait(10.0)  # a driver call that ignores cancellation
    EFFECTS.append("watered")
    return "The plants are watered."


@tool(timeout_s=0.2)
def scan_room() -> str:
    """Scan the room with the camera and describe it."""
    RELEASE.wait(10.0)
    return "late scan result"
