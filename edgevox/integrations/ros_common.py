"""What the ROS 2 and ROS 1 bridges share: topic roles, JSON messages, the skill goal protocol.

:class:`RosBridgeCore` knows nothing about rclpy or rospy. A transport (``ros2.py``,
``ros1.py``) creates one publisher per :meth:`RosBridgeCore.outgoing_topics` and one
subscriber per :meth:`RosBridgeCore.incoming_topics`, calls :meth:`handle` from its ROS
callback threads, and calls :meth:`drain` from a ROS thread when :meth:`start`'s ``wake``
callback fires. Every message is ``std_msgs/String``.

Threads and hand-overs (ROS is only ever called from ROS threads):

* ROS callback threads call :meth:`handle`: it parses, publishes control events on the
  bus (quick), starts/cancels goals (quick), and queues text/say for the core's worker.
* ``edgevox-<bridge>-inbox`` runs ``on_text`` / ``on_say`` (they may take a while).
* ``edgevox-sub-<bridge>-out`` (a queued bus subscriber) and skill threads put outgoing
  messages in the outbox and call ``wake``; the transport's ROS thread drains it.

Skill goals: a ``skill/goal`` message starts a :class:`~edgevox.agents.skills.Skill` on the
bridge's :class:`~edgevox.agents.skills.SkillExecutor`; the goal runs on a skill worker
thread, so the ROS threads stay free to receive ``skill/cancel`` or ``stop`` while it runs.
A ``control.stop`` on the bus (from ROS, voice or anywhere) cancels every goal started here.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from edgevox.errors import BusClosedError, ToolArgumentError
from edgevox.integrations.serialization import event_to_json_dict
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event, InterruptEvent, StopEvent

if TYPE_CHECKING:
    from edgevox.agents.skills import GoalHandle, Skill, SkillExecutor
    from edgevox.integrations.config import Ros1BridgeConfig, Ros2BridgeConfig
    from edgevox.runtime.bus import EventBus, Subscription

log = logging.getLogger(__name__)

TextHandler = Callable[[str], Any]

INCOMING_ROLES = ("text_input", "say", "interrupt", "stop", "skill_goal", "skill_cancel")
_STOP = object()


def resolve_topic(namespace: str, name: str) -> str:
    """``/ns`` + ``reply`` -> ``/ns/reply``; absolute names are kept."""
    if name.startswith("/"):
        return name
    return f"{namespace.rstrip('/')}/{name}"


class RosBridgeCore:
    """Transport-independent half of a ROS bridge; see the module docstring."""

    def __init__(
        self,
        bus: EventBus,
        config: Ros2BridgeConfig | Ros1BridgeConfig,
        *,
        bridge: str,
        on_text: TextHandler | None = None,
        on_say: TextHandler | None = None,
        skills: Iterable[Skill] | Mapping[str, Skill] = (),
        ctx: AgentContext | None = None,
        executor: SkillExecutor | None = None,
    ) -> None:
        self.bus = bus
        self.config = config
        self.bridge = bridge
        self.on_text = on_text
        self.on_say = on_say
        items = skills.values() if isinstance(skills, Mapping) else skills
        self.skills: dict[str, Skill] = {s.name: s for s in map(_as_skill, items)}
        self.ctx = ctx or AgentContext(bus=bus, agent_name=bridge)
        self._executor = executor
        self._own_executor = executor is None and bool(self.skills)
        topics = config.topics
        ns = config.namespace
        self.publish_map = {resolve_topic(ns, t): kinds for t, kinds in topics.publish.items()}
        self.feedback_topic = resolve_topic(ns, topics.skill_feedback)
        self.result_topic = resolve_topic(ns, topics.skill_result)
        self._incoming = {resolve_topic(ns, getattr(topics, role)): role for role in INCOMING_ROLES}
        self._outbox: deque[tuple[str, str]] = deque()
        self._outbox_lock = threading.Lock()
        self._inbox: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._goals: dict[str, GoalHandle] = {}
        self._goals_lock = threading.Lock()
        self._wake: Callable[[], None] = lambda: None
        self._subs: list[Subscription] = []
        self._worker: threading.Thread | None = None
        self.dropped = 0
        """Outgoing messages discarded because the outbox was full."""
        self.bad_messages = 0
        """Incoming messages that could not be parsed (each also logged)."""

    # -- topics ------------------------------------------------------------------------------

    def outgoing_topics(self) -> list[str]:
        return list(dict.fromkeys([*self.publish_map, self.feedback_topic, self.result_topic]))

    def incoming_topics(self) -> dict[str, str]:
        """Full topic name -> role (``text_input``, ``say``, ``interrupt``, ``stop``, ``skill_goal``, ``skill_cancel``)."""
        return dict(self._incoming)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, wake: Callable[[], None]) -> None:
        """Subscribe to the bus and start the inbox worker. ``wake()`` is called (from any
        thread) whenever the outbox has messages; the transport then calls :meth:`drain`."""
        self._wake = wake
        if self._own_executor:
            from edgevox.agents.skills import SkillExecutor

            self._executor = SkillExecutor(self.config.max_concurrent_goals, name=f"edgevox-skill-{self.bridge}")
        self._worker = threading.Thread(target=self._inbox_loop, name=f"edgevox-{self.bridge}-inbox", daemon=True)
        self._worker.start()
        patterns = tuple(p for kinds in self.publish_map.values() for p in kinds)
        if patterns:
            self._subs.append(
                self.bus.subscribe(
                    patterns, self._on_event, queued=True, max_queue=self.config.max_outbox, name=f"{self.bridge}-out"
                )
            )
        self._subs.append(self.bus.subscribe(StopEvent, self._on_stop, name=f"{self.bridge}-stop"))

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Cancel goals started here, unsubscribe, stop the worker. True if everything ended in time."""
        deadline = time.monotonic() + timeout_s
        clean = True
        for sub in self._subs:
            clean &= sub.close(timeout_s=max(0.0, deadline - time.monotonic()))
        self._subs.clear()
        self.cancel_goals("bridge stopping")
        if self._worker is not None:
            self._inbox.put(_STOP)
            self._worker.join(max(0.0, deadline - time.monotonic()))
            clean &= not self._worker.is_alive()
            self._worker = None
        if self._own_executor and self._executor is not None:
            clean &= self._executor.shutdown(max(0.0, deadline - time.monotonic()))
            self._executor = None
        return clean

    # -- outgoing (any thread -> outbox -> ROS thread) ----------------------------------------

    def _on_event(self, event: Event) -> None:
        """Bus worker thread: one JSON message per matching topic."""
        data = json.dumps(event_to_json_dict(event), ensure_ascii=False)
        kind = event.kind
        for topic, kinds in self.publish_map.items():
            if any(p == "*" or p == kind or _fnmatch(kind, p) for p in kinds):
                self._post(topic, data)

    def _post(self, topic: str, data: str) -> None:
        with self._outbox_lock:
            if len(self._outbox) >= self.config.max_outbox:
                self._outbox.popleft()
                self.dropped += 1
            self._outbox.append((topic, data))
        self._wake()

    def drain(self) -> list[tuple[str, str]]:
        """ROS thread: take every queued ``(topic, json)`` message, oldest first."""
        with self._outbox_lock:
            out = list(self._outbox)
            self._outbox.clear()
        return out

    # -- incoming (ROS callback threads) ---------------------------------------------------------

    def handle(self, topic: str, data: str) -> None:
        """Called by the transport on a ROS thread for a message on an incoming topic. Quick."""
        role = self._incoming.get(topic)
        try:
            if role == "interrupt":
                self._publish(InterruptEvent(source=self.bridge, reason=data or f"{self.bridge} interrupt"))
            elif role == "stop":
                self.cancel_goals(data or "stop")
                self._publish(StopEvent(source=self.bridge, reason=data or f"{self.bridge} stop"))
            elif role in ("text_input", "say"):
                text = _text_of(data)
                if text:
                    try:
                        self._inbox.put_nowait((role, text))
                    except queue.Full:
                        self._bad(topic, "inbox full (the runtime is not keeping up); message dropped")
            elif role == "skill_goal":
                self._start_goal(data)
            elif role == "skill_cancel":
                self._cancel_goal(data)
            else:
                self._bad(topic, "not an incoming topic of this bridge")
        except ValueError as exc:
            self._bad(topic, str(exc))

    def _publish(self, event: Event) -> None:
        try:
            self.bus.publish(event)
        except BusClosedError:
            pass  # runtime shutting down first; nothing left to tell

    def _bad(self, topic: str, why: str) -> None:
        self.bad_messages += 1
        log.warning("%s bridge: message on %s ignored: %s", self.bridge, topic, why)

    def _inbox_loop(self) -> None:
        while True:
            item = self._inbox.get()
            if item is _STOP:
                return
            role, text = item
            handler = self.on_text if role == "text_input" else self.on_say
            if handler is None:
                self._bad(role, f"no {role} handler was given to the bridge")
                continue
            try:
                handler(text)
            except Exception as exc:  # noqa: BLE001 - reported on the bus, the worker keeps going
                from edgevox.runtime.events import ErrorEvent

                self._publish(ErrorEvent(source=self.bridge, where=f"{self.bridge} {role} handler", error=repr(exc)))

    # -- skills --------------------------------------------------------------------------------------

    def _result(self, goal_id: str, skill: str, status: str, result: Any = None, error: str = "") -> None:
        body = {"goal_id": goal_id, "skill": skill, "status": status, "result": _plain(result), "error": error}
        self._post(self.result_topic, json.dumps(body, ensure_ascii=False))

    def _start_goal(self, data: str) -> None:
        msg = _json_object(data)
        goal_id = str(msg.get("goal_id") or uuid.uuid4().hex[:12])
        name = msg.get("skill")
        args = msg.get("args") or {}
        skill = self.skills.get(name) if isinstance(name, str) else None
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            self._result(goal_id, str(name), "rejected", error=f"unknown skill {name!r}; known skills: {known}")
            return
        with self._goals_lock:
            if goal_id in self._goals:
                self._result(goal_id, name, "rejected", error=f"goal_id {goal_id!r} is already running")
                return
            if len(self._goals) >= self.config.max_concurrent_goals or self._executor is None:
                self._result(
                    goal_id, name, "rejected", error=f"{len(self._goals)} goals already running (max_concurrent_goals)"
                )
                return
            try:
                # self.ctx directly: the goal's token is a child of ours and detaches when done.
                handle = skill.start(args, self.ctx, self._executor)
            except ToolArgumentError as exc:
                self._result(goal_id, name, "rejected", error=str(exc))
                return
            self._goals[goal_id] = handle
        self._post(
            self.feedback_topic, json.dumps({"goal_id": goal_id, "skill": name, "status": "accepted", "feedback": None})
        )
        handle.add_feedback_listener(
            lambda fb: self._post(
                self.feedback_topic,
                json.dumps(
                    {"goal_id": goal_id, "skill": name, "status": "running", "feedback": _plain(fb)}, ensure_ascii=False
                ),
            )
        )
        handle.add_done_callback(lambda h: self._goal_done(goal_id, h))

    def _goal_done(self, goal_id: str, handle: GoalHandle) -> None:
        with self._goals_lock:
            self._goals.pop(goal_id, None)
        state = handle.state.value
        result = None
        if state == "succeeded":
            result = handle.result(0)
        self._result(goal_id, handle.skill, state, result=result, error=handle.error)

    def _cancel_goal(self, data: str) -> None:
        msg = _json_object(data) if data.strip() else {}
        goal_id = msg.get("goal_id")
        if goal_id is None:
            self.cancel_goals("cancelled by ROS client")
            return
        with self._goals_lock:
            handle = self._goals.get(str(goal_id))
        if handle is None:
            raise ValueError(f"no running goal {goal_id!r} to cancel")
        handle.cancel("cancelled by ROS client")

    def cancel_goals(self, reason: str) -> int:
        """Cancel every goal started through this bridge (any thread). Returns how many."""
        with self._goals_lock:
            handles = list(self._goals.values())
        for handle in handles:
            handle.cancel(reason)
        return len(handles)

    def _on_stop(self, event: StopEvent) -> None:
        if event.source != self.bridge:  # our own stop already cancelled them
            self.cancel_goals(event.reason or "stop")

    @property
    def running_goals(self) -> list[str]:
        with self._goals_lock:
            return list(self._goals)


