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
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.run import child_name, run_child, stream_child
from edgevox.orchestration.state import SessionStore
from edgevox.orchestration.workflows import Workflow
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event


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

    def call(self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object) -> AgentResult:
        """Run one agent (child context, this strategy's timeout). Raises only ``Cancelled``."""
        return run_child(agent, task, ctx, timeout_s=self.timeout_s, **child_fields)

    def stream_call(
        self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object
    ) -> Generator[Event, None, AgentResult]:
        """:meth:`call` for the agent whose reply is the answer: yields its events as it runs
        (``result = yield from self.stream_call(...)``), so the reply can be spoken at once."""
        return stream_child(agent, task, ctx, timeout_s=self.timeout_s, **child_fields)

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
