"""Explicit JSON serialisation of what crosses a process boundary (Zenoh, ROS). No pickle.

An event crosses as an *envelope*::

    {"v": 1, "origin": "<bridge id>", "event": {"kind": "voice.transcript", "text": ..., ...}}

``event`` is :meth:`Event.to_dict`; the receiver rebuilds it with
:func:`~edgevox.runtime.events.event_from_dict`, which refuses unknown kinds and
unknown fields, so a peer running a different version fails loudly instead of
injecting half-filled events. ``seq`` is not sent: it is per bus, and the
receiving bus stamps its own.

Echo loops are prevented by *marking* every event a bridge injects into the local
bus with the origin it came from (:func:`mark_remote`). Bridges never forward an
event that carries a mark (:func:`remote_origin`), so an event crosses at most
one hop per bridge type, whatever the topology.

Blackboard requests and replies cross as plain JSON objects
(:func:`encode_json` / :func:`decode_json`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from edgevox.runtime.events import Event, event_from_dict

ENVELOPE_VERSION = 1
_MARK = "_edgevox_remote_origin"


class SerializationError(ValueError):
    """A payload received from a peer is not a valid edgevox message."""


def mark_remote(event: Event, origin: str) -> Event:
    """Tag ``event`` as received from ``origin`` (a bridge id); bridges will not re-forward it."""
    # A plain attribute, not a dataclass field: it must not cross the wire or show in to_dict().
    object.__setattr__(event, _MARK, origin)
    return event


def remote_origin(event: Event) -> str | None:
    """The origin id if ``event`` was received from another process, else None."""
    return getattr(event, _MARK, None)


def encode_json(obj: Any) -> bytes:
    """UTF-8 JSON; NaN/Infinity are refused (not valid JSON for other languages' parsers)."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise SerializationError(f"cannot encode {type(obj).__name__} as JSON: {exc}") from exc


def decode_json(data: bytes | bytearray | memoryview | str) -> Any:
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SerializationError(f"payload is not UTF-8 JSON: {exc}") from exc


def event_to_json_dict(event: Event) -> dict[str, Any]:
    """``event.to_dict()`` without ``seq`` and with non-finite floats replaced by None."""
    data = event.to_dict()
    data.pop("seq", None)
    return _finite(data)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def encode_event(event: Event, origin: str) -> bytes:
    """Envelope bytes for ``event`` sent by bridge ``origin``."""
    return encode_json({"v": ENVELOPE_VERSION, "origin": origin, "event": event_to_json_dict(event)})


def decode_event(data: bytes | bytearray | memoryview | str) -> tuple[Event, str]:
    """``(event, origin)`` from envelope bytes; the event is already marked remote.

    Raises :class:`SerializationError` naming what is wrong.
    """
    env = decode_json(data)
    if not isinstance(env, dict):
        raise SerializationError(f"envelope must be a JSON object, got {type(env).__name__}")
    version = env.get("v")
    if version != ENVELOPE_VERSION:
        raise SerializationError(f"envelope version {version!r} is not supported (expected {ENVELOPE_VERSION})")
    origin = env.get("origin")
    body = env.get("event")
    if not isinstance(origin, str) or not origin:
        raise SerializationError("envelope has no 'origin' string")
    if not isinstance(body, dict) or "kind" not in body:
        raise SerializationError("envelope has no 'event' object with a 'kind'")
    try:
        event = event_from_dict(body)
    except (KeyError, ValueError, TypeError) as exc:
        raise SerializationError(f"event {body.get('kind')!r} from {origin!r}: {exc}") from exc
    return mark_remote(event, origin), origin
