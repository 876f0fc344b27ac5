"""BackgroundAgent: an agent on its own supervised thread, triggered by bus events.

Over 400 lines because a BackgroundAgent is one state machine: its incarnation loop, its exit
path (the OTP restart decision) and its stop share one lock and one state, and nearly 50 of the
lines are their specification, below.

Threads
-------
* The publisher's thread runs only a filter and a bounded ``Mailbox.put`` (own
  events are skipped unless ``include_own=True``; control events are never dropped;
  data events overflow by ``drop_oldest`` / ``drop_new``, counted exactly in
  ``dropped_events`` because the count is kept under the mailbox lock). Stream events
  (reply deltas, tokens, feedback ticks) yield to every other data event, so a ``"*"``
  agent with ``max_queue=32`` keeps a sensor alert published during a 500-token reply;
  the stream events it had to discard are counted in ``dropped_stream_events``.
* Each *incarnation* runs on a fresh thread named ``edgevox-bg-<agent name>``: it
  makes a fresh run context (child cancel token, empty ``state``), builds the agent
  (``factory()`` if given - failure here is a failed start), then loops:
  ``event -> trigger(event) -> task -> agent.run(task, ctx)``. A trigger with a
  held trailing task (``debounce_trigger``) is served by the same loop: it waits
  on the mailbox for at most ``trigger.due_in_s()`` and then calls ``poll()``.

Restart semantics (OTP)
-----------------------
An incarnation ends by a *crash* (``run``, ``trigger`` or ``factory`` raised) or a
*clean exit* (``run`` returned :data:`EXIT`). Then, on the ending thread::

    restart = permanent or (transient and crashed)        # temporary: never
    if not restart:   state = FAILED if crashed else STOPPED; unsubscribe
    elif more than max_restarts restarts within restart_window_s (clock):
                      give up: unsubscribe, FAILED, AgentStateEvent, on_give_up(error)
    else:             restart_count += 1; start a NEW thread (new incarnation)

The window is OTP's intensity: restarts at ``t`` count while ``now - t <
restart_window_s``; the (max_restarts+1)-th restart inside the window gives up.
Failed starts of a new incarnation count like any crash. The very first start is
synchronous: ``start()`` raises :class:`~edgevox.errors.AgentError` if the first
incarnation cannot start (so a supervisor can roll back).

``stop(timeout_s)`` (or EdgeVox's ``stop(timeout=...)``) cancels the in-flight run
through its context's cancel token, then either fails the queued events
(``drain=False``: discarded and reported) or lets them run (``drain=True``, until
the deadline), joins the thread with a timeout and reports a thread it had to abandon
(its late results are ignored). It never joins while holding the agent's lock (the
exiting worker needs it), and it is safe
from many threads at once (:class:`~edgevox.runtime.lifecycle.SharedStop`): one
caller stops, the others wait up to their own timeout and get the same report. A
``stop()`` after the agent stopped joins what may still run and reports it again.

Anything ``run``, ``trigger`` or ``factory`` raises - ``SystemExit`` included -
is a crash for the restart policy, never a silently dead thread.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from edgevox.errors import AgentError, BusClosedError, Cancelled, LifecycleError
from edgevox.runtime.activities import track
from edgevox.runtime.agent import agent_name
from edgevox.runtime.bus import EventBus, Subscription, split_selector
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import AgentStateEvent, ErrorEvent, Event
from edgevox.runtime.lifecycle import SharedStop, StopReport, stop_timeout
from edgevox.runtime.limits import count, duration, wait_s
from edgevox.runtime.mailbox import Mailbox

if TYPE_CHECKING:
    from edgevox.agents.base import Agent

RestartType = Literal["permanent", "transient", "temporary"]
RESTART_TYPES = ("permanent", "transient", "temporary")
BG_OVERFLOW = ("drop_oldest", "drop_new")


class _Exit:
    def __repr__(self) -> str:
        return "EXIT"


EXIT: Any = _Exit()
"""Return this from ``run()`` to end the agent cleanly (a *clean exit* in OTP terms)."""


class AgentState(str, Enum):
    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    RESTARTING = "restarting"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


_ACTIVE = (AgentState.STARTING, AgentState.RUNNING, AgentState.RESTARTING, AgentState.STOPPING)


class BackgroundAgent:
    """Run ``agent`` on its own thread for each task ``trigger(event)`` returns.

    ``agent``: anything with ``name`` and ``run(task, ctx)``; or pass ``factory`` (a
    zero-argument callable returning such an agent) to get a fresh agent per incarnation.
    ``trigger``: ``event -> task | None`` (``None`` = the event itself is the task).
    """

    EXIT = EXIT

    def __init__(
        self,
        agent: Agent | None = None,
        trigger: Callable[[Event], Any] | None = None,
        subscribe_to: Any = "*",
        max_queue: int = 32,
        overflow: Literal["drop_oldest", "drop_new"] = "drop_oldest",
        restart: RestartType = "transient",
        max_restarts: int = 5,
        restart_window_s: float = 60.0,
        *,
        name: str | None = None,
        factory: Callable[[], Agent] | None = None,
        include_own: bool = False,
        clock: Callable[[], float] = time.monotonic,
        start_timeout_s: float = 5.0,
        shutdown_timeout_s: float = 5.0,
    ) -> None:
        if (agent is None) == (factory is None):
            raise TypeError("BackgroundAgent: pass exactly one of agent=... or factory=...")
        if restart not in RESTART_TYPES:
            raise ValueError(f"restart = {restart!r}: must be one of {', '.join(RESTART_TYPES)}")
        if overflow not in BG_OVERFLOW:
            raise ValueError(f"overflow = {overflow!r}: must be one of {', '.join(BG_OVERFLOW)}")
        self.name = name or (agent_name(agent) if agent is not None else "")
        if not self.name:
            raise TypeError("BackgroundAgent(factory=...): pass name=... as well")
        owner = f"BackgroundAgent {self.name!r}"
        if trigger is not None and not callable(trigger):
            raise TypeError(
                f"{owner}: trigger = {trigger!r} is not callable; pass a function event -> task | None "
                "(to choose which events arrive, use subscribe_to=...)"
            )
        if factory is not None and not callable(factory):
            raise TypeError(f"{owner}: factory = {factory!r} is not callable; pass a function () -> agent")
        try:
            split_selector(subscribe_to)
        except TypeError as exc:
            raise TypeError(f"{owner}: subscribe_to: {exc}") from None
        max_queue = count("max_queue", max_queue, owner=owner, minimum=1)
        max_restarts = count("max_restarts", max_restarts, owner=owner)
        restart_window_s = duration("restart_window_s", restart_window_s, owner=owner, above_minimum=True)
        start_timeout_s = duration("start_timeout_s", start_timeout_s, owner=owner, above_minimum=True)
        shutdown_timeout_s = duration("shutdown_timeout_s", shutdown_timeout_s, owner=owner)
        self.agent = agent
        self.factory = factory
        self.trigger = trigger
        self.subscribe_to = subscribe_to
        self.max_queue = max_queue
        self.overflow = overflow
        self.restart = restart
        self.max_restarts = max_restarts
        self.restart_window_s = restart_window_s
        self.include_own = include_own
        self.clock = clock
        self.start_timeout_s = start_timeout_s
        self.shutdown_timeout_s = shutdown_timeout_s
        self.on_give_up: Callable[[BackgroundAgent, BaseException | None], Any] | None = None

        self.restart_count = 0
        self.runs = 0
        self.last_error: BaseException | None = None
        self.abandoned_threads: list[str] = []
        self._state = AgentState.NEW
        self._lock = threading.Lock()
        self._gen = 0
        self._restarts: deque[float] = deque()
        self._bus: EventBus | None = None
        self._base_ctx: AgentContext | None = None
        self._mailbox = Mailbox(max_queue, overflow)
        self._dropped_before = 0
        self._stream_dropped_before = 0
        self._sub: Subscription | None = None
        self._thread: threading.Thread | None = None
        self._accepting = False
        self._hard_stop = False
        self._start_error: BaseException | None = None
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)

    # -- introspection -----------------------------------------------------------------------

    @property
    def state(self) -> AgentState:
        return self._state

    @property
    def dropped_events(self) -> int:
        """Data events discarded by the overflow policy (exact; since construction). Stream
        events (reply deltas, tokens) are not counted here: see :attr:`dropped_stream_events`."""
        return self._dropped_before + self._mailbox.dropped

    @property
    def dropped_stream_events(self) -> int:
        """Stream events (reply deltas, tokens, feedback ticks) discarded, mostly to make room
        for other events (exact; since construction)."""
        return self._stream_dropped_before + self._mailbox.stream_dropped

    @property
    def queued(self) -> int:
        return len(self._mailbox)

    @property
    def thread(self) -> threading.Thread | None:
        """The current incarnation's thread."""
        return self._thread

    # -- lifecycle ---------------------------------------------------------------------------

    def start(
        self,
        ctx: AgentContext | None = None,
        bus: EventBus | None = None,
        *,
        on_give_up: Callable[[BackgroundAgent, BaseException | None], Any] | None = None,
    ) -> BackgroundAgent:
        """Subscribe and start the first incarnation; returns once it runs (caller's thread).

        Raises AgentError if it cannot start within ``start_timeout_s``; LifecycleError if
        already running. May be called again after STOPPED or FAILED (a fresh start:
        the restart window is cleared).
        """
        bus = bus or (ctx.bus if ctx is not None else None)
        if bus is None:
            raise ValueError(f"BackgroundAgent {self.name!r}: start(ctx, bus) needs a bus (or a ctx with one)")
        base = ctx if ctx is not None else AgentContext(bus=bus)
        ready = threading.Event()
        with self._lock:
            if self._state in _ACTIVE:
                raise LifecycleError(
                    f"BackgroundAgent {self.name!r}: cannot start while {self._state.name}; stop() it first"
                )
            if on_give_up is not None:
                self.on_give_up = on_give_up
            self._bus = bus
            self._base_ctx = base.child(bus=bus, agent_name=self.name)
            self._restarts.clear()
            self._hard_stop = False
            self._start_error = None
            self._dropped_before += self._mailbox.dropped
            self._stream_dropped_before += self._mailbox.stream_dropped
            self._mailbox = Mailbox(self.max_queue, self.overflow)
            self._state = AgentState.STARTING
            self._accepting = True
            self._sub = bus.subscribe(self.subscribe_to, self._on_event, name=f"bg-{self.name}")
            self._spawn_locked(ready)
        if not ready.wait(self.start_timeout_s):
            self.stop(timeout_s=1.0)
            raise AgentError(f"background agent {self.name!r} did not start within {self.start_timeout_s} s")
        if self._start_error is not None:
            err = self._start_error
            self._base_ctx.cancel_token.cancel(f"background agent {self.name!r} failed to start")
            raise AgentError(f"background agent {self.name!r} failed to start: {err!r}") from err
        if self._state in (AgentState.STOPPING, AgentState.STOPPED):
            raise AgentError(f"background agent {self.name!r} was stopped while it started")
        self._publish_state(AgentState.RUNNING)
        return self

    def stop(self, timeout_s: float | None = None, *, drain: bool = False, timeout: float | None = None) -> StopReport:
        """Stop and join within ``timeout_s`` (default ``shutdown_timeout_s``; ``timeout`` is
        EdgeVox's spelling; see the module docstring). Returns a StopReport (truthy when clean).
        Safe from many threads at once."""
        timeout_s = wait_s(
            "timeout_s",
            stop_timeout(timeout_s, timeout, self.shutdown_timeout_s),
            owner=f"BackgroundAgent {self.name!r}.stop",
        )
        return self._stops.run(timeout_s, lambda deadline: self._stop(deadline, drain))

    def _still_running(self) -> StopReport:
        """For a concurrent stopper whose deadline passed before the stop ended."""
        thread = self._thread
        alive = thread is not None and thread.is_alive() and thread is not threading.current_thread()
        return StopReport.abandoned_threads([thread.name] if alive and thread is not None else [])

    def _stop(self, deadline: float | None, drain: bool) -> StopReport:
        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._lock:
            state, thread = self._state, self._thread
            if state not in _ACTIVE:
                if state is AgentState.NEW:
                    self._state = AgentState.STOPPED
                ended = True
            else:
                ended = False
                self._state = AgentState.STOPPING
                self._accepting = False
                sub, mailbox, base = self._sub, self._mailbox, self._base_ctx
                if not drain:
                    self._hard_stop = True
        if ended:
            # already stopped or failed: join what may still run (never under the lock) and say so
            return self._join(thread, left(), StopReport())
        if sub is not None:
            sub.close()
        report = StopReport()
        if drain:
            mailbox.close()  # the worker runs what is queued, then exits
            if thread is not None and thread is not threading.current_thread():
                thread.join(left())
            self._hard_stop = True
        report.discarded = len(mailbox.drain())
        mailbox.close()
        if base is not None:
            base.cancel_token.cancel(f"background agent {self.name!r} stopped")
        report = self._join(thread, left(), report)
        with self._lock:
            self._gen += 1  # an abandoned thread's late exit is ignored
            self._state = AgentState.STOPPED
        self._publish_state(AgentState.STOPPED)
        return report

    def _join(self, thread: threading.Thread | None, timeout_s: float | None, report: StopReport) -> StopReport:
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
            if thread.is_alive():
                report.clean = False
                report.abandoned.append(thread.name)
                self.abandoned_threads.append(thread.name)
        return report

    # -- publisher side ----------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        """Runs on the publisher's thread: filter and enqueue, nothing else."""
        if not self._accepting:
            return
        if not self.include_own and event.source == self.name:
            return  # never feed on our own events
        self._mailbox.put(event)

    # -- incarnations (worker threads) -------------------------------------------------------

    def _spawn_locked(self, ready: threading.Event | None) -> None:
        self._gen += 1
        thread = threading.Thread(
            target=self._incarnation, args=(self._gen, ready), name=f"edgevox-bg-{self.name}", daemon=True
        )
        self._thread = thread
        thread.start()

    def _incarnation(self, gen: int, ready: threading.Event | None) -> None:
        """Body of one worker thread: fresh context and agent, then the event loop."""
        base = self._base_ctx
        assert base is not None
        ctx = base.child(state={})
        error: BaseException | None = None
        started = False
        try:
            agent = self.factory() if self.factory is not None else self.agent
            with self._lock:
                if gen == self._gen and self._state in (AgentState.STARTING, AgentState.RESTARTING):
                    self._state = AgentState.RUNNING
            started = True
            if ready is not None:
                ready.set()
            self._loop(agent, ctx)
        except BaseException as exc:  # noqa: BLE001 - a crash (SystemExit too) is data for the restart policy
            error = exc
        finally:
            ctx.cancel_token.detach()
        self._on_exit(gen, ready, started, error)

    def _loop(self, agent: Any, ctx: AgentContext) -> None:
        mailbox = self._mailbox
        trigger = self.trigger
        due_in = getattr(trigger, "due_in_s", None)
        poll = getattr(trigger, "poll", None)
        while not self._hard_stop:
            event = mailbox.get(due_in() if due_in is not None else None)
            if event is not None:
                task = trigger(event) if trigger is not None else event
            elif mailbox.closed and not len(mailbox):
                return  # stopped
            else:
                task = poll() if poll is not None else None  # a held trailing task may be due
            if task is None or self._hard_stop:
                continue
            # Each run in its own child context, registered with the runtime's activities: a
            # safety stop cancels this run (not the incarnation; the next event runs normally).
            run_ctx = ctx.child()
            try:
                with track(ctx, "background", self.name, run_ctx.cancel_token):
                    result = agent.run(task, run_ctx)
            finally:
                run_ctx.cancel_token.detach()
            self.runs += 1
            if result is EXIT:
                raise _CleanExit

    def _on_exit(self, gen: int, ready: threading.Event | None, started: bool, error: BaseException | None) -> None:
        """Runs on the ending thread: apply the restart policy (see the module docstring)."""
        clean_exit = isinstance(error, _CleanExit)
        crashed = error is not None and not clean_exit
        give_up = restarted = False
        with self._lock:
            outcome = self._state
            if gen != self._gen or self._state in (AgentState.STOPPING, AgentState.STOPPED):
                if ready is not None:
                    ready.set()  # stopped while starting: let start() return now, not at its timeout
                return  # stop() owns the outcome (or this thread was abandoned)
            if crashed and isinstance(error, Cancelled) and self._hard_stop:
                return
            if crashed:
                self.last_error = error
            if not started and ready is not None:
                # the first start failed: start() raises; no restart (the caller decides)
                self._start_error = error
                self._terminate_locked(AgentState.FAILED)
                ready.set()
                return
            if not (self.restart == "permanent" or (self.restart == "transient" and crashed)):
                outcome = AgentState.FAILED if crashed else AgentState.STOPPED
                self._terminate_locked(outcome)
            elif not self._allow_restart_locked():
                give_up = True
                outcome = AgentState.FAILED
                self._terminate_locked(outcome)
            else:
                self.restart_count += 1
                outcome = self._state = AgentState.RESTARTING
                self._spawn_locked(None)
                restarted = True
        if not restarted and self._base_ctx is not None:
            # terminated: unlink this start's token from the caller's (no growth across restarts)
            self._base_ctx.cancel_token.cancel(f"background agent {self.name!r} {outcome.value}")
        if crashed:
            self._publish_error(error)
        self._publish_state(outcome, error if crashed else None)
        if give_up and self.on_give_up is not None:
            try:
                self.on_give_up(self, error if crashed else None)
            except BaseException as exc:  # noqa: BLE001 - this thread ends here; say why instead of dying mute
                self._publish_error(exc)

    def _allow_restart_locked(self) -> bool:
        """OTP intensity: record this restart; False if it is one too many inside the window."""
        now = self.clock()
        window = self._restarts
        while window and now - window[0] >= self.restart_window_s:
            window.popleft()
        window.append(now)
        return len(window) <= self.max_restarts

    def _terminate_locked(self, state: AgentState) -> None:
        self._state = state
        self._accepting = False
        if self._sub is not None:
            self._sub.close()  # sync subscription: no thread to join, safe under our lock
        self._mailbox.drain()
        self._mailbox.close()

    # -- reporting ---------------------------------------------------------------------------

    def _publish(self, event: Event) -> None:
        bus = self._bus
        if bus is None:
            return
        try:
            bus.publish(event)
        except BusClosedError:
            pass  # shutting down: nobody is listening any more

    def _publish_state(self, state: AgentState, error: BaseException | None = None) -> None:
        self._publish(
            AgentStateEvent(
                source=self.name,
                agent=self.name,
                state=state.value,
                restart_count=self.restart_count,
                error=repr(error) if error is not None else "",
            )
        )

    def _publish_error(self, error: BaseException | None) -> None:
        if error is None:
            return
        self._publish(
            ErrorEvent(
                source=self.name,
                where=f"background agent {self.name!r}",
                error=repr(error),
                traceback="".join(traceback.format_exception(type(error), error, error.__traceback__)),
            )
        )

    def __repr__(self) -> str:
        return f"BackgroundAgent({self.name!r}, {self._state.value}, restarts={self.restart_count})"


class _CleanExit(Exception):
    """Internal: ``run()`` returned EXIT."""
