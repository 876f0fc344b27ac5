"""The soak bench's ledger: every turn from submission to ``TurnDone``, first-audio latency and
error events, counted from the App's bus.

What counts as a submitted turn, a lost turn and an error event is defined in
:mod:`edgevox.cli.bench_soak`; :class:`TurnLedger` applies those definitions to the events.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Turn:
    submitted_at: float
    """``time.monotonic()`` when the loop accepted it."""
    origin_wall: float
    """Wall-clock start of the latency: the user's last voiced frame, or the typed submit."""
    origin: str
    """``voice``, ``text`` or ``say``."""
    text: str
    first_audio: bool = False


@dataclass
class Counts:
    submitted: int = 0
    finished: int = 0
    statuses: Counter = field(default_factory=Counter)
    stops: int = 0
    interrupted: int = 0
    utterances: int = 0
    echo_ignored: int = 0
    empty: int = 0


class TurnLedger:
    """Bus observer: every turn from submission to ``TurnDone``, first-audio latency, error events.

    ``on_event`` runs on the publishing thread (capture, STT, turn, TTS threads); it keeps
    only unfinished turns and the current interval's latencies, so the bench itself does not
    grow. Every other method may be called from any thread.
    """

    def __init__(self, turn_timeout_s: float) -> None:
        from edgevox.voice.speechtext import clean_for_speech

        self._speakable = lambda text: bool(clean_for_speech(text[:500]))
        self.turn_timeout_s = turn_timeout_s
        self._cond = threading.Condition()
        self._pending: dict[int, _Turn] = {}
        self._speech_end: dict[int, float] = {}
        self._echo: set[int] = set()
        self._first_audio: set[int] = set()
        self.counts = Counts()
        self.latencies_s: list[float] = []
        """User turns' latencies since the last :meth:`take_latencies`."""
        self.errors: list[str] = []
        self.lost: dict[int, str] = {}
        self.late = 0
        """Lost turns that finished after all (after the timeout)."""
        self.trail: deque[str] = deque(maxlen=60)
        """The latest events except stream ticks, one line each (printed when a step hangs)."""

    def on_event(self, event: Any) -> None:
        from edgevox.runtime.events import AgentStateEvent, ErrorEvent
        from edgevox.voice.events import (
            AudioDevice,
            FirstAudio,
            Interrupted,
            SpeechEnded,
            Stopped,
            TranscriptEvent,
            TurnDone,
            TurnStarted,
        )

        if not event.is_stream():  # skill feedback ticks and tokens would push everything else out
            self.trail.append(_describe(event))
        if not isinstance(
            event,
            (
                SpeechEnded,
                TranscriptEvent,
                TurnStarted,
                FirstAudio,
                TurnDone,
                Stopped,
                Interrupted,
                ErrorEvent,
                AudioDevice,
                AgentStateEvent,
            ),
        ):
            return  # tokens, chunks: the bulk of the traffic
        now = time.monotonic()
        with self._cond:
            c = self.counts
            turn_id = getattr(event, "turn_id", 0)
            if isinstance(event, SpeechEnded):
                c.utterances += 1
                if event.ignored:
                    self._echo.add(turn_id)
                else:
                    self._speech_end[turn_id] = event.last_voiced_at
            elif isinstance(event, TranscriptEvent):
                echo = turn_id in self._echo
                self._echo.discard(turn_id)
                end = self._speech_end.pop(turn_id, None)
                if event.stop_phrase:
                    pass  # never a turn: counted by Stopped
                elif echo:
                    c.echo_ignored += 1
                elif not event.text or not self._speakable(event.text):
                    c.empty += 1
                else:
                    origin = event.timestamp if event.origin == "text" or end is None else end
                    self._pending[turn_id] = _Turn(now, origin, event.origin, event.text)
                    c.submitted += 1
            elif isinstance(event, TurnStarted):
                if turn_id not in self._pending:  # an announcement or the stop's confirmation
                    self._pending[turn_id] = _Turn(now, event.timestamp, "say", event.text)
                    c.submitted += 1
            elif isinstance(event, FirstAudio):
                self._first_audio.add(turn_id)
                if len(self._first_audio) > 100:
                    self._first_audio.discard(min(self._first_audio))
                turn = self._pending.get(turn_id)
                if turn is not None and not turn.first_audio:
                    turn.first_audio = True
                    if turn.origin != "say":
                        self.latencies_s.append(event.timestamp - turn.origin_wall)
            elif isinstance(event, TurnDone):
                turn = self._pending.pop(turn_id, None)
                if turn is not None:
                    c.finished += 1
                    c.statuses[event.status] += 1
                    if turn_id in self.lost:
                        self.late += 1
                if event.status == "error":
                    self.errors.append(f"turn {turn_id} ended with an error: {event.error}")
            elif isinstance(event, Stopped):
                c.stops += 1
            elif isinstance(event, Interrupted):
                c.interrupted += 1
            elif isinstance(event, ErrorEvent):
                self.errors.append(f"ErrorEvent {event.where}: {event.error}")
            elif isinstance(event, AudioDevice):
                if event.state in ("lost", "failed"):
                    self.errors.append(f"audio device {event.state}: {event.error}")
            elif isinstance(event, AgentStateEvent) and event.state == "failed":
                self.errors.append(f"agent {event.agent} failed: {event.error}")
            # Bounded: ids of utterances that never got a transcript (an STT error) are dropped.
            if len(self._speech_end) > 100:
                self._speech_end.pop(next(iter(self._speech_end)))
            if len(self._echo) > 100:
                self._echo.clear()
            self._cond.notify_all()

    def wait_for(self, predicate: Any, timeout_s: float) -> bool:
        """Wait until ``predicate(ledger)`` holds (checked whenever an event arrives)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout=timeout_s)

    def played(self, turn_id: int) -> bool:
        """Whether the reply of ``turn_id`` (a recent one) has started playing."""
        return turn_id in self._first_audio

    def sweep(self) -> int:
        """Mark turns pending longer than the timeout as lost; returns the lost count."""
        now = time.monotonic()
        with self._cond:
            for turn_id, turn in self._pending.items():
                if turn_id not in self.lost and now - turn.submitted_at > self.turn_timeout_s:
                    self.lost[turn_id] = f"turn {turn_id} ({turn.origin}) {turn.text[:60]!r}"
            return len(self.lost)

    def take_latencies(self) -> list[float]:
        with self._cond:
            out, self.latencies_s = self.latencies_s, []
            return out

    def snapshot(self) -> tuple[Counts, int, int]:
        """(counts, errors so far, lost so far)."""
        with self._cond:
            c = self.counts
            copy = Counts(
                c.submitted,
                c.finished,
                Counter(c.statuses),
                c.stops,
                c.interrupted,
                c.utterances,
                c.echo_ignored,
                c.empty,
            )
            return copy, len(self.errors), len(self.lost)


def _describe(event: Any) -> str:
    """One short line for an event: clock, kind, turn, its main text or status."""
    parts = [f"{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}", type(event).__name__]
    turn_id = getattr(event, "turn_id", 0)
    if turn_id:
        parts.append(f"turn {turn_id}")
    for name in ("status", "state", "stop_phrase", "ignored", "name", "text", "error", "reason"):
        value = getattr(event, name, None)
        if value not in (None, "", False):
            parts.append(f"{name}={str(value)[:60]!r}")
    return " ".join(parts)
