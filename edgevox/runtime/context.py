"""Cancellation and the agent context.

:class:`CancelToken` is how stopping reaches running work: the voice loop's
barge-in, the safety stop, ``BackgroundAgent.stop()`` and workflow timeouts all
cancel a token; LLM generation, skills and tools poll it (``token.cancelled``)
or wait on it (``token.wait(timeout)``). Tokens form a tree: cancelling a
parent cancels every child, cancelling a child never touches the parent (so a
``Timeout`` workflow cannot poison its caller's context).

:class:`AgentContext` carries everything a running agent needs. Child contexts
are made in exactly one place, :meth:`AgentContext.child`, which copies *every*
field (a test enforces it) and links a fresh child cancel token.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from edgevox.errors import Cancelled
from edgevox.runtime.limits import optional_wait_s

if TYPE_CHECKING:
    from edgevox.agents.tools import Tool
    from edgevox.orchestration.delegation import Delegator
    from edgevox.orchestration.handoff import HandoffHandler
    from edgevox.runtime.activities import ActivityRegistry
    from edgevox.runtime.blackboard import Blackboard
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.events import Event
    from edgevox.runtime.speculation import Speculation


class CancelToken:
    """A thread-safe, one-shot cancellation flag with callbacks and parent/child links."""

    __slots__ = ("_event", "_lock", "_reason", "_callbacks", "_children", "_parent", "name")

    def __init__(self, name: str = "", parent: CancelToken | None = None) -> None:
        self.name = name
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason = ""
        self._callbacks: list[Callable[[str], None]] = []
        self._children: list[CancelToken] = []
        self._parent = parent

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        return self._reason

    def cancel(self, reason: str = "cancelled") -> bool:
        """Cancel this token and all its children. Returns False if it was already cancelled.

        Callbacks run on the calling thread, after the flag is set; one that raises does
        not stop the others.
        """
        with self._lock:
            if self._event.is_set():
                return False
            self._reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
            children, self._children = self._children, []
        for cb in callbacks:
            try:
                cb(reason)
            except Exception:  # noqa: BLE001 - a cancel callback must not break cancellation
                pass
        for child in children:
            child.cancel(reason)
        if self._parent is not None:
            self._parent._forget(self)
        return True

    def on_cancel(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` when cancelled (at once if already). Returns a remover."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback(self._reason)
        return lambda: None

    def child(self, name: str = "") -> CancelToken:
        """A token cancelled with this one, that can also be cancelled on its own."""
        token = CancelToken(name or self.name, parent=self)
        with self._lock:
            if not self._event.is_set():
                self._children.append(token)
                return token
        token.cancel(self._reason)
        return token

    def detach(self) -> None:
        """Unlink from the parent (call when a child's work is done, so parents do not grow)."""
        if self._parent is not None:
            self._parent._forget(self)

    def _forget(self, child: CancelToken) -> None:
        with self._lock:
            try:
                self._children.remove(child)
            except ValueError:
                pass

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass (None: until cancelled); True if
        cancelled. ``nan`` is a ValueError; ``inf`` or a huge wait is clamped (never an
        ``OverflowError`` on the waiting thread)."""
        return self._event.wait(optional_wait_s("timeout", timeout, owner=f"CancelToken {self.name!r}.wait"))

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled(self._reason)

    def __repr__(self) -> str:
        state = f"cancelled: {self._reason}" if self.cancelled else "active"
        return f"CancelToken({self.name!r}, {state})"


@dataclass
class AgentContext:
    """What a running agent sees. Make sub-contexts only with :meth:`child`.

    Fields are documented where they are declared; later subsystems add theirs here
    (and the field-carry test proves :meth:`child` keeps them).
    """

    bus: EventBus | None = None
    blackboard: Blackboard | None = None
    cancel_token: CancelToken = field(default_factory=CancelToken)
    hooks: tuple[Any, ...] = ()
    """Hooks run around LLM and tool calls (see ``edgevox.agents.hooks``)."""
    session_id: str = "default"
    """Conversation (thread) id; every event an agent publishes carries it."""
    turn_id: int = 0
    """Id of the voice/user turn this work belongs to; stale turns are dropped."""
    agent_name: str = ""
    """The agent currently running in this context."""
    depth: int = 0
    """Delegation depth (0 = top-level agent)."""
    deps: Mapping[str, Any] = field(default_factory=dict)
    """User dependencies injected into tools (a robot handle, a database...)."""
    memory: Any = None
    """Per-session conversation memory (``edgevox.agents.memory``), if any."""
    llm_lock: AbstractContextManager[object, bool | None] | None = None
    """Lock serialising calls into a shared LLM engine (one inference at a time)."""
    state: dict[str, Any] = field(default_factory=dict)
    """Scratch state shared by this context and its children (same dict object)."""
    activities: ActivityRegistry | None = None
    """Where running tools, skills, generations and workers register so a safety stop
    reaches them (the runtime's, see ``edgevox.runtime.activities``)."""
    speculation: Speculation | None = None
    """Set when this work runs on a guess (a speculative transcript): what it publishes is
    held until the guess is committed, and tools, skills and memory writes wait for it
    (see ``edgevox.runtime.speculation``)."""
    handoff: HandoffHandler | None = None
    """Where the ``handoff_conversation`` tool records a handoff (set by the Coordinator and
    the Swarm strategy; ``None``: handoff is not available to this agent)."""
    handoff_brief: str = ""
    """Set for the target of a same-turn handoff: who handed over, why, the summary and the
    recent turns (``Handoff.brief()``); an LLM agent puts it in its system prompt."""
    handoff_chain: tuple[str, ...] = ()
    """The agents that handed this turn on before the one running, oldest first (same-turn
    handoffs: ``handoff_to_<name>`` tools and a Swarm's hops). The one limit on handoffs per
    turn counts them; a fresh turn starts with none."""
    delegator: Delegator | None = None
    """What the ``delegate`` tool delegates through (set by a delegating Supervisor and for
    delegated workers; ``None``: delegation is not available to this agent)."""
    delegation_id: str | None = None
    """The registry id of the delegation this work runs in (the parent of its own delegations)."""
    channel: str = ""
    """The channel the user turn came from: ``voice`` (spoken), ``text`` (typed), ``ros2``/``ros1``
    (a bridge's text input) or an application's own name; "" when unknown. Set by the voice loop
    per turn; orchestration routing matches it (``RoutingConditions(channel_types=...)``)."""
    tools: tuple[Tool, ...] = ()
    """Tools an orchestration gives the agent of this one run (a ``handoff_conversation`` whose
    ``target`` lists exactly the agents it may reach, delegate tools...). An LLM agent offers
    them next to its own tools, replacing its own tool of the same name. The one field
    :meth:`child` does not carry: a worker never inherits its supervisor's tools."""

    @property
    def cancelled(self) -> bool:
        return self.cancel_token.cancelled

    def child(self, **overrides: Any) -> AgentContext:
        """A child context: every field carried over, a linked child cancel token, overrides applied.

        Unknown override names raise ``TypeError`` naming the valid fields.
        """
        names = [f.name for f in dataclasses.fields(self)]
        unknown = set(overrides) - set(names)
        if unknown:
            raise TypeError(f"AgentContext.child(): unknown fields {sorted(unknown)}; valid: {names}")
        values = {name: getattr(self, name) for name in names}
        values["cancel_token"] = self.cancel_token.child(self.agent_name)
        values["tools"] = ()  # given for one agent's run, never inherited (see the field)
        values.update(overrides)
        return AgentContext(**values)

    def publish(self, event: Event) -> None:
        """Publish on the bus (if any), stamping this context's session and agent name."""
        if self.bus is None:
            return
        if event.session_id is None:
            event.session_id = self.session_id
        if not event.source:
            event.source = self.agent_name
        if self.speculation is not None and not self.speculation.committed:
            bus = self.bus
            self.speculation.hold(lambda: bus.publish(event))
            return
        self.bus.publish(event)

    def may_act(self) -> bool:
        """Whether this work may act now (run a tool, start a skill, write memory): always,
        unless it runs on a guess; then it waits until the guess is committed (True) or
        discarded or cancelled (False)."""
        return self.speculation is None or self.speculation.confirmed()
