"""RestartSupervisor: OTP restart strategies over an ordered list of children.

Over 400 lines because it is one state machine: the three strategies, the restart budget, the
deadline-bounded stop and the supervision loop share one lock and one child list, and read best
together.

A child is anything that can be started with an escalation hook and stopped with
a timeout; :class:`ChildSpec` adapts a BackgroundAgent (``ChildSpec.for_background``)
or a nested RestartSupervisor (``ChildSpec.for_supervisor``).

Two levels of budget, as in OTP's nesting: a BackgroundAgent first spends its own
``max_restarts`` per ``restart_window_s`` restarting itself; when it gives up it
*escalates* here. The supervisor then applies its strategy, within its own
intensity (``max_restarts`` per ``restart_window_s`` on the injectable clock);
when that is spent it gives up too: stops every child (reverse order), goes
FAILED, publishes an AgentStateEvent and escalates to *its* parent (another
supervisor, or the Runtime). Give a child ``max_restarts=0`` to send every crash
straight to the supervisor (classic OTP).

Strategies, when child ``C`` (at position ``i``) escalates:

* ``one_for_one``: restart ``C`` only.
* ``one_for_all``: stop every child (reverse order), start every child (in order).
* ``rest_for_one``: stop the children after ``C`` and ``C`` (reverse order), start
  ``C`` and the ones after it (in order).

Threads: escalations arrive on children's threads and are only queued; one thread
per supervisor (``edgevox-sup-<name>``) runs :meth:`RestartSupervisor._supervise`, so a
child is never stopped or joined from its own thread. Structural operations
(start, add, remove, restart) are serialised by one re-entrant lock.

Stop deadlines are deadlines: a restart may hold that lock for as long as a stuck
child takes to stop, so ``stop(timeout_s)`` and ``remove_child`` wait for the lock
only until their deadline and then go ahead without it - child stops are safe to
run concurrently (a second stopper shares the stop in progress) - while a pending
restart sees the stop request and starts nothing more (a child it started
meanwhile it stops again itself). A supervision thread still busy at the deadline
is named in the report, like any other thread left behind. ``stop`` is safe from
many threads at once (:class:`~edgevox.runtime.lifecycle.SharedStop`).

Nothing a child does can kill the supervision thread: an error while restarting
or escalating (``SystemExit`` included) is published as an ErrorEvent and the loop
goes on.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from edgevox.errors import AgentError, BusClosedError, LifecycleError
from edgevox.runtime.events import AgentStateEvent, ErrorEvent
from edgevox.runtime.guard import must_propagate
from edgevox.runtime.lifecycle import SharedStop, StopReport
from edgevox.runtime.limits import count, duration, optional_wait_s

if TYPE_CHECKING:
    from edgevox.runtime.background import BackgroundAgent
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.context import AgentContext

Strategy = Literal["one_for_one", "one_for_all", "rest_for_one"]
STRATEGIES = ("one_for_one", "one_for_all", "rest_for_one")
Escalate = Callable[[BaseException | None], None]


@dataclass
class ChildSpec:
    """How a supervisor starts, stops and describes one child.

    ``start(escalate)`` starts the child (raises if it cannot) and arranges for
    ``escalate(error)`` to be called, from any thread, when the child gives up.
    ``stop(timeout_s)`` returns a StopReport.
    """

    name: str
    start: Callable[[Escalate], Any]
    stop: Callable[[float], StopReport]
    shutdown_timeout_s: float = 5.0
    describe: Callable[[], tuple[str, int]] = lambda: ("unknown", 0)
    """``() -> (state, restart_count)`` for :meth:`RestartSupervisor.which_children`."""
    kind: str = "worker"

    def __post_init__(self) -> None:
        self.shutdown_timeout_s = duration(
            "shutdown_timeout_s", self.shutdown_timeout_s, owner=f"ChildSpec {self.name!r}"
        )

    @classmethod
    def for_background(
        cls, bg: BackgroundAgent, ctx: AgentContext | None, bus: EventBus, shutdown_timeout_s: float | None = None
    ) -> ChildSpec:
        return cls(
            name=bg.name,
            start=lambda escalate: bg.start(ctx, bus, on_give_up=lambda _bg, err: escalate(err)),
            stop=lambda timeout_s: bg.stop(timeout_s),
            shutdown_timeout_s=bg.shutdown_timeout_s if shutdown_timeout_s is None else shutdown_timeout_s,
            describe=lambda: (bg.state.value, bg.restart_count),
        )

    @classmethod
    def for_supervisor(cls, sup: RestartSupervisor, shutdown_timeout_s: float = 10.0) -> ChildSpec:
        return cls(
            name=sup.name,
            start=lambda escalate: sup.start(on_give_up=escalate),
            stop=lambda timeout_s: sup.stop(timeout_s),
            shutdown_timeout_s=shutdown_timeout_s,
            describe=lambda: (sup.state.value, sup.restart_count),
            kind="supervisor",
        )


@dataclass(frozen=True)
class ChildInfo:
    """One row of :meth:`RestartSupervisor.which_children`."""

    name: str
    state: str
    restart_count: int
    kind: str


class SupervisorState(str, Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


class _Child:
    __slots__ = ("spec", "start_no", "removed")

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.start_no = 0  # escalations from an older start of this child are stale
        self.removed = False  # set by remove_child, even when it could not take the lock


class RestartSupervisor:
    """Restart children by ``strategy`` within an intensity budget. See the module docstring."""

    def __init__(
        self,
        name: str = "root",
        *,
        strategy: Strategy = "one_for_one",
        max_restarts: int = 3,
        restart_window_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        bus: EventBus | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy = {strategy!r}: must be one of {', '.join(STRATEGIES)}")
        max_restarts = count("max_restarts", max_restarts, owner=f"RestartSupervisor {name!r}")
        restart_window_s = duration(
            "restart_window_s", restart_window_s, owner=f"RestartSupervisor {name!r}", above_minimum=True
        )
        self.name = name
        self.strategy = strategy
        self.max_restarts = max_restarts
        self.restart_window_s = restart_window_s
        self.clock = clock
        self.bus = bus
        self.restart_count = 0
        self.last_error: BaseException | None = None
        self.on_give_up: Escalate | None = None
        self._state = SupervisorState.NEW
        self._children: list[_Child] = []  # replaced, never mutated: readers without the lock see a whole list
        self._ops = threading.RLock()
        self._stop_requested = threading.Event()
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)
        self._last_report = StopReport()
        self._restarts: deque[float] = deque()
        self._inbox: queue.SimpleQueue[tuple[str, int, BaseException | None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> SupervisorState:
        return self._state

    @property
    def thread(self) -> threading.Thread | None:
        """The supervision thread (``edgevox-sup-<name>``) of the current or last start."""
        return self._thread

    # -- children ----------------------------------------------------------------------------

    def add_child(self, spec: ChildSpec) -> None:
        """Append a child; it is started at once if the supervisor is running (raises if it
        cannot start, and is then not added)."""
        with self._ops:
            if any(c.spec.name == spec.name for c in self._children):
                raise ValueError(f"supervisor {self.name!r} already has a child named {spec.name!r}")
            child = _Child(spec)
            if self._state is SupervisorState.RUNNING:
                self._start_child(child)
            self._children = [*self._children, child]

    def remove_child(self, name: str, timeout_s: float | None = None) -> StopReport:
        """Stop a child and forget it, within ``timeout_s`` (default: its ``shutdown_timeout_s``)
        even while a restart holds the supervisor (see the module docstring)."""
        timeout_s = optional_wait_s("timeout_s", timeout_s, owner=f"RestartSupervisor {self.name!r}.remove_child")
        if timeout_s is None:
            found = self._find(name)  # a whole-list read: safe without the lock
            timeout_s = found.spec.shutdown_timeout_s if found is not None else 0.0
        deadline = time.monotonic() + timeout_s
        locked = self._lock_ops(deadline)
        try:
            child = self._find(name)
            if child is None:
                raise KeyError(f"supervisor {self.name!r} has no child {name!r}; children: {self.child_names()}")
            self._children = [c for c in self._children if c is not child]
            child.removed = True
            child.start_no += 1  # pending escalations become stale
        finally:
            if locked:
                self._ops.release()
        return child.spec.stop(max(0.0, deadline - time.monotonic()))

    def _lock_ops(self, deadline: float | None) -> bool:
        """Take the structural lock, waiting no later than ``deadline``. False: go on without it."""
        if deadline is None:
            return self._ops.acquire()
        return self._ops.acquire(timeout=max(0.0, deadline - time.monotonic()))

    def child_names(self) -> list[str]:
        return [c.spec.name for c in list(self._children)]

    def which_children(self) -> list[ChildInfo]:
        """``(name, state, restart_count, kind)`` per child, in start order."""
        out = []
        for c in list(self._children):
            state, restarts = c.spec.describe()
            out.append(ChildInfo(c.spec.name, state, restarts, c.spec.kind))
        return out

    def _find(self, name: str) -> _Child | None:
        return next((c for c in self._children if c.spec.name == name), None)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, *, on_give_up: Escalate | None = None) -> RestartSupervisor:
        """Start children in order; if one fails, stop the started ones (reverse) and raise
        AgentError. Allowed from NEW, STOPPED or FAILED (a fresh start: budget cleared)."""
        with self._ops:
            if self._state in (SupervisorState.RUNNING, SupervisorState.STOPPING):
                raise LifecycleError(
                    f"supervisor {self.name!r}: cannot start while {self._state.name}; stop() it first"
                )
            if on_give_up is not None:
                self.on_give_up = on_give_up
            self._restarts.clear()
            self._stop_requested.clear()
            self._inbox = queue.SimpleQueue()  # before children start: an early escalation must not be lost
            self._start_in_order(self._children)
            self._state = SupervisorState.RUNNING
            self._thread = threading.Thread(target=self._supervise, name=f"edgevox-sup-{self.name}", daemon=True)
            self._thread.start()
        self._publish_state()
        return self

    def stop(self, timeout_s: float | None = None) -> StopReport:
        """Stop children in reverse order, each within its ``shutdown_timeout_s`` (capped by what
        is left of ``timeout_s``), then the supervision thread. Returns within ``timeout_s`` even
        while a restart is waiting on a stuck child (see the module docstring). Safe from many
        threads at once; a later call re-checks children the last stop left running."""
        timeout_s = optional_wait_s("timeout_s", timeout_s, owner=f"RestartSupervisor {self.name!r}.stop")
        return self._stops.run(timeout_s, self._stop)

    def _still_running(self) -> StopReport:
        """For a concurrent stopper whose deadline passed before the stop ended."""
        thread = self._thread
        alive = thread is not None and thread.is_alive()
        return StopReport.abandoned_threads(
            [thread.name] if alive and thread is not None else [f"supervisor {self.name!r} (stop in progress)"]
        )

    def _stop(self, deadline: float | None) -> StopReport:
        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        self._stop_requested.set()  # a restart in progress starts nothing more
        locked = self._lock_ops(deadline)
        try:
            state, children, thread = self._state, self._children, self._thread
            if state not in (SupervisorState.RUNNING, SupervisorState.FAILED):
                if state is SupervisorState.NEW:
                    self._state = SupervisorState.STOPPED
                if state is SupervisorState.STOPPED and not self._last_report:
                    # the last stop left something running: look again
                    self._last_report = self._stop_in_reverse(children, deadline)
                return self._last_report
            self._state = SupervisorState.STOPPING
            # giving up (FAILED) already stopped the children
            report = StopReport() if state is SupervisorState.FAILED else self._stop_in_reverse(children, deadline)
            self._state = SupervisorState.STOPPED
            self._inbox.put(None)
        finally:
            if locked:
                self._ops.release()
        if thread is not None and thread is not threading.current_thread():
            # Idle (we got the lock), it exits at the sentinel at once: a short grace so it is not
            # named by a race. Busy in a restart, it gets what is left and is named if still busy.
            wait = left()
            thread.join(1.0 if wait is None else max(wait, 0.1 if locked else 0.0))
            if thread.is_alive():
                report = StopReport.merge([report, StopReport.abandoned_threads([thread.name])])
        self._publish_state()
        self._last_report = report
        return report

    def _start_child(self, child: _Child) -> None:
        child.start_no += 1
        start_no, name = child.start_no, child.spec.name
        child.spec.start(lambda err: self._inbox.put((name, start_no, err)))

    def _start_in_order(self, children: list[_Child]) -> None:
        started: list[_Child] = []
        for child in children:
            if self._stop_requested.is_set() or child.removed:
                continue  # a stop or remove_child came while we waited: start nothing more
            try:
                self._start_child(child)
            except BaseException as exc:  # noqa: BLE001 - any failed start rolls back the started ones
                self._stop_in_reverse(started, None)
                if must_propagate(exc):
                    raise
                raise AgentError(
                    f"supervisor {self.name!r}: child {child.spec.name!r} failed to start ({exc!r}); "
                    f"rolled back {[c.spec.name for c in started]}"
                ) from exc
            started.append(child)
            if self._stop_requested.is_set() or child.removed:
                # the stop (or removal) ran without the lock and may have missed this start
                self._stop_in_reverse([child], None)

    def _stop_in_reverse(self, children: list[_Child], deadline: float | None) -> StopReport:
        reports = []
        for child in reversed(children):
            timeout = child.spec.shutdown_timeout_s
            if deadline is not None:
                timeout = max(0.0, min(timeout, deadline - time.monotonic()))
            try:
                reports.append(child.spec.stop(timeout))
            except BaseException as exc:  # noqa: BLE001 - one child's broken stop must not keep the others running
                reports.append(StopReport(clean=False, abandoned=[child.spec.name]))
                if must_propagate(exc):
                    raise
        return StopReport.merge(reports)

    # -- the supervision loop ----------------------------------------------------------------

    def _supervise(self) -> None:
        """The whole failure policy (thread ``edgevox-sup-<name>``)::

        for each escalation (child, its start number, error):
            ignore it if stale (child removed or restarted since) or we are not RUNNING
            loop:  if this restart exceeds the intensity budget: give up, return
                   restart the affected children (strategy); done if they all started,
                   else the failed start is the next error and counts as another restart
        """
        inbox = self._inbox
        while (notice := inbox.get()) is not None:
            try:
                if not self._handle(notice):
                    return
            except BaseException as exc:  # noqa: BLE001 - nothing a child does may end this thread
                self._publish_error("supervision loop", exc)

    def _handle(self, notice: tuple[str, int, BaseException | None]) -> bool:
        """One escalation (see :meth:`_supervise`). False when the loop must end (gave up)."""
        name, start_no, error = notice
        with self._ops:
            child = self._find(name)
            if self._state is not SupervisorState.RUNNING or child is None or child.start_no != start_no:
                return True
            while not self._stop_requested.is_set():
                self.last_error = error
                if not self._allow_restart():
                    self._give_up(error)
                    return False
                try:
                    self._restart(child)
                    break
                except AgentError as exc:
                    error = exc
            return True

    def _allow_restart(self) -> bool:
        now = self.clock()
        while self._restarts and now - self._restarts[0] >= self.restart_window_s:
            self._restarts.popleft()
        self._restarts.append(now)
        if len(self._restarts) > self.max_restarts:
            return False
        self.restart_count += 1
        return True

    def _restart(self, child: _Child) -> None:
        index = self._children.index(child)
        if self.strategy == "one_for_one":
            affected = [child]
        elif self.strategy == "one_for_all":
            affected = list(self._children)
        else:
            affected = self._children[index:]
        for c in affected:
            c.start_no += 1  # escalations from the old incarnations are now stale
        self._stop_in_reverse(affected, None)
        self._start_in_order(affected)

    def _give_up(self, error: BaseException | None) -> None:
        self._stop_in_reverse(self._children, None)
        if self._stop_requested.is_set():
            return  # a stop came meanwhile: it owns the outcome
        self._state = SupervisorState.FAILED
        self._publish_state(error)
        if self.on_give_up is not None:
            self.on_give_up(error)

    def _publish_error(self, where: str, exc: BaseException) -> None:
        if self.bus is None:
            return
        try:
            self.bus.publish(
                ErrorEvent(
                    source=f"supervisor:{self.name}",
                    where=f"supervisor {self.name!r} {where}",
                    error=repr(exc),
                    traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                )
            )
        except BusClosedError:
            pass

    def _publish_state(self, error: BaseException | None = None) -> None:
        if self.bus is None:
            return
        try:
            self.bus.publish(
                AgentStateEvent(
                    source=f"supervisor:{self.name}",
                    agent=self.name,
                    state=self._state.value,
                    restart_count=self.restart_count,
                    error=repr(error) if error is not None else "",
                )
            )
        except BusClosedError:
            pass

    def __repr__(self) -> str:
        return f"RestartSupervisor({self.name!r}, {self.strategy}, {self._state.value}, children={self.child_names()})"
