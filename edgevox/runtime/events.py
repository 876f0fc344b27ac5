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
in queued delivery and are never dropped by an overflow policy.

Serialisation is explicit: :meth:`Event.to_dict` / :func:`event_from_dict` use
the registry of kinds built by ``__init_subclass__`` and only JSON-friendly field
values (no pickle), so events can cross processes (Zenoh, ROS, ``--json``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

_REGISTRY: dict[str, type[Event]] = {}


@dataclass(kw_only=True)
class Event:
    """Base class of every event. Subclasses set ``kind`` and add fields."""

    kind: ClassVar[str] = "event"
    control: ClassVar[bool] = False

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
    """Rebuild an event from :meth:`Event.to_dict` output. Unknown fields are an error."""
    data = dict(data)
    cls = event_class(data.pop("kind"))
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"event {cls.kind!r}: unknown fields {sorted(unknown)}")
    return cls(**data)


def known_kinds() -> list[str]:
    return sorted(_REGISTRY)


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
