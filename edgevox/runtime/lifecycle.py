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
from typing import Generic, Protocol, TypeVar, runtime_checkable

from edgevox.errors import EdgeVoxError, LifecycleError

S = TypeVar("S", bound=Enum)
R = TypeVar("R")


class Lifecycle(Generic[S]):
    """Current state + legal transitions, guarded by a lock.

    ``transitions`` maps each state to the states it may move to. ``hints`` maps a
    state to a sentence appended to the error when leaving it is illegal (the fix).
    ``error``: the class raised for an illegal transition (a bridge raises ``BridgeError``).
    """

    def __init__(
        self,
        owner: str,
        initial: S,
        transitions: Mapping[S, Iterable[S]],
        hints: Mapping[S, str] | None = None,
        *,
        error: type[EdgeVoxError] = LifecycleError,
    ) -> None:
        self.owner = owner
        self._error = error
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
                raise self._error(f"{self.owner}: cannot {what} while {current.name}" + (f"; {hint}" if hint else ""))
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


class ComponentState(str, Enum):
    """The states of a component that starts once and stops once (App, the voice loop, bridges,
    the Runtime, whose ``RuntimeState`` is this enum)."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"
    """``start()`` raised; ``stop()`` still releases what is left (-> STOPPED)."""


_C = ComponentState
COMPONENT_TRANSITIONS: Mapping[ComponentState, tuple[ComponentState, ...]] = {
    _C.NEW: (_C.STARTING, _C.STOPPING, _C.STOPPED),
    _C.STARTING: (_C.RUNNING, _C.FAILED, _C.STOPPING),
    _C.RUNNING: (_C.STOPPING,),
    _C.FAILED: (_C.STOPPING, _C.STOPPED),
    _C.STOPPING: (_C.STOPPED,),
    _C.STOPPED: (),
}
"""``NEW -> STARTING -> RUNNING -> STOPPING -> STOPPED``; a failed start ends in FAILED (or,
when the component rolls itself back, STOPPING); ``stop()`` before ``start()`` is legal."""


def component_lifecycle(
    owner: str, *, noun: str = "one", error: type[EdgeVoxError] = LifecycleError
) -> Lifecycle[ComponentState]:
    """A :class:`Lifecycle` over :class:`ComponentState`; starting twice or after a stop raises
    ``error`` saying to make a new ``noun``."""
    hint = f"it starts once; make a new {noun}"
    hints = {_C.RUNNING: "it is already running", _C.STOPPED: hint, _C.FAILED: hint, _C.STOPPING: hint}
    return Lifecycle(owner, _C.NEW, COMPONENT_TRANSITIONS, hints, error=error)


@dataclass
class StopReport:
    """Result of a ``stop(timeout_s)``: truthy when clean. The one stop report of edgevox:
    the runtime, background agents, supervisors, bridges, the voice loop and the App return it.

    ``abandoned`` names the threads or agents that were still running at the deadline
    (they are daemon threads, told to cancel, and left behind). ``discarded`` counts
    queued work items that were failed on purpose instead of run. ``cancelled_turns``:
    user turns running or queued when a voice loop stopped. ``parts``: the reports of the
    components a composite stop stopped, by name (``App.stop``: ``"voice"``,
    ``"bridge ros2"``, ``"runtime"``...); the top-level fields already include theirs.
    """

    clean: bool = True
    abandoned: list[str] = field(default_factory=list)
    discarded: int = 0
    cancelled_turns: list[int] = field(default_factory=list)
    parts: dict[str, StopReport] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.clean

    def __str__(self) -> str:
        return "clean" if self.clean else "abandoned: " + (", ".join(self.abandoned) or "(unnamed)")

    @classmethod
    def merge(cls, reports: Iterable[StopReport]) -> StopReport:
        out = cls()
        for r in reports:
            out.clean = out.clean and r.clean
            out.abandoned.extend(r.abandoned)
            out.discarded += r.discarded
            out.cancelled_turns.extend(r.cancelled_turns)
        return out

    @classmethod
    def nest(cls, parts: Mapping[str, StopReport]) -> StopReport:
        """One report for a composite stop: the parts' fields merged, each part kept by name."""
        out = cls.merge(parts.values())
        out.parts = dict(parts)
        return out

    def join(self, threads: Iterable[threading.Thread], deadline: float) -> StopReport:
        """Join ``threads`` until ``deadline`` (:func:`join_threads`); those still running are
        abandoned in this report, which is returned."""
        left = join_threads(threads, deadline)
        self.abandoned.extend(left)
        self.clean = self.clean and not left
        return self

    @classmethod
    def abandoned_threads(cls, names: Iterable[str]) -> StopReport:
        names = list(names)
        return cls(clean=not names, abandoned=names)


class Component(Protocol):
    """Anything an application starts once and stops once (a bridge, the voice loop, the runtime).
    ``start()`` returns once it runs; ``stop`` returns a :class:`StopReport` (``timeout`` is
    EdgeVox's spelling of ``timeout_s``)."""

    def start(self) -> object: ...

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport: ...


@runtime_checkable
class Closable(Protocol):
    """Something that owns worker threads but no lifecycle of its own (an LLM agent's skill
    workers): ``close(timeout_s)`` ends them and returns False if one was still running."""

    def close(self, timeout_s: float) -> object: ...


def join_threads(threads: Iterable[threading.Thread], deadline: float) -> list[str]:
    """Join each of ``threads`` until ``deadline`` (``time.monotonic()``) in total, never the
    calling thread itself; the names of those still running (what a stop report abandons)."""
    me = threading.current_thread()
    left = []
    for t in threads:
        if t is not me:
            t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            left.append(t.name)
    return left


def stop_timeout(timeout_s: float | None, timeout: float | None, default: float) -> float:
    """The deadline of a ``stop(timeout_s=..., timeout=...)``: ``timeout`` is EdgeVox's spelling
    of ``timeout_s``; giving both (different) is an error, giving neither means ``default``."""
    if timeout is not None and timeout_s is not None and timeout != timeout_s:
        raise TypeError(f"stop(): give timeout_s or timeout, not both (timeout_s={timeout_s}, timeout={timeout})")
    chosen = timeout if timeout is not None else timeout_s
    return default if chosen is None else chosen


class _StopRun(Generic[R]):
    __slots__ = ("done", "result", "waiting", "thread")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: R | None = None
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
        self._current: _StopRun[R] | None = None

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
                current = self._current = _StopRun[R]()
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
                return current.result
            return self._still_running()  # our deadline came first (or the stop raised)
        try:
            result = stop(deadline)
            current.result = result
            return result
        finally:
            with self._lock:
                self._current = None
            current.done.set()
