"""Property tests of the event deserialiser (what a Zenoh or ROS peer's bytes become): any
bytes and any JSON either decode to a correctly typed event or raise one
:class:`SerializationError`; every registered event with field values of its types
round-trips exactly."""

from __future__ import annotations

import dataclasses
import json
import string
import typing

from hypothesis import assume, given
from hypothesis import strategies as st

import edgevox.agents.events
import edgevox.orchestration.events
import edgevox.voice.events  # noqa: F401 - register every event kind
from edgevox.errors import ArgumentError
from edgevox.integrations.serialization import (
    DEFAULT_MAX_DEPTH,
    SerializationError,
    decode_event,
    encode_event,
    event_to_json_dict,
    json_depth,
)
from edgevox.runtime.events import _REGISTRY, MAX_PAYLOAD_DEPTH, AgentEvent, Event

KINDS = sorted(_REGISTRY)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)


def _decode(data: bytes | str) -> Event | None:
    try:
        event, origin = decode_event(data, max_bytes=256 * 1024)
    except SerializationError as exc:
        assert exc.reason in {"oversized", "too_deep", "invalid"}
        assert "\n" not in str(exc)
        return None
    assert isinstance(event, Event) and origin
    return event


@given(st.binary(max_size=400))
def test_any_bytes_decode_or_raise_serialization_error(data):
    _decode(data)


@given(st.sampled_from(KINDS), st.dictionaries(st.text(max_size=12), json_values, max_size=6), st.text(max_size=8))
def test_any_fields_under_any_kind_decode_typed_or_are_refused(kind, fields, origin):
    body = {"kind": kind, **fields}
    event = _decode(json.dumps({"v": 1, "origin": origin, "event": body}))
    if event is None:
        return
    assert type(event) is _REGISTRY[kind]
    hints = typing.get_type_hints(type(event))
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if f.name in fields and hints[f.name] in (str, int, float, bool):
            expected = float if hints[f.name] is float else hints[f.name]
            assert isinstance(value, expected), (f.name, value)
            assert not (expected is int and isinstance(value, bool))


@given(st.integers(1, 5000), st.sampled_from(["[", '{"a":']))
def test_any_nesting_is_refused_without_raising_anything_else(depth, opener):
    body = opener * depth
    _decode('{"v": 1, "origin": "peer", "event": {"kind": "voice.transcript", "text": ' + body + "}}")


SIMPLE = {
    str: st.text(max_size=30),
    int: st.integers(-(2**31), 2**31),
    float: st.floats(-1e6, 1e6),
    bool: st.booleans(),
}


def _event_strategy(cls: type[Event]) -> st.SearchStrategy[Event]:
    hints = typing.get_type_hints(cls)
    fields = {
        f.name: SIMPLE[hints[f.name]] for f in dataclasses.fields(cls) if f.name != "seq" and hints[f.name] in SIMPLE
    }
    return st.fixed_dictionaries(fields).map(lambda kw: cls(**kw))


@given(st.sampled_from(KINDS).flatmap(lambda kind: _event_strategy(_REGISTRY[kind])))
def test_every_event_round_trips_with_values_of_its_types(event):
    try:
        data = encode_event(event, "robot-1")
    except (TypeError, ValueError):
        return  # an event that refuses its own values (its __post_init__) is never sent
    decoded = _decode(data)
    assert decoded is not None, event
    for f in dataclasses.fields(event):
        if f.name != "seq":
            assert getattr(decoded, f.name) == getattr(event, f.name), f.name


# --- ad-hoc AgentEvents (EdgeVox's AgentEvent(kind=..., payload=...)) ---------------------

AD_HOC_KINDS = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters),
    st.text(alphabet=string.ascii_letters + string.digits + "_.-", max_size=24),
)
payloads = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def _ad_hoc(kind: str, payload: dict, **kw) -> AgentEvent | None:
    try:
        return AgentEvent(kind, payload, **kw)
    except ArgumentError as exc:  # a kind in edgevox's namespaces or a typed kind: refused, in one line
        assert "\n" not in str(exc) and kind in str(exc)
        return None


@given(AD_HOC_KINDS, payloads, st.text(max_size=8), st.floats(0, 2e9))
def test_every_ad_hoc_event_round_trips_exactly(kind, payload, source, timestamp):
    event = _ad_hoc(kind, payload, agent_name=source, session_id="s", timestamp=timestamp)
    assume(event is not None)
    decoded = _decode(encode_event(event, "robot-1"))
    assert type(decoded) is AgentEvent and decoded == event
    assert (decoded.kind, decoded.payload, decoded.agent_name) == (kind, payload, source)


@given(st.text(max_size=30), json_values, st.dictionaries(st.text(max_size=8), json_values, max_size=3))
def test_any_kind_with_any_payload_decodes_to_that_ad_hoc_event_or_is_refused(kind, payload, extra):
    body = {**extra, "kind": kind, "payload": payload}
    event = _decode(json.dumps({"v": 1, "origin": "peer", "event": body}))
    if event is None or kind in _REGISTRY:
        return
    assert type(event) is AgentEvent and event.kind == kind and event.payload == payload


def test_the_deepest_payload_allowed_crosses_with_the_bridges_default_depth_limit():
    payload: dict = {}
    for _ in range(MAX_PAYLOAD_DEPTH - 1):
        payload = {"x": payload}
    event = AgentEvent("deep", payload)
    data = encode_event(event, "a")
    assert json_depth(json.loads(data), 100) == DEFAULT_MAX_DEPTH
    assert _decode(data) == event


def test_an_ad_hoc_event_is_json_for_the_ros_bridges_too():
    data = event_to_json_dict(AgentEvent("sensor_alert", {"level": 3}, agent_name="imu"))
    assert json.loads(json.dumps(data)) == {
        "kind": "sensor_alert",
        "source": "imu",
        "session_id": None,
        "timestamp": 0.0,
        "payload": {"level": 3},
    }
