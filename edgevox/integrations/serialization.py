"""Explicit JSON serialisation of what crosses a process boundary (Zenoh, ROS). No pickle.

An event crosses as an *envelope*::

    {"v": 1, "origin": "<bridge id>", "event": {"kind": "voice.transcript", "text": ..., ...}}

``event`` is :meth:`Event.to_dict`. The receiver checks every field against the event
class's type hints with pydantic in strict mode (:func:`event_from_wire`): an unknown kind,
an unknown field, ``timestamp: "yesterday"``, ``turn_id: true`` or a NaN is refused with a
message naming the field, so a peer running a different version (or a hostile one) fails
loudly instead of injecting half-filled events. An ad-hoc
:class:`~edgevox.runtime.events.AgentEvent` crosses as ``{"kind": "sensor_alert",
"payload": {...}, ...}``: a kind no event class registered, *with* a ``payload``, is
rebuilt as an AgentEvent (its kind and payload checked as at construction; a kind in
edgevox's own namespaces is refused), one without is an unknown kind. ``seq`` is not sent: it is per bus, and the
receiving bus stamps its own. Non-finite floats never cross: a typed float field that is
NaN or infinite is sent as its default, a float inside free-form data as ``null``.

Every decoder takes limits: ``max_bytes`` (payload size, checked before parsing) and
``max_depth`` (nesting of arrays and objects; Python's parser would otherwise raise
``RecursionError`` around depth 1000). A refusal is a :class:`SerializationError` whose
``reason`` (``oversized``, ``too_deep``, ``invalid``) names the counter a bridge bumps.

Echo loops are prevented by *marking* every event a bridge injects into the local
bus with the origin it came from (:func:`mark_remote`). Bridges never forward an
event that carries a mark (:func:`remote_origin`), so an event crosses at most
one hop per bridge type, whatever the topology.

Blackboard requests and replies cross as plain JSON objects
(:func:`encode_json` / :func:`decode_json`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from edgevox.runtime.events import AgentEvent, Event, event_class, is_ad_hoc

ENVELOPE_VERSION = 1
DEFAULT_MAX_DEPTH = 32
"""Nesting of arrays/objects a received payload may have (the envelope itself takes 2)."""
_MARK = "_edgevox_remote_origin"
_ENVELOPE_KEYS = {"v", "origin", "event"}


class SerializationError(ValueError):
    """A payload received from a peer is not a valid edgevox message.

    ``reason``: ``oversized`` (over ``max_bytes``), ``too_deep`` (over ``max_depth``) or
    ``invalid`` (not UTF-8 JSON, wrong shape, unknown kind or field, wrong field type).
    """

    def __init__(self, message: str, reason: str = "invalid") -> None:
        super().__init__(message)
        self.reason = reason


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


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows; send a finite number or null")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf
        raise ValueError(f"{text} does not fit a float; send a finite number")
    return value


def decode_json(
    data: bytes | bytearray | memoryview | str, *, max_bytes: int | None = None, max_depth: int | None = None
) -> Any:
    """Parse UTF-8 JSON received from a peer, refusing NaN/Infinity and payloads over the limits."""
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if max_bytes is not None and size > max_bytes:
        raise SerializationError(f"payload is {size:,} bytes, over the limit of {max_bytes:,}", "oversized")
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        value = json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except RecursionError:
        raise SerializationError(
            f"payload is nested too deeply (limit {max_depth or DEFAULT_MAX_DEPTH})", "too_deep"
        ) from None
    except UnicodeDecodeError as exc:
        raise SerializationError(f"payload is not UTF-8: {exc}") from exc
    except ValueError as exc:
        raise SerializationError(f"payload is not valid JSON: {exc}") from exc
    if max_depth is not None:
        depth = json_depth(value, max_depth)
        if depth > max_depth:
            raise SerializationError(f"payload is nested deeper than the limit of {max_depth}", "too_deep")
    return value


def json_depth(value: Any, stop_after: int) -> int:
    """Nesting depth of decoded JSON (a scalar is 0, ``[]`` is 1); stops counting past ``stop_after``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop_after:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def event_to_json_dict(event: Event) -> dict[str, Any]:
    """``event.to_dict()`` without ``seq``; non-finite floats become the field's default
    (a typed float field) or None (inside free-form data)."""
    data = event.to_dict()
    data.pop("seq", None)
    defaults = {f.name: f.default for f in dataclasses.fields(event)}
    for name, value in data.items():
        if isinstance(value, float) and not math.isfinite(value):
            default = defaults.get(name)
            data[name] = default if isinstance(default, float) and math.isfinite(default) else None
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


