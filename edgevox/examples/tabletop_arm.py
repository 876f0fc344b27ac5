"""A tabletop arm, written the way a user writes their own tools.

Plain Google-style docstrings, no ``examples=``, nothing tuned for the schema resolver:
this tool set checks that the safety-first decision rule and the resolver carry over
to a robot they were not written for (``tests/examples/tabletop_arm.jsonl``,
``tests/examples/test_safety_evals.py``). The sign conventions live in the docstrings
("Negative lowers it", "negative = counter-clockwise"), as a user would write them.

:class:`SimulatedArm` is plain Python guarded by one lock (tools may run on any thread).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from edgevox.agents.tools import tool

Block = Literal["red block", "blue block", "green block"]


@dataclass
class SimulatedArm:
    """State of the simulated arm. All methods are thread-safe."""

    height_cm: float = 10.0
    wrist_deg: float = 0.0
    gripper_open: bool = False
    holding: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def tabletop_arm_tools(arm: SimulatedArm) -> list[Any]:
    """The arm's tools, bound to ``arm``."""

    @tool
    def move_arm(height_cm: float) -> str:
        """Raise or lower the arm.

        Args:
            height_cm: How much to change the height, in centimeters. Negative lowers it.
        """
        with arm._lock:
            arm.height_cm += height_cm
            return f"The arm is at {arm.height_cm:g} centimeters."

    @tool
    def pick(block: Block) -> str:
        """Pick up one of the blocks on the table.

        Args:
            block: The block to pick up.
        """
        with arm._lock:
            arm.holding, arm.gripper_open = block, False
        return f"Holding the {block}."

    @tool
    def open_gripper() -> str:
        """Open the gripper and let go of whatever it holds."""
        with arm._lock:
            arm.gripper_open, arm.holding = True, None
        return "Gripper open."

    @tool
    def rotate_wrist(degrees: float) -> str:
        """Rotate the wrist.

        Args:
            degrees: Angle to rotate by, negative = counter-clockwise.
        """
        with arm._lock:
            arm.wrist_deg = (arm.wrist_deg + degrees) % 360
        return f"Wrist at {arm.wrist_deg:g} degrees."

    @tool
    def get_arm_state() -> str:
        """Report the arm's height, wrist angle and what the gripper holds."""
        with arm._lock:
            held = arm.holding or "nothing"
            return f"Height {arm.height_cm:g} cm, wrist {arm.wrist_deg:g} degrees, holding {held}."

    return [move_arm, pick, open_gripper, rotate_wrist, get_arm_state]


def build_tabletop_arm_agent(llm: Any, arm: SimulatedArm | None = None, **overrides: Any) -> Any:
    """An agent over ``llm`` driving ``arm`` (``agent.deps["arm"]``); ``overrides`` go to ``LLMAgent``."""
    from edgevox.agents.llm_agent import LLMAgent

    arm = arm or SimulatedArm()
    options: dict[str, Any] = {
        "instructions": "You control a tabletop robot arm. Answer briefly.",
        "speak_tool_results": True,
        "reply_max_tokens": 48,
    }
    options.update(overrides)
    agent = LLMAgent("tabletop_arm", tools=tabletop_arm_tools(arm), llm=llm, **options)
    agent.deps["arm"] = arm
    return agent
