"""What the ROS 2 and ROS 1 bridges share: topic roles, JSON messages, the skill goal protocol.

Over 400 lines because the bridge core is one hand-over protocol: the untrusted-input checks,
the inbox worker, the outbox and the skill goal protocol share its counters and locks, whichever
ROS version carries them.

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

Incoming messages are untrusted (any node on the ROS graph may publish). :meth:`handle`
applies, in order: a rate limit per topic (``max_messages_per_s``), a size limit
(``max_message_bytes``), then JSON parsing with a nesting limit (``max_depth``; NaN and
Infinity refused) and a strict pydantic check of goal, cancel and text messages (unknown
fields, a non-string ``goal_id``, ``args`` that is not an object are refused). Each refusal is
counted in :attr:`RosBridgeCore.counters`, logged (one line per kind of problem at most every
5 s) and, for ``skill/goal`` and ``skill/cancel``, answered on ``skill/result`` (status
``rejected`` or ``cancel_rejected``) with what was wrong. A ``skill/cancel`` naming a goal that
runs here is never rate-limited (a flood of junk cancels cannot hide it). A rate-limited ``stop`` still cancels
the goals started here; only its bus event is dropped. Nothing raises into a ROS callback.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from edgevox.errors import BusClosedError, ToolArgumentError
from edgevox.integrations.limits import BadInputLog, BridgeCounters, TokenBucket
from edgevox.integrations.serialization import SerializationError, _finite, decode_json, event_to_json_dict
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event, InterruptEvent, StopEvent

if TYPE_CHECKING:
    from edgevox.agents.skills import GoalHandle, Skill, SkillExecutor
    from edgevox.integrations.config import Ros1BridgeConfig, Ros2BridgeConfig
    from edgevox.runtime.bus import EventBus, Subscription

log = logging.getLogger(__name__)

TextHandler = Callable[[str], Any]

INCOMING_ROLES = ("text_input", "say", "interrupt", "stop", "skill_goal", "skill_cancel")
COUNTERS = (
    "received",
    "rate_limited",
    "oversized",
    "too_deep",
    "invalid",
    "unknown_goal",
    "goals_rejected",
    "inbox_dropped",
    "outbox_dropped",
)
"""Names in :attr:`RosBridgeCore.counters`. ``received``: messages that passed the rate and size
limits; ``oversized``, ``too_deep``, ``invalid``: refused input; ``unknown_goal``: a cancel
for a goal not running here; ``goals_rejected``: well-formed goals refused (unknown skill, bad
arguments, busy); ``inbox_dropped``/``outbox_dropped``: queues full."""
BAD_INPUT = ("oversized", "too_deep", "invalid", "unknown_goal")
_STOP = object()
_GOAL_ID = Annotated[StrictStr, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:/-]+$")]


class _Message(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class GoalMessage(_Message):
    """``skill/goal``: ``{"goal_id": "g1", "skill": "patrol", "args": {"laps": 3}}``."""

    goal_id: _GOAL_ID | None = None
    skill: Annotated[StrictStr, Field(min_length=1, max_length=128)]
    args: dict[StrictStr, Any] = Field(default_factory=dict)


class CancelMessage(_Message):
    """``skill/cancel``: ``{"goal_id": "g1"}``, or ``{}`` for every goal started here."""

    goal_id: _GOAL_ID | None = None


class TextMessage(_Message):
    """``text_input`` / ``say`` as JSON: ``{"text": "..."}`` (plain text works too)."""

    text: StrictStr


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
        self.stop_ack_topic = resolve_topic(ns, topics.stop_ack)
        self.say_done_topic = resolve_topic(ns, topics.say_done)
        self._says: OrderedDict[int, str] = OrderedDict()
        """Turn ids of ``say`` messages being spoken -> their text (the last 64)."""
        self._said: OrderedDict[int, tuple[str, str]] = OrderedDict()
        """Turns that ended before their ``say`` was recorded -> (status, error) (the last 64)."""
        self._says_lock = threading.Lock()
        self.cancel_topic = resolve_topic(ns, topics.skill_cancel)
        self._incoming = {resolve_topic(ns, getattr(topics, role)): role for role in INCOMING_ROLES}
        self._outbox: deque[tuple[str, str]] = deque()
        self._outbox_lock = threading.Lock()
        self._feedback_sent: OrderedDict[str, float] = OrderedDict()
        """goal id -> when its last feedback tick went out (``skill_feedback_period_s``)."""
        self._inbox: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._goals: dict[str, GoalHandle] = {}
        self._goals_lock = threading.Lock()
        self._wake: Callable[[], None] = lambda: None
        self._subs: list[Subscription] = []
        self._worker: threading.Thread | None = None
        self.counters = BridgeCounters(COUNTERS)
        self._rate = TokenBucket(config.max_messages_per_s)
        self._bad_log = BadInputLog(log, f"{bridge} bridge {config.namespace}")

    @property
    def dropped(self) -> int:
        """Outgoing messages discarded because the outbox was full."""
        return self.counters["outbox_dropped"]

    @property
    def bad_messages(self) -> int:
        """Incoming messages refused as malformed, oversized, too deep, or cancelling no goal."""
        snapshot = self.counters.snapshot()
        return sum(snapshot[name] for name in BAD_INPUT)

    # -- topics ------------------------------------------------------------------------------

    def outgoing_topics(self) -> list[str]:
        return list(
            dict.fromkeys(
                [*self.publish_map, self.feedback_topic, self.result_topic, self.stop_ack_topic, self.say_done_topic]
            )
        )

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
        if self.on_say is not None:
            self._subs.append(self.bus.subscribe("voice.turn_done", self._on_turn_done, name=f"{self.bridge}-say-done"))

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
        if self._feedback_throttled(event):
            return
        data = _dumps(event_to_json_dict(event))
        kind = event.kind
        for topic, kinds in self.publish_map.items():
            if any(p == "*" or p == kind or _fnmatch(kind, p) for p in kinds):
                self._post(topic, data)

    def _feedback_throttled(self, event: Event) -> bool:
        """A goal's feedback tick within ``skill_feedback_period_s`` of its last one: not sent.
        State changes (pending, running without feedback, the final state) always go out."""
        goal = getattr(event, "goal_id", "") if event.kind == "agent.skill_state" else ""
        if not goal:
            return False
        if not event.is_stream():
            if getattr(event, "state", "") in ("succeeded", "cancelled", "failed"):
                self._feedback_sent.pop(goal, None)
            return False
        now = time.monotonic()
        last = self._feedback_sent.get(goal)
        if last is not None and now - last < self.config.skill_feedback_period_s:
            return True
        self._feedback_sent[goal] = now
        self._feedback_sent.move_to_end(goal)
        while len(self._feedback_sent) > 1024:
            self._feedback_sent.popitem(last=False)
        return False

    def _post(self, topic: str, data: str) -> None:
        with self._outbox_lock:
            if len(self._outbox) >= self.config.max_outbox:
                self._outbox.popleft()
                self.counters.add("outbox_dropped")
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
        """Called by the transport on a ROS thread for a message on an incoming topic. Quick,
        never raises (see the module docstring for the checks)."""
        try:
            self._handle(topic, data)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: count it, say it
            self.counters.add("invalid")
            self._bad_log.warn("internal", f"message on {topic} not handled: {type(exc).__name__}: {exc}")

    def _handle(self, topic: str, data: str) -> None:
        role = self._incoming.get(topic)
        if role is None:
            self._bad(topic, "invalid", "not an incoming topic of this bridge")
            return
        limited = not self._rate.allow(topic) and not self._cancels_running_goal(role, data)
        if limited:
            self.counters.add("rate_limited")
            self._bad_log.warn(
                f"rate-{role}",
                f"messages on {topic} dropped: more than {self.config.max_messages_per_s:g} per second "
                f"(bridges.{self.bridge}.max_messages_per_s)",
            )
            if role == "stop":
                # A stop is never ignored by the goals started here, and is always answered.
                self._ack_stop(data, [f"goal {g} (skill {s})" for g, s in self.running_goal_skills().items()], True)
                self.cancel_goals("stop")
            return
        size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else -1
        if size < 0 or size > self.config.max_message_bytes:
            what = "not a string" if size < 0 else f"{size:,} bytes"
            self._refuse(
                topic,
                role,
                "oversized" if size >= 0 else "invalid",
                f"message is {what}, over bridges.{self.bridge}.max_message_bytes = {self.config.max_message_bytes:,}",
            )
            return
        self.counters.add("received")
        try:
            if role == "interrupt":
                self._publish(InterruptEvent(source=self.bridge, reason=data or f"{self.bridge} interrupt"))
            elif role == "stop":
                by_goal = self.running_goal_skills()
                goals = [f"goal {g} (skill {s})" for g, s in by_goal.items()]
                registry = self.ctx.activities
                as_goals = {f"skill {s}" for s in by_goal.values()}  # the same goals, as the registry names them
                running = [a.label for a in registry.running() if a.label not in as_goals] if registry else []
                self.cancel_goals(data or "stop")
                # The runtime cancels every registered activity on this thread, inside publish.
                self._publish(StopEvent(source=self.bridge, reason=data or f"{self.bridge} stop"))
                self._ack_stop(data, list(dict.fromkeys([*goals, *running])), False)
            elif role in ("text_input", "say"):
                text = self._text_of(data)
                if text:
                    try:
                        self._inbox.put_nowait((role, text))
                    except queue.Full:
                        self.counters.add("inbox_dropped")
                        self._bad_log.warn(
                            "inbox", f"message on {topic} dropped: the runtime is not keeping up (inbox full)"
                        )
            elif role == "skill_goal":
                self._start_goal(self._parse(GoalMessage, data))
            elif role == "skill_cancel":
                self._cancel_goal(self._parse(CancelMessage, data) if data.strip() else CancelMessage())
        except SerializationError as exc:
            self._refuse(topic, role, exc.reason, str(exc), goal_id=_goal_id_of(data) if "goal" in role else "")

    def _parse(self, model: type[_Message], data: str) -> Any:
        value = decode_json(data, max_depth=self.config.max_depth)
        if not isinstance(value, dict):
            raise SerializationError(f"expected a JSON object, got {type(value).__name__}")
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise SerializationError(_describe(exc)) from None

    def _text_of(self, data: str) -> str:
        """Plain text, or the ``text`` of a JSON object (so clients may send either)."""
        stripped = data.strip()
        if stripped.startswith("{"):
            return self._parse(TextMessage, stripped).text.strip()
        return stripped

    def _refuse(self, topic: str, role: str, reason: str, why: str, *, goal_id: str = "") -> None:
        """Count and log a refused message; a goal or cancel is also answered on ``skill/result``."""
        self._bad(topic, reason, why)
        if role == "skill_goal":
            self._result(goal_id, "", "rejected", error=f"goal message refused: {why}")
        elif role == "skill_cancel":
            self._result(goal_id, "", "cancel_rejected", error=f"cancel message refused: {why}")

    def _publish(self, event: Event) -> None:
        try:
            self.bus.publish(event)
        except BusClosedError:
            pass  # runtime shutting down first; nothing left to tell

    def _bad(self, topic: str, reason: str, why: str) -> None:
        self.counters.add(reason)
        self._bad_log.warn(reason, f"message on {topic} ignored: {why}")

    def _inbox_loop(self) -> None:
        while True:
            item = self._inbox.get()
            if item is _STOP:
                return
            role, text = item
            handler = self.on_text if role == "text_input" else self.on_say
            if handler is None:
                self._bad(
                    role, "invalid", f"no {role} handler was given to the bridge; pass on_{role.split('_')[0]}=..."
                )
                continue
            try:
                turn = handler(text)
            except Exception as exc:  # noqa: BLE001 - reported on the bus, the worker keeps going
                from edgevox.runtime.events import ErrorEvent

                self._publish(ErrorEvent(source=self.bridge, where=f"{self.bridge} {role} handler", error=repr(exc)))
                if role == "say":
                    self._say_done(text, -1, "failed", repr(exc))
                continue
            if role == "say":
                self._said_turn(text, turn)

    # -- say: its end answered on say/done ------------------------------------------------------------

    def _said_turn(self, text: str, turn: object) -> None:
        """Inbox worker: ``on_say`` returned the turn id that speaks ``text`` (-1: nothing to speak)."""
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
            self._say_done(text, -1, "refused", "nothing speakable in it" if turn == -1 else "")
            return
        with self._says_lock:
            ended = self._said.pop(turn, None)
            if ended is None:
                self._says[turn] = text
                while len(self._says) > 64:
                    self._says.popitem(last=False)
        if ended is not None:
            self._say_done(text, turn, *ended)

    def _on_turn_done(self, event: Event) -> None:
        """Publisher's thread: a turn ended; if a ``say`` started it, answer on say/done."""
        turn, status, error = getattr(event, "turn_id", -1), getattr(event, "status", ""), getattr(event, "error", "")
        with self._says_lock:
            text = self._says.pop(turn, None)
            if text is None:
                self._said[turn] = (status, error)  # its say may not be recorded yet
                while len(self._said) > 64:
                    self._said.popitem(last=False)
                return
        self._say_done(text, turn, status, error)

    def _say_done(self, text: str, turn: int, status: str, error: str = "") -> None:
        self._post(self.say_done_topic, _dumps({"say": text, "turn_id": turn, "status": status, "error": error}))

    # -- skills --------------------------------------------------------------------------------------

    def _result(self, goal_id: str, skill: str, status: str, result: Any = None, error: str = "") -> None:
        body = {"goal_id": goal_id, "skill": skill, "status": status, "result": _plain(result), "error": error}
        self._post(self.result_topic, _dumps(body))

    def _start_goal(self, msg: GoalMessage) -> None:
        goal_id = msg.goal_id or uuid.uuid4().hex[:12]
        name = msg.skill
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            self._reject_goal(goal_id, name, f"unknown skill {name!r}; known skills: {known}")
            return
        with self._goals_lock:
            if goal_id in self._goals:
                self._reject_goal(goal_id, name, f"goal_id {goal_id!r} is already running; use a new goal_id")
                return
            if len(self._goals) >= self.config.max_concurrent_goals or self._executor is None:
                self._reject_goal(
                    goal_id, name, f"{len(self._goals)} goals already running (max_concurrent_goals); retry later"
                )
                return
            try:
                # self.ctx directly: the goal's token is a child of ours and detaches when done.
                handle = skill.start(msg.args, self.ctx, self._executor)
            except ToolArgumentError as exc:
                self._reject_goal(goal_id, name, str(exc))
                return
            self._goals[goal_id] = handle
        self._post(
            self.feedback_topic, _dumps({"goal_id": goal_id, "skill": name, "status": "accepted", "feedback": None})
        )
        handle.add_feedback_listener(
            lambda fb: self._post(
                self.feedback_topic,
                _dumps({"goal_id": goal_id, "skill": name, "status": "running", "feedback": _plain(fb)}),
            )
        )
        handle.add_done_callback(lambda h: self._goal_done(goal_id, h))

    def _reject_goal(self, goal_id: str, skill: str, error: str) -> None:
        self.counters.add("goals_rejected")
        self._result(goal_id, skill, "rejected", error=error)

    def _goal_done(self, goal_id: str, handle: GoalHandle) -> None:
        with self._goals_lock:
            self._goals.pop(goal_id, None)
        state = handle.state.value
        result = None
        if state == "succeeded":
            result = handle.result(0)
        self._result(goal_id, handle.skill, state, result=result, error=handle.error)

    def _ack_stop(self, data: str, stopped: list[str], rate_limited: bool) -> None:
        """Answer a message on ``stop`` on ``stop/ack`` once it acted (the topic path's
        acknowledgement; the stop service answers its caller itself)."""
        message = data[:200] if isinstance(data, str) else ""
        self._post(self.stop_ack_topic, _dumps({"stop": message, "stopped": stopped, "rate_limited": rate_limited}))

    def _cancels_running_goal(self, role: str, data: str) -> bool:
        """A ``skill/cancel`` naming a goal that runs here. The rate limit bounds the cost of junk
        from any publisher on the topic; it never refuses the cancel of real work, so a node that
        floods the topic cannot make another node's cancel vanish."""
        if role != "skill_cancel" or not isinstance(data, str):
            return False
        goal_id = _goal_id_of(data)
        with self._goals_lock:
            return bool(goal_id) and goal_id in self._goals

    def _cancel_goal(self, msg: CancelMessage) -> None:
        if msg.goal_id is None:
            self.cancel_goals("cancelled by ROS client")
            return
        with self._goals_lock:
            handle = self._goals.get(msg.goal_id)
        if handle is None:
            why = (
                f"no running goal {msg.goal_id!r} was started through this bridge (it may have finished: "
                f"see its final status on skill/result)"
            )
            self._bad(self.cancel_topic, "unknown_goal", why)
            self._result(msg.goal_id, "", "cancel_rejected", error=why)
            return
        handle.cancel("cancelled by ROS client")

    def cancel_goals(self, reason: str) -> int:
        """Cancel every goal started through this bridge (any thread). Returns how many."""
        with self._goals_lock:
            handles = list(self._goals.values())
        for handle in handles:
            handle.cancel(reason)
        return len(handles)

    def _on_stop(self, event: Event) -> None:
        if isinstance(event, StopEvent) and event.source != self.bridge:  # our own stop already cancelled them
            self.cancel_goals(event.reason or "stop")

    @property
    def running_goals(self) -> list[str]:
        with self._goals_lock:
            return list(self._goals)

    def running_goal_skills(self) -> dict[str, str]:
        """Goal id -> skill name of every goal started here and still running."""
        with self._goals_lock:
            return {goal_id: handle.skill for goal_id, handle in self._goals.items()}


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


def _describe(exc: ValidationError) -> str:
    """``field 'goal_id': Input should be a valid string (got 5)``, at most three."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "message"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown field {where!r}")
        elif err["type"] == "missing":
            parts.append(f"field {where!r} is missing")
        else:
            got = repr(err.get("input"))
            parts.append(f"field {where!r}: {err['msg']} (got {got[:60]}{'...' if len(got) > 60 else ''})")
    return "; ".join(parts)


def _goal_id_of(data: str) -> str:
    """The ``goal_id`` of a refused message when it can be read cheaply (to address the answer)."""
    try:
        value = json.loads(data) if len(data) <= 4096 else None
    except (ValueError, RecursionError):
        return ""
    goal_id = value.get("goal_id") if isinstance(value, dict) else None
    return goal_id[:128] if isinstance(goal_id, str) else ""


def _dumps(body: Any) -> str:
    """JSON for an outgoing message; non-finite floats become null (other parsers reject NaN)."""
    return json.dumps(_finite(body), ensure_ascii=False, allow_nan=False)


def _plain(value: Any) -> Any:
    """JSON-friendly copy of a skill result/feedback (dataclasses and tuples included)."""
    from edgevox.runtime.events import _jsonable

    return _jsonable(value)
