"""Runtime: the one object that owns a bus, a blackboard, a root supervisor and a pool.

Nothing here is global: two Runtimes in one process share nothing (a test builds
one per test; one ROS node can host two). Library code never installs signal
handlers, prints or exits - ``start()`` returns, ``stop(timeout_s)`` reports.

Lifecycle (illegal transitions raise :class:`~edgevox.errors.LifecycleError`)::

    NEW --start()--> STARTING --> RUNNING --stop()--> STOPPING --> STOPPED
                        |            |                   ^
                        |            +-- root supervisor gives up --> FAILED --stop()--+
                        +-- a child fails to start (rolled back) --> STOPPED (start() raises)

``stop()`` on NEW releases the resources (-> STOPPED); a second ``stop()`` returns the
first report. A Runtime is not restartable: build a new one. ``stop`` is safe from many
threads at once: the first caller stops, the others wait (each up to its own timeout)
and get the same report, or - if their deadline comes first - one naming what still runs.

Shutdown order: publish :class:`~edgevox.runtime.events.ShutdownEvent` (control: it
overtakes queued data), cancel every registered activity (``runtime.activities``: skills,
tools, generations, workers; whatever ignores the cancel is named), cancel foreground
runs, stop the supervisor (children in reverse start order, each within its shutdown
timeout), close the blackboard, close the bus. Each step gets what is left of
``timeout_s``; whatever did not finish is named in ``StopReport.abandoned``. The deadline
holds even while the supervisor is in the middle of a restart waiting on a stuck child
(``runtime/supervisor.py``).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from edgevox.runtime.activities import SAFETY_STOP_REASON, ActivityRegistry, CancelReport
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import ErrorEvent, Event, ShutdownEvent, StopEvent
from edgevox.runtime.lifecycle import ComponentState, Lifecycle, SharedStop, StopReport, stop_timeout
from edgevox.runtime.limits import wait_s
from edgevox.runtime.pool import AgentPool
from edgevox.runtime.supervisor import RestartSupervisor, Strategy

RuntimeState = ComponentState
"""A Runtime's states are the components' states; only its transitions differ (``_TRANSITIONS``:
a running Runtime fails when its root supervisor gives up)."""


_S = RuntimeState
_TRANSITIONS = {
    _S.NEW: (_S.STARTING, _S.STOPPING),
    _S.STARTING: (_S.RUNNING, _S.STOPPED),
    _S.RUNNING: (_S.STOPPING, _S.FAILED),
    _S.FAILED: (_S.STOPPING,),
    _S.STOPPING: (_S.STOPPED,),
    _S.STOPPED: (),
}
_HINTS = {
    _S.RUNNING: "it is already running",
    _S.STOPPED: "a Runtime cannot be restarted; create a new Runtime",
    _S.FAILED: "its root supervisor gave up; call stop() and create a new Runtime",
}


class Runtime:
    """Owns ``bus``, ``blackboard``, ``supervisor`` and ``pool``. Use as a context manager
    or call ``start()`` / ``stop(timeout_s)``."""

    def __init__(
        self,
        name: str = "edgevox",
        *,
        strategy: Strategy = "one_for_one",
        max_restarts: int = 3,
        restart_window_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        async_watchers: bool = False,
        ctx_defaults: Mapping[str, Any] | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.name = name
        self.bus = EventBus(name)
        self.activities = ActivityRegistry(name)
        """Everything running on the robot's behalf; a :class:`StopEvent` cancels all of it."""
        self.blackboard = Blackboard(async_watchers=async_watchers, name=name, on_error=self._report_error)
        self.supervisor = RestartSupervisor(
            name,
            strategy=strategy,
            max_restarts=max_restarts,
            restart_window_s=restart_window_s,
            clock=clock,
            bus=self.bus,
        )
        self.pool = AgentPool(
            bus=self.bus,
            blackboard=self.blackboard,
            supervisor=self.supervisor,
            ctx_defaults={"activities": self.activities, **(ctx_defaults or {})},
            max_concurrency=max_concurrency,
        )
        self.failure: BaseException | None = None
        """Why the root supervisor gave up, if it did (state FAILED)."""
        self._life = Lifecycle(f"Runtime {name!r}", RuntimeState.NEW, _TRANSITIONS, _HINTS)
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)
        self._report: StopReport | None = None
        # A StopEvent from anyone (a ROS topic, a Zenoh peer, a bumper agent, the voice loop)
        # cancels everything registered; synchronous, on the publisher's thread.
        self._stop_sub = self.bus.subscribe(StopEvent, self._on_stop_event, name=f"{name}-safety-stop")

    def safety_stop(self, reason: str = SAFETY_STOP_REASON, *, grace_s: float = 0.1) -> CancelReport:
        """Cancel every registered activity now (skills, tools, generations, runs, workers) and
        report what was cancelled and what ignored the cancel for ``grace_s``. Publishes nothing:
        publish a :class:`StopEvent` to also stop speech (the voice loop listens for it)."""
        grace_s = wait_s("grace_s", grace_s, owner=f"Runtime {self.name!r}.safety_stop")
        return self.activities.cancel_all(reason, grace_s=grace_s)

    def _on_stop_event(self, event: Event) -> None:
        self.activities.cancel_all(SAFETY_STOP_REASON, grace_s=0.0)

    @property
    def state(self) -> RuntimeState:
        return self._life.state

    def start(self) -> Runtime:
        """Start the supervisor (and so every background agent added so far). Returns self."""
        self._life.to(RuntimeState.STARTING, "start")
        try:
            self.supervisor.start(on_give_up=self._on_supervisor_gave_up)
        except BaseException:
            self._life.to(RuntimeState.STOPPED)
            self.blackboard.close(1.0)
            self.bus.close(1.0)
            raise
        self._life.to(RuntimeState.RUNNING)
        return self

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Shut everything down within ``timeout_s`` (default 5 s; ``timeout`` is EdgeVox's
        spelling); see the module docstring for the order."""
        timeout_s = wait_s("timeout_s", stop_timeout(timeout_s, timeout, 5.0), owner=f"Runtime {self.name!r}.stop")
        return self._stops.run(timeout_s, self._stop)

    def _still_running(self) -> StopReport:
        """For a concurrent stopper whose deadline passed before the stop ended: what still runs."""
        threads = [self.supervisor.thread] + [bg.thread for bg in self.pool.background_agents()]
        alive = [t.name for t in threads if t is not None and t.is_alive()]
        return StopReport.abandoned_threads(alive or [f"runtime {self.name!r} (stop in progress)"])

    def _stop(self, deadline: float | None) -> StopReport:
        if self._report is not None:
            return self._report
        self._life.to(RuntimeState.STOPPING, "stop")
        assert deadline is not None  # stop() always passes a timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        if not self.bus.closed:
            self.bus.publish(ShutdownEvent(source=f"runtime:{self.name}"))
        running = self.activities.cancel_all(f"runtime {self.name!r} stopping", grace_s=min(left(), 0.5))
        reports = [self.pool.stop_all(left()), self.supervisor.stop(left())]
        self._stop_sub.close()
        abandoned = self.blackboard.close(left()) + self.bus.close(left())
        named = {n for r in reports for n in r.abandoned} | set(abandoned)
        # Work that ignored the cancel and still runs is named, unless its thread already is.
        still = [
            a.label
            for a in self.activities.running()
            if a.label in running.ignored and a.thread not in named and a.label not in named
        ]
        report = StopReport.merge(
            [*reports, StopReport.abandoned_threads(abandoned), StopReport.abandoned_threads(still)]
        )
        self._life.to(RuntimeState.STOPPED)
        self._report = report
        return report

    def _on_supervisor_gave_up(self, error: BaseException | None) -> None:
        """Runs on the root supervisor's thread: the end of the escalation chain."""
        self.failure = error
        self._life.to_if(RuntimeState.FAILED, RuntimeState.RUNNING)

    def _report_error(self, where: str, exc: BaseException) -> None:
        if self.bus.closed:
            return
        self.bus.publish(
            ErrorEvent(
                source=f"runtime:{self.name}",
                where=where,
                error=repr(exc),
                traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            )
        )

    def __enter__(self) -> Runtime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Runtime({self.name!r}, {self.state.value})"
