"""Bridge config, serialisation and check_bridges: no engines needed except where marked."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from edgevox.integrations import check_bridges
from edgevox.integrations.config import BridgesConfig, Ros2BridgeConfig, ZenohBridgeConfig
from edgevox.integrations.ros_common import resolve_topic
from edgevox.integrations.serialization import (
    SerializationError,
    decode_event,
    decode_json,
    encode_event,
    remote_origin,
)
from edgevox.runtime.messages import AgentMessage
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


def test_serving_the_blackboard_is_off_by_default_and_needs_an_explicit_key_list():
    assert ZenohBridgeConfig().serve_blackboard is False
    with pytest.raises(ValidationError, match=r"serve_keys is empty: list the keys peers may post requests on"):
        ZenohBridgeConfig(serve_blackboard=True)
    for bad in ("*", "plan/*/x", "plan/reply/*", ""):
        with pytest.raises(ValidationError, match="key"):
            ZenohBridgeConfig(serve_blackboard=True, serve_keys=[bad])
    with pytest.raises(ValidationError, match="served or forwarded, not both"):
        ZenohBridgeConfig(serve_blackboard=True, serve_keys=["plan/route"], forward_requests=["plan/*"])
    ok = ZenohBridgeConfig(serve_blackboard=True, serve_keys=["plan", "planner/*"])
    assert ok.serve_keys == ["plan", "planner/*"]


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
        (b"\x80", "not UTF-8"),
        (b"{'v': 1}", "not valid JSON"),
        (b"[1]", "must be a JSON object"),
        (b'{"v": 2, "origin": "x", "event": {"kind": "voice.transcript"}}', "version 2"),
        (b'{"v": 1, "origin": "x", "event": {"kind": "no.such"}}', "unknown event kind"),
        (b'{"v": 1, "origin": "x", "event": {"kind": "voice.transcript", "txt": "hi"}}', "unknown field 'txt'"),
        (b'{"v": 1, "origin": "x", "extra": 1, "event": {"kind": "voice.transcript"}}', "unknown keys"),
        (b'{"v": true, "origin": "x", "event": {"kind": "voice.transcript"}}', "version True"),
    ],
)
def test_bad_envelopes_are_refused_with_a_reason(payload, message):
    with pytest.raises(SerializationError, match=message) as info:
        decode_event(payload)
    assert info.value.reason == "invalid"


def envelope(**event) -> bytes:
    return json.dumps({"v": 1, "origin": "peer", "event": {"kind": "voice.transcript", **event}}).encode()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"timestamp": "yesterday"}, "field 'timestamp': Input should be a valid number (got 'yesterday')"),
        ({"turn_id": True}, "field 'turn_id': Input should be a valid integer"),
        ({"turn_id": "7"}, "field 'turn_id'"),
        ({"text": ["go"]}, "field 'text': Input should be a valid string"),
        ({"stt_s": None}, "field 'stt_s'"),
        ({"speculative": "false"}, "field 'speculative'"),
    ],
)
def test_received_event_fields_are_checked_against_their_types(fields, message):
    with pytest.raises(SerializationError, match=re.escape(message)):
        decode_event(envelope(**fields))


def test_typed_fields_accept_json_numbers_and_nested_types():
    back, _ = decode_event(envelope(text="hi", turn_id=3, timestamp=5, stt_s=0.25))
    assert (back.text, back.turn_id, back.timestamp, back.stt_s) == ("hi", 3, 5.0, 0.25)
    stopped = json.dumps({"v": 1, "origin": "p", "event": {"kind": "voice.stopped", "cancelled_turns": [1, "2"]}})
    with pytest.raises(SerializationError, match=r"field 'cancelled_turns.1'"):
        decode_event(stopped.encode())


def test_every_registered_event_kind_can_be_checked_on_arrival():
    """A kind whose type hints do not resolve would be refused on every arrival: catch it here."""
    import edgevox.agents.events  # noqa: F401 - register the kinds bridges usually carry
    import edgevox.integrations.events  # noqa: F401
    import edgevox.voice.events  # noqa: F401
    from edgevox.integrations.serialization import wire_model
    from edgevox.runtime.events import event_class, known_kinds

    for kind in known_kinds():
        wire_model(event_class(kind))


def test_nan_and_infinity_are_refused_on_arrival():
    for literal in ("NaN", "Infinity", "-Infinity"):
        data = b'{"v": 1, "origin": "p", "event": {"kind": "voice.transcript", "stt_s": ' + literal.encode() + b"}}"
        with pytest.raises(SerializationError, match=f"{literal} is not a number JSON allows"):
            decode_event(data)
    with pytest.raises(SerializationError, match="1e999 does not fit a float"):  # free-form data too
        decode_event(b'{"v": 1, "origin": "p", "event": {"kind": "agent.message", "content": {"speed": 1e999}}}')


def test_non_finite_floats_are_sent_as_the_field_default():
    back, _ = decode_event(encode_event(TranscriptEvent(text="x", stt_s=float("nan")), "a"))
    assert back.stt_s == TranscriptEvent().stt_s
    agent = AgentMessage(content={"speed": float("inf"), "ok": [1.0, float("nan")]})
    back, _ = decode_event(encode_event(agent, "a"))
    assert back.content == {"speed": None, "ok": [1.0, None]}


def test_size_and_depth_limits_name_their_reason():
    with pytest.raises(SerializationError, match="over the limit of 100") as info:
        decode_json(b"[" + b"1," * 100 + b"1]", max_bytes=100)
    assert info.value.reason == "oversized"
    for depth in (40, 100_000):  # 100,000 would raise RecursionError inside json.loads
        with pytest.raises(SerializationError, match="nested") as info:
            decode_json("[" * depth + "]" * depth, max_depth=32)
        assert info.value.reason == "too_deep"
    assert decode_json("[" * 32 + "]" * 32, max_depth=32) == decode_json("[" * 32 + "]" * 32)


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
