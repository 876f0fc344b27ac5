"""One timer thread for many deadlines (instead of one ``threading.Timer`` per request).

A :class:`TimerWheel` keeps a heap of ``(deadline, seq, callback)`` and one
lazily started daemon thread (``edgevox-timer-<name>``) that sleeps on a
condition until the earliest deadline, then runs every due callback *on that
thread*, outside the lock. Callbacks must be quick (they resolve a future,
delete a key); one that raises is passed to ``on_error`` and never stops the
others. Cancelling a timer is O(1) (the entry is marked dead and skipped).

The clock is injectable. With a fake clock, tests call :meth:`run_due` themselves
instead of relying on the thread, so window edges are exact.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any


class TimerHandle:
    """Returned by :meth:`TimerWheel.call_at`; ``cancel()`` prevents the callback."""

    __slots__ = ("deadline", "callback", "cancelled")

    def __init__(self, deadline: float, callback: Callable[[], Any]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TimerWheel:
    """A heap of deadlines served by one thread. Thread-safe."""

    def __init__(
        self,
        name: str = "timers",
        *,
        clock: Callable[[], float] = time.monotonic,
        on_error: Callable[[BaseException], None] | None = None,
        start_thread: bool = True,
    ) -> None:
        self.name = name
        self.clock = clock
        self.on_error = on_error
        self._start_thread = start_thread
        self._heap: list[tuple[float, int, TimerHandle]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._closed = False

    def call_later(self, delay_s: float, callback: Callable[[], Any]) -> TimerHandle:
        return self.call_at(self.clock() + delay_s, callback)

    def call_at(self, deadline: float, callback: Callable[[], Any]) -> TimerHandle:
        """Run ``callback()`` on the timer thread at ``deadline`` (clock seconds)."""
        handle = TimerHandle(deadline, callback)
        with self._cond:
            if self._closed:
                raise RuntimeError(f"timer wheel {self.name!r} is closed")
            heapq.heappush(self._heap, (deadline, next(self._seq), handle))
            if self._start_thread and self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=f"edgevox-timer-{self.name}", daemon=True)
                self._thread.start()
            elif self._heap[0][2] is handle:
                self._cond.notify()  # new earliest deadline: wake the thread to re-arm
        return handle

    def pending(self) -> int:
        """Live (not cancelled) timers."""
        with self._cond:
            return sum(1 for _, _, h in self._heap if not h.cancelled)

    def run_due(self) -> int:
        """Run every callback whose deadline has passed (on the calling thread). Returns how many."""
        due: list[TimerHandle] = []
        with self._cond:
            now = self.clock()
            while self._heap and (self._heap[0][2].cancelled or self._heap[0][0] <= now):
                _, _, handle = heapq.heappop(self._heap)
                if not handle.cancelled:
                    due.append(handle)
        for handle in due:
            try:
                handle.callback()
            except Exception as exc:  # noqa: BLE001 - one failing callback must not stop the others
                if self.on_error is not None:
                    self.on_error(exc)
        return len(due)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    left = self._heap[0][0] - self.clock()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if self._closed:
                    return
            self.run_due()

    def close(self, timeout_s: float = 1.0) -> list[str]:
        """Drop pending timers and stop the thread. Returns abandoned thread names."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
            if thread.is_alive():
                return [thread.name]
        return []
