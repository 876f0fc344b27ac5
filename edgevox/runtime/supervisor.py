"""Supervisor: OTP restart strategies over an ordered list of children.

A child is anything that can be started with an escalation hook and stopped with
a timeout; :class:`ChildSpec` adapts a BackgroundAgent (``ChildSpec.for_background``)
or a nested Supervisor (``ChildSpec.for_supervisor``).

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
per supervisor (``edgevox-sup-<name>``) runs :meth:`Supervisor._supervise`, so a
child is never stopped or joined from its own thread. Structural operations
(start, stop, add, remove, restart) are serialised by one re-entrant lock.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from edgevox.errors import AgentError, BusClosedError, LifecycleError
from edgevox.runtime.events import AgentStateEvent
from edgevox.runtime.lifecycle import StopReport

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
    """``() -> (state, restart_count)`` for :meth:`Supervisor.which_children`."""
    kind: str = "worker"

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
    def for_supervisor(cls, sup: Supervisor, shutdown_timeout_s: float = 10.0) -> ChildSpec:
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
    """One row of :meth:`Supervisor.which_children`."""

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
    __slots__ = ("spec", "start_no")

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.start_no = 0  # escalations from an older start of this child are stale


class Supervisor:
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
        if max_restarts < 0 or restart_window_s <= 0:
            raise ValueError(f"max_restarts = {max_restarts}, restart_window_s = {restart_window_s}: need >= 0 and > 0")
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
        self._children: list[_Child] = []
        self._ops = threading.RLock()
        self._restarts: deque[float] = deque()
        self._inbox: queue.SimpleQueue[tuple[str, int, BaseException | None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> SupervisorState:
        return self._state

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
            self._children.append(child)

    def remove_child(self, name: str, timeout_s: float | None = None) -> StopReport:
        """Stop a child and forget it."""
        with self._ops:
            child = self._find(name)
            if child is None:
                raise KeyError(f"supervisor {self.name!r} has no child {name!r}; children: {self.child_names()}")
            self._children.remove(child)
            child.start_no += 1  # pending escalations become stale
            return child.spec.stop(child.spec.shutdown_timeout_s if timeout_s is None else timeout_s)

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

    def start(self, *, on_give_up: Escalate | None = None) -> Supervisor:
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
            self._inbox = queue.SimpleQueue()  # before children start: an early escalation must not be lost
            self._start_in_order(self._children)
            self._state = SupervisorState.RUNNING
            self._thread = threading.Thread(target=self._supervise, name=f"edgevox-sup-{self.name}", daemon=True)
            self._thread.start()
        self._publish_state()
        return self

    def stop(self, timeout_s: float | None = None) -> StopReport:
        """Stop children in reverse order, each within its ``shutdown_timeout_s`` (capped by what
        is left of ``timeout_s``), then the supervision thread."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._ops:
            if self._state not in (SupervisorState.RUNNING, SupervisorState.FAILED):
                if self._state is SupervisorState.NEW:
                    self._state = SupervisorState.STOPPED
                return StopReport()
            failed = self._state is SupervisorState.FAILED  # giving up already stopped the children
            self._state = SupervisorState.STOPPING
            report = StopReport() if failed else self._stop_in_reverse(self._children, deadline)
            self._state = SupervisorState.STOPPED
            thread = self._thread
            self._inbox.put(None)
        if thread is not None and thread is not threading.current_thread():
            # the loop is idle once children are stopped and exits at the sentinel: a short grace
            thread.join(1.0 if deadline is None else max(0.1, deadline - time.monotonic()))
            if thread.is_alive():
                report = StopReport.merge([report, StopReport.abandoned_threads([thread.name])])
        self._publish_state()
        return report

    def _start_child(self, child: _Child) -> None:
        child.start_no += 1
        start_no, name = child.start_no, child.spec.name
        child.spec.start(lambda err: self._inbox.put((name, start_no, err)))

    def _start_in_order(self, children: list[_Child]) -> None:
        started: list[_Child] = []
        for child in children:
            try:
                self._start_child(child)
            except Exception as exc:
                self._stop_in_reverse(started, None)
                raise AgentError(
                    f"supervisor {self.name!r}: child {child.spec.name!r} failed to start ({exc}); "
                    f"rolled back {[c.spec.name for c in started]}"
                ) from exc
            started.append(child)

    def _stop_in_reverse(self, children: list[_Child], deadline: float | None) -> StopReport:
        reports = []
        for child in reversed(children):
            timeout = child.spec.shutdown_timeout_s
            if deadline is not None:
                timeout = max(0.0, min(timeout, deadline - time.monotonic()))
            try:
                reports.append(child.spec.stop(timeout))
            except Exception:  # noqa: BLE001 - one child's broken stop must not keep the others running
                reports.append(StopReport(clean=False, abandoned=[child.spec.name]))
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
        while (notice := self._inbox.get()) is not None:
            name, start_no, error = notice
            with self._ops:
                child = self._find(name)
                if self._state is not SupervisorState.RUNNING or child is None or child.start_no != start_no:
                    continue
                while True:
                    self.last_error = error
                    if not self._allow_restart():
                        self._give_up(error)
                        return
                    try:
                        self._restart(child)
                        break
                    except AgentError as exc:
                        error = exc

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
        self._state = SupervisorState.FAILED
        self._publish_state(error)
        if self.on_give_up is not None:
            self.on_give_up(error)

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
        return f"Supervisor({self.name!r}, {self.strategy}, {self._state.value}, children={self.child_names()})"
