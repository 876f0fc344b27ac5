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
    channel: str = ""
    """Where the turn came from: ``voice``, ``text``, ``ros2``, ``ros1`` or an application's own
    name (``ctx.channel``); what a routing rule's ``channel_types`` matches."""


@dataclass(kw_only=True)
class TurnAnswered(Event):
    """The answer the orchestration layer gave to a user turn: ``agent`` (and ``source``) is the
    agent that spoke, ``strategy`` the strategy that ran it ("" when the turn was routed)."""

    kind: ClassVar[str] = "orchestration.turn_answered"
    agent: str = ""
    strategy: str = ""
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
    """An agent handed the conversation to ``to_agent`` (``""`` = a human).

    It carries OmniForge's handoff message fields too: ``thread_id`` (the session),
    ``user_id`` ("" if unknown), ``source_agent``/``target_agent`` (``target_agent`` is
    ``"human"`` for a person), ``history_count`` (recent turns travelling with it),
    ``return_expected`` (= ``with_return``) and ``preserve_state``."""

    kind: ClassVar[str] = "orchestration.handoff"
    from_agent: str = ""
    to_agent: str = ""
    reason: str = ""
    summary: str = ""
    next_phase: str = ""
    with_return: bool = False
    thread_id: str = ""
    user_id: str = ""
    source_agent: str = ""
    target_agent: str = ""
    history_count: int = 0
    return_expected: bool = False
    preserve_state: bool = False


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


# -- Coordinator: failure recovery, cancel, escalation, session mode, progress (helper F2) --


@dataclass(kw_only=True)
class HandoffFailed(Event):
    """The agent a handoff gave the conversation to failed (``error``) or timed out; the session
    went back to ``returned_to`` (the main agent), which told the user what happened."""

    kind: ClassVar[str] = "orchestration.handoff_failed"
    agent: str = ""
    error: str = ""
    timed_out: bool = False
    returned_to: str = ""


@dataclass(kw_only=True)
class WorkflowCancelled(Event):
    """The user cancelled a workflow with return by saying or typing so (``said``); control went
    back to ``returned_to``. (:class:`WorkflowSuspended` records the kept partial state.)"""

    kind: ClassVar[str] = "orchestration.workflow_cancelled"
    agent: str = ""
    returned_to: str = ""
    said: str = ""


@dataclass(kw_only=True)
class Escalated(Event):
    """The conversation was handed to a human; ``channel`` is where the user is (voice, text,
    ros ...), so the person knows which channel to pick up."""

    kind: ClassVar[str] = "orchestration.escalated"
    from_agent: str = ""
    channel: str = ""
    reason: str = ""
    summary: str = ""


@dataclass(kw_only=True)
class SessionModeChanged(Event):
    """Orchestration was switched off (``mode="single"``: the main agent answers every turn)
    or back on (``mode="orchestrated"``) for one session."""

    kind: ClassVar[str] = "orchestration.session_mode"
    mode: str = ""


@dataclass(kw_only=True)
class OrchestrationProgress(Event):
    """A heartbeat of a long orchestration turn, published every ``progress_interval_s`` while it
    runs: the strategy (``"route"`` for a routed agent's turn, ``"single"`` when orchestration is
    off for the session), how many agent steps started, the agent running now, and the seconds
    since the turn began."""

    kind: ClassVar[str] = "orchestration.progress"
    strategy: str = ""
    step: int = 0
    agent: str = ""
    elapsed_s: float = 0.0
    beat: int = 0


@dataclass(kw_only=True)
class OrchestrationTimedOut(Event):
    """An orchestration turn reached its overall timeout; the user got what was finished
    (``finished`` agents) and was told which agents did not finish (``unfinished``)."""

    kind: ClassVar[str] = "orchestration.timed_out"
    strategy: str = ""
    finished: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
