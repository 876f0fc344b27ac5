"""The runtime side of the ROS 1 test (run by test_ros1_bridge.py, not collected).

Hosts a bus, a scripted agent and a ``patrol`` skill inside a rospy node that is
started off the main thread (``disable_signals=True``), as a robot application would.
Line protocol: prints ``READY`` once the bridge runs; on ``quit`` (stdin) stops and
prints ``STOPS <json list of stop reasons>`` ``CANCELLED <bool>`` and ``DONE clean=<bool>``.
``counters <json {name: minimum}>`` waits (up to 30 s) until the bridge's counters reach the
minimums and prints ``COUNTERS <json>``: the counters, interrupts and texts seen, seconds since
READY. ``--attack``: a ``wave`` skill and ``max_messages_per_s: 5`` for ros1_client's attack.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from edgevox.agents.events import AgentReply
from edgevox.agents.skills import GoalHandle, skill
from edgevox.errors import Cancelled
from edgevox.integrations.config import Ros1BridgeConfig
from edgevox.integrations.ros1 import Ros1Bridge
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import InterruptEvent, StopEvent


class EchoAgent:
    name = "echo"

    def run(self, task: str, ctx: AgentContext) -> str:
        reply = f"you said: {task}"
        ctx.publish(AgentReply(agent=self.name, text=reply))
        return reply


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attack", action="store_true")
    args = parser.parse_args()
    bus = EventBus("ros1-host")
    ctx = AgentContext(bus=bus, agent_name="echo")
    agent = EchoAgent()
    body_cancelled = threading.Event()

    @skill
    def patrol(laps: int, goal: GoalHandle) -> str:
        """Drive patrol laps.

        Args:
            laps: how many laps
        """
        try:
            for lap in range(laps):
                goal.publish_feedback({"lap": lap})
                goal.sleep(0.05)
        except Cancelled:
            body_cancelled.set()
            raise
        return "patrolled"

    @skill
    def wave(times: int) -> str:
        """Wave.

        Args:
            times: how often
        """
        return "waved" * times

    stops: list[str] = []
    interrupts: list[str] = []
    texts: list[str] = []
    bus.subscribe(StopEvent, lambda e: stops.append(e.reason))
    bus.subscribe(InterruptEvent, lambda e: interrupts.append(e.reason))
    config = Ros1BridgeConfig(
        enabled=True,
        namespace="/test/edgevox",
        topics={"publish": {"reply": ["agent.reply"], "events": ["agent.*"]}},
        max_messages_per_s=5.0 if args.attack else 50.0,
    )

    def on_text(text: str) -> str:
        texts.append(text)
        return agent.run(text, ctx)

    bridge = Ros1Bridge(bus, config, on_text=on_text, skills=[wave] if args.attack else [patrol], ctx=ctx)
    errors: list[BaseException] = []

    def start() -> None:  # the node is started off the main thread, like inside a robot app
        try:
            bridge.start()
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)

    starter = threading.Thread(target=start, name="app-starter")
    starter.start()
    starter.join(30)
    if errors or not bridge.running:
        print(f"FAILED {errors!r}", flush=True)
        return 1
    print("READY", flush=True)
    ready = time.monotonic()
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "quit":
            break
        if command == "counters":
            minimums = json.loads(rest)
            counters = bridge.core.counters
            counters.wait_for(lambda v, m=minimums: all(v.get(k, 0) >= n for k, n in m.items()), 30)
            report = {
                "counters": counters.snapshot(),
                "interrupts": len(interrupts),
                "texts": len(texts),
                "elapsed_s": time.monotonic() - ready,
            }
            print(f"COUNTERS {json.dumps(report)}", flush=True)
    clean = bool(bridge.stop())
    bus.close()
    print(f"STOPS {json.dumps(stops)}", flush=True)
    print(f"CANCELLED {body_cancelled.is_set()}", flush=True)
    print(f"DONE clean={clean}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
