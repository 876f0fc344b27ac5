"""Mailbox: the bounded queue behind every queued subscriber and BackgroundAgent.

Two lanes: control events (``Event.control``: interrupt, stop, shutdown) first, never
dropped by an overflow policy; then data events in FIFO order, at most ``max_queue``.

Overflow policies: ``drop_oldest`` (evict the oldest data event), ``drop_new`` (discard
the incoming one), ``block`` (wait up to ``block_timeout_s`` for room, then discard the
incoming one). Every discard is counted in ``dropped`` under the mailbox lock (exact
under concurrent publishers).

Stream events (``Event.is_stream()``: reply deltas, tokens, skill feedback ticks) share
the data lane's order and bound but always yield: when the mailbox is full, an incoming
data event evicts the oldest queued *stream* event if there is one (whatever the
policy), and an incoming stream event may evict only another stream event
(``drop_oldest``), else it is discarded (``drop_new``) or waits (``block``). So a
500-token reply never pushes a sensor alert out of a ``"*"`` subscriber's 32-slot
mailbox. Stream discards are counted apart, in ``stream_dropped``: ``dropped`` counts
real events lost.

Rejected alternatives: leaving stream events out of ``"*"`` unless asked for - a UI or
a logger subscribed to ``"*"`` would silently stop seeing the reply being generated;
a third lane of its own for them - it would reorder a reply's last delta after the
``AgentReply`` that follows it.

Sizes and waits are checked (``runtime/limits.py``): ``max_queue`` is a whole number
>= 1, ``block_timeout_s`` a finite number of seconds, and ``get(timeout)`` rejects
``nan`` and clamps ``inf``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Literal

from edgevox.runtime.events import Event
from edgevox.runtime.limits import count, duration, optional_wait_s

Overflow = Literal["drop_oldest", "drop_new", "block"]
OVERFLOW_POLICIES = ("drop_oldest", "drop_new", "block")


class Mailbox:
    """A bounded two-lane queue: control events first, then data events in FIFO order.

    Thread-safe. ``put`` applies the overflow policy (stream events yield to the other data
    events, see the module docstring); ``get`` blocks up to a timeout. ``dropped`` counts
    data events discarded, ``stream_dropped`` stream events discarded.
    """

    def __init__(self, max_queue: int = 1024, overflow: Overflow = "drop_oldest", block_timeout_s: float = 0.1):
        self.max_queue = count("max_queue", max_queue, owner="Mailbox", minimum=1)
        if overflow not in OVERFLOW_POLICIES:
            raise ValueError(f"overflow = {overflow!r}: must be one of {', '.join(OVERFLOW_POLICIES)}")
        self.overflow = overflow
        self.block_timeout_s = duration("block_timeout_s", block_timeout_s, owner="Mailbox")
        self.dropped = 0
        self.stream_dropped = 0
        self._data: deque[Event] = deque()
        self._n_stream = 0  # stream events among _data
        self._control: deque[Event] = deque()
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._closed = False

    def put(self, event: Event) -> bool:
        """Enqueue; returns False if the event was discarded by the overflow policy."""
        with self._lock:
            if self._closed:
                return False
            if event.control:
                self._control.append(event)
                self._not_empty.notify()
                return True
            data = self._data
            stream = event.is_stream()
            if len(data) >= self.max_queue and not self._make_room_locked(stream):
                return False
            data.append(event)
            if stream:
                self._n_stream += 1
            self._not_empty.notify()
            return True

    def _make_room_locked(self, stream: bool) -> bool:
        """The mailbox is full: free a slot for an incoming (stream) data event, or count the
        incoming one as dropped and return False. Stream events yield (module docstring)."""
        if self._n_stream and (not stream or self.overflow == "drop_oldest"):
            self._evict_stream_locked()
            return True
        if self.overflow == "drop_oldest" and not stream:
            self._data.popleft()
            self.dropped += 1
            return True
        if self.overflow == "block":
            deadline = time.monotonic() + self.block_timeout_s
            while len(self._data) >= self.max_queue and not self._closed:
                if self._n_stream and not stream:
                    self._evict_stream_locked()  # one arrived while we waited
                    return True
                left = deadline - time.monotonic()
                if (left <= 0 or not self._not_full.wait(left)) and len(self._data) >= self.max_queue:
                    break
            else:
                return not self._closed
        if stream:
            self.stream_dropped += 1
        else:
            self.dropped += 1
        return False

    def _evict_stream_locked(self) -> None:
        data = self._data
        index = next(i for i, queued in enumerate(data) if queued.is_stream())
        del data[index]
        self._n_stream -= 1
        self.stream_dropped += 1

    def _took_locked(self, event: Event) -> Event:
        if self._n_stream and event.is_stream():
            self._n_stream -= 1
        return event

    def get(self, timeout: float | None = None) -> Event | None:
        """Next event (control first), or None on timeout or when closed and empty.

        ``timeout``: seconds to wait (None = until an event or close; ``inf`` is clamped)."""
        timeout = optional_wait_s("timeout", timeout, owner="Mailbox.get")
        with self._lock:
            while not self._control and not self._data:
                if self._closed:
                    return None
                if not self._not_empty.wait(timeout):
                    return None
            if self._control:
                return self._control.popleft()
            event = self._took_locked(self._data.popleft())
            self._not_full.notify()
            return event

    def get_batch(self, max_items: int = 256, timeout: float | None = None) -> list[Event]:
        """Up to ``max_items`` events (control first) in one lock acquisition; [] on timeout."""
        max_items = count("max_items", max_items, owner="Mailbox.get_batch", minimum=1)
        timeout = optional_wait_s("timeout", timeout, owner="Mailbox.get_batch")
        with self._lock:
            while not self._control and not self._data:
                if self._closed or not self._not_empty.wait(timeout):
                    return []
            out: list[Event] = []
            while self._control and len(out) < max_items:
                out.append(self._control.popleft())
            data = self._data
            while data and len(out) < max_items:
                out.append(self._took_locked(data.popleft()))
            self._not_full.notify_all()
            return out

    def take_control(self) -> list[Event]:
        """Remove and return only the queued control events."""
        with self._lock:
            out = list(self._control)
            self._control.clear()
            return out

    def drain(self) -> list[Event]:
        """Remove and return everything queued (control first)."""
        with self._lock:
            out = list(self._control) + list(self._data)
            self._control.clear()
            self._data.clear()
            self._n_stream = 0
            self._not_full.notify_all()
            return out

    def clear_data(self) -> int:
        """Drop queued data events (keep control); returns how many were dropped."""
        with self._lock:
            n = len(self._data)
            self._data.clear()
            self._n_stream = 0
            self._not_full.notify_all()
            return n

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._not_empty.notify_all()
            self._not_full.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        with self._lock:
            return len(self._data) + len(self._control)
