"""Engines and skills for the ``edgevox ros2`` node tests (``ros2_app_parts:...`` in their configs,
on the node's PYTHONPATH): a scripted LLM that says the temperature it was asked to sample
with, so a second process can see a live parameter change, and a skill that holds until cancelled."""

from __future__ import annotations

from edgevox.agents.skills import GoalHandle, skill
from edgevox.testing import ScriptedLLM


class TemperatureLLM(ScriptedLLM):
    """Replies ``temperature <t>`` with the sampling temperature of the call."""

    def stream(self, messages, *, temperature: float = 0.0, **kwargs):  # noqa: ANN001, ANN201 - LLM protocol
        self.push(f"temperature {temperature:g}")
        return super().stream(messages, temperature=temperature, **kwargs)


def temperature_llm(**_options: object) -> TemperatureLLM:
    return TemperatureLLM()


@skill(timeout_s=600.0)
def hold_position(goal: GoalHandle) -> str:
    """Hold the current position until told otherwise."""
    beat = 0
    while True:
        goal.publish_feedback({"beat": beat})
        beat += 1
        goal.sleep(0.05)  # raises Cancelled at once on a stop
