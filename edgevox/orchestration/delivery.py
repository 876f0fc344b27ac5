"""Delivering background results on a voice channel without talking over anyone.

A result produced in the background (a delegation, an async supervisor) is
*submitted* to a :class:`DeliveryStrategy`, which decides when the sink (usually
"say this") gets it (RoomKit's strategies, same names and meaning):

* :class:`Immediate` - at once, on the submitting thread.
* :class:`WaitForIdle` ``(buffer_s, timeout_s)`` - when the robot is not speaking
  and the user has been silent for ``buffer_s``; after ``timeout_s`` of waiting it
  delivers anyway (``timed_out=True`` in the events) so a result is never lost.
* :class:`Queued` ``(buffer_s, timeout_s)`` - waits for idle like WaitForIdle and
  delivers everything that piled up while it waited as one batch.

RoomKit's spellings are accepted: ``buffer=`` for ``buffer_s`` and ``playback_timeout=``
for ``timeout_s``; :func:`resolve_delivery` turns ``"immediate"`` / ``"wait_for_idle"`` /
``"queued"`` into a strategy and refuses anything else with one line.

Each delivery publishes :class:`~edgevox.orchestration.events.DeliveryBefore`
and :class:`~edgevox.orchestration.events.DeliveryAfter` (with the session id).
No result is lost: when there is no sink or the sink raises, the texts are logged, the
after event says so (``ok=False``, with the texts) and the items are kept in
:attr:`DeliveryStrategy.undelivered` (``take_undelivered(session_id)``; a Supervisor
says them at the start of that session's next turn).

Time is injected (``clock``, monotonic seconds), and the decision is a pure
:meth:`DeliveryStrategy.pump` call, so tests drive it with a fake clock and never
sleep. In an application a :class:`DeliveryWorker` thread calls ``pump`` when
something changes (a submit, a voice event) or when the next deadline is due.

"Is the robot speaking / has the user been silent" comes from
:class:`~edgevox.orchestration.voice_activity.VoiceActivityState` (importable from here too),
fed by the voice loop's bus events (``attach``).
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from edgevox.errors import ArgumentError
from edgevox.orchestration.events import DeliveryAfter, DeliveryBefore
from edgevox.orchestration.voice_activity import Clock, VoiceActivityState

__all__ = [
    "DELIVERY_STRATEGIES",
    "Clock",
    "DeliveryItem",
    "DeliveryStrategy",
    "DeliveryWorker",
    "Immediate",
    "Queued",
    "Sink",
    "VoiceActivityState",
    "WaitForIdle",
    "resolve_delivery",
]

log = logging.getLogger(__name__)


@dataclass
class DeliveryItem:
    text: str
    session_id: str | None = None
    source: str = ""
    submitted_at: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


Sink = Callable[[list[DeliveryItem]], Any]

MAX_UNDELIVERED = 50
"""Undelivered items kept at most (the oldest go first, logged)."""


def _alias(kind: str, value: float | None, alias: float | None, names: tuple[str, str]) -> float | None:
    """``value``, or RoomKit's spelling ``alias`` when given (both given: an error)."""
    if alias is None:
        return value
    if value is not None:
        raise ArgumentError(f"{kind}: give {names[0]}= or {names[1]}= (RoomKit's spelling), not both")
    return alias


class DeliveryStrategy(ABC):
    """Decides when submitted results reach the sink. Thread-safe.

    ``sink(items)`` runs on whichever thread calls :meth:`pump` (or :meth:`submit`, for
    Immediate). ``publish(event)`` receives the before/after events. A strategy without a
    sink (or whose sink raises) keeps what it could not deliver in :attr:`undelivered`.
    """

    name = "delivery"

    def __init__(
        self, sink: Sink | None = None, *, clock: Clock = time.monotonic, publish: Callable[[Any], Any] | None = None
    ) -> None:
        self.sink = sink
        self.clock = clock
        self.publish = publish or (lambda _event: None)
        self._lock = threading.Lock()
        self._pending: list[DeliveryItem] = []
        self._undelivered: list[DeliveryItem] = []
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

    @property
    def undelivered(self) -> list[DeliveryItem]:
        """Items that reached no listener (no sink, or the sink raised), oldest first."""
        with self._lock:
            return list(self._undelivered)

    def take_undelivered(self, session_id: str | None = None, *, pending: bool = False) -> list[DeliveryItem]:
        """Remove and return the undelivered items (of ``session_id`` only, when given), oldest
        first; with ``pending`` also those still waiting (for a caller that says them itself)."""

        def mine(item: DeliveryItem) -> bool:
            return session_id is None or item.session_id == session_id

        with self._lock:
            taken = [i for i in self._undelivered if mine(i)]
            self._undelivered = [i for i in self._undelivered if not mine(i)]
            if pending:
                taken += [i for i in self._pending if mine(i)]
                self._pending = [i for i in self._pending if not mine(i)]
        return taken

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
        source = f"delivery:{self.name}"
        self.publish(
            DeliveryBefore(
                source=source, session_id=session, strategy=self.name, texts=texts, waited_s=waited, timed_out=timed_out
            )
        )
        error = ""
        if self.sink is None:
            error = "no sink to deliver to (give the delivery strategy a sink)"
        else:
            try:
                self.sink(items)
            except Exception as exc:  # noqa: BLE001 - a failing sink is reported, its items kept
                error = f"the sink raised {type(exc).__name__}: {exc}"
        if error:
            self._keep(items, error)
            self.publish(
                DeliveryAfter(source=source, session_id=session, strategy=self.name, texts=texts, ok=False, error=error)
            )
            return
        self.delivered += len(items)
        self.publish(DeliveryAfter(source=source, session_id=session, strategy=self.name, texts=texts))

    def _keep(self, items: list[DeliveryItem], error: str) -> None:
        for item in items:
            log.warning("%s delivery failed (%s); kept as undelivered: %r", self.name, error, item.text)
        with self._lock:
            self._undelivered.extend(items)
            dropped = self._undelivered[:-MAX_UNDELIVERED]
            self._undelivered = self._undelivered[-MAX_UNDELIVERED:]
        for item in dropped:
            log.error("%s delivery: more than %d undelivered items, dropped %r", self.name, MAX_UNDELIVERED, item.text)


