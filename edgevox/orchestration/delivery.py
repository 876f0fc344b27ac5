"""Delivering background results on a voice channel without talking over anyone.

A result produced in the background (a delegation, an async supervisor) is
*submitted* to a :class:`DeliveryStrategy`, which decides when the sink (usually
"say this") gets it:

* :class:`Immediate` - at once, on the submitting thread.
* :class:`WaitForIdle` ``(buffer_s, timeout_s)`` - when the robot is not speaking
  and the user has been silent for ``buffer_s``; after ``timeout_s`` of waiting it
  delivers anyway (``timed_out=True`` in the events) so a result is never lost.
* :class:`Queued` ``(buffer_s)`` - batches results: everything submitted within
  ``buffer_s`` of the first pending result goes out together as one delivery.

Each delivery publishes :class:`~edgevox.orchestration.events.DeliveryBefore`
and :class:`~edgevox.orchestration.events.DeliveryAfter` (with the session id).

Time is injected (``clock``, monotonic seconds), and the decision is a pure
:meth:`DeliveryStrategy.pump` call, so tests drive it with a fake clock and never
sleep. In an application a :class:`DeliveryWorker` thread calls ``pump`` when
something changes (a submit, a voice event) or when the next deadline is due.

"Is the robot speaking / has the user been silent" comes from
:class:`VoiceActivityState`, fed by the voice loop's bus events (``attach``).
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edgevox.orchestration.events import DeliveryAfter, DeliveryBefore

Clock = Callable[[], float]

# Voice-loop topics (edgevox.voice.events) and what they mean for idleness.
USER_SPEECH_STARTED = ("voice.speech_started",)
USER_SPEECH_ENDED = ("voice.speech_ended",)
ROBOT_BUSY_STARTED = ("voice.turn_started", "voice.audio_out")
ROBOT_BUSY_ENDED = ("voice.turn_done",)


class VoiceActivityState:
    """Tracks whether the robot is speaking and since when the user has been silent.

    Fed either directly (``user_speech_started()`` ...) or by bus events through
    :meth:`attach`, on the publisher's thread. Thread-safe. Listeners registered with
    :meth:`add_listener` are called after every change (a DeliveryWorker wakes on them).
    "Robot busy" spans a whole reply turn (thinking and speaking), so a background
    result never interleaves with an answer being generated.
    """

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._user_speaking = False
        self._robot_busy = 0
        self._quiet_since = clock()
        self._listeners: list[Callable[[], None]] = []
        self._subs: list[Any] = []

    # -- feeding -----------------------------------------------------------------------------

    def user_speech_started(self) -> None:
        with self._lock:
            self._user_speaking = True
        self._changed()

    def user_speech_ended(self) -> None:
        with self._lock:
            self._user_speaking = False
            self._quiet_since = self._clock()
        self._changed()

    def robot_started(self) -> None:
        with self._lock:
            self._robot_busy = 1
        self._changed()

    def robot_finished(self) -> None:
        with self._lock:
            self._robot_busy = 0
            self._quiet_since = self._clock()
        self._changed()

    def attach(self, bus: Any) -> None:
        """Follow the voice loop's events on ``bus`` (sync subscriptions; see the module topics)."""
        table: Sequence[tuple[tuple[str, ...], Callable[[], None]]] = (
            (USER_SPEECH_STARTED, self.user_speech_started),
            (USER_SPEECH_ENDED, self.user_speech_ended),
            (ROBOT_BUSY_STARTED, self.robot_started),
            (ROBOT_BUSY_ENDED, self.robot_finished),
        )
        for topics, action in table:
            for topic in topics:
                self._subs.append(bus.subscribe(topic, lambda _event, a=action: a(), name=f"voice-activity:{topic}"))

    def detach(self) -> None:
        for sub in self._subs:
            sub.close()
        self._subs = []

    # -- reading -----------------------------------------------------------------------------

    @property
    def robot_speaking(self) -> bool:
        return self._robot_busy > 0

    @property
    def user_speaking(self) -> bool:
        return self._user_speaking

    def silent_for_s(self, now: float | None = None) -> float:
        """Seconds since both user and robot went quiet; 0 while either is active."""
        with self._lock:
            if self._user_speaking or self._robot_busy:
                return 0.0
            return max(0.0, (self._clock() if now is None else now) - self._quiet_since)

    def is_idle(self, buffer_s: float, now: float | None = None) -> bool:
        """True when neither side is speaking and both have been quiet for ``buffer_s``."""
        with self._lock:
            if self._user_speaking or self._robot_busy:
                return False
            return (self._clock() if now is None else now) - self._quiet_since >= buffer_s

    def add_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(fn)

        def remove() -> None:
            with self._lock:
                if fn in self._listeners:
                    self._listeners.remove(fn)

        return remove

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for fn in listeners:
            fn()


@dataclass
class DeliveryItem:
    text: str
    session_id: str | None = None
    source: str = ""
    submitted_at: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


Sink = Callable[[list[DeliveryItem]], Any]


