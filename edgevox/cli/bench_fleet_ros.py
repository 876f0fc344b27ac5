"""The ROS 2 fault of ``edgevox bench fleet``: a node floods ``skill/cancel`` with junk, another
cancels its own running goal; is the real cancel answered, and how fast?

Real rclpy over DDS on this machine: a :class:`~edgevox.integrations.ros2.Ros2Bridge` on its own
node and context hosts a ``patrol`` skill that runs until cancelled; a second node, on a second
context (as another process would be), starts a goal, then publishes ``--junk`` cancels naming
goals that do not exist (far over ``max_messages_per_s``, which is per topic and shared by every
publisher), then the cancel of its goal. The figure: how many of the trials' real cancels got
their ``cancelled`` result, and the time from that cancel to the result. Without rclpy it says
so and measures nothing.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from typing import Any

from edgevox.agents.skills import GoalHandle, skill


@skill
def patrol(goal: GoalHandle) -> str:
    """Patrol until cancelled."""
    while True:
        goal.sleep(0.02)  # where a cancel is seen


def junk_cancel_flood(trials: int = 5, junk: int = 500) -> dict[str, Any] | str:
    """``{"answered", "trials", "latencies_s", "rate_limited"}``, or why it could not run."""
    from edgevox.errors import MissingDependencyError
    from edgevox.integrations.config import Ros2BridgeConfig
    from edgevox.integrations.ros2 import Ros2Bridge, import_rclpy
    from edgevox.runtime.bus import EventBus

    namespace = f"/edgevox_bench_{os.getpid()}"
    # A deep reader queue: every junk cancel reaches the bridge (with KEEP_LAST 10, DDS itself
    # would drop most of them before the bridge read them, and the rate limit would not be tested).
    config = Ros2BridgeConfig.model_validate(
        {"enabled": True, "namespace": namespace, "node_name": "robot", "diagnostics_period_s": None,
         "qos": {"depth": 2 * junk}}
    )  # fmt: skip
    try:
        rclpy = import_rclpy(config)
    except MissingDependencyError as exc:
        return f"not run: {exc}"
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from std_msgs.msg import String

    bus = EventBus("bench-ros")
    bridge = Ros2Bridge(bus, config, skills=[patrol]).start()
    context = Context()
    rclpy.init(context=context, domain_id=config.domain_id, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("flooder", context=context)
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    goal_pub = node.create_publisher(String, f"{namespace}/skill/goal", qos)
    cancel_pub = node.create_publisher(String, f"{namespace}/skill/cancel", qos)
    inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    for name in ("skill/feedback", "skill/result"):
        node.create_subscription(
            String, f"{namespace}/{name}", lambda m: inbox.put((time.monotonic(), json.loads(m.data))), qos
        )
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, name="bench-ros-flooder", daemon=True)
    spin.start()

    def publish(publisher: Any, body: dict[str, Any]) -> None:
        msg = String()
        msg.data = json.dumps(body)
        publisher.publish(msg)

    def wait_for(predicate: Any, timeout_s: float) -> float | None:
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                at, body = inbox.get(timeout=left)
            except queue.Empty:
                return None
            if predicate(body):
                return at
        return None

    latencies: list[float] = []
    try:
        deadline = time.monotonic() + 20
        while goal_pub.get_subscription_count() == 0 or cancel_pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                return "not run: the bridge's topics were not discovered within 20 s"
            time.sleep(0.05)  # DDS discovery has no event to wait on here
        for trial in range(trials):
            goal_id = f"legit-{trial}"
            for _attempt in range(10):  # a goal published before the reader matched is not seen
                publish(goal_pub, {"goal_id": goal_id, "skill": "patrol"})
                if wait_for(lambda b, g=goal_id: b["goal_id"] == g and b["status"] == "accepted", 1.0) is not None:
                    break
            else:
                continue
            for i in range(junk):
                publish(cancel_pub, {"goal_id": f"junk-{trial}-{i}"})
            sent = time.monotonic()
            publish(cancel_pub, {"goal_id": goal_id})
            at = wait_for(lambda b, g=goal_id: b["goal_id"] == g and b["status"] == "cancelled", 10.0)
            if at is not None:
                latencies.append(at - sent)
        return {
            "answered": len(latencies),
            "trials": trials,
            "latencies_s": latencies,
            "rate_limited": bridge.counters["rate_limited"],
        }
    finally:
        executor.shutdown(timeout_sec=2)
        spin.join(2)
        node.destroy_node()
        context.try_shutdown()
        bridge.stop()
        bus.close()
