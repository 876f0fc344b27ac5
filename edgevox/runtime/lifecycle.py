"""Explicit lifecycles and stop reports shared by the runtime objects.

:class:`Lifecycle` is a tiny, thread-safe state machine: an enum of states plus
a table of legal transitions. An illegal transition raises
:class:`~edgevox.errors.LifecycleError` naming the object, the current state,
what was attempted and what to do instead - so "start twice" or "use after
stop" fail loudly instead of half-working.

:class:`StopReport` is what every ``stop(timeout_s)`` in the runtime returns:
``clean`` plus the names of threads (or agents) it had to abandon because they
did not finish in time. It is truthy exactly when the stop was clean, so
``assert runtime.stop(2.0)`` reads naturally.

:class:`SharedStop` makes a ``stop`` safe to call from many threads at once: one
caller does the stop, the others wait for it (each up to its own deadline, never
holding a lock the stopping threads need) and get the same report. A waiter
whose deadline passes first gets a report naming what is still running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from edgevox.errors import LifecycleError

S = TypeVar("S", bound=Enum)
R = TypeVar("R")


class Lifecycle(Generic[S]):
    """Current state + legal transitions, guarded by a lock.

    ``transitions`` maps each state to the states it may move to. ``hints`` maps a
    state to a sentence appended to the error when leaving it is illegal (the fix).
    """

    def __init__(
        self,
        owner: str,
        initial: S,
        transitions: Mapping[S, Iterable[S]],
        hints: Mapping[S, str] | None = None,
    ) -> None:
        self.owner = owner
        self._state = initial
        self._transitions = {k: frozenset(v) for k, v in transitions.items()}
        self._hints = dict(hints or {})
        self._lock = threading.Lock()

    @property
    def state(self) -> S:
        return self._state

    def can(self, target: S) -> bool:
        return target in self._transitions.get(self._state, ())

    def to(self, target: S, action: str = "") -> S:
        """Move to ``target`` or raise LifecycleError. Returns the previous state."""
        with self._lock:
            current = self._state
            if target not in self._transitions.get(current, ()):
                what = action or f"move to {target.name}"
                hint = self._hints.get(current, "")
                raise LifecycleError(
                    f"{self.owner}: cannot {what} while {current.name}" + (f"; {hint}" if hint else "")
                )
            self._state = target
            return current

    def to_if(self, target: S, *allowed_from: S) -> bool:
        """Move to ``target`` only if the current state is one of ``allowed_from``; no error."""
        with self._lock:
            if self._state in allowed_from and target in self._transitions.get(self._state, ()):
                self._state = target
                return True
            return False

    def force(self, target: S) -> None:
        """Set the state unconditionally (only for terminal bookkeeping, e.g. FAILED)."""
        with self._lock:
            self._state = target

    def __repr__(self) -> str:
        return f"Lifecycle({self.owner!r}, {self._state.name})"


@dataclass
class StopReport:
    """Result of a ``stop(timeout_s)``: truthy when clean.

    ``abandoned`` names the threads or agents that were still running at the deadline
    (they are daemon threads, told to cancel, and left behind). ``discarded`` counts
    queued work items that were failed on purpose instead of run.
    """

    clean: bool = True
    abandoned: list[str] = field(default_factory=list)
    discarded: int = 0

    def __bool__(self) -> bool:
        return self.clean

    @classmethod
    def merge(cls, reports: Iterable[StopReport]) -> StopReport:
        out = cls()
        for r in reports:
            out.clean = out.clean and r.clean
            out.abandoned.extend(r.abandoned)
            out.discarded += r.discarded
        return out

    @classmethod
    def abandoned_threads(cls, names: Iterable[str]) -> StopReport:
        names = list(names)
        return cls(clean=not names, abandoned=names)


class _StopRun:
    __slots__ = ("done", "result", "waiting", "thread")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: object = None
        self.waiting = 0
        self.thread = threading.current_thread()


class SharedStop(Generic[R]):
    """One stop at a time, shared by every caller that arrives while it runs.

    ``run(timeout_s, stop)``: with no stop in progress, the caller runs
    ``stop(deadline)`` itself (``deadline`` on ``time.monotonic``, or None for no
    limit) and returns its report. A caller that arrives meanwhile waits - holding
    no lock - until that stop ends or its own ``timeout_s`` passes: it then gets
    the same report, or ``still_running()`` (a report naming what is still running)
    if its deadline came first. Once a stop has ended, the next call starts a new
    one, so ``stop`` decides itself whether a later call re-checks or repeats. A call
    made *from inside* the stop (a handler the stop triggers calls ``stop`` again) gets
    ``still_running()`` at once instead of waiting for itself.

    Rejected alternative: one lock held for the whole stop - a second stopper then
    joins threads while holding the lock the exiting worker needs (8 concurrent
    ``BackgroundAgent.stop(2.0)`` took 14 s, every report falsely unclean).
    """

    def __init__(self, still_running: Callable[[], R]) -> None:
        self._still_running = still_running
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._current: _StopRun | None = None

    @property
    def in_progress(self) -> bool:
        return self._current is not None

    @property
    def waiting(self) -> int:
        """Callers waiting for the stop in progress (0 when none runs)."""
        with self._lock:
            return self._current.waiting if self._current is not None else 0

    def wait_for_waiters(self, n: int, timeout_s: float) -> bool:
        """Block until ``n`` callers wait for the stop in progress (tests, diagnostics)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._current is not None and self._current.waiting >= n, timeout_s)

    def run(self, timeout_s: float | None, stop: Callable[[float | None], R]) -> R:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._lock:
            current = self._current
            mine = current is None
            if current is None:
                current = self._current = _StopRun()
            elif current.thread is threading.current_thread():
                return self._still_running()  # re-entered from inside the stop: never wait for ourselves
            else:
                current.waiting += 1
                self._changed.notify_all()
        if not mine:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            finished = current.done.wait(left)
            with self._lock:
                current.waiting -= 1
            if finished and current.result is not None:
                return current.result  # type: ignore[return-value]
            return self._still_running()  # our deadline came first (or the stop raised)
        try:
            result = stop(deadline)
            current.result = result
            return result
        finally:
            with self._lock:
                self._current = None
            current.done.set()
