"""What a managed node's topics and services do while it is inactive (issue 26): they stay, and
serve nothing: a message is counted and not acted on, the stop service says nothing runs, and
only the serving bridge's core ever handles a message. No rclpy needed for the routing."""

from __future__ import annotations

from types import SimpleNamespace

from edgevox.integrations.ros2_entities import Ros2Entities


class Core:
    def __init__(self) -> None:
        self.handled: list[tuple[str, str]] = []

    def handle(self, topic: str, data: str) -> None:
        self.handled.append((topic, data))


class Bridge:
    def __init__(self) -> None:
        self.core = Core()

    def stop_service(self, _request, response):
        response.success, response.message = True, "stopped: goal g1 (skill hold)"
        return response


def test_while_inactive_nothing_is_acted_on_and_the_stop_service_says_so():
    entities = Ros2Entities(node=None, name="edgevox/edgevox")
    entities.on_message("/edgevox/text_input", "hello")
    entities.on_message("/edgevox/skill/goal", '{"goal_id": "g1", "skill": "hold"}')
    assert entities.ignored == 2
    answer = entities.on_stop_service(None, SimpleNamespace(success=False, message=""))
    assert (answer.success, answer.message) == (True, "stopped: nothing was running (the node is inactive)")


def test_once_a_bridge_serves_them_its_core_handles_the_messages_and_the_stop():
    entities = Ros2Entities(node=None, name="edgevox/edgevox")
    first, second = Bridge(), Bridge()
    entities.serving = first
    entities.on_message("/edgevox/text_input", "one")
    entities.serving = None  # deactivate
    entities.on_message("/edgevox/text_input", "lost while inactive")
    entities.serving = second  # activate: the next application's bridge
    entities.on_message("/edgevox/text_input", "two")
    assert first.core.handled == [("/edgevox/text_input", "one")]
    assert second.core.handled == [("/edgevox/text_input", "two")]
    assert entities.ignored == 1
    answer = entities.on_stop_service(None, SimpleNamespace(success=False, message=""))
    assert answer.message == "stopped: goal g1 (skill hold)"