class Immediate(DeliveryStrategy):
    """Deliver each result at once, on the submitting thread (may talk over the user)."""

    name = "immediate"

    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        items, self._pending = self._pending, []
        return [([i], False) for i in items]


class WaitForIdle(DeliveryStrategy):
    """Deliver when the robot is quiet and the user has been silent for ``buffer_s``,
    or after ``timeout_s`` of waiting at the latest (RoomKit: ``buffer``, ``playback_timeout``)."""

    name = "wait_for_idle"

    def __init__(
        self,
        voice: VoiceActivityState | None = None,
        *,
        buffer_s: float | None = None,
        timeout_s: float | None = None,
        buffer: float | None = None,
        playback_timeout: float | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        kind = type(self).__name__
        given_buffer = _alias(kind, buffer_s, buffer, ("buffer_s", "buffer"))
        given_timeout = _alias(kind, timeout_s, playback_timeout, ("timeout_s", "playback_timeout"))
        buffer_s = 1.0 if given_buffer is None else given_buffer
        timeout_s = 30.0 if given_timeout is None else given_timeout
        if buffer_s < 0 or timeout_s <= 0:
            raise ArgumentError(
                f"{kind}(buffer_s={buffer_s}, timeout_s={timeout_s}): need buffer_s >= 0 and timeout_s > 0"
            )
        self.voice = voice or VoiceActivityState(clock=self.clock)
        self.buffer_s = buffer_s
        self.timeout_s = timeout_s

    @property
    def buffer(self) -> float:
        """RoomKit's name for :attr:`buffer_s`."""
        return self.buffer_s

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


class Queued(WaitForIdle):
    """Wait for idle like :class:`WaitForIdle` (never speaks while the user or the robot is
    talking) and deliver everything that piled up meanwhile as one batch; after ``timeout_s``
    of waiting the batch goes out anyway (``timed_out``)."""

    name = "queued"

    def _due(self, now: float) -> list[tuple[list[DeliveryItem], bool]]:
        if not self._pending:
            return []
        waited = now - self._pending[0].submitted_at
        if self.voice.is_idle(self.buffer_s, now):
            timed_out = False
        elif waited >= self.timeout_s:
            timed_out = True
        else:
            return []
        items, self._pending = self._pending, []
        return [(items, timed_out)]


DELIVERY_STRATEGIES: dict[str, type[DeliveryStrategy]] = {
    "immediate": Immediate,
    "wait_for_idle": WaitForIdle,
    "queued": Queued,
}


def resolve_delivery(spec: DeliveryStrategy | str | None, **kw: Any) -> DeliveryStrategy | None:
    """A delivery strategy from an instance (returned as is), None, or RoomKit's string
    shorthand (``"immediate"``, ``"wait_for_idle"``, ``"queued"``; ``kw`` go to its class).
    Anything else raises :class:`~edgevox.errors.ArgumentError` in one line."""
    if spec is None or isinstance(spec, DeliveryStrategy):
        return spec
    if isinstance(spec, str) and spec in DELIVERY_STRATEGIES:
        return DELIVERY_STRATEGIES[spec](**kw)
    raise ArgumentError(
        f"delivery {spec!r}: use a DeliveryStrategy (Immediate(), WaitForIdle(), Queued()) "
        f"or one of {', '.join(map(repr, DELIVERY_STRATEGIES))}"
    )


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
