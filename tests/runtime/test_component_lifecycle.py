"""The one lifecycle of components that start once and stop once (App, bridges), the one
StopReport they return, and EdgeVox's ``stop(timeout=...)`` spelling."""

from __future__ import annotations

import pytest

from edgevox.errors import BridgeError, LifecycleError
from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.runtime.bus import EventBus
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout
from edgevox.runtime.runtime import Runtime


def test_a_component_starts_once_and_says_to_make_a_new_one():
    life = component_lifecycle("thing 'x'", noun="thing")
    life.to(ComponentState.STARTING, "start()")
    life.to(ComponentState.RUNNING)
    with pytest.raises(LifecycleError, match=r"thing 'x': cannot start\(\) while RUNNING; it is already running"):
        life.to(ComponentState.STARTING, "start()")
    life.to(ComponentState.STOPPING)
    life.to(ComponentState.STOPPED)
    with pytest.raises(LifecycleError, match="make a new thing"):
        life.to(ComponentState.STARTING, "start()")


def test_a_lifecycle_raises_the_error_class_it_was_given():
    life = component_lifecycle("bridge", noun="bridge", error=BridgeError)
    life.to(ComponentState.STOPPED)
    with pytest.raises(BridgeError, match="make a new bridge"):
        life.to(ComponentState.STARTING, "start()")


def test_a_nested_report_merges_its_parts_and_keeps_them_by_name():
    voice = StopReport(discarded=2, cancelled_turns=[3])
    bridge = StopReport.abandoned_threads(["edgevox-ros2-spin"])
    report = StopReport.nest({"voice": voice, "bridge ros2": bridge})
    assert not report and report.abandoned == ["edgevox-ros2-spin"]
    assert (report.discarded, report.cancelled_turns) == (2, [3])
    assert report.parts == {"voice": voice, "bridge ros2": bridge}
    assert str(report) == "abandoned: edgevox-ros2-spin" and str(StopReport()) == "clean"


@pytest.mark.parametrize(
    ("timeout_s", "timeout", "expected"), [(None, None, 5.0), (1.0, None, 1.0), (None, 2.0, 2.0), (3.0, 3.0, 3.0)]
)
def test_stop_takes_timeout_as_the_edgevox_spelling_of_timeout_s(timeout_s, timeout, expected):
    assert stop_timeout(timeout_s, timeout, 5.0) == expected


def test_stop_refuses_two_different_timeouts():
    with pytest.raises(TypeError, match="timeout_s or timeout, not both"):
        stop_timeout(1.0, 2.0, 5.0)


def test_runtime_stop_accepts_timeout():
    runtime = Runtime("lifecycle-test").start()
    assert runtime.stop(timeout=2.0)


def test_a_bridge_stopped_before_it_started_reports_clean_and_cannot_start():
    bus = EventBus("lifecycle-test")
    bridge = ZenohBridge(bus, ZenohBridgeConfig(enabled=True))
    report = bridge.stop(timeout=1.0)
    assert isinstance(report, StopReport) and report
    with pytest.raises(BridgeError, match="make a new bridge"):
        bridge.start()
    bus.close()
