"""A plain rclpy client of an ``edgevox ros2`` node, driven line by line (run by test_ros2_node.py).

It knows nothing of edgevox: it uses the ROS interfaces only (lifecycle_msgs, rcl_interfaces,
std_srvs, diagnostic_msgs, std_msgs). Each stdin line is one command; each answer is one
stdout line ``<WORD> <json>``; a timeout answers ``TIMEOUT <what>``:

* ``ready`` -> ``READY {}`` once the node's parameter (and, ``ready lifecycle``, lifecycle) services answer
* ``state`` -> ``STATE "<label>"`` (lifecycle_msgs/srv/GetState)
* ``change <label>`` -> ``CHANGED true|false`` (lifecycle_msgs/srv/ChangeState: configure, activate...)
* ``get <name> ...`` -> ``PARAMS {name: value}`` (rcl_interfaces/srv/GetParameters)
* ``set <name> <json value>`` -> ``SET {"successful", "reason"}`` (rcl_interfaces/srv/SetParameters)
* ``text <words>`` -> ``REPLY <voice.turn_done json>`` (std_msgs/String on text_input, reply topic)
* ``goal <json>`` -> ``RUNNING <feedback json>`` (skill/goal, then skill/feedback)
* ``result <goal_id>`` -> ``RESULT <json>`` (skill/result, the final status)
* ``trigger`` -> ``TRIGGER {"success", "message"}`` (std_srvs/srv/Trigger on the stop service)
* ``diagnostics <min turns>`` -> ``DIAG [statuses]`` (the first DiagnosticArray on /diagnostics
  from this node whose voice status counts at least that many turns)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from rcl_interfaces.srv import GetParameters, SetParameters  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402


class Client:
    def __init__(self, namespace: str, node_name: str) -> None:
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("edgevox_node_test_client")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.ns = namespace
        self.fqn = f"{namespace}/{node_name}"
        qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        self.inbox: list[tuple[str, dict]] = []
        self.pubs = {
            n: self.node.create_publisher(String, f"{namespace}/{n}", qos) for n in ("text_input", "skill/goal")
        }
        self.subs = [
            self.node.create_subscription(
                String, f"{namespace}/{n}", lambda m, _n=n: self.inbox.append((_n, json.loads(m.data))), qos
            )
            for n in ("reply", "skill/feedback", "skill/result")
        ]
        self.diagnostics: list[DiagnosticArray] = []
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.diagnostics.append, 10)
        self.clients = {
            "get_state": self.node.create_client(GetState, f"{self.fqn}/get_state"),
            "change_state": self.node.create_client(ChangeState, f"{self.fqn}/change_state"),
            "get_parameters": self.node.create_client(GetParameters, f"{self.fqn}/get_parameters"),
            "set_parameters": self.node.create_client(SetParameters, f"{self.fqn}/set_parameters"),
            "stop": self.node.create_client(Trigger, f"{namespace}/stop"),
        }

    def spin_until(self, predicate, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return predicate()

    def call(self, name: str, request, timeout_s: float = 30.0):
        client = self.clients[name]
        if not self.spin_until(client.service_is_ready, timeout_s):
            return None
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout_s)
        return future.result() if future.done() else None

    def take(self, topic: str, predicate, timeout_s: float = 20.0):
        found = []

        def check() -> bool:
            for item in self.inbox:
                if item[0] == topic and predicate(item[1]):
                    self.inbox.remove(item)
                    found.append(item[1])
                    return True
            return False

        return found[0] if self.spin_until(check, timeout_s) else None

    def topics_matched(self, timeout_s: float = 30.0) -> bool:
        return self.spin_until(
            lambda: (
                all(p.get_subscription_count() > 0 for p in self.pubs.values())
                and all(s.get_publisher_count() > 0 for s in self.subs)
            ),
            timeout_s,
        )

    def send(self, topic: str, data: str) -> None:
        msg = String()
        msg.data = data
        self.pubs[topic].publish(msg)

    # -- commands ---------------------------------------------------------------------------------

    def ready(self, *what: str) -> tuple[str, object]:
        names = ["get_parameters", "set_parameters"] + (["get_state", "change_state"] if "lifecycle" in what else [])
        ok = self.spin_until(lambda: all(self.clients[n].service_is_ready() for n in names), 30.0)
        return ("READY", {}) if ok else ("TIMEOUT", "services")

    def state(self) -> tuple[str, object]:
        resp = self.call("get_state", GetState.Request())
        return ("STATE", resp.current_state.label) if resp else ("TIMEOUT", "get_state")

    def change(self, label: str) -> tuple[str, object]:
        req = ChangeState.Request()
        req.transition.label = label
        resp = self.call("change_state", req, timeout_s=60.0)
        return ("CHANGED", resp.success) if resp else ("TIMEOUT", f"change_state {label}")

    def get(self, *names: str) -> tuple[str, object]:
        resp = self.call("get_parameters", GetParameters.Request(names=list(names)))
        if resp is None:
            return "TIMEOUT", "get_parameters"
        values = [parameter_value_to_python(v) for v in resp.values]
        return "PARAMS", {
            n: list(v) if not isinstance(v, (str, int, float, bool)) else v for n, v in zip(names, values, strict=True)
        }

    def set(self, name: str, value: str) -> tuple[str, object]:
        req = SetParameters.Request(parameters=[Parameter(name, value=json.loads(value)).to_parameter_msg()])
        resp = self.call("set_parameters", req)
        if resp is None:
            return "TIMEOUT", "set_parameters"
        result = resp.results[0]
        return "SET", {"successful": result.successful, "reason": result.reason}

    def text(self, words: str) -> tuple[str, object]:
        if not self.topics_matched():
            return "TIMEOUT", "topics"
        # Matched publishers do not mean the node's reader has matched this writer yet (DDS
        # discovery is per side): say it again until a reply comes, as a person would.
        self.inbox[:] = [item for item in self.inbox if item[0] != "reply"]  # earlier turns' (a stop's "Stopped.")
        for _attempt in range(4):
            self.send("text_input", words)
            reply = self.take("reply", lambda m: m.get("kind") == "voice.turn_done", 10.0)
            if reply:
                return "REPLY", reply
        return "TIMEOUT", "reply"

    def goal(self, data: str) -> tuple[str, object]:
        if not self.topics_matched():
            return "TIMEOUT", "topics"
        goal_id = json.loads(data)["goal_id"]
        self.send("skill/goal", data)
        feedback = self.take("skill/feedback", lambda m: m["goal_id"] == goal_id and m["status"] == "running")
        return ("RUNNING", feedback) if feedback else ("TIMEOUT", "feedback")

    def result(self, goal_id: str) -> tuple[str, object]:
        result = self.take("skill/result", lambda m: m["goal_id"] == goal_id and m["status"] != "accepted")
        return ("RESULT", result) if result else ("TIMEOUT", "result")

    def publishers(self, name: str) -> tuple[str, object]:
        """The ids of the edgevox node's publishers on ``<namespace>/<name>`` (once discovered)."""
        topic = f"{self.ns}/{name}"

        def gids() -> list[str]:
            infos = self.node.get_publishers_info_by_topic(topic)
            return sorted(bytes(i.endpoint_gid).hex() for i in infos if i.node_name != self.node.get_name())

        return ("PUBLISHERS", gids()) if self.spin_until(lambda: bool(gids()), 30.0) else ("TIMEOUT", topic)

    def trigger(self) -> tuple[str, object]:
        resp = self.call("stop", Trigger.Request())
        return ("TRIGGER", {"success": resp.success, "message": resp.message}) if resp else ("TIMEOUT", "trigger")

    def diagnostics_(self, min_turns: str = "0") -> tuple[str, object]:
        def voice_turns(array: DiagnosticArray) -> int:
            for status in array.status:
                if status.name.endswith(": voice") and status.hardware_id:
                    return int({kv.key: kv.value for kv in status.values}.get("turns", "-1"))
            return -1

        def found() -> bool:
            return any(voice_turns(a) >= int(min_turns) for a in self.diagnostics)

        if not self.spin_until(found, 20.0):
            return "TIMEOUT", "diagnostics"
        array = next(a for a in self.diagnostics if voice_turns(a) >= int(min_turns))
        return "DIAG", [
            {
                "level": s.level[0] if isinstance(s.level, bytes) else int(s.level),
                "name": s.name,
                "message": s.message,
                "hardware_id": s.hardware_id,
                "values": {kv.key: kv.value for kv in s.values},
            }
            for s in array.status
        ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--node-name", default="edgevox")
    args = parser.parse_args()
    client = Client(args.namespace, args.node_name)
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "quit":
            break
        handler = getattr(client, "diagnostics_" if command == "diagnostics" else command)
        if command in ("set", "text", "goal"):
            parts = rest.split(" ", 1) if command == "set" else [rest]
        else:
            parts = rest.split()
        word, body = handler(*parts)
        print(f"{word} {json.dumps(body)}", flush=True)
    client.executor.shutdown()
    client.node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
