"""An ad-hoc ``AgentEvent`` (EdgeVox's ``kind`` + ``payload``) crosses a real Zenoh bridge on
loopback, filtered by its kind like any typed event (issue 12)."""

from __future__ import annotations

import pytest

pytest.importorskip("zenoh", reason="eclipse-zenoh is not installed: pip install 'edgevox[zenoh]'")

from edgevox.integrations.config import ZenohBridgeConfig  # noqa: E402
from edgevox.integrations.serialization import remote_origin  # noqa: E402
from edgevox.integrations.zenoh_bridge import ZenohBridge  # noqa: E402
from edgevox.runtime.bus import EventBus  # noqa: E402
from edgevox.runtime.events import AgentEvent  # noqa: E402

from .conftest import Collector, free_port  # noqa: E402

pytestmark = pytest.mark.zenoh


def test_an_ad_hoc_sensor_alert_crosses_the_zenoh_bridge_and_other_kinds_stay_home():
    port, ns = free_port(), "edgevox/robot1"
    bus_a, bus_b = EventBus("a"), EventBus("b")
    kinds = {"publish_kinds": ["sensor_*"], "subscribe_kinds": ["sensor_alert"]}
    a = ZenohBridge(bus_a, ZenohBridgeConfig(enabled=True, namespace=ns, listen=[f"tcp/127.0.0.1:{port}"], **kinds))
    b = ZenohBridge(bus_b, ZenohBridgeConfig(enabled=True, namespace=ns, connect=[f"tcp/127.0.0.1:{port}"], **kinds))
    seen = Collector(bus_b, AgentEvent)
    try:
        a.start(), b.start()
        assert a.wait_for_peers(1, 10) and b.wait_for_peers(1, 10)
        bus_a.publish(AgentEvent("sensor_ok", {"level": 0}))  # published by a, not subscribed by b
        bus_a.publish(AgentEvent("battery_low", {"percent": 12}))  # not published by a
        bus_a.publish(AgentEvent("sensor_alert", {"sensor": "bumper", "level": 3, "at": [1.5, 2]}, agent_name="imu"))
        assert seen.wait_for(lambda e: e.kind == "sensor_alert")
        got = seen.events[-1]
        assert (got.payload, got.agent_name, remote_origin(got)) == (
            {"sensor": "bumper", "level": 3, "at": [1.5, 2]},
            "imu",
            a.bridge_id,
        )
        # published earlier by the same bridge, so it would have arrived first had it crossed
        assert [e.kind for e in seen.events] == ["sensor_alert"]
    finally:
        assert a.stop() and b.stop()
        bus_a.close(), bus_b.close()
