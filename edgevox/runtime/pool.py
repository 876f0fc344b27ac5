"""AgentPool: named agents sharing one bus and one blackboard.

``run(name, task)`` runs an agent on the *caller's* thread with a fresh context
from :meth:`AgentPool.make_ctx`; ``start_background(name, trigger=...)`` runs it
on its own supervised thread (a :class:`~edgevox.runtime.background.BackgroundAgent`
added to the pool's supervisor). ``stop_all()`` cancels the foreground runs in
flight and stops every background agent. All methods are thread-safe, and
``stop_all`` / ``stop_background`` are safe to call from many threads at once: an
agent stays listed until its stop has ended, so every caller waits for (and reports)
the same stops.

A pool made with ``AgentPool()`` owns a private bus, blackboard and supervisor
(and ``close()`` releases them); a Runtime passes its own. An agent added before the
supervisor starts (a Runtime not started yet) starts with it; once the supervisor has
given up (its restart budget spent, state FAILED) or stopped, ``start_background``
raises :class:`~edgevox.errors.LifecycleError` saying so and how to restart it,
instead of returning an agent nobody will start.

Every stop takes ``timeout_s`` or EdgeVox's spelling ``timeout``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from edgevox.errors import LifecycleError
from edgevox.runtime.agent import agent_name
from edgevox.runtime.background import AgentState, BackgroundAgent, RestartType
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.events import Event
from edgevox.runtime.lifecycle import StopReport, stop_timeout
from edgevox.runtime.limits import count, optional_wait_s, wait_s
from edgevox.runtime.supervisor import ChildSpec, RestartSupervisor, SupervisorState

if TYPE_CHECKING:
    from edgevox.agents.base import Agent


class AgentPool:
    """Registry of agents plus their background runners. See the module docstring."""

    def __init__(
        self,
        *,
        bus: EventBus | None = None,
        blackboard: Blackboard | None = None,
        supervisor: RestartSupervisor | None = None,
        ctx_defaults: Mapping[str, Any] | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        if max_concurrency is not None:
            max_concurrency = count(
                "max_concurrency", max_concurrency, owner="AgentPool", minimum=1, none_hint="(or None for no limit)"
            )
        self.max_concurrency = max_concurrency
        """At most this many :meth:`run` calls execute at once; the rest wait (cancellably)."""
        self._owns_bus = bus is None
        self._owns_blackboard = blackboard is None
        self._owns_supervisor = supervisor is None
        self.bus = bus if bus is not None else EventBus("pool")
        self.blackboard = blackboard if blackboard is not None else Blackboard(name="pool")
        self.supervisor = supervisor if supervisor is not None else RestartSupervisor("pool", bus=self.bus)
        self.ctx_defaults = dict(ctx_defaults or {})
        AgentContext(**self.ctx_defaults)  # fail now, naming the field, if a default is unknown
        self._lock = threading.Lock()
        self._agents: dict[str, Agent] = {}
        self._background: dict[str, BackgroundAgent] = {}
        self._in_flight: set[CancelToken] = set()
        self._slots_cond = threading.Condition()
        self._running = 0

    # -- registry ----------------------------------------------------------------------------

    def register(self, agent: Agent) -> Agent:
        """Add ``agent`` under its ``name``; a name already registered is a ValueError."""
        name = agent_name(agent)
        with self._lock:
            if name in self._agents:
                raise ValueError(f"agent name {name!r} is already registered in this pool; pick another name")
            self._agents[name] = agent
        return agent

    def unregister(self, name: str) -> Agent:
        with self._lock:
            if name in self._background:
                raise ValueError(f"agent {name!r} runs in the background; stop_background({name!r}) first")
            return self._agents.pop(name)

    def get(self, name: str) -> Agent:
        with self._lock:
            try:
                return self._agents[name]
            except KeyError:
                raise KeyError(f"no agent named {name!r}; registered: {sorted(self._agents)}") from None

    def names(self) -> list[str]:
        with self._lock:
            return list(self._agents)

    def __contains__(self, name: str) -> bool:
        with self._lock:
            return name in self._agents

    def __len__(self) -> int:
        with self._lock:
            return len(self._agents)

    # -- running -----------------------------------------------------------------------------

    def make_ctx(self, **overrides: Any) -> AgentContext:
        """A new top-level context with the shared bus and blackboard, the pool's
        ``ctx_defaults`` and then ``overrides`` (a fresh cancel token unless given)."""
        values: dict[str, Any] = {"bus": self.bus, "blackboard": self.blackboard, **self.ctx_defaults, **overrides}
        return AgentContext(**values)

    def run(self, name: str, task: Any, **ctx_overrides: Any) -> Any:
        """Run agent ``name`` on the calling thread with ``make_ctx(agent_name=name, ...)``.

        With ``max_concurrency`` set, a call waits for a free slot first; ``stop_all()`` (or
        the context's token) cancels the wait, which raises :class:`~edgevox.errors.Cancelled`.
        """
        agent = self.get(name)
        ctx = self.make_ctx(**{"agent_name": name, **ctx_overrides})
        token = ctx.cancel_token
        with self._lock:
            self._in_flight.add(token)
        try:
            self._acquire_slot(token)
            try:
                return agent.run(task, ctx)
            finally:
                self._release_slot()
        finally:
            with self._lock:
                self._in_flight.discard(token)

    def _acquire_slot(self, token: CancelToken) -> None:
        if self.max_concurrency is None:
            return

        def wake(_reason: str) -> None:
            with self._slots_cond:
                self._slots_cond.notify_all()

        remove = token.on_cancel(wake)
        try:
            with self._slots_cond:
                while self._running >= self.max_concurrency and not token.cancelled:
                    self._slots_cond.wait()
                token.raise_if_cancelled()
                self._running += 1
        finally:
            remove()

    def _release_slot(self) -> None:
        if self.max_concurrency is None:
            return
        with self._slots_cond:
            self._running -= 1
            self._slots_cond.notify()

    def start_background(
        self,
        name: str,
        trigger: Callable[[Event], Any] | None = None,
        subscribe_to: Any = "*",
        max_queue: int = 32,
        overflow: Literal["drop_oldest", "drop_new"] = "drop_oldest",
        restart: RestartType = "transient",
        max_restarts: int = 5,
        restart_window_s: float = 60.0,
        *,
        include_own: bool = False,
        clock: Callable[[], float] = time.monotonic,
        start_timeout_s: float = 5.0,
        shutdown_timeout_s: float = 5.0,
        factory: Callable[[], Agent] | None = None,
        ctx: AgentContext | None = None,
    ) -> BackgroundAgent:
        """Run registered agent ``name`` (or ``factory()`` per incarnation) in the background,
        supervised by the pool's supervisor. Every BackgroundAgent option is accepted.

        Raises :class:`~edgevox.errors.LifecycleError` if the supervisor has given up or is
        stopped (nothing would start the agent), AgentError if the agent cannot start."""
        agent = None if factory is not None else self.get(name)
        bg = BackgroundAgent(
            agent,
            trigger,
            subscribe_to,
            max_queue,
            overflow,
            restart,
            max_restarts,
            restart_window_s,
            name=name,
            factory=factory,
            include_own=include_own,
            clock=clock,
            start_timeout_s=start_timeout_s,
            shutdown_timeout_s=shutdown_timeout_s,
        )
        with self._lock:
            if name in self._background:
                raise ValueError(f"agent {name!r} already runs in the background; stop_background({name!r}) first")
            self._background[name] = bg
        try:
            self.supervisor.add_child(ChildSpec.for_background(bg, ctx or self.make_ctx(agent_name=name), self.bus))
            if self._owns_supervisor and self.supervisor.state is SupervisorState.NEW:
                self.supervisor.start()
            if bg.state is AgentState.NEW and self.supervisor.state is not SupervisorState.NEW:
                # added to a supervisor that gave up or stopped: nothing would ever start it
                raise LifecycleError(self._not_supervised(name))
        except BaseException:
            with self._lock:
                self._background.pop(name, None)
            if name in self.supervisor.child_names():
                self.supervisor.remove_child(name, 1.0)
            raise
        return bg

    def _not_supervised(self, name: str) -> str:
        sup = self.supervisor
        what = f"AgentPool: cannot start background agent {name!r}: supervisor {sup.name!r}"
        if sup.state is SupervisorState.FAILED:
            last = f"; last error: {sup.last_error!r}" if sup.last_error is not None else ""
            return (
                f"{what} gave up (more than {sup.max_restarts} restarts within {sup.restart_window_s:g} s{last}); "
                "restart it with pool.supervisor.start() (it restarts the agents it had), then start this one again"
            )
        return f"{what} is {sup.state.value}; start it with pool.supervisor.start(), or make a new pool or Runtime"

    def background(self, name: str) -> BackgroundAgent:
        with self._lock:
            return self._background[name]

    def background_names(self) -> list[str]:
        with self._lock:
            return list(self._background)

    def background_agents(self) -> list[BackgroundAgent]:
        """The background agents running (or stopping) now, in start order."""
        with self._lock:
            return list(self._background.values())

    def stop_background(self, name: str, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Stop background agent ``name`` (within ``timeout_s``, default its shutdown timeout;
        ``timeout`` is EdgeVox's spelling) and forget it. A concurrent call for the same agent
        waits for the same stop."""
        if timeout is not None:  # EdgeVox's spelling (with no default here: None = the agent's own)
            timeout_s = stop_timeout(timeout_s, timeout, timeout)
        timeout_s = optional_wait_s("timeout_s", timeout_s, owner=f"AgentPool.stop_background({name!r})")
        with self._lock:
            bg = self._background.get(name)
            if bg is None:
                raise KeyError(f"agent {name!r} is not running in the background; running: {sorted(self._background)}")
        try:
            report = self.supervisor.remove_child(name, timeout_s)
        except KeyError:  # another caller is removing it: share that stop (BackgroundAgent.stop is shared)
            report = bg.stop(timeout_s)
        with self._lock:
            if self._background.get(name) is bg:
                del self._background[name]
        return report

    def stop_all(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Cancel foreground runs in flight and stop every background agent (reverse order),
        within ``timeout_s`` (default 5 s; ``timeout`` is EdgeVox's spelling)."""
        timeout_s = wait_s("timeout_s", stop_timeout(timeout_s, timeout, 5.0), owner="AgentPool.stop_all")
        deadline = time.monotonic() + timeout_s
        with self._lock:
            tokens = list(self._in_flight)
            agents = list(self._background.values())
        for token in tokens:
            token.cancel("agent pool stopping")
        reports = []
        for bg in reversed(agents):
            left = min(bg.shutdown_timeout_s, max(0.0, deadline - time.monotonic()))
            try:
                reports.append(self.stop_background(bg.name, left))
            except KeyError:
                reports.append(bg.stop(left))  # stopped and forgotten meanwhile: re-check it truthfully
        return StopReport.merge(reports)

    def close(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """``stop_all`` and release what this pool created itself (bus, blackboard, supervisor),
        within ``timeout_s`` (default 5 s; ``timeout`` is EdgeVox's spelling)."""
        timeout_s = wait_s("timeout_s", stop_timeout(timeout_s, timeout, 5.0), owner="AgentPool.close")
        deadline = time.monotonic() + timeout_s
        report = self.stop_all(timeout_s)
        left = lambda: max(0.0, deadline - time.monotonic())  # noqa: E731
        extra: list[str] = []
        if self._owns_supervisor:
            report = StopReport.merge([report, self.supervisor.stop(left())])
        if self._owns_blackboard:
            extra += self.blackboard.close(left())
        if self._owns_bus:
            extra += self.bus.close(left())
        return StopReport.merge([report, StopReport.abandoned_threads(extra)])

    def __enter__(self) -> AgentPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
