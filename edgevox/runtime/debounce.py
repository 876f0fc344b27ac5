"""``debounce_trigger``: rate-limit a BackgroundAgent trigger without losing the final state.

A trigger maps an event to a task (or ``None`` = ignore). The wrapped trigger is
called for *every* event; only events for which it returns a task take part in
the rate limit, so an unrelated event can never suppress a relevant one.

With ``interval_s = T`` (``now`` from the injectable ``clock``):

``edge="leading"`` (default; what the existing EdgeVox docs describe)
    A task fires *at once* if no task fired in the last ``T`` seconds; otherwise it
    is dropped (counted in ``suppressed``). A continuous stream fires once per ``T``.
    The last state of a burst is lost if it falls inside the window - this is a
    leading-edge throttle, named "debounce" for compatibility.
``edge="trailing"``
    Nothing fires at once. Each task replaces the held one; the held (latest) task
    fires once the stream has been quiet for ``T`` (no task for ``T`` seconds).
    A stream that never pauses for ``T`` fires only when it stops - unless
    ``max_wait_s`` is set, which bounds how long a held task can wait.
``edge="both"``
    Leading as above, and a task that arrives inside the window is held instead of
    dropped; the held task fires ``T`` after the last task of the burst, unless a later
    task fires on the leading edge first (which replaces it). A continuous stream
    fires once per ``T`` and the final state of every burst is delivered.

In every mode two fires are at least ``T`` apart ("at most once per interval").

Trailing fires need a timer. None is started here: the BackgroundAgent worker
waits on its mailbox for at most :meth:`DebouncedTrigger.due_in_s` and then calls
:meth:`DebouncedTrigger.poll`, so held tasks fire on the agent's own thread and
no thread is created per event or per trigger. Outside a BackgroundAgent, call
``poll()`` yourself (e.g. from a :class:`~edgevox.runtime.timers.TimerWheel`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, Literal, TypeVar

from edgevox.runtime.events import Event
from edgevox.runtime.limits import duration

Edge = Literal["leading", "trailing", "both"]
EDGES = ("leading", "trailing", "both")

T = TypeVar("T")
"""The task a trigger makes of an event (``None`` = no task)."""


class DebouncedTrigger(Generic[T]):
    """A callable trigger with a held (trailing) task. Thread-safe."""

    def __init__(
        self,
        trigger: Callable[[Event], T | None],
        interval_s: float,
        *,
        edge: Edge = "leading",
        max_wait_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        interval_s = duration("interval_s", interval_s, owner="debounce_trigger", above_minimum=True)
        if edge not in EDGES:
            raise ValueError(f"debounce_trigger edge = {edge!r}: must be one of {', '.join(EDGES)}")
        if max_wait_s is not None:
            max_wait_s = duration("max_wait_s", max_wait_s, owner="debounce_trigger", minimum=interval_s)
        self.trigger = trigger
        self.interval_s = interval_s
        self.edge = edge
        self.max_wait_s = max_wait_s
        self.clock = clock
        self.fired = 0
        self.suppressed = 0
        """Tasks dropped (leading) or replaced by a newer held task (trailing/both)."""
        self._lock = threading.Lock()
        self._last_fire: float | None = None
        self._held: T | None = None
        self._has_held = False
        self._held_since = 0.0
        self._last_task_at = 0.0

    def __call__(self, event: Event) -> T | None:
        task = self.trigger(event)
        if task is None:
            return None
        with self._lock:
            now = self.clock()
            if self.edge != "trailing" and (self._last_fire is None or now - self._last_fire >= self.interval_s):
                if self._has_held:
                    self.suppressed += 1  # superseded by this newer task
                self._clear_held()
                return self._fire(task, now)
            if self.edge == "leading":
                self.suppressed += 1
                return None
            if self._has_held:
                self.suppressed += 1
            else:
                self._held_since = now
            self._held, self._has_held, self._last_task_at = task, True, now
            return None

    def _due_at(self) -> float:
        due = self._last_task_at + self.interval_s
        if self.max_wait_s is not None:
            due = min(due, self._held_since + self.max_wait_s)
        if self._last_fire is not None:
            due = max(due, self._last_fire + self.interval_s)
        return due

    def due_in_s(self) -> float | None:
        """Seconds until the held task is due (0 if overdue); None when nothing is held."""
        with self._lock:
            if not self._has_held:
                return None
            return max(0.0, self._due_at() - self.clock())

    def poll(self) -> T | None:
        """The held task if its time has come (it is then fired), else None."""
        with self._lock:
            if not self._has_held:
                return None
            now = self.clock()
            if now < self._due_at():
                return None
            task = self._held
            self._clear_held()
            return self._fire(task, now)

    def _fire(self, task: T | None, now: float) -> T | None:
        self._last_fire = now
        self.fired += 1
        return task

    def _clear_held(self) -> None:
        self._held, self._has_held = None, False

    def __repr__(self) -> str:
        return f"debounce_trigger({self.trigger!r}, interval_s={self.interval_s}, edge={self.edge!r})"


def debounce_trigger(
    trigger: Callable[[Event], T | None],
    interval_s: float,
    *,
    edge: Edge = "leading",
    max_wait_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> DebouncedTrigger[T]:
    """Wrap ``trigger`` so tasks fire at most once per ``interval_s``; see the module docstring
    for exactly what each ``edge`` does."""
    return DebouncedTrigger(trigger, interval_s, edge=edge, max_wait_s=max_wait_s, clock=clock)
