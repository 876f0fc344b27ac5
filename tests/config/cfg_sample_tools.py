"""Tools referenced by the config tests (``cfg_sample_tools:...``, on sys.path in the tests)."""

from __future__ import annotations

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
