"""Property tests of the event deserialiser (what a Zenoh or ROS peer's bytes become): any
bytes and any JSON either decode to a correctly typed event or raise one
:class:`SerializationError`; every registered event with field values of its types
round-trips exactly."""

from __future__ import annotations

import dataclasses
import json
import typing

from hypothesis import given
from hypothesis import strategies as st

import edgevox.agents.events
import edgevox.orchestration.events
import edgevox.voice.events  # noqa: F401 - register every event kind
from edgevox.integrations.serialization import SerializationError, decode_event, encode_event
from edgevox.runtime.events import _REGISTRY, Event

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
