"""Per-turn latency, recorded by observing the bus (no timing calls inside the loop's logic).

:class:`LatencyObserver` watches ``voice.*`` events and, for each turn, records
the wall-clock moments:

* ``speech_end``   - end of the user's last voiced frame (``SpeechEnded.last_voiced_at``)
* ``transcript``   - the transcript was published
* ``first_token``  - the agent's first text delta
* ``first_chunk``  - the chunker released the first piece for TTS
* ``first_audio``  - the first reply sample left the output (``FirstAudio``)

and derives the stages ``speech_end->transcript`` ... and the total
``speech_end->first_audio`` (what the user feels). Barge-in (``Interrupted.audio_stop_s``)
and safety stop (``Stopped.cancel_s``) figures are collected alongside.
:meth:`LatencyObserver.summary` gives count / p50 / p95 / max per measure.

Threading: :meth:`on_event` runs on whichever thread publishes (it is a bus
observer); a lock guards the records, so :meth:`summary` may be called from any thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from edgevox.runtime.events import Event
from edgevox.voice.events import (
    Chunk,
    FirstAudio,
    Interrupted,
    SpeechEnded,
    Stopped,
    Token,
    TranscriptEvent,
    TurnDone,
    VoiceEvent,
)

MARKS = ("speech_end", "transcript", "first_token", "first_chunk", "first_audio")
STAGES = tuple(f"{a}->{b}" for a, b in zip(MARKS, MARKS[1:], strict=False)) + ("speech_end->first_audio",)
_MARK_OF: tuple[tuple[type[VoiceEvent], str], ...] = (
    (TranscriptEvent, "transcript"),
    (Token, "first_token"),
    (Chunk, "first_chunk"),
    (FirstAudio, "first_audio"),
)


def latency_mark(event: Event) -> tuple[str, float] | None:
    """The latency mark ``event`` sets on its turn, as ``(mark, wall-clock time)``, or None.

    The one mapping from voice events to :data:`MARKS`, shared by :class:`LatencyObserver`, the
    dashboard's conversation and the ROS 2 diagnostics (each keeps the first of a turn's marks).
    The end of speech is the end of the last voiced frame (the event's own time if not given)."""
    if isinstance(event, SpeechEnded):
        return "speech_end", event.last_voiced_at or event.timestamp
    for cls, mark in _MARK_OF:
        if isinstance(event, cls):
            return mark, event.timestamp
    return None


@dataclass
class TurnLatency:
    turn_id: int
    marks: dict[str, float] = field(default_factory=dict)
    status: str = ""

    def stage(self, name: str) -> float | None:
        """Seconds between the two marks of ``"a->b"``, or None if either is missing."""
        a, b = name.split("->")
        if a in self.marks and b in self.marks:
            return self.marks[b] - self.marks[a]
        return None


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100) of a non-empty list."""
    if not values:
        raise ValueError("percentile of an empty list")
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


def summarize(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95), "max": max(values)}


class LatencyObserver:
    """Records turn latencies from bus events; attach with :meth:`attach`, detach with :meth:`close`."""

    def __init__(self, max_turns: int = 1000) -> None:
        self.max_turns = max_turns
        self._lock = threading.Lock()
        self._turns: OrderedDict[int, TurnLatency] = OrderedDict()
        # The last ``max_turns`` of each, like the turns: an observer kept for a robot's life
        # must not grow with every barge-in and stop.
        self.barge_in_s: deque[float] = deque(maxlen=max_turns)
        self.stop_s: deque[float] = deque(maxlen=max_turns)
        self._sub = None

    def attach(self, bus) -> LatencyObserver:  # noqa: ANN001 - EventBus, imported lazily to avoid a cycle
        self._sub = bus.add_observer(self.on_event, name="voice-latency")
        return self

    def close(self) -> None:
        if self._sub is not None:
            self._sub.close()
            self._sub = None

    def _turn(self, turn_id: int) -> TurnLatency:
        rec = self._turns.get(turn_id)
        if rec is None:
            rec = self._turns[turn_id] = TurnLatency(turn_id)
            while len(self._turns) > self.max_turns:  # bounded: never grows without limit
                self._turns.popitem(last=False)
        return rec

    def on_event(self, event: Event) -> None:
        if not isinstance(event, VoiceEvent) or not event.turn_id:
            return
        turn_id = event.turn_id
        mark = latency_mark(event)
        with self._lock:
            if mark is not None:
                self._turn(turn_id).marks.setdefault(*mark)
            elif isinstance(event, TurnDone):
                self._turn(turn_id).status = event.status
            elif isinstance(event, Interrupted):
                self.barge_in_s.append(event.audio_stop_s)
            elif isinstance(event, Stopped):
                self.stop_s.append(event.cancel_s)

    def turns(self) -> list[TurnLatency]:
        with self._lock:
            return [TurnLatency(t.turn_id, dict(t.marks), t.status) for t in self._turns.values()]

    def stage_values(self, stage: str, *, only_complete: bool = True, turn_ids=None) -> list[float]:  # noqa: ANN001
        """Values of one stage over the recorded turns (``only_complete``: turns with every mark;
        ``turn_ids``: only these turns)."""
        out = []
        for t in self.turns():
            if turn_ids is not None and t.turn_id not in turn_ids:
                continue
            if only_complete and not all(m in t.marks for m in MARKS):
                continue
            value = t.stage(stage)
            if value is not None:
                out.append(value)
        return out

    def summary(self, turn_ids=None) -> dict[str, dict[str, float]]:  # noqa: ANN001
        """count/p50/p95/max per stage (optionally over ``turn_ids`` only), plus barge-in and stop."""
        result = {stage: summarize(self.stage_values(stage, turn_ids=turn_ids)) for stage in STAGES}
        with self._lock:
            result["barge_in_audio_stop"] = summarize(list(self.barge_in_s))
            result["stop_cancel"] = summarize(list(self.stop_s))
        return result