@functools.cache
def wire_model(cls: type[Event]) -> type[BaseModel]:
    """A strict pydantic model of ``cls``'s fields (all optional: the dataclass has the defaults)."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {
        f.name: (_json_shape(hints[f.name]), None) for f in dataclasses.fields(cls) if f.name != "seq"
    }
    config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
    return create_model(f"{cls.__name__}Wire", __config__=config, **fields)


def _json_shape(hint: Any) -> Any:
    """The type a field has in JSON: ``tuple[str, ...]`` arrives as a list (rebuilt as a tuple)."""
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        return list[args[0]] if len(args) == 2 and args[1] is Ellipsis else list[Any]  # type: ignore[valid-type]
    return hint


def event_from_wire(body: dict[str, Any], origin: str = "peer") -> Event:
    """Rebuild a received event, checking every field's type (see the module docstring)."""
    kind = body.get("kind")
    if not isinstance(kind, str):
        raise SerializationError(f"event from {origin!r} has no 'kind' string")
    cls: type[Event]
    if is_ad_hoc(body):
        cls = AgentEvent
    else:
        try:
            cls = event_class(kind)
        except KeyError as exc:
            raise SerializationError(f"{exc.args[0]} (from {origin!r})") from None
    fields = {k: v for k, v in body.items() if k not in ("kind", "seq")}
    try:
        # A class is hashable; mypy reads the eq-dataclass instances' __hash__ = None as the class's.
        model = wire_model(cls)  # type: ignore[arg-type]
        checked = model.model_validate(fields)
    except ValidationError as exc:
        raise SerializationError(f"event {kind!r} from {origin!r}: {_describe(exc)}") from None
    except (NameError, TypeError) as exc:  # type hints that do not resolve: refuse, never guess
        raise SerializationError(f"event {kind!r} cannot be checked here ({exc}); it is not accepted") from None
    values = {name: getattr(checked, name) for name in checked.model_fields_set}
    hints = typing.get_type_hints(cls)
    for name, value in values.items():
        if isinstance(value, list) and typing.get_origin(hints.get(name)) is tuple:
            values[name] = tuple(value)
    if cls is AgentEvent:
        values["kind"] = kind  # the ad-hoc kind is the event's own, checked by AgentEvent
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # the event's own __post_init__ refused it
        raise SerializationError(f"event {kind!r} from {origin!r}: {exc}") from None


def _describe(exc: ValidationError) -> str:
    """``field 'timestamp': Input should be a valid number (got 'yesterday')``, at most three."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "event"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown field {where!r}")
        else:
            got = repr(err.get("input"))
            parts.append(f"field {where!r}: {err['msg']} (got {got[:60]}{'...' if len(got) > 60 else ''})")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def decode_event(
    data: bytes | bytearray | memoryview | str,
    *,
    max_bytes: int | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
) -> tuple[Event, str]:
    """``(event, origin)`` from envelope bytes; the event is already marked remote.

    Raises :class:`SerializationError` naming what is wrong (and its ``reason``).
    """
    env = decode_json(data, max_bytes=max_bytes, max_depth=max_depth)
    if not isinstance(env, dict):
        raise SerializationError(f"envelope must be a JSON object, got {type(env).__name__}")
    version = env.get("v")
    if version != ENVELOPE_VERSION or isinstance(version, bool):
        raise SerializationError(f"envelope version {version!r} is not supported (expected {ENVELOPE_VERSION})")
    extra = set(env) - _ENVELOPE_KEYS
    if extra:
        raise SerializationError(f"envelope has unknown keys {sorted(extra)}; expected v, origin, event")
    origin = env.get("origin")
    body = env.get("event")
    if not isinstance(origin, str) or not origin or len(origin) > 128:
        raise SerializationError("envelope has no 'origin' string (1-128 characters)")
    if not isinstance(body, dict) or "kind" not in body:
        raise SerializationError("envelope has no 'event' object with a 'kind'")
    return mark_remote(event_from_wire(body, origin), origin), origin
