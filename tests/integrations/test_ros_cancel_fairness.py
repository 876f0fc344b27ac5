"""A node flooding ``skill/cancel`` with junk cannot make another node's cancel vanish (issue 26:
the 50/s limit is per topic, shared by every publisher, and a legitimate cancel went unanswered
in 3 of 5 tries). The core is driven as its ROS callbacks drive it."""

from __future__ import annotations

import json
import threading

from edgevox.agents.skills import GoalHandle, skill
from edgevox.integrations.config import Ros2BridgeConfig
from edgevox.integrations.ros_common import RosBridgeCore
from edgevox.runtime.bus import EventBus


def test_a_cancel_of_a_running_goal_gets_through_a_flood_of_junk_cancels():
    bus = EventBus("fairness")
    running, ended = threading.Event(), threading.Event()

    @skill
    def patrol(goal: GoalHandle) -> str:
        """Patrol until cancelled."""
        running.set()
        try:
            while True:
                goal.sleep(0.05)
        finally:
            ended.set()

    core = RosBridgeCore(bus, Ros2BridgeConfig(enabled=True, max_messages_per_s=5.0), bridge="ros2", skills=[patrol])
    core.start(wake=lambda: None)
    try:
        core.handle("/edgevox/skill/goal", json.dumps({"goal_id": "legit", "skill": "patrol"}))
        assert running.wait(5)
        for i in range(500):  # another node's junk: far over the limit of the topic
            core.handle(core.cancel_topic, json.dumps({"goal_id": f"junk-{i}"}))
        assert core.counters["rate_limited"] > 400
        core.handle(core.cancel_topic, json.dumps({"goal_id": "legit"}))
        assert ended.wait(5)  # the body saw the cancel
        results = [json.loads(d) for t, d in core.drain() if t == core.result_topic]
        assert any(r["goal_id"] == "legit" and r["status"] == "cancelled" for r in results), results
    finally:
        assert core.stop(2.0)
        bus.close()
