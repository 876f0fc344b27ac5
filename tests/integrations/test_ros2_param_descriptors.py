"""What ``ros2 param describe`` shows for the keys an edgevox node offers (issue 26): ranges from the
config schema, enforced by ROS itself, and which keys are read-only (real rclpy, a node of its own)."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.ros2

try:
    import rclpy
except ImportError as exc:  # the wheels are a CI install; without them there is no ROS 2 here
    pytest.skip(f"ros-rclpy is not installed ({exc})", allow_module_level=True)

from edgevox.config.loader import load_config  # noqa: E402
from edgevox.integrations.ros2_params import PARAMETERS, declare  # noqa: E402


@pytest.fixture
def node(monkeypatch, tmp_path):
    monkeypatch.setenv("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_LOG_DIR", str(tmp_path / "ros_log"))
    from rclpy.context import Context
    from rclpy.signals import SignalHandlerOptions

    context = Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    made = []

    def make(name: str):
        made.append(rclpy.create_node(name, context=context))
        return made[-1]

    yield make
    for n in made:
        n.destroy_node()
    context.try_shutdown()


def _set(node, key: str, value) -> bool:
    from rclpy.parameter import Parameter

    return node.set_parameters([Parameter(key, value=value)])[0].successful


def test_numeric_keys_carry_their_schema_range_and_ros_refuses_a_value_outside_it(node):
    n = node("plain")
    declare(n, load_config("text"))
    temperature = n.describe_parameter("llm.temperature")
    assert [(r.from_value, r.to_value) for r in temperature.floating_point_range] == [(0.0, 5.0)]
    tokens = n.describe_parameter("llm.max_tokens")
    assert [(r.from_value, r.to_value) for r in tokens.integer_range] == [(1, 1048576)]
    assert not _set(n, "llm.temperature", 9.5)  # refused by ROS: out of range
    assert _set(n, "llm.temperature", 0.5)


def test_a_plain_node_marks_keys_that_are_not_live_read_only_and_a_managed_node_says_when_they_can_be_set(node):
    plain, managed = node("plain"), node("managed")
    config = load_config("text")
    declare(plain, config)
    declare(managed, config, managed=True)
    for spec in PARAMETERS:
        assert plain.describe_parameter(spec.key).read_only is (not spec.live), spec.key
        assert managed.describe_parameter(spec.key).read_only is False, spec.key
    assert not _set(plain, "safety.stop_phrases", ["halt"])  # the stop phrases cannot be switched off from the graph
    assert "unconfigured" in managed.describe_parameter("safety.stop_phrases").additional_constraints
