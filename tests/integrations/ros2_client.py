"""The second process of the ROS 2 bridge test (run by test_ros2_bridge.py, not collected).

A plain rclpy client, knowing nothing of edgevox: it waits until the bridge's topics are
matched, then

1. publishes text on ``text_input`` and prints ``REPLY <json>`` from the ``reply`` topic,
2. starts the ``patrol`` skill on ``skill/goal``, prints ``FEEDBACK <json>`` once it runs,
3. publishes on ``stop`` while the goal runs and prints ``RESULT <json>`` from ``skill/result``.

Any timeout prints ``TIMEOUT <what>`` and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
import ros_attacks  # noqa: E402 - beside this script
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402
from std_msgs.msg import String  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--reply-kind", default="agent.reply", help="event kind that carries the answer")
    parser.add_argument(
        "--scenario",
        choices=("bridge", "earlier-skill", "attack"),
        default="bridge",
        help="bridge: steps 1-3 above; earlier-skill: a typed turn starts go_to, another turn "
        "follows, then a stop on the stop topic must cancel it (prints STOPPED <json>); "
        "attack: ros_attacks.ATTACKS, then a flood, prints RESULTS <json list> of the answers",
    )
    args = parser.parse_args()
    ns = args.namespace

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("edgevox_test_client")
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    inbox: queue.Queue[tuple[str, str]] = queue.Queue()
    names = ("text_input", "stop", "skill/goal") + (tuple(ros_attacks.TOPICS) if args.scenario == "attack" else ())
    pubs = {name: node.create_publisher(String, f"{ns}/{name}", qos) for name in dict.fromkeys(names)}
    subs = [
        node.create_subscription(String, f"{ns}/{name}", lambda m, _n=name: inbox.put((_n, m.data)), qos)
        for name in ("reply", "skill/feedback", "skill/result")
        + (("events", "state") if args.scenario == "earlier-skill" else ())
    ]
    executor = SingleThreadedExecutor()
    executor.add_node(node)

    def spin_until(predicate, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            executor.spin_once(timeout_sec=0.05)
        return predicate()

    def send(name: str, data: str) -> None:
        msg = String()
        msg.data = data
        pubs[name].publish(msg)

    backlog: list[tuple[str, str]] = []  # messages not consumed yet (another receive may want them)

    def receive(name: str, predicate, timeout_s: float = 15.0):
        found = []

        def check() -> bool:
            while not inbox.empty():
                backlog.append(inbox.get_nowait())
            for item in backlog:
                topic, data = item
                if topic == name and predicate(json.loads(data)):
                    backlog.remove(item)
                    found.append(data)
                    return True
            return False

        return found[0] if spin_until(check, timeout_s) else None

    matched = spin_until(
        lambda: (
            all(p.get_subscription_count() > 0 for p in pubs.values())
            and all(s.get_publisher_count() > 0 for s in subs)
        ),
        30.0,
    )
    if not matched:
        print("TIMEOUT discovery", flush=True)
        return 1

    if args.scenario == "earlier-skill":
        return earlier_skill(send, receive, executor, node)
    if args.scenario == "attack":
        return attack(send, receive, executor, node)

    # Matched publishers do not mean the node's reader has matched this writer yet (DDS
    # discovery is per side): on a busy machine the first message can go to nobody. Say it
    # again until the first reply comes, as a person would; the test checks that reply.
    reply = None
    for _attempt in range(4):
        send("text_input", "hello robot")
        reply = receive("reply", lambda m: m.get("kind") == args.reply_kind, timeout_s=15.0)
        if reply:
            break
    print(f"REPLY {reply}" if reply else "TIMEOUT reply", flush=True)

    send("skill/goal", json.dumps({"goal_id": "g1", "skill": "patrol", "args": {"laps": 100000}}))
    feedback = receive("skill/feedback", lambda m: m["goal_id"] == "g1" and m["status"] == "running")
    print(f"FEEDBACK {feedback}" if feedback else "TIMEOUT feedback", flush=True)

    send("stop", "e-stop from client")
    result = receive("skill/result", lambda m: m["goal_id"] == "g1" and m["status"] != "accepted")
    print(f"RESULT {result}" if result else "TIMEOUT result", flush=True)

    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()
    return 0 if reply and feedback and result else 1


def earlier_skill(send, receive, executor, node) -> int:
    """A skill started by one typed turn, a second turn, then the ROS stop topic."""
    send("text_input", "go to the kitchen")
    first = receive("reply", lambda m: m.get("kind") == "voice.turn_done")
    running = receive("events", lambda m: m.get("skill") == "go_to" and m.get("state") == "running")
    send("text_input", "what is the battery level")
    second = receive("reply", lambda m: m.get("kind") == "voice.turn_done" and "attery" in m.get("reply_text", ""))
    print(f"TURNS {first} {second}" if first and second and running else "TIMEOUT turns", flush=True)
    send("stop", "e-stop from client")
    cancelled = receive("events", lambda m: m.get("skill") == "go_to" and m.get("state") == "cancelled")
    stopped = receive("state", lambda m: m.get("kind") == "voice.stopped")
    print(f"CANCELLED {cancelled}" if cancelled else "TIMEOUT cancelled", flush=True)
    print(f"STOPPED {stopped}" if stopped else "TIMEOUT stopped", flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()
    return 0 if first and second and running and cancelled and stopped else 1


def attack(send, receive, executor, node) -> int:
    """Hostile messages; every goal and cancel among them must be answered on skill/result."""
    for topic, data in ros_attacks.ATTACKS:
        send(topic, data)
    for i in range(ros_attacks.FLOOD_COUNT):
        send(ros_attacks.FLOOD_TOPIC, f"flood {i}")
        executor.spin_once(timeout_sec=ros_attacks.FLOOD_GAP_S)
    answers = []
    for _ in range(ros_attacks.ANSWERED):
        answer = receive("skill/result", lambda m: m["status"] in ("rejected", "cancel_rejected"), 30.0)
        if answer is None:
            break
        answers.append(json.loads(answer))
    print(f"RESULTS {json.dumps(answers)}", flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()
    return 0 if len(answers) == ros_attacks.ANSWERED else 1


if __name__ == "__main__":
    sys.exit(main())
