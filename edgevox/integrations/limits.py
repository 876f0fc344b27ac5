"""Limits on what peers may send a bridge, and the counters that say what was refused.

Everything a bridge receives from another process is untrusted: it may be huge, deeply
nested, arrive in a flood, or carry a timeout meant to break a timer. The bridges share
these pieces:

* :class:`BridgeCounters` - named counters (thread-safe) with :meth:`~BridgeCounters.wait_for`,
  so nothing a bridge drops vanishes uncounted and tests wait on a condition, not a sleep.
* :class:`BadInputLog` - one clear log line per kind of bad input (what was wrong, what to
  do), at most one per ``interval_s`` per kind, with the count of the lines it held back.
* :class:`TokenBucket` - a per-key rate limit (``rate_per_s``, burst ``burst``).
* :class:`BridgeInbox` - received events waiting for the local bus. Both lanes are bounded:
  data by count and bytes (oldest dropped), control by kind (a second ``control.stop``
  while one is still waiting adds nothing: the waiting one stops the robot anyway).
* :func:`peer_timeout` - a peer-chosen timeout checked and clamped before any timer sees it.

Rejected alternative: a queue bounded by count alone - 10,000 events of 256 KB each is
2.5 GB, so the data lane is also bounded in bytes.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import Any

from edgevox.runtime.events import Event

LOSSES = (
    "data_lost",
    "mailbox_dropped",
    "inbox_dropped",
    "outbox_dropped",
    "rate_limited",
    "control_coalesced",
    "control_dropped",
    "send_errors",
    "stops_late",
    "stops_unreachable",
)
"""Counters that mean something was lost, late or refused for load, whichever bridge counts them
(the dashboard shows the ones that are not zero)."""


class BridgeCounters:
    """Named, monotonically increasing counters shared by a bridge's threads.

    ``counters["oversized"]`` reads one (0 if never counted); :meth:`snapshot` copies all.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._values: dict[str, int] = dict.fromkeys(names, 0)
        self._cond = threading.Condition()

    def add(self, name: str, n: int = 1) -> None:
        with self._cond:
            self._values[name] = self._values.get(name, 0) + n
            self._cond.notify_all()

    def __getitem__(self, name: str) -> int:
        with self._cond:
            return self._values.get(name, 0)

    def snapshot(self) -> dict[str, int]:
        with self._cond:
            return dict(self._values)

    def losses(self) -> dict[str, int]:
        """The :data:`LOSSES` that are not zero."""
        with self._cond:
            return {name: self._values[name] for name in LOSSES if self._values.get(name)}

    def wait_for(self, predicate: Callable[[dict[str, int]], bool], timeout_s: float) -> bool:
        """Block until ``predicate(snapshot)`` holds or ``timeout_s`` passes; returns whether it holds."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self._values), timeout_s)

    def __repr__(self) -> str:
        return f"BridgeCounters({self.snapshot()})"


class BadInputLog:
    """Log one warning per kind of bad input at most every ``interval_s`` seconds.

    A peer that floods bad messages must not flood the log too; the line after a quiet
    period says how many similar lines were held back.
    """

    def __init__(self, logger: logging.Logger, prefix: str, interval_s: float = 5.0) -> None:
        self._log = logger
        self._prefix = prefix
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, reason: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(reason)
            if last is not None and now - last < self._interval_s:
                self._held[reason] = self._held.get(reason, 0) + 1
                return
            self._last[reason] = now
            held = self._held.pop(reason, 0)
            if len(self._last) > 256:  # reasons are a small fixed set; never let this grow
                self._last = {reason: now}
        more = f" ({held} similar messages not logged in the last {self._interval_s:.0f} s)" if held else ""
        self._log.warning("%s: %s%s", self._prefix, message, more)


class TokenBucket:
    """At most ``burst`` messages at once and ``rate_per_s`` on average, per key."""

    def __init__(self, rate_per_s: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.rate_per_s = float(rate_per_s)
        self.burst = float(burst if burst is not None else max(1.0, rate_per_s))
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate_per_s)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return False
            self._buckets[key] = (tokens - 1.0, now)
            return True


class BridgeInbox:
    """Received events waiting for the bridge's worker to publish them on the local bus.

    * Data lane: FIFO, at most ``max_items`` events and ``max_bytes`` of received payload;
      the oldest are dropped (``counters["inbox_dropped"]``).
    * Control lane: at most one waiting event per control kind, served first. A control event
      whose kind is already waiting is dropped and counted (``counters["control_coalesced"]``):
      the waiting one has the same effect.

    ``put`` never blocks (it runs on Zenoh's threads); ``get`` blocks up to a timeout.
    """

    def __init__(self, max_items: int, max_bytes: int, counters: BridgeCounters) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.counters = counters
        self._data: deque[tuple[Event, int]] = deque()
        self._data_bytes = 0
        self._control: OrderedDict[str, Event] = OrderedDict()
        self._cond = threading.Condition()
        self._closed = False

    def put(self, event: Event, nbytes: int = 0) -> bool:
        """Enqueue; False if the event was coalesced or the inbox is closed."""
        with self._cond:
            if self._closed:
                return False
            if event.control:
                if event.kind in self._control:
                    self.counters.add("control_coalesced")
                    return False
                self._control[event.kind] = event
            else:
                self._data.append((event, nbytes))
                self._data_bytes += nbytes
                dropped = 0
                while len(self._data) > 1 and (len(self._data) > self.max_items or self._data_bytes > self.max_bytes):
                    _, size = self._data.popleft()
                    self._data_bytes -= size
                    dropped += 1
                if dropped:
                    self.counters.add("inbox_dropped", dropped)
            self._cond.notify()
            return True

    def get(self, timeout: float | None = None) -> Event | None:
        """The next event (control first), or None on timeout or once closed and empty."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._control or self._data or self._closed, timeout):
                return None
            if self._control:
                return self._control.popitem(last=False)[1]
            if self._data:
                event, size = self._data.popleft()
                self._data_bytes -= size
                return event
            return None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._data) + len(self._control)

    @property
    def queued_bytes(self) -> int:
        with self._cond:
            return self._data_bytes


def peer_timeout(value: Any, default_s: float, max_s: float) -> float:
    """A timeout a peer asked for, in seconds: ``default_s`` if absent, clamped to ``max_s``.

    Raises ValueError naming the value when it is not a finite number > 0 (``True``, a string,
    NaN, infinity, 0 or less): a timer must never see it.
    """
    if value is None:
        return min(default_s, max_s)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"timeout_s = {value!r}: must be a finite number of seconds > 0")
    return min(float(value), max_s)
