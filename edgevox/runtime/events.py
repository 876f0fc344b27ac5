"""Typed events: the only thing that travels on the :class:`~edgevox.runtime.bus.EventBus`.

Every event is a keyword-only dataclass with a class-level ``kind`` (its bus
topic, dot-separated, e.g. ``"voice.transcript"``; there is deliberately no
``topic`` attribute on the base class, so a subclass such as
:class:`~edgevox.runtime.messages.AgentMessage` can carry its own ``topic``
field). Subscribe by class (subclasses match) or by a topic pattern with shell
wildcards (``"voice.*"``, ``"*"``).

The bus stamps ``seq`` (a per-bus, strictly increasing number) and fills
``timestamp`` (wall clock, seconds since the epoch) when the publisher left it
at 0. ``source`` is the publishing agent or component; ``session_id`` says which
conversation the event belongs to (``None`` = not tied to a session).

Events marked ``control = True`` (interrupt, stop, shutdown) overtake data events
in queued delivery and are never dropped by an overflow policy. Events marked
``stream = True`` (reply deltas, tokens, skill feedback ticks: many per second, each
superseded by the next) yield to every other data event in a full mailbox, so a
flood of them never evicts a real event (``runtime/bus.py``).

Ad-hoc kinds: :class:`AgentEvent` (``AgentEvent("sensor_alert", {"level": 3})``) is the
one event whose ``kind`` is chosen per instance, for the application's own events that
do not deserve a class (EdgeVox's spelling). Its payload holds JSON values only, so it
crosses the bridges like any typed event. Typed classes stay the rule for edgevox's own
events: a field typo there is an error, in a payload it is not.

Serialisation is explicit: :meth:`Event.to_dict` / :func:`event_from_dict` use
the registry of kinds built by ``__init_subclass__`` and only JSON-friendly field
values (no pickle), so events can cross processes (Zenoh, ROS, ``--json``).
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from edgevox.errors import ArgumentError

_REGISTRY: dict[str, type[Event]] = {}


@dataclass(kw_only=True)
class Event:
    """Base class of every event. Subclasses set ``kind`` and add fields."""

    kind: ClassVar[str] = "event"
    control: ClassVar[bool] = False
    stream: ClassVar[bool] = False
    """True for high-rate stream events (reply deltas, tokens): they yield to other data
    events when a subscriber's mailbox is full. :meth:`is_stream` may refine it per event."""

    source: str = ""
    session_id: str | None = None
    timestamp: float = 0.0
    """Wall-clock time of publication, seconds since the epoch (stamped by the bus if 0)."""
    seq: int = 0
    """Per-bus sequence number, stamped by the bus at publication."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is not None:
            other = _REGISTRY.get(kind)
            # Re-definition of the same class (module reload) is fine; two different
            # classes claiming one kind would make deserialisation ambiguous.
            if other is not None and other.__qualname__ != cls.__qualname__:
                raise TypeError(f"event kind {kind!r} is used by both {other.__qualname__} and {cls.__qualname__}")
            _REGISTRY[kind] = cls

    def is_stream(self) -> bool:
        """Whether this event travels in the stream lane (see :attr:`stream`)."""
        return self.stream

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict with a ``kind`` key; the inverse is :func:`event_from_dict`."""
        data: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            data[f.name] = _jsonable(getattr(self, f.name))
        return data


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return repr(value)


def event_class(kind: str) -> type[Event]:
    """The event class registered for ``kind``; ``KeyError`` names the known kinds if missing."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise KeyError(f"unknown event kind {kind!r}; known kinds: {', '.join(sorted(_REGISTRY))}") from None


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output. Unknown fields are an error.

    A kind that no class registered, with a ``payload``, is an :class:`AgentEvent`."""
    data = dict(data)
    if is_ad_hoc(data):
        return AgentEvent(**data)
    cls = event_class(data.pop("kind"))
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"event {cls.kind!r}: unknown fields {sorted(unknown)}")
    return cls(**data)


def known_kinds() -> list[str]:
    return sorted(_REGISTRY)


