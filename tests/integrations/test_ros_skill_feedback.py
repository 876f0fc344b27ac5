"""``/edgevox/events`` carries a goal's state changes at once and its feedback ticks at most every
``skill_feedback_period_s`` (issue 26: it repeated "running" at ~20 Hz per goal)."""

from __future__ import annotations

import json

from edgevox.agents.events import SkillStateEvent
from edgevox.integrations.config import Ros2BridgeConfig
from edgevox.integrations.ros_common import RosBridgeCore
from edgevox.runtime.bus import EventBus


def _core(period_s: float) -> RosBridgeCore:
    config = Ros2BridgeConfig(enabled=True, skill_feedback_period_s=period_s)
    return RosBridgeCore(EventBus("feedback"), config, bridge="ros2")


def _sent(core: RosBridgeCore) -> list[tuple[str, object]]:
    return [(json.loads(data)["state"], json.loads(data).get("feedback")) for _topic, data in core.drain()]


def test_feedback_ticks_are_thinned_per_goal_and_every_state_change_goes_out():
    core = _core(60.0)
    core._on_event(SkillStateEvent(skill="patrol", goal_id="g1", state="running"))
    for lap in range(20):  # a 20 Hz feedback loop
        core._on_event(SkillStateEvent(skill="patrol", goal_id="g1", state="running", feedback={"lap": lap}))
        core._on_event(SkillStateEvent(skill="dock", goal_id="g2", state="running", feedback={"n": lap}))
    core._on_event(SkillStateEvent(skill="patrol", goal_id="g1", state="succeeded"))
    sent = _sent(core)
    assert sent == [("running", None), ("running", {"lap": 0}), ("running", {"n": 0}), ("succeeded", None)]


def test_a_period_of_zero_sends_every_tick():
    core = _core(0.0)
    for lap in range(5):
        core._on_event(SkillStateEvent(skill="patrol", goal_id="g1", state="running", feedback={"lap": lap}))
    assert len(_sent(core)) == 5
