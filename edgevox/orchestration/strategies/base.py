"""The base of orchestration strategies: several agents answering as one.

Every strategy is an :class:`Orchestration`, a :class:`~edgevox.orchestration.workflows.Workflow`
with a timeout and a session store: it satisfies the one agent contract (``name``,
``stream``, ``run``) and can be used wherever an agent can (the voice loop, a
workflow, another strategy). Its answer is an :class:`~edgevox.agents.base.AgentResult`
whose ``agent`` is the agent that spoke, ``steps`` every child run, and ``data`` the
strategy's facts. Custom strategies subclass :class:`Orchestration` and implement
``_run(task, ctx)`` (a generator returning the result), calling agents through
:meth:`Orchestration.call` and :meth:`Orchestration.stream_call` (both
:func:`~edgevox.agents.run.run_child`).

Progress: every run records, per session, which agents it started and which finished
(:meth:`Orchestration.progress`, a :class:`RunProgress`). The Coordinator reads it for its
heartbeat events (strategy, step, agent, elapsed) and, when the turn's overall timeout
passes, to answer with the finished agents' results and name the ones that did not finish.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from edgevox.agents.base import Agent, AgentResult, AgentStream, context_or_new
from edgevox.agents.run import child_name, drain, stream_child
from edgevox.orchestration.state import SessionStore
from edgevox.orchestration.workflows import Workflow
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event


@dataclass
class StepProgress:
    """One agent run of a strategy run: ``done`` once it returned, with its reply and ``ok``."""

    agent: str
    done: bool = False
    ok: bool = False
    text: str = ""


@dataclass
class RunProgress:
    """What one run of a strategy has done so far (for heartbeats and graceful timeouts)."""

    strategy: str
    session_id: str
    steps: list[StepProgress] = field(default_factory=list)
    finished: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def started(self, agent: str) -> StepProgress:
        step = StepProgress(agent)
        with self._lock:
            self.steps.append(step)
        return step

    def ended(self, step: StepProgress, result: AgentResult | None) -> None:
        with self._lock:
            step.done = True
            if result is not None:
                step.ok, step.text = result.ok, result.text

    def snapshot(self) -> tuple[int, str]:
        """(agent steps started, the agent running now or "" between steps)."""
        with self._lock:
            running = [s.agent for s in self.steps if not s.done]
            return len(self.steps), (running[-1] if running else "")

    def finished_steps(self) -> list[StepProgress]:
        """Steps that returned a usable answer (ok, non-empty reply), in order."""
        with self._lock:
            return [s for s in self.steps if s.done and s.ok and s.text.strip()]

    def unfinished_agents(self) -> list[str]:
        """Agents that were still running (or failed) when the run stopped, in order, once each."""
        with self._lock:
            names = [s.agent for s in self.steps if not (s.done and s.ok)]
        return list(dict.fromkeys(names))


class Orchestration(Workflow):
    """Base class of strategies (and of custom ones). Thread-safe if its agents are."""

    name: str = "orchestration"

    def __init__(
        self, *, name: str | None = None, timeout_s: float | None = None, store: SessionStore | None = None
    ) -> None:
        if name:
            self.name = name
        self.timeout_s = timeout_s
        self._store = store or SessionStore()
        self._progress: dict[str, RunProgress] = {}
        self._progress_lock = threading.Lock()

    # -- progress --------------------------------------------------------------------------

    def progress(self, session_id: str) -> RunProgress | None:
        """The session's current (or last) run of this strategy; None before its first run."""
        with self._progress_lock:
            return self._progress.get(session_id)

    def _begin_progress(self, session_id: str) -> RunProgress:
        run = RunProgress(self.name, session_id)
        with self._progress_lock:
            self._progress[session_id] = run
        return run

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        ctx = context_or_new(ctx)
        return AgentStream(self._tracked(task, ctx))

    def _tracked(self, task: str, ctx: AgentContext) -> Generator[Event, None, AgentResult]:
        run = self._begin_progress(ctx.session_id)
        try:
            return (yield from self._run(task, ctx))
        finally:
            run.finished = True

    def call(self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object) -> AgentResult:
        """Run one agent (child context, this strategy's timeout). Raises only ``Cancelled``."""
        return drain(self.stream_call(agent, task, ctx, **child_fields))

    def stream_call(
        self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object
    ) -> Generator[Event, None, AgentResult]:
        """:meth:`call` for the agent whose reply is the answer: yields its events as it runs
        (``result = yield from self.stream_call(...)``), so the reply can be spoken at once."""
        run = self.progress(ctx.session_id)
        step = run.started(child_name(agent)) if run is not None and not run.finished else None
        result: AgentResult | None = None
        try:
            result = yield from stream_child(agent, task, ctx, timeout_s=self.timeout_s, **child_fields)
            return result
        finally:
            if run is not None and step is not None:
                run.ended(step, result)

    def store_for(self, ctx: AgentContext) -> SessionStore:
        """Where per-session records live: the context's blackboard, else this strategy's own store."""
        return SessionStore(ctx.blackboard) if ctx.blackboard is not None else self._store


def check_agents(kind: str, agents: Sequence[Agent]) -> list[Agent]:
    if not agents:
        raise ValueError(f"{kind} needs at least one agent")
    names = [child_name(a) for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"{kind}: agent names must be unique, got {names}")
    return list(agents)
