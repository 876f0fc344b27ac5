"""Conversation state: which phase a session is in and which agent holds it.

:class:`ConversationState` is immutable: :meth:`ConversationState.transition`
returns a new state with one more :class:`PhaseTransition` in its history, so a
state object handed to another thread can never change under it. States
round-trip through JSON (:meth:`to_json` / :meth:`from_json`) and are kept per
session by :class:`SessionStore` (in the runtime's blackboard when there is one),
so one session never sees another's state.

Phases are plain strings: :class:`ConversationPhase` names the built-in ones
(intake, qualification, handling, escalation, resolution, followup), and any
other string is a valid phase too.

The history is bounded (``max_history``, oldest dropped first) so a long-running
session cannot grow without limit.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

_UNSET: Any = object()


class ConversationPhase(str, Enum):
    """Built-in phase names. Any other string is accepted wherever a phase is expected."""

    INTAKE = "intake"
    QUALIFICATION = "qualification"
    HANDLING = "handling"
    ESCALATION = "escalation"
    RESOLUTION = "resolution"
    FOLLOWUP = "followup"

    def __str__(self) -> str:
        return self.value


def phase_name(phase: str | ConversationPhase | None) -> str:
    """The plain string of a phase (enum members become their value)."""
    if phase is None:
        return ""
    return phase.value if isinstance(phase, ConversationPhase) else str(phase)


@dataclass(frozen=True)
class PhaseTransition:
    """One step in a conversation's history."""

    from_phase: str
    to_phase: str
    from_agent: str | None
    to_agent: str | None
    reason: str = ""
    timestamp: float = 0.0
    """Wall-clock seconds since the epoch."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "from_phase": self.from_phase,
            "to_phase": self.to_phase,
            "from_agent": self.from_agent,
            "to_agent": self.to_agent,
            "reason": self.reason,
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PhaseTransition:
        return cls(**data)


@dataclass(frozen=True)
class ConversationState:
    """Phase, active agent, handoff count and transition history of one session.

    ``context`` is the summary the previous agent left for the active one (delivered
    once, then cleared by :meth:`take_context`). ``return_stack`` holds the agents a
    "handoff with return" will hand back to (innermost last).
    """

    session_id: str = "default"
    phase: str = ConversationPhase.INTAKE.value
    active_agent: str | None = None
    handoff_count: int = 0
    history: tuple[PhaseTransition, ...] = ()
    context: str = ""
    return_stack: tuple[str, ...] = ()
    max_history: int = 100
    data: dict[str, Any] = field(default_factory=dict)
    """Free JSON-serialisable data strategies may keep per session."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "phase", phase_name(self.phase))

    def transition(
        self,
        *,
        to_phase: str | ConversationPhase | None = None,
        to_agent: str | None = _UNSET,
        reason: str = "",
        handoff: bool = False,
        context: str | None = None,
        return_stack: tuple[str, ...] | None = None,
        timestamp: float | None = None,
    ) -> ConversationState:
        """A new state moved to ``to_phase`` (default: same phase) and ``to_agent``
        (default: same agent; ``None`` clears it). ``handoff=True`` counts a handoff."""
        new_phase = phase_name(to_phase) if to_phase is not None else self.phase
        new_agent = self.active_agent if to_agent is _UNSET else to_agent
        step = PhaseTransition(
            from_phase=self.phase,
            to_phase=new_phase,
            from_agent=self.active_agent,
            to_agent=new_agent,
            reason=reason,
            timestamp=time.time() if timestamp is None else timestamp,
        )
        history = (self.history + (step,))[-self.max_history :]
        return replace(
            self,
            phase=new_phase,
            active_agent=new_agent,
            handoff_count=self.handoff_count + (1 if handoff else 0),
            history=history,
            context=self.context if context is None else context,
            return_stack=self.return_stack if return_stack is None else return_stack,
        )

    def take_context(self) -> tuple[str, ConversationState]:
        """The pending context for the active agent and a state without it."""
        return self.context, replace(self, context="")

    def with_data(self, **values: Any) -> ConversationState:
        data = dict(self.data)
        data.update(values)
        return replace(self, data=data)

    # -- JSON ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "phase": self.phase,
            "active_agent": self.active_agent,
            "handoff_count": self.handoff_count,
            "history": [t.to_dict() for t in self.history],
            "context": self.context,
            "return_stack": list(self.return_stack),
            "max_history": self.max_history,
            "data": self.data,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConversationState:
        data = dict(data)
        known = {
            "session_id",
            "phase",
            "active_agent",
            "handoff_count",
            "history",
            "context",
            "return_stack",
            "max_history",
            "data",
        }
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"ConversationState: unknown fields {sorted(unknown)}; known: {sorted(known)}")
        data["history"] = tuple(PhaseTransition.from_dict(t) for t in data.get("history", ()))
        data["return_stack"] = tuple(data.get("return_stack", ()))
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> ConversationState:
        return cls.from_dict(json.loads(text))


class SessionStore:
    """Per-session JSON records: conversation states and suspended workflows.

    Values are stored as JSON strings, so what one caller reads is always a fresh copy
    and nothing one session holds can leak into another by shared references. Backed by
    the runtime's blackboard when given (anything with ``get(key, default)`` and
    ``set(key, value)``), otherwise by a private dict. Thread-safe: :meth:`update` runs
    read-modify-write under one lock so concurrent turns of a session do not lose writes.
    """

    PREFIX = "orchestration"

    def __init__(self, blackboard: Any = None) -> None:
        self._blackboard = blackboard
        self._local: dict[str, str] = {}
        self._lock = threading.RLock()

    def _key(self, session_id: str, name: str) -> str:
        return f"{self.PREFIX}/{session_id}/{name}"

    def _get_raw(self, key: str) -> str | None:
        if self._blackboard is None:
            return self._local.get(key)
        return self._blackboard.get(key, None)

    def _set_raw(self, key: str, value: str | None) -> None:
        if self._blackboard is None:
            if value is None:
                self._local.pop(key, None)
            else:
                self._local[key] = value
            return
        if value is None and hasattr(self._blackboard, "delete"):
            self._blackboard.delete(key)
        else:
            self._blackboard.set(key, value)

    # -- conversation state ----------------------------------------------------------------

    def state(self, session_id: str) -> ConversationState:
        """The session's state (a fresh intake state if none was saved)."""
        with self._lock:
            raw = self._get_raw(self._key(session_id, "state"))
        if raw is None:
            return ConversationState(session_id=session_id)
        return ConversationState.from_json(raw)

    def save_state(self, state: ConversationState) -> None:
        with self._lock:
            self._set_raw(self._key(state.session_id, "state"), state.to_json())

    def update(self, session_id: str, fn: Any) -> ConversationState:
        """Atomically replace the session's state with ``fn(state)``; returns the new state."""
        with self._lock:
            new = fn(self.state(session_id))
            self.save_state(new)
            return new

    # -- arbitrary records (suspended workflows, checkpoints) -------------------------------

    def get_record(self, session_id: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            raw = self._get_raw(self._key(session_id, name))
        return None if raw is None else json.loads(raw)

    def put_record(self, session_id: str, name: str, record: dict[str, Any] | None) -> None:
        with self._lock:
            self._set_raw(self._key(session_id, name), None if record is None else json.dumps(record))

    @property
    def lock(self) -> threading.RLock:
        return self._lock
