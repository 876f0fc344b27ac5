"""The other process of the Zenoh two-process test (run by test_zenoh_bridge.py, not collected).

It hosts two "robots" on loopback, each with its own bus and Zenoh bridge:

* ``edgevox/robot1``: a blackboard with a planner agent that answers ``plan`` requests,
* ``edgevox/robot2``: a bus only, used to prove its events never reach robot1.

Both connect to the endpoints given on the command line (peer mode, scouting and
shared memory off). It speaks a line protocol on stdin/stdout:

    -> READY                    both bridges see the test's bridge
    <- publish                  publish one transcript on each robot's bus
    -> PUBLISHED
    <- wait_left                wait until the test's bridge has gone (peer gone)
    -> LEFT
    <- quit
    -> DONE clean=<bool>        bridges stopped (exit code 0)
"""

from __future__ import annotations

import argparse
import sys
import threading

from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.events import BridgePeerEvent
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.runtime.blackboard import Blackboard, Request
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.voice.events import TranscriptEvent


class PlannerAgent:
    """A deterministic agent: plans a route to the goal named in the task."""

    name = "planner"

    def run(self, task: dict, ctx: AgentContext) -> dict:
        return {"agent": self.name, "steps": ["undock", f"drive to {task['goal']}", "dock"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", action="append", required=True)
    parser.add_argument("--lease", type=float, default=10.0, help="Zenoh lease in seconds")
    args = parser.parse_args()

    def config(namespace: str, **extra: object) -> ZenohBridgeConfig:
        return ZenohBridgeConfig(
            enabled=True,
            namespace=namespace,
            mode="peer",
            connect=args.connect,
            publish_kinds=["voice.transcript"],
            subscribe_kinds=["voice.transcript"],
            lease_s=args.lease,
            **extra,
        )

    bus1, bus2 = EventBus("robot1"), EventBus("robot2")
    board = Blackboard(name="robot1")
    agent = PlannerAgent()
    ctx = AgentContext(bus=bus1, blackboard=board, agent_name=agent.name)

    def volunteer(_key: str, _old: object, new: object) -> None:
        if isinstance(new, Request):
            board.reply_to(new, agent.run(new.task, ctx))

    board.watch("plan", volunteer)
    left = threading.Event()
    bus1.subscribe(BridgePeerEvent, lambda e: left.set() if e.state == "left" else None)

    robot1 = ZenohBridge(
        bus1, config("edgevox/robot1", serve_blackboard=True, serve_keys=["plan"]), blackboard=board
    ).start()
    robot2 = ZenohBridge(bus2, config("edgevox/robot2")).start()
    ready = robot1.wait_for_peers(1, 20) and robot2.wait_for_peers(1, 20)
    print("READY" if ready else "NOT_READY", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "publish":
            bus2.publish(TranscriptEvent(text="from robot2", source="mic2"))
            bus1.publish(TranscriptEvent(text="from robot1", source="mic1", turn_id=7))
            print("PUBLISHED", flush=True)
        elif command == "wait_left":
            print("LEFT" if left.wait(20) else "NOT_LEFT", flush=True)
        elif command == "quit":
            break
    clean = bool(robot1.stop()) & bool(robot2.stop())
    bus1.close()
    bus2.close()
    board.close()
    print(f"DONE clean={clean}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