def is_ad_hoc(data: Mapping[str, Any]) -> bool:
    """Whether ``data`` (a :meth:`Event.to_dict`) is an :class:`AgentEvent`: its kind is not
    registered and it carries a ``payload``."""
    return "payload" in data and isinstance(data.get("kind"), str) and data["kind"] not in _REGISTRY


def now() -> float:
    return time.time()


# --- control events -----------------------------------------------------------------------


@dataclass(kw_only=True)
class InterruptEvent(Event):
    """Stop what is being said/generated now (barge-in); the session continues."""

    kind: ClassVar[str] = "control.interrupt"
    control: ClassVar[bool] = True
    reason: str = ""


@dataclass(kw_only=True)
class StopEvent(Event):
    """Safety stop: cancel speech, generation and running skills at once."""

    kind: ClassVar[str] = "control.stop"
    control: ClassVar[bool] = True
    reason: str = ""
    text: str = ""
    """The transcript or command that triggered the stop, if any."""
    stop_id: str = ""
    """Names one stop across processes: a bridge gives a stop it sends an id, every robot
    acknowledges that id, and repeats of it (retries) are acknowledged without acting twice."""


@dataclass(kw_only=True)
class ShutdownEvent(Event):
    """The runtime is shutting down."""

    kind: ClassVar[str] = "control.shutdown"
    control: ClassVar[bool] = True


# --- runtime events -----------------------------------------------------------------------


@dataclass(kw_only=True)
class ErrorEvent(Event):
    """A handler, agent or engine raised; never silent."""

    kind: ClassVar[str] = "runtime.error"
    where: str = ""
    """What failed: a subscriber name, agent name or engine."""
    error: str = ""
    """``repr`` of the exception."""
    traceback: str = ""
    event_kind: str = ""
    """Kind of the event being handled when it failed, if any."""


@dataclass(kw_only=True)
class AgentStateEvent(Event):
    """A background agent or supervised child changed state (started, restarting, failed, stopped)."""

    kind: ClassVar[str] = "runtime.agent_state"
    agent: str = ""
    state: str = ""
    restart_count: int = 0
    error: str = ""


# --- ad-hoc events ------------------------------------------------------------------------

RESERVED_NAMESPACES = ("control", "runtime", "agent", "voice", "bridge", "orchestration", "bench")
"""First segments of edgevox's own kinds: an ad-hoc kind never starts with ``<one of these>.``,
so ``"control.*"`` or ``"voice.*"`` subscribers only ever see the typed events."""
MAX_PAYLOAD_DEPTH = 30
"""Nesting of an AgentEvent payload (the payload object itself is 1). A bridge refuses
messages nested deeper than 32 (``bridges.*.max_depth``), and the envelope takes 2."""
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")
_JSON_VALUES = "JSON values only: str, int, float, bool, None, lists and dicts with str keys"


@dataclass(kw_only=True, init=False)
class AgentEvent(Event):
    """An application event of an ad-hoc kind with a JSON payload, EdgeVox's spelling::

        bus.publish(AgentEvent(kind="sensor_alert", payload={"sensor": "bumper", "level": 3}))

    ``kind`` is its bus topic (``subscribe("sensor_alert", ...)``, ``"sensor_*"``, ``"*"``, or
    the class ``AgentEvent`` for every ad-hoc kind): a letter, then up to 127 letters, digits,
    ``_``, ``.`` or ``-``; neither a kind an event class registered nor one in a
    :data:`RESERVED_NAMESPACES` namespace (``control.``, ``voice.``...), so it can never pose
    as a typed event. ``payload``: a mapping of JSON values (copied; tuples become lists),
    nested at most :data:`MAX_PAYLOAD_DEPTH`; anything else is one :class:`ArgumentError`
    naming the kind and the path of the bad value. ``agent_name`` is EdgeVox's name for
    ``source`` (the publisher).

    It is an ordinary data event: never control, not a stream event. It crosses the Zenoh
    and ROS bridges as ``{"kind": <kind>, "payload": {...}, ...}`` when its kind matches
    their ``publish_kinds`` / ``subscribe_kinds``.
    """

    kind: str  # type: ignore[misc]  # per instance here: the ad-hoc kind is this event's topic
    payload: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        *,
        agent_name: str | None = None,
        source: str = "",
        session_id: str | None = None,
        timestamp: float = 0.0,
        seq: int = 0,
    ) -> None:
        self.kind = check_kind(kind)
        if agent_name is not None:
            if not isinstance(agent_name, str):
                raise ArgumentError(f"AgentEvent {kind!r}: agent_name = {agent_name!r}: must be a str")
            if source and source != agent_name:
                raise ArgumentError(
                    f"AgentEvent {kind!r}: agent_name={agent_name!r} and source={source!r} differ; "
                    "agent_name is EdgeVox's name for source: pass one"
                )
            source = agent_name
        super().__init__(source=source, session_id=session_id, timestamp=timestamp, seq=seq)
        self.payload = check_payload(kind, payload)

    @property
    def agent_name(self) -> str:
        """EdgeVox's name for :attr:`source`, the publisher."""
        return self.source


