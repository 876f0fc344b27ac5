"""Whether the robot is speaking and since when the user has been silent: what the delivery
strategies (:mod:`edgevox.orchestration.delivery`) wait on before speaking a background result.

Fed directly or by the voice loop's bus events (:meth:`VoiceActivityState.attach`, the topics
below). Time is injected (``clock``, monotonic seconds) so tests drive it without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

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
