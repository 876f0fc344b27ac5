"""One timer thread for many deadlines (instead of one ``threading.Timer`` per request).

A :class:`TimerWheel` keeps a heap of ``(deadline, seq, callback)`` and one
lazily started daemon thread (``edgevox-timer-<name>``) that sleeps on a
condition until the earliest deadline, then runs every due callback *on that
thread*, outside the lock. Callbacks must be quick (they resolve a future,
delete a key). A callback that raises anything - ``SystemExit`` included - is
counted in ``errors`` and passed to ``on_error``; it never stops the others or
the thread (see ``runtime/guard.py``). Cancelling a timer is O(1) (the entry is
marked dead and skipped).

No input can kill the thread: delays and deadlines are checked where they are
given (``nan``, ``inf``, negative or above ``limits.MAX_DURATION_S`` is a
``ValueError`` naming the value), and the thread never sleeps longer than
:data:`MAX_SLEEP_S` at a time, so even a far deadline is a short, valid wait.

The clock is injectable. With a fake clock, tests call :meth:`run_due` themselves
instead of relying on the thread, so window edges are exact.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from edgevox.errors import LifecycleError
from edgevox.runtime.guard import must_propagate
from edgevox.runtime.limits import MAX_DURATION_S, duration, wait_s

if TYPE_CHECKING:
    from edgevox.runtime.context import CancelToken

MAX_SLEEP_S = 60.0
"""The timer thread wakes at least this often (a far deadline is re-checked, never one huge wait)."""


class TimerHandle:
    """Returned by :meth:`TimerWheel.call_at`; ``cancel()`` prevents the callback."""

    __slots__ = ("deadline", "callback", "cancelled")

    def __init__(self, deadline: float, callback: Callable[[], object]) -> None:
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
        self.errors = 0
        """Callbacks that raised (each was also passed to ``on_error``)."""
        self._start_thread = start_thread
        self._heap: list[tuple[float, int, TimerHandle]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._closed = False

    def call_later(self, delay_s: float, callback: Callable[[], object]) -> TimerHandle:
        """Run ``callback()`` on the timer thread ``delay_s`` seconds from now."""
        delay_s = duration("delay_s", delay_s, owner=f"TimerWheel {self.name!r}.call_later")
        return self.call_at(self.clock() + delay_s, callback)

    def call_at(self, deadline: float, callback: Callable[[], object]) -> TimerHandle:
        """Run ``callback()`` on the timer thread at ``deadline`` (clock seconds)."""
        if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not math.isfinite(deadline):
            raise ValueError(f"TimerWheel {self.name!r}.call_at: deadline = {deadline!r}: must be a finite clock time")
        if deadline - self.clock() > MAX_DURATION_S:
            raise ValueError(
                f"TimerWheel {self.name!r}.call_at: deadline = {deadline!r} is more than "
                f"{MAX_DURATION_S:g} s away: must be within that"
            )
        handle = TimerHandle(float(deadline), callback)
        with self._cond:
            if self._closed:
                raise LifecycleError(f"timer wheel {self.name!r} is closed; create a new one")
            heapq.heappush(self._heap, (handle.deadline, next(self._seq), handle))
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

    @property
    def alive(self) -> bool:
        """True while the timer thread runs (or is not needed yet)."""
        thread = self._thread
        return not self._closed and (thread is None or thread.is_alive())

    def run_due(self) -> int:
        """Run every callback whose deadline has passed (on the calling thread). Returns how many."""
        due: list[TimerHandle] = []
        with self._cond:
            now = self.clock()
            while self._heap and (self._heap[0][2].cancelled or self._heap[0][0] <= now):
                _, _, handle = heapq.heappop(self._heap)
                if not handle.cancelled:
                    due.append(handle)
        for i, handle in enumerate(due):
            try:
                handle.callback()
            except BaseException as exc:  # noqa: BLE001 - one failing callback must not stop the others
                self._failed(exc)
                if must_propagate(exc):  # Ctrl-C on a caller's own run_due(): run the rest later
                    with self._cond:
                        for rest in due[i + 1 :]:
                            heapq.heappush(self._heap, (rest.deadline, next(self._seq), rest))
                    raise
        return len(due)

    def _failed(self, exc: BaseException) -> None:
        self.errors += 1
        if self.on_error is not None:
            try:
                self.on_error(exc)
            except BaseException:  # noqa: BLE001 - the reporter failed too; the error is counted
                pass

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
                    self._cond.wait(min(left, MAX_SLEEP_S))
                if self._closed:
                    return
            self.run_due()

    def close(self, timeout_s: float = 1.0) -> list[str]:
        """Drop pending timers and stop the thread. Returns abandoned thread names.

        Safe from many threads at once: each caller waits for the thread up to its own
        ``timeout_s`` and reports it if it is still running.
        """
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"TimerWheel {self.name!r}.close")
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


class Deadline:
    """Cancel ``token`` after ``timeout_s`` seconds: the one timeout helper of edgevox.

    Used as a context manager around work that polls ``token``; ``fired`` tells
    afterwards whether the deadline (not someone else) cancelled it. Only ``token`` is
    ever cancelled - callers pass a *child* token, so a timeout never poisons the
    caller's context. ``timeout_s=None`` arms nothing. The timer runs on one
    :class:`TimerWheel` thread (``edgevox-timer-<name>``), closed and joined on exit.
    """

    def __init__(self, token: CancelToken, timeout_s: float | None, *, name: str, reason: str = "") -> None:
        self.token = token
        self.timeout_s = None if timeout_s is None else duration("timeout_s", timeout_s, owner=f"deadline {name!r}")
        self.reason = reason or f"timed out after {self.timeout_s:g} s" if self.timeout_s is not None else ""
        self.fired = threading.Event()
        self._wheel = TimerWheel(name) if self.timeout_s is not None else None

    def _expire(self) -> None:
        self.fired.set()
        self.token.cancel(self.reason)

    def __enter__(self) -> Deadline:
        if self._wheel is not None and self.timeout_s is not None:
            self._wheel.call_later(self.timeout_s, self._expire)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._wheel is not None:
            self._wheel.close()