def check_kind(kind: object) -> str:
    """``kind`` if it may name an :class:`AgentEvent`, else one ArgumentError saying why."""
    if not isinstance(kind, str) or not kind:
        raise ArgumentError(f"AgentEvent kind = {kind!r}: must be a non-empty str such as 'sensor_alert'")
    if not _KIND.match(kind):
        raise ArgumentError(
            f"AgentEvent kind = {kind!r}: must be a letter, then up to 127 letters, digits, '_', '.' or '-' "
            "(it becomes a bus topic and a Zenoh key)"
        )
    cls = _REGISTRY.get(kind)
    if cls is not None:
        raise ArgumentError(f"AgentEvent kind = {kind!r} is the typed event {cls.__qualname__}; publish that instead")
    namespace = kind.split(".", 1)[0]
    if "." in kind and namespace in RESERVED_NAMESPACES:
        raise ArgumentError(
            f"AgentEvent kind = {kind!r}: '{namespace}.' is edgevox's own namespace; "
            f"pick another, e.g. 'app.{kind.split('.', 1)[1]}'"
        )
    return kind


def check_payload(kind: str, payload: object) -> dict[str, Any]:
    """A plain-dict copy of ``payload`` if it holds JSON values only, else one ArgumentError."""
    if payload is None:
        return {}
    if isinstance(payload, str):  # AgentEvent("sensor_alert", "imu"): EdgeVox's positional agent_name
        raise ArgumentError(
            f"AgentEvent {kind!r}: payload = {_short(payload)} (str): must be a mapping of JSON values; "
            "if that is the publisher, pass agent_name=... (EdgeVox's positional order was kind, agent_name, payload)"
        )
    if not isinstance(payload, Mapping):
        raise ArgumentError(
            f"AgentEvent {kind!r}: payload = {_short(payload)} ({type(payload).__name__}): must be a mapping of "
            f"{_JSON_VALUES}; wrap a single value, e.g. payload={{'value': {_short(payload)}}}"
        )
    return _json_copy(kind, payload, "payload", 1)


def _json_copy(kind: str, value: object, path: str, depth: int) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ArgumentError(f"AgentEvent {kind!r}: {path} = {value!r}: JSON has no NaN or Infinity")
        return value
    if isinstance(value, (Mapping, list, tuple)):
        if depth > MAX_PAYLOAD_DEPTH:
            raise ArgumentError(
                f"AgentEvent {kind!r}: {path} is nested deeper than {MAX_PAYLOAD_DEPTH} levels (bridges refuse it)"
            )
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ArgumentError(
                        f"AgentEvent {kind!r}: {path} has the key {key!r} ({type(key).__name__}); JSON keys are str"
                    )
                out[key] = _json_copy(kind, item, f"{path}[{key!r}]", depth + 1)
            return out
        return [_json_copy(kind, item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise ArgumentError(
        f"AgentEvent {kind!r}: {path} = {_short(value)} ({type(value).__name__}): a payload holds {_JSON_VALUES}"
    )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
