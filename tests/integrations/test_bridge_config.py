"""Bridge config, serialisation and check_bridges: no engines needed except where marked."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edgevox.integrations import check_bridges
from edgevox.integrations.config import BridgesConfig, Ros2BridgeConfig, ZenohBridgeConfig
from edgevox.integrations.ros_common import resolve_topic
from edgevox.integrations.serialization import SerializationError, decode_event, encode_event, remote_origin
from edgevox.voice.events import Stopped, TranscriptEvent

from .conftest import free_port


def test_bridges_are_off_by_default_and_unknown_keys_are_errors():
    cfg = BridgesConfig()
    assert not (cfg.ros2.enabled or cfg.ros1.enabled or cfg.zenoh.enabled)
    with pytest.raises(ValidationError, match="publish_kind"):
        BridgesConfig.model_validate({"zenoh": {"publish_kind": ["voice.*"]}})
    with pytest.raises(ValidationError, match="must be absolute"):
        Ros2BridgeConfig(namespace="robot1")
    with pytest.raises(ValidationError, match="without '\\*'"):
        ZenohBridgeConfig(namespace="edgevox/*")
    with pytest.raises(ValidationError, match="tcp/127.0.0.1:7447"):
        ZenohBridgeConfig(listen=["127.0.0.1:7447"])
    with pytest.raises(ValidationError):
        Ros2BridgeConfig(enabled="yes")  # strict: a string is not a bool


def test_relative_topics_go_under_the_namespace():
    assert resolve_topic("/robot1/edgevox", "skill/goal") == "/robot1/edgevox/skill/goal"
    assert resolve_topic("/robot1/edgevox", "/cmd_text") == "/cmd_text"


def test_events_round_trip_as_json_envelopes_marked_with_their_origin():
    event = Stopped(text="stop", phrase="stop", cancelled_turns=[3, 4], turn_id=4, source="voice", seq=99)
    data = encode_event(event, "robot-a")
    assert b"seq" not in data  # per-bus; the receiving bus stamps its own
    back, origin = decode_event(data)
    assert origin == "robot-a" and remote_origin(back) == "robot-a" and remote_origin(event) is None
    assert (type(back), back.cancelled_turns, back.turn_id, back.source, back.seq) == (Stopped, [3, 4], 4, "voice", 0)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x80", "not UTF-8 JSON"),
        (b"[1]", "must be a JSON object"),
        (b'{"v": 2, "origin": "x", "event": {"kind": "voice.transcript"}}', "version 2"),
        (b'{"v": 1, "origin": "x", "event": {"kind": "no.such"}}', "unknown event kind"),
        (b'{"v": 1, "origin": "x", "event": {"kind": "voice.transcript", "txt": "hi"}}', "unknown fields"),
    ],
)
def test_bad_envelopes_are_refused_with_a_reason(payload, message):
    with pytest.raises(SerializationError, match=message):
        decode_event(payload)


def test_non_finite_floats_do_not_break_serialisation():
    back, _ = decode_event(encode_event(TranscriptEvent(text="x", stt_s=float("nan")), "a"))
    assert back.stt_s is None


def test_check_bridges_reports_only_enabled_bridges():
    assert check_bridges(BridgesConfig()) == []


@pytest.mark.zenoh
def test_check_bridges_reports_a_taken_zenoh_port():
    pytest.importorskip("zenoh", reason="eclipse-zenoh is not installed")
    import zenoh

    from edgevox.integrations.zenoh_bridge import build_zenoh_config

    port = free_port()
    cfg = BridgesConfig.model_validate({"zenoh": {"enabled": True, "listen": [f"tcp/127.0.0.1:{port}"]}})
    [(name, ok, message)] = check_bridges(cfg)
    assert (name, ok) == ("zenoh", True) and "session opens" in message
    holder = zenoh.open(build_zenoh_config(cfg.zenoh))
    try:
        [(name, ok, message)] = check_bridges(cfg)
        assert (name, ok) == ("zenoh", False) and "Address already in use" in message
    finally:
        holder.close()
