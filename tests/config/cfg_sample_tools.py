"""Tools referenced by the config tests (``cfg_sample_tools:...``, on sys.path in the tests)."""

from __future__ import annotations

from edgevox.agents.skills import GoalHandle, skill
from edgevox.agents.tools import tool


def greet(name: str) -> str:
    """Greet someone.

    Args:
        name: who to greet.
    """
    return f"hello {name}"


@tool
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


@tool
def wave() -> str:
    """Wave a hand."""
    return "waving"


TOOLS = [add, wave]
NOT_A_TOOL = 3


@skill(timeout_s=5.0)
def patrol(laps: int, goal: GoalHandle) -> str:
    """Patrol the house.

    Args:
        laps: how many laps.
    """
    for lap in range(laps):
        goal.publish_feedback({"lap": lap})
        goal.sleep(0.01)  # raises Cancelled at once on a stop
    return f"patrolled {laps} laps"
