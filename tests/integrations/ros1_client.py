"""The ROS 1 client process of test_ros1_bridge.py (not collected): plain rospy, no edgevox.

Runs under Debian's python3. Same scenario as ros2_client.py: text -> ``REPLY``, a
``patrol`` goal -> ``FEEDBACK`` once running, ``stop`` while it runs -> ``RESULT``.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time

import ros_attacks  # beside this script
import rospy
from std_msgs.msg import String


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--reply-kind", default="agent.reply", help="event kind that carries the answer")
    parser.add_argument(
        "--scenario",
        choices=("bridge", "attack"),
        default="bridge",
        help="attack: ros_attacks.ATTACKS, then a flood; prints RESULTS <json list> of the answers",
    )
    args = parser.parse_args()
    ns = args.namespace
    rospy.init_node("edgevox_test_client", anonymous=True, disable_signals=True)
    inbox: queue.Queue = queue.Queue()
    names = ("text_input", "stop", "skill/goal") + (tuple(ros_attacks.TOPICS) if args.scenario == "attack" else ())
    pubs = {name: rospy.Publisher(f"{ns}/{name}", String, queue_size=10) for name in dict.fromkeys(names)}
    incoming = ("skill/result",) if args.scenario == "attack" else ("reply", "skill/feedback", "skill/result")
    subs = [
        rospy.Subscriber(f"{ns}/{name}", String, lambda m, _n=name: inbox.put((_n, m.data)), queue_size=10)
        for name in incoming
    ]

    def until(predicate, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)  # rospy offers no wait on connection counts
        return predicate()

    if not until(
        lambda: (
            all(p.get_num_connections() > 0 for p in pubs.values()) and all(s.get_num_connections() > 0 for s in subs)
        ),
        30,
    ):
        print("TIMEOUT discovery", flush=True)
        return 1

    def receive(name, predicate, timeout_s=15.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                topic, data = inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if topic == name and predicate(json.loads(data)):
                return data
        return None

    if args.scenario == "attack":
        for topic, data in ros_attacks.ATTACKS:
            pubs[topic].publish(String(data=data))
        for i in range(ros_attacks.FLOOD_COUNT):
            pubs[ros_attacks.FLOOD_TOPIC].publish(String(data=f"flood {i}"))
            time.sleep(ros_attacks.FLOOD_GAP_S)  # pacing the sender, not synchronising
        answers = []
        for _ in range(ros_attacks.ANSWERED):
            answer = receive("skill/result", lambda m: m["status"] in ("rejected", "cancel_rejected"), 30.0)
            if answer is None:
                break
            answers.append(json.loads(answer))
        print(f"RESULTS {json.dumps(answers)}", flush=True)
        rospy.signal_shutdown("done")
        return 0 if len(answers) == ros_attacks.ANSWERED else 1

    pubs["text_input"].publish(String(data="hello robot"))
    reply = receive("reply", lambda m: m.get("kind") == args.reply_kind)
    print(f"REPLY {reply}" if reply else "TIMEOUT reply", flush=True)

    pubs["skill/goal"].publish(String(data=json.dumps({"goal_id": "g1", "skill": "patrol", "args": {"laps": 100000}})))
    feedback = receive("skill/feedback", lambda m: m["goal_id"] == "g1" and m["status"] == "running")
    print(f"FEEDBACK {feedback}" if feedback else "TIMEOUT feedback", flush=True)

    pubs["stop"].publish(String(data="e-stop from client"))
    result = receive("skill/result", lambda m: m["goal_id"] == "g1")
    print(f"RESULT {result}" if result else "TIMEOUT result", flush=True)
    rospy.signal_shutdown("done")
    return 0 if reply and feedback and result else 1


if __name__ == "__main__":
    sys.exit(main())
