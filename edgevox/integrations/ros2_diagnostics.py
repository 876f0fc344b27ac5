"""Diagnostics of a ROS 2 node hosting edgevox: ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics``.

The ROS convention (``diagnostic_updater``, ``rqt_robot_monitor``, the diagnostic aggregator):
every node publishes ``DiagnosticStatus`` entries on ``/diagnostics`` about once a second. The
bridge publishes one array every ``bridges.ros2.diagnostics_period_s`` with three statuses,
each named ``<node>: <part>`` and with ``hardware_id`` = the application name:

* ``voice``: ``message`` is the state (``listening``, ``thinking``, ``speaking``, ``stopped``);
  values ``state``, ``turns``, ``stops``, ``errors``, ``last_error``, ``last_turn_id``,
  ``last_turn_status`` and the last finished user turn's latencies in seconds
  (``speech_end->transcript``, ``transcript->first_token``, ``first_token->first_chunk``,
  ``first_chunk->first_audio``, ``speech_end->first_audio``, ``transcript->first_audio``; a
  stage with a missing mark is left out: typed turns have no ``speech_end``, announcements and
  stop confirmations no latencies at all).
* ``supervision``: one value per supervised or background agent (``<state> restarts=<n>``).
* ``bridge``: the bridge's counters (refused, dropped and rate-limited messages, goals running).
* ``<name> bridge``: one per other bridge of the application (e.g. ``zenoh bridge``): its
  counters; ``message`` names what it lost (``limits.LOSSES`` that are not zero: data lost on a
  congested link, stops acknowledged late or unreachable...), ``WARN`` when one of them grew in
  the last ``RECENT_S`` seconds.

Levels: ``ERROR`` when a supervised agent has ``failed`` (gave up restarting) or the audio
input failed to reopen; ``WARN`` when an error event, a restart or a lost audio device was seen
in the last ``RECENT_S`` seconds; else ``OK``.

:class:`DiagnosticsCollector` knows nothing about rclpy: it observes the bus (any thread, under
a lock) and builds plain ``(level, name, message, values)`` tuples; :func:`to_message` turns
them into the ROS message on the executor thread that publishes it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from edgevox.integrations.limits import LOSSES
from edgevox.runtime.events import AgentStateEvent, ErrorEvent, Event
from edgevox.voice.latency import latency_mark

if TYPE_CHECKING:
    from edgevox.runtime.bus import EventBus, Subscription

OK, WARN, ERROR = 0, 1, 2
"""``diagnostic_msgs/DiagnosticStatus`` levels."""
RECENT_S = 60.0
"""An error, restart or lost device seen this recently makes the status ``WARN``."""
LATENCY_STAGES = (
    ("speech_end", "transcript"),
    ("transcript", "first_token"),
    ("first_token", "first_chunk"),
    ("first_chunk", "first_audio"),
    ("speech_end", "first_audio"),
    ("transcript", "first_audio"),
)
_KEEP_TURNS = 8


@dataclass
class Status:
    """One ``DiagnosticStatus``, without rclpy."""

    level: int
    name: str
    message: str
    values: dict[str, str] = field(default_factory=dict)


class DiagnosticsCollector:
    """What the diagnostics say, gathered from bus events (see the module docstring).

    ``counters()`` (optional) returns the bridge's counters when a status is built; ``others()``
    (optional) the other bridges' counters by name."""

    def __init__(
        self,
        *,
        node: str,
        hardware_id: str,
        counters: Callable[[], dict[str, int]] | None = None,
        others: Callable[[], dict[str, dict[str, int]]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.node = node
        self.hardware_id = hardware_id
        self._counters = counters
        self._others = others
        self._losses: dict[str, tuple[int, float]] = {}
        """Per other bridge: (its losses summed, when that sum last grew)."""
        self._clock = clock
        self._lock = threading.Lock()
        self.state = "listening"
        self._turns = 0
        self._stops = 0
        self._errors = 0
        self._last_error = ""
        self._last_turn: tuple[int, str, dict[str, float]] | None = None
        self._marks: OrderedDict[int, dict[str, float]] = OrderedDict()
        self._agents: dict[str, tuple[str, int]] = {}
        self._recent: list[tuple[float, str]] = []  # (when, what) for WARN, pruned to RECENT_S
        self._device_failed = ""
        self._sub: Subscription | None = None

    def attach(self, bus: EventBus) -> DiagnosticsCollector:
        """Observe ``bus`` until :meth:`close` (a second call changes nothing)."""
        if self._sub is None:
            self._sub = bus.add_observer(self.on_event, name="ros2-diagnostics")
        return self

    def close(self) -> None:
        if self._sub is not None:
            self._sub.close()
            self._sub = None

    # -- the bus side (publisher's thread) ------------------------------------------------------

    def on_event(self, event: Event) -> None:
        kind = event.kind
        if not (kind.startswith("voice.") or isinstance(event, (AgentStateEvent, ErrorEvent))):
            return
        now = self._clock()
        with self._lock:
            if isinstance(event, ErrorEvent):
                self._errors += 1
                self._last_error = f"{event.where}: {event.error}"[:300]
                self._recent.append((now, "error"))
            elif isinstance(event, AgentStateEvent):
                before = self._agents.get(event.agent, ("", 0))[1]
                self._agents[event.agent] = (event.state, event.restart_count)
                if event.restart_count > before:
                    self._recent.append((now, "restart"))
            else:
                self._on_voice(kind, event, now)

    def _on_voice(self, kind: str, event: Any, now: float) -> None:
        turn_id = int(getattr(event, "turn_id", 0) or 0)
        if kind == "voice.turn_started":
            self.state = "thinking"
        elif kind == "voice.audio_out":
            self.state = "speaking"
        elif kind == "voice.stopped":
            self.state = "stopped"
            self._stops += 1
        elif kind == "voice.turn_done":
            status = getattr(event, "status", "")
            self._turns += 1
            marks = self._marks.pop(turn_id, {})
            if "transcript" in marks:  # a user's turn (not a spoken announcement or stop confirmation)
                self._last_turn = (turn_id, status, marks)
            if self.state != "stopped" or status != "stopped":
                self.state = "listening"
        elif kind == "voice.audio_device":
            state = getattr(event, "state", "")
            if state == "failed":
                self._device_failed = getattr(event, "error", "") or "audio device failed"
            elif state == "reopened":
                self._device_failed = ""
            if state in ("lost", "failed"):
                self._recent.append((now, f"audio device {state}"))
        mark = latency_mark(event) if turn_id else None
        if mark is not None:
            self._mark(turn_id, *mark)

    def _mark(self, turn_id: int, mark: str, at: float) -> None:
        marks = self._marks.get(turn_id)
        if marks is None:
            marks = self._marks[turn_id] = {}
            while len(self._marks) > _KEEP_TURNS:  # bounded: turns that never finish are forgotten
                self._marks.popitem(last=False)
        marks.setdefault(mark, at)

    # -- the ROS side (executor thread) --------------------------------------------------------------

    def statuses(self) -> list[Status]:
        """The three statuses as of now."""
        now = self._clock()
        with self._lock:
            self._recent = [r for r in self._recent if now - r[0] <= RECENT_S]
            recent = sorted({what for _, what in self._recent})
            failed = sorted(name for name, (state, _) in self._agents.items() if state == "failed")
            level = ERROR if failed or self._device_failed else WARN if recent else OK
            voice = {
                "state": self.state,
                "turns": str(self._turns),
                "stops": str(self._stops),
                "errors": str(self._errors),
                "last_error": self._last_error,
            }
            if self._last_turn is not None:
                turn_id, status, marks = self._last_turn
                voice["last_turn_id"] = str(turn_id)
                voice["last_turn_status"] = status
                for a, b in LATENCY_STAGES:
                    if a in marks and b in marks:
                        voice[f"{a}->{b}"] = f"{max(0.0, marks[b] - marks[a]):.3f}"
            if self._device_failed:
                voice["audio_device"] = f"failed: {self._device_failed}"
            message = self.state
            if failed:
                message += f"; gave up: {', '.join(failed)}"
            elif self._device_failed:
                message += "; audio input failed"
            elif recent:
                message += f"; recent: {', '.join(recent)}"
            agents = {name: f"{state} restarts={n}" for name, (state, n) in sorted(self._agents.items())}
            restarts = sum(n for _, n in self._agents.values())
        sup_level = ERROR if failed else WARN if "restart" in recent else OK
        sup_message = f"gave up: {', '.join(failed)}" if failed else f"{len(agents)} agents, {restarts} restarts"
        out = [
            Status(level, f"{self.node}: voice", message, voice),
            Status(sup_level, f"{self.node}: supervision", sup_message, agents),
        ]
        if self._counters is not None:
            counters = {k: str(v) for k, v in self._counters().items()}
            out.append(Status(OK, f"{self.node}: bridge", "ok", counters))
        for name, values in sorted((self._others() if self._others is not None else {}).items()):
            out.append(self._other_bridge(name, values, now))
        return out

    def _other_bridge(self, name: str, values: dict[str, int], now: float) -> Status:
        lost = {key: values[key] for key in LOSSES if values.get(key)}
        total = sum(lost.values())
        seen, grew_at = self._losses.get(name, (0, float("-inf")))
        if total > seen:
            grew_at = now
        self._losses[name] = (total, grew_at)
        level = WARN if now - grew_at <= RECENT_S else OK
        message = "lost: " + ", ".join(f"{k}={v}" for k, v in lost.items()) if lost else "ok"
        return Status(level, f"{self.node}: {name} bridge", message, {k: str(v) for k, v in values.items()})


def to_message(statuses: list[Status], hardware_id: str, stamp: Any = None) -> Any:
    """A ``diagnostic_msgs/DiagnosticArray`` of ``statuses`` (imports diagnostic_msgs)."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    array = DiagnosticArray()
    if stamp is not None:
        array.header.stamp = stamp
    for status in statuses:
        msg = DiagnosticStatus()
        msg.level = bytes([status.level])
        msg.name = status.name
        msg.message = status.message
        msg.hardware_id = hardware_id
        msg.values = [KeyValue(key=k, value=v) for k, v in status.values.items()]
        array.status.append(msg)
    return array
