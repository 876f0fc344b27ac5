"""Agent-to-agent messages over the EventBus.

An :class:`AgentMessage` is an ordinary event (kind ``agent.message``) with a
sender, a recipient (an agent name or ``"*"`` for everyone), an application
``topic``, a ``correlation_id`` and a ``content`` payload; the bus stamps its
``timestamp`` and ``seq``. ``source`` is set to the sender, so a BackgroundAgent
ignores its own messages like any other event of its own.

* :func:`send_message` publishes one; :func:`subscribe_inbox` delivers the messages
  addressed to one agent (and broadcasts from others) to a handler.
* :func:`request` sends a message and waits for the reply that carries the same
  ``correlation_id`` (sent with :func:`reply`). It blocks the *calling* thread only
  (no thread per request). A reply that arrives after the request timed out, or for
  an id that is unknown, is dropped and counted in :attr:`Requester.late_replies`
  (``late_replies(bus)`` for the per-bus requester that :func:`request` uses).
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, ClassVar

from edgevox.runtime.bus import EventBus, Overflow, Subscription
from edgevox.runtime.events import Event
from edgevox.runtime.limits import wait_s

BROADCAST = "*"


@dataclass(kw_only=True)
class AgentMessage(Event):
    """A message from one agent to another (``to`` = a name, or ``"*"`` for all)."""

    kind: ClassVar[str] = "agent.message"
    from_agent: str = ""
    to: str = BROADCAST
    topic: str = ""
    """Application topic chosen by the sender (e.g. ``"navigation.goal"``); not the bus kind."""
    correlation_id: str = ""
    """Pairs a reply with its request: a reply carries the request's id."""
    is_reply: bool = False
    content: Any = None

    @property
    def payload(self) -> Any:
        """Alias of ``content`` (the name used by earlier EdgeVox documentation)."""
        return self.content


def send_message(
    bus: EventBus,
    *,
    from_agent: str,
    to: str = BROADCAST,
    content: Any = None,
    topic: str = "",
    correlation_id: str | None = None,
    session_id: str | None = None,
) -> AgentMessage:
    """Publish an AgentMessage (on the calling thread) and return it, stamped."""
    message = AgentMessage(
        source=from_agent,
        session_id=session_id,
        from_agent=from_agent,
        to=to,
        topic=topic,
        correlation_id=correlation_id or uuid.uuid4().hex,
        content=content,
    )
    bus.publish(message)
    return message


def reply(bus: EventBus, message: AgentMessage, *, content: Any = None, from_agent: str | None = None) -> AgentMessage:
    """Answer ``message``: to its sender, same topic and correlation id, ``is_reply=True``."""
    sender = from_agent if from_agent is not None else message.to
    if sender == BROADCAST:
        raise ValueError(f"reply to a broadcast from {message.from_agent!r}: pass from_agent=<your agent name>")
    answer = AgentMessage(
        source=sender,
        session_id=message.session_id,
        from_agent=sender,
        to=message.from_agent,
        topic=message.topic,
        correlation_id=message.correlation_id,
        is_reply=True,
        content=content,
    )
    bus.publish(answer)
    return answer


def subscribe_inbox(
    bus: EventBus,
    *,
    agent_name: str,
    handler: Callable[[AgentMessage], Any],
    topic: str | None = None,
    include_replies: bool = False,
    queued: bool = False,
    max_queue: int = 1024,
    overflow: Overflow = "drop_oldest",
) -> Subscription:
    """Deliver to ``handler`` every message addressed to ``agent_name`` or broadcast by
    another agent (optionally only one ``topic``). Replies are left to :func:`request`
    unless ``include_replies``. Runs on the publisher's thread, or on a named worker
    thread with ``queued=True``. Returns the subscription (``close()`` it, or call it, to stop)."""
    if not isinstance(agent_name, str) or not agent_name:
        raise TypeError(f"subscribe_inbox(agent_name={agent_name!r}): must be the agent's non-empty name")
    if not callable(handler):
        raise TypeError(f"subscribe_inbox(agent_name={agent_name!r}, handler={handler!r}): handler must be callable")

    def deliver(message: Event) -> None:
        assert isinstance(message, AgentMessage)
        if message.to == agent_name:
            pass
        elif message.to != BROADCAST or message.from_agent == agent_name:
            return
        if message.is_reply and not include_replies:
            return
        if topic is not None and message.topic != topic:
            return
        handler(message)

    return bus.subscribe(
        AgentMessage,
        deliver,
        queued=queued,
        max_queue=max_queue,
        overflow=overflow,
        name=f"inbox-{agent_name}",
    )


class Requester:
    """Request/reply over the bus, pairing replies by correlation id. Thread-safe.

    One sync subscription for its lifetime; ``request`` blocks only its caller.
    """

    def __init__(self, bus: EventBus, name: str = "requester") -> None:
        self.bus = bus
        self._prefix = f"{name}-{uuid.uuid4().hex[:8]}-"
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[str, Future] = {}
        self.late_replies = 0
        self._sub = bus.subscribe(AgentMessage, self._on_message, name=f"requester-{name}")

    def request(
        self,
        *,
        from_agent: str,
        to: str,
        content: Any = None,
        topic: str = "",
        timeout_s: float = 5.0,
        session_id: str | None = None,
    ) -> AgentMessage:
        """Send and wait up to ``timeout_s`` for the reply; ``TimeoutError`` if none came.
        ``timeout_s`` is a wait: ``nan`` is a ValueError, ``inf`` is clamped."""
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"request to {to!r}")
        cid = f"{self._prefix}{next(self._ids)}"
        future: Future = Future()
        with self._lock:
            self._pending[cid] = future
        try:
            send_message(
                self.bus,
                from_agent=from_agent,
                to=to,
                content=content,
                topic=topic,
                correlation_id=cid,
                session_id=session_id,
            )
            return future.result(timeout_s)
        except FutureTimeout:
            with self._lock:
                mine = self._pending.pop(cid, None) is not None
            if mine:
                raise TimeoutError(
                    f"no reply from {to!r} to {from_agent!r} (topic {topic!r}) within {timeout_s} s"
                ) from None
            return future.result()  # the reply won the race by a hair
        finally:
            with self._lock:
                self._pending.pop(cid, None)

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def _on_message(self, message: Event) -> None:
        assert isinstance(message, AgentMessage)
        if not message.is_reply or not message.correlation_id.startswith(self._prefix):
            return
        with self._lock:
            future = self._pending.pop(message.correlation_id, None)
            if future is None:
                self.late_replies += 1
                return
        future.set_result(message)

    def close(self) -> None:
        self._sub.close()


def requester_for(bus: EventBus) -> Requester:
    """The bus's own Requester (created on first use, lives as long as the bus)."""
    return bus.attachment("edgevox.messages.requester", lambda: Requester(bus, "bus"))


def request(
    bus: EventBus,
    *,
    from_agent: str,
    to: str,
    content: Any = None,
    topic: str = "",
    timeout_s: float = 5.0,
    session_id: str | None = None,
) -> AgentMessage:
    """Send a message and wait for its reply (see :class:`Requester`)."""
    return requester_for(bus).request(
        from_agent=from_agent, to=to, content=content, topic=topic, timeout_s=timeout_s, session_id=session_id
    )


def late_replies(bus: EventBus) -> int:
    """Replies dropped by :func:`request` on this bus because they came too late."""
    return requester_for(bus).late_replies