class DeliveryStrategy(ABC):
    """Decides when submitted results reach the sink. Thread-safe.

    ``sink(items)`` runs on whichever thread calls :meth:`pump` (or :meth:`submit`, for
    Immediate). ``publish(event)`` receives the before/after events.
    """

    name = "delivery"

    def __init__(
        self, sink: Sink | None = None, *, clock: Clock = time.monotonic, publish: Callable[[Any], Any] | None = None
    ) -> None:
        self.sink = sink or (lambda _items: None)
        self.clock = clock
        self.publish = publish or (lambda _event: None)
        self._lock = threading.Lock()
        self._pending: list[DeliveryItem] = []
        self._wake: Callable[[], None] = lambda: None
        self.delivered: int = 0

    def submit(self, text: str, *, session_id: str | None = None, source: str = "", **meta: Any) -> None:
        item = DeliveryItem(text, session_id, source, self.clock(), dict(meta))
        with self._lock:
            self._pending.append(item)
        self._wake()
        self.pump()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def pump(self) -> int:
        """Deliver whatever is due now; returns the number of items delivered."""
        now = self.clock()
        with self._lock:
            batches = self._due(now)
        count = 0
        for items, timed_out in batches:
            self._deliver(items, now, timed_out)
            count += len(items)
        return count

    @abstractmethod
    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        """Remove and return the batches due now (``(items, timed_out)``); called under the lock."""

    def next_due_s(self) -> float | None:
        """Seconds until something may become due by time alone (None = nothing pending)."""
        return None

    def _deliver(self, items: list[DeliveryItem], now: float, timed_out: bool) -> None:
        texts = [i.text for i in items]
        session = items[0].session_id
        waited = now - min(i.submitted_at for i in items)
        self.publish(
            DeliveryBefore(
                source=f"delivery:{self.name}",
                session_id=session,
                strategy=self.name,
                texts=texts,
                waited_s=waited,
                timed_out=timed_out,
            )
        )
        try:
            self.sink(items)
        except Exception as exc:  # noqa: BLE001 - a failing sink is reported in the after event
            self.publish(
                DeliveryAfter(
                    source=f"delivery:{self.name}",
                    session_id=session,
                    strategy=self.name,
                    texts=texts,
                    ok=False,
                    error=repr(exc),
                )
            )
            return
        self.delivered += len(items)
        self.publish(DeliveryAfter(source=f"delivery:{self.name}", session_id=session, strategy=self.name, texts=texts))


class Immediate(DeliveryStrategy):
    """Deliver each result at once, on the submitting thread."""

    name = "immediate"

    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        items, self._pending = self._pending, []
        return [([i], False) for i in items]


class WaitForIdle(DeliveryStrategy):
    """Deliver when the robot is quiet and the user has been silent for ``buffer_s``,
    or after ``timeout_s`` of waiting at the latest."""

    name = "wait_for_idle"

    def __init__(
        self, voice: VoiceActivityState | None = None, *, buffer_s: float = 1.0, timeout_s: float = 30.0, **kw: Any
    ) -> None:
        super().__init__(**kw)
        if buffer_s < 0 or timeout_s <= 0:
            raise ValueError(
                f"WaitForIdle(buffer_s={buffer_s}, timeout_s={timeout_s}): need buffer_s >= 0 and timeout_s > 0"
            )
        self.voice = voice or VoiceActivityState(clock=self.clock)
        self.buffer_s = buffer_s
        self.timeout_s = timeout_s

    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        if not self._pending:
            return []
        idle = self.voice.is_idle(self.buffer_s, now)
        out, keep = [], []
        for item in self._pending:
            if idle:
                out.append(([item], False))
            elif now - item.submitted_at >= self.timeout_s:
                out.append(([item], True))
            else:
                keep.append(item)
        self._pending = keep
        return out

    def next_due_s(self) -> float | None:
        with self._lock:
            if not self._pending:
                return None
            now = self.clock()
            oldest = min(i.submitted_at for i in self._pending)
            to_timeout = max(0.0, oldest + self.timeout_s - now)
        silent = self.voice.silent_for_s(now)
        if self.voice.robot_speaking or self.voice.user_speaking:
            return to_timeout  # a voice event will wake the worker earlier
        return min(to_timeout, max(0.0, self.buffer_s - silent))


class Queued(DeliveryStrategy):
    """Batch results: those submitted within ``buffer_s`` of the first pending one go out together."""

    name = "queued"

    def __init__(self, *, buffer_s: float = 2.0, **kw: Any) -> None:
        super().__init__(**kw)
        if buffer_s < 0:
            raise ValueError(f"Queued(buffer_s={buffer_s}): must be >= 0")
        self.buffer_s = buffer_s

    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        if not self._pending or now - self._pending[0].submitted_at < self.buffer_s:
            return []
        items, self._pending = self._pending, []
        return [(items, False)]

    def next_due_s(self) -> float | None:
        with self._lock:
            if not self._pending:
                return None
            return max(0.0, self._pending[0].submitted_at + self.buffer_s - self.clock())


class DeliveryWorker:
    """A thread (``edgevox-delivery``) that pumps a strategy when woken or when due.

    Woken by submits and by voice-state changes; otherwise sleeps on a condition until
    the strategy's next deadline. ``stop(timeout_s)`` returns whether the thread ended.
    """

    def __init__(self, strategy: DeliveryStrategy, *, voice: VoiceActivityState | None = None) -> None:
        self.strategy = strategy
        self._cond = threading.Condition()
        self._stopping = False
        self._woken = False
        self._thread: threading.Thread | None = None
        strategy._wake = self.wake
        self._remove_listener = voice.add_listener(self.wake) if voice is not None else (lambda: None)

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify()

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="edgevox-delivery", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                timeout = self.strategy.next_due_s()
                if timeout is not None:
                    timeout = max(timeout, 0.005)  # never spin on a deadline that is due "now"
                if not self._woken:
                    self._cond.wait(timeout)
                self._woken = False
                if self._stopping:
                    return
            self.strategy.pump()

    def stop(self, timeout_s: float = 2.0) -> bool:
        self._remove_listener()
        self.strategy._wake = lambda: None
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is None:
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()
