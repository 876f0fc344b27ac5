"""Typed events published by the orchestration layer (topics ``orchestration.*``).

Every event carries ``session_id`` (the conversation it belongs to) and ``source``
(the component or agent that published it). Subscribe by class or with the
pattern ``"orchestration.*"``.

Ordering within one handoff: :class:`HandoffRequested` -> :class:`HandoffAccepted`
or :class:`HandoffRejected`; the accepted handoff is applied to the conversation
state at the end of the turn and followed by :class:`PhaseChanged`.

Ordering within one delivery: :class:`DeliveryBefore` -> (the sink speaks or
shows the text) -> :class:`DeliveryAfter`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edgevox.runtime.events import Event


@dataclass(kw_only=True)
class UserTurn(Event):
    """A user utterance (or typed text) entering the orchestration layer.

    Publishers: the voice loop (after STT) or any text front-end. The router only
    routes events whose ``source`` is not an agent, so agent output never loops back.
    """

    kind: ClassVar[str] = "orchestration.user_turn"
    text: str = ""
    intent: str | None = None
    """Intent label, if a classifier upstream already set one."""


@dataclass(kw_only=True)
class TurnAnswered(Event):
    """The answer the orchestration layer gave to a user turn (``source`` is the agent)."""

    kind: ClassVar[str] = "orchestration.turn_answered"
    agent: str = ""
    text: str = ""
    ok: bool = True
    turn_id: int = 0


@dataclass(kw_only=True)
class Routed(Event):
    """The router chose ``agent`` for a user turn; ``why`` is affinity, rule:<name> or default."""

    kind: ClassVar[str] = "orchestration.routed"
    agent: str = ""
    why: str = ""
    phase: str = ""


@dataclass(kw_only=True)
class HandoffAccepted(Event):
    """An agent handed the conversation to ``to_agent`` (``""`` = a human)."""

    kind: ClassVar[str] = "orchestration.handoff"
    from_agent: str = ""
    to_agent: str = ""
    reason: str = ""
    summary: str = ""
    next_phase: str = ""
    with_return: bool = False


@dataclass(kw_only=True)
class HandoffRejected(Event):
    """A handoff request was refused; ``reason`` is also what the calling agent sees."""

    kind: ClassVar[str] = "orchestration.handoff_rejected"
    from_agent: str = ""
    requested_target: str = ""
    reason: str = ""


@dataclass(kw_only=True)
class PhaseChanged(Event):
    """The conversation state moved (phase and/or active agent)."""

    kind: ClassVar[str] = "orchestration.phase_changed"
    from_phase: str = ""
    to_phase: str = ""
    from_agent: str = ""
    to_agent: str = ""
    reason: str = ""


@dataclass(kw_only=True)
class WorkflowSuspended(Event):
    """A workflow was cancelled mid-way; its partial state is kept under the session id."""

    kind: ClassVar[str] = "orchestration.workflow_suspended"
    workflow: str = ""
    completed_steps: int = 0
    reason: str = ""


@dataclass(kw_only=True)
class SupervisorObserved(Event):
    """The supervisor agent observed one exchange (user text, reply) and noted ``note``."""

    kind: ClassVar[str] = "orchestration.supervisor_observed"
    supervisor: str = ""
    agent: str = ""
    note: str = ""


@dataclass(kw_only=True)
class DelegationStarted(Event):
    kind: ClassVar[str] = "orchestration.delegation_started"
    delegation_id: str = ""
    parent: str = ""
    agent: str = ""
    depth: int = 0
    background: bool = False


@dataclass(kw_only=True)
class DelegationFinished(Event):
    """A delegation ended; ``status`` is completed, failed or cancelled."""

    kind: ClassVar[str] = "orchestration.delegation_finished"
    delegation_id: str = ""
    agent: str = ""
    status: str = ""
    output: str = ""
    error: str = ""
    duration_s: float = 0.0


@dataclass(kw_only=True)
class DeliveryBefore(Event):
    """A background result is about to be delivered (spoken / shown)."""

    kind: ClassVar[str] = "orchestration.delivery.before"
    strategy: str = ""
    texts: list[str] = field(default_factory=list)
    waited_s: float = 0.0
    """Seconds between the first result being submitted and this delivery."""
    timed_out: bool = False
    """True when WaitForIdle gave up waiting for silence and delivered anyway."""


@dataclass(kw_only=True)
class DeliveryAfter(Event):
    """A background result was delivered; ``error`` is set if the sink raised."""

    kind: ClassVar[str] = "orchestration.delivery.after"
    strategy: str = ""
    texts: list[str] = field(default_factory=list)
    ok: bool = True
    error: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