def _as_skill(item: Any) -> Skill:
    """A :class:`Skill`; a skill's :class:`Tool` (``is_skill``, e.g. from ``agent.tools``) is rebuilt
    from its function (same name, schema and goal parameter; ``timeout_s`` is not known there)."""
    from edgevox.agents.skills import Skill, skill
    from edgevox.agents.tools import Tool

    if isinstance(item, Skill):
        return item
    if isinstance(item, Tool) and item.is_skill:
        return skill(item.func, name=item.name, description=item.description)
    raise TypeError(f"ROS bridge skills: {item!r} is not a skill; pass @skill objects (e.g. agent.skills)")


def _fnmatch(kind: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(kind, pattern)


def _json_object(data: str) -> dict[str, Any]:
    try:
        msg = json.loads(data)
    except ValueError as exc:
        raise ValueError(f"expected a JSON object, got {data[:80]!r}: {exc}") from None
    if not isinstance(msg, dict):
        raise ValueError(f"expected a JSON object, got {type(msg).__name__}")
    return msg


def _text_of(data: str) -> str:
    """Plain text, or the ``text`` of a JSON object (so clients may send either)."""
    stripped = data.strip()
    if stripped.startswith("{"):
        msg = _json_object(stripped)
        text = msg.get("text")
        if not isinstance(text, str):
            raise ValueError('JSON text message needs a string "text"')
        return text.strip()
    return stripped


def _plain(value: Any) -> Any:
    """JSON-friendly copy of a skill result/feedback (dataclasses and tuples included)."""
    from edgevox.runtime.events import _jsonable

    return _jsonable(value)
