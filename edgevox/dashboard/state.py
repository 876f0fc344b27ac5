"""What the dashboard shows, collected from a running App: the state behind every panel.

(Over 400 lines because recording the events and fanning them out to the pages share one lock
and one set of records; split candidate: the fan-out to pages, next to ``feed.py``.)

:class:`DashboardState` subscribes to the App's bus with a *queued* subscription (its own
thread, ``edgevox-sub-dashboard``, fed by a bounded mailbox): a publisher - the voice loop's
turn thread streaming tokens - only appends to that mailbox, so the dashboard never slows
the robot down, and a flood drops (counted) instead of blocking. From the events it keeps:

* the **conversation**: one record per turn (what the user said, the tool calls it made,
  the reply as it streams, how it ended, a stop's cancellations), and one per background
  agent's run (its tool calls and reply: ``kind: "background"``), with the latency marks of
  :mod:`edgevox.voice.latency` (``speech_end``, ``transcript``, ``first_token``,
  ``first_chunk``, ``first_audio``; same events, same clocks);
* the **event log**: the last ``max_events`` events, each with a one-line summary (stream
  events - tokens, reply deltas, feedback ticks - are counted, not logged: they would push
  every real event out);
* the **skills**: every goal's latest state and feedback (running ones always; the last
  ``max_skills`` finished ones).

What has no events - queue depths, the blackboard, the supervision tree, what is registered
as running - is read on demand by :meth:`DashboardState.status` (any thread; the server polls
it every ``refresh_s``).

Each open page is a :class:`~edgevox.dashboard.feed.ClientFeed`. :meth:`connect` queues a
full snapshot first and registers the feed under the same lock as the fan-out, so a page
never misses or repeats an event between its snapshot and the stream. At most ``max_pages``
pages are open at once (one more is refused, counted); each message is encoded once for all
of them, and a page whose queue fills is shed (counted; ``feed.py``).

Threads: :meth:`on_event` runs on the subscriber thread; everything else on any thread.

Over 400 lines because the conversation, the skills and the pages share one lock - the one
that orders a page's snapshot against its stream - and so one class.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from edgevox.agents.events import AgentReply, AgentStarted, SkillStateEvent, ToolCallFinished, ToolCallStarted
from edgevox.dashboard.config import (
    DEFAULT_BUS_QUEUE,
    DEFAULT_CLIENT_QUEUE,
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_SKILLS,
    DEFAULT_MAX_TURNS,
)
from edgevox.dashboard.feed import ClientFeed, Message, frame
from edgevox.dashboard.views import (
    background_row,
    blackboard_view,
    bridge_losses,
    fleet_rows,
    jsonable,
    log_entry,
    supervision_tree,
)
from edgevox.runtime.events import Event
from edgevox.runtime.lifecycle import StopReport
from edgevox.voice.events import (
    Chunk,
    FirstAudio,
    Interrupted,
    SpeechEnded,
    Stopped,
    Token,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)
from edgevox.voice.latency import MARKS, latency_mark

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.runtime.bus import Subscription

_FINISHED = ("succeeded", "cancelled", "failed", "aborted", "rejected")
MAX_TOOL_CALLS = 20
"""Tool calls kept per conversation record (the event log has them all)."""


class DashboardState:
    """The dashboard's view of ``app`` (see the module docstring). :meth:`attach` subscribes;
    :meth:`close` ends every page's stream and unsubscribes."""

    def __init__(
        self,
        app: App,
        *,
        max_events: int = DEFAULT_MAX_EVENTS,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_skills: int = DEFAULT_MAX_SKILLS,
        client_queue: int = DEFAULT_CLIENT_QUEUE,
        bus_queue: int = DEFAULT_BUS_QUEUE,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        self.app = app
        self.max_turns = max_turns
        self.max_skills = max_skills
        self.client_queue = client_queue
        self.bus_queue = bus_queue
        self.max_pages = max_pages
        self.pages_refused = 0
        """Pages refused because ``max_pages`` were open."""
        self.pages_shed = 0
        """Pages cut off because their queue filled (they fell behind, or never read)."""
        self.stream_events = 0
        """Stream events seen (tokens, reply deltas, feedback ticks): counted, not logged."""
        self.started_at = time.time()
        self._lock = threading.Lock()
        self._events: deque[dict[str, Any]] = deque(maxlen=max_events)
        self._turns: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._skills: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._feeds: list[ClientFeed] = []
        self._dropped_by_closed = 0
        self._sub: Subscription | None = None
        self._background = {bg.agent: bg.name for bg in getattr(app.config, "background_agents", ())}
        """Agent name -> background agent name: whose runs are background records."""
        self._running_turn = ""
        """Key of the voice turn running now: where a foreground agent's tool calls go."""
        self._background_runs: dict[str, str] = {}
        """Background agent's agent name -> key of its record being filled."""

    # --- subscribing ----------------------------------------------------------------------

    def attach(self) -> DashboardState:
        """Subscribe to every event of the App's bus (queued: thread ``edgevox-sub-dashboard``)."""
        self._sub = self.app.bus.subscribe(
            "*", self.on_event, queued=True, max_queue=self.bus_queue, overflow="drop_oldest", name="dashboard"
        )
        return self

    def close(self, timeout_s: float) -> StopReport:
        """End every page's stream and unsubscribe (joining the subscriber thread)."""
        with self._lock:
            feeds, self._feeds = self._feeds, []
        for feed in feeds:
            feed.close()
            self._dropped_by_closed += feed.dropped
        sub, self._sub = self._sub, None
        if sub is None or sub.close(timeout_s):
            return StopReport()
        return StopReport.abandoned_threads([f"edgevox-sub-{sub.name}"])

    def on_event(self, event: Event) -> None:
        """Record ``event`` and send what changed to every open page (subscriber thread)."""
        entry = None if event.is_stream() else log_entry(event)
        with self._lock:
            messages: list[Message] = []
            if entry is None:
                self.stream_events += 1
            else:
                self._events.append(entry)
                messages.append({"type": "event", "event": entry})
            turn = self._record_turn(event) or self._record_agent(event)
            if turn is not None:
                messages.append({"type": "turn", "turn": dict(turn, marks=dict(turn["marks"]))})
            skill = self._record_skill(event)
            if skill is not None:
                messages.append({"type": "skill", "skill": dict(skill)})
            self._fan_out_locked([frame(m) for m in messages])

    # --- the conversation -----------------------------------------------------------------

    def _turn(self, key: str, turn_id: int, timestamp: float) -> dict[str, Any]:
        rec = self._turns.get(key)
        if rec is None:
            rec = self._turns[key] = {
                "id": key,
                "turn_id": turn_id,
                "kind": "turn",
                "started": timestamp,
                "user": None,
                "origin": "",
                "stop_phrase": "",
                "reply": "",
                "spoken": "",
                "status": "",
                "error": "",
                "marks": {},
                "stopped": None,
                "tools": [],
            }
            while len(self._turns) > self.max_turns:  # bounded
                self._turns.popitem(last=False)
        return rec

    def _record_turn(self, event: Event) -> dict[str, Any] | None:
        """Update the conversation from a voice event; the changed record, or None."""
        if isinstance(event, Stopped) and not event.turn_id:  # a stop that was not spoken: a line of its own
            rec = self._turn(f"stop-{event.seq}", 0, event.timestamp)
            rec["kind"] = "stop"
            rec["stopped"] = _stop_record(event)
            return rec
        turn_id = getattr(event, "turn_id", 0)
        if not turn_id or not isinstance(
            event, (SpeechEnded, TranscriptEvent, TurnStarted, Token, Chunk, FirstAudio, TurnDone, Stopped, Interrupted)
        ):
            return None
        rec = self._turn(str(turn_id), turn_id, event.timestamp)
        mark = latency_mark(event)
        if mark is not None:
            rec["marks"].setdefault(*mark)
        if isinstance(event, TranscriptEvent):
            rec.update(user=event.text, origin=event.origin, stop_phrase=event.stop_phrase)
        elif isinstance(event, TurnStarted):
            self._running_turn = rec["id"]
            if rec["user"] is None:
                rec["origin"] = "robot"  # said by the robot itself (a confirmation, a delivery)
        elif isinstance(event, Token):
            rec["reply"] += event.text
        elif isinstance(event, TurnDone):
            if self._running_turn == rec["id"]:
                self._running_turn = ""
            rec.update(status=event.status, reply=event.reply_text, spoken=event.spoken_text, error=event.error)
        elif isinstance(event, Stopped):
            rec["stopped"] = _stop_record(event)
        elif isinstance(event, Interrupted):
            rec["status"] = "interrupted"
            rec["spoken"] = event.spoken_text
        return rec

    def _record_agent(self, event: Event) -> dict[str, Any] | None:
        """Tool calls into the running turn's record, and background agents' runs into records of
        their own; the changed record, or None."""
        background = self._background.get(event.source)
        if isinstance(event, AgentStarted) and background is not None:
            run = self._turn(f"bg-{event.seq}", 0, event.timestamp)
            run.update(kind="background", origin=background, user=None, status="running")
            self._background_runs[event.source] = run["id"]
            return run
        key = self._background_runs.get(event.source) if background is not None else self._running_turn
        rec = self._turns.get(key) if key else None
        if rec is None:
            return None
        if isinstance(event, ToolCallStarted):
            if len(rec["tools"]) >= MAX_TOOL_CALLS:
                return None
            rec["tools"] = [
                *rec["tools"],
                {
                    "call_id": event.call_id,
                    "tool": event.tool,
                    "arguments": jsonable(event.arguments),
                    "decided_by": event.decided_by,
                    "state": "running",
                    "started": event.timestamp,
                },
            ]
            return rec
        if isinstance(event, ToolCallFinished):
            tools = [dict(t) for t in rec["tools"]]
            for call in tools:
                if call["call_id"] == event.call_id and call["state"] == "running":
                    call.update(
                        state="ok" if event.ok else "failed",
                        result=jsonable(event.result),
                        error=event.error,
                        duration_s=event.duration_s,
                    )
                    rec["tools"] = tools
                    return rec
            return None
        if isinstance(event, AgentReply) and background is not None:
            self._background_runs.pop(event.source, None)
            status = "completed" if event.ok else "cancelled" if event.cancelled else "error"
            rec.update(reply=event.text, status=status, error=event.error)
            return rec
        return None

    # --- skills ---------------------------------------------------------------------------

    def _record_skill(self, event: Event) -> dict[str, Any] | None:
        if not isinstance(event, SkillStateEvent) or not event.goal_id:
            return None
        rec = self._skills.get(event.goal_id)
        if rec is None:
            rec = self._skills[event.goal_id] = {
                "goal_id": event.goal_id,
                "skill": event.skill,
                "started": event.timestamp,
                "feedback": None,
            }
        rec.update(state=event.state, error=event.error, updated=event.timestamp)
        if event.feedback is not None:
            rec["feedback"] = jsonable(event.feedback)
        finished = [k for k, r in self._skills.items() if r["state"] in _FINISHED]
        for key in finished[: max(0, len(finished) - self.max_skills)]:  # bounded; running ones stay
            del self._skills[key]
        return rec

    # --- pages ----------------------------------------------------------------------------

    def connect(self, wake: Callable[[], object] = lambda: None) -> ClientFeed | None:
        """A feed for a new page, its snapshot queued first (see the module docstring); None
        (counted in ``pages_refused``) when ``max_pages`` pages are open already."""
        with self._lock:
            if len(self._feeds) >= self.max_pages:
                self.pages_refused += 1
                return None
        feed = ClientFeed(self.client_queue, wake)
        status = self.status()
        with self._lock:
            if len(self._feeds) >= self.max_pages:  # another page came in meanwhile
                self.pages_refused += 1
                return None
            feed.put(frame(self._snapshot_locked(status)))
            self._feeds.append(feed)
        return feed

    @property
    def full(self) -> bool:
        """Whether ``max_pages`` pages are open (a new one would be refused)."""
        with self._lock:
            return len(self._feeds) >= self.max_pages

    def refuse(self) -> None:
        """Count a page refused without asking :meth:`connect` (the server saw :attr:`full`)."""
        with self._lock:
            self.pages_refused += 1

    def _fan_out_locked(self, frames: list[str]) -> None:
        """Queue ``frames`` for every open page; a page that cannot take them is shed."""
        shed: list[ClientFeed] = []
        for feed in self._feeds:
            for item in frames:
                if not feed.put(item):
                    shed.append(feed)
                    break
        for feed in shed:
            self._feeds.remove(feed)
            self._dropped_by_closed += feed.dropped
            self.pages_shed += feed.shed

    def shed(self, feed: ClientFeed) -> None:
        """Close ``feed`` of a page that stopped reading (the server cut it), counted once."""
        with self._lock:
            if not feed.shed and not feed.closed:
                self.pages_shed += 1
        feed.close()

    def disconnect(self, feed: ClientFeed) -> None:
        with self._lock:
            if feed in self._feeds:
                self._feeds.remove(feed)
                self._dropped_by_closed += feed.dropped
        feed.close()

    def broadcast(self, message: Message) -> None:
        """Send ``message`` to every open page (the server's status updates)."""
        item = frame(message)
        with self._lock:
            self._fan_out_locked([item])

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as JSON values (``GET /api/state``)."""
        status = self.status()
        with self._lock:
            return self._snapshot_locked(status)

    def _snapshot_locked(self, status: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "snapshot",
            "app": {"name": self.app.config.name, "started": self.started_at},
            "marks": list(MARKS),
            "turns": [dict(t, marks=dict(t["marks"])) for t in self._turns.values()],
            "events": list(self._events),
            "skills": [dict(s) for s in self._skills.values()],
            "stream_events": self.stream_events,
            "status": status,
        }

    # --- polled status --------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What has no events, read now (any thread): supervision tree, background agents,
        blackboard, running activities, bus and page counters."""
        app = self.app
        runtime = app.runtime
        with self._lock:
            feeds = list(self._feeds)
            dropped_closed = self._dropped_by_closed
        sub = self._sub
        return {
            "state": app.state.value,
            "tree": supervision_tree(app),
            "background": [background_row(bg) for bg in app.background],
            "blackboard": blackboard_view(app),
            "activities": [
                {"id": a.id, "kind": a.kind, "name": a.name, "age_s": round(time.monotonic() - a.started_at, 1)}
                for a in runtime.activities.running()
            ],
            "bus": {
                "published": app.bus.published,
                "handler_errors": app.bus.handler_errors,
                "dashboard_dropped": sub.dropped if sub is not None else 0,
            },
            "pages": {
                "open": len(feeds),
                "max": self.max_pages,
                "dropped": dropped_closed + sum(f.dropped for f in feeds),
                "shed": self.pages_shed,
                "refused": self.pages_refused,
            },
            "stream_events": self.stream_events,
            "bridges": bridge_losses(app.bridges),
            "robots": fleet_rows(app.bridges),
        }


def _stop_record(event: Stopped) -> dict[str, Any]:
    return {
        "reason": event.reason,
        "phrase": event.phrase,
        "cancelled": list(event.cancelled or []),
        "ignored": list(event.ignored or []),
        "cancel_s": event.cancel_s,
    }


__all__ = ["DashboardState"]
