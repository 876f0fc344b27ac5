"""The coordinator: one front door that answers user turns for every session.

:class:`Coordinator` satisfies the agent protocol (``name``, ``run(task, ctx)``,
``stream``), so the voice loop uses it like any agent. For each turn of session
``ctx.session_id`` it:

1. uses the session's strategy override, else the runtime-wide strategy, if one
   is set (:meth:`set_strategy`, :meth:`set_session_strategy`) - the strategy answers;
2. otherwise asks the :class:`ConversationRouter` (affinity, rules, default), gives
   the chosen agent any context a previous agent left ("Context from the previous
   agent: ..."), runs it with the ``handoff_conversation`` tool wired to the
   :class:`HandoffHandler`, and applies an accepted handoff when the turn ends;
3. lets the supervisor agent (if the router has one) observe the exchange;
   its note is published, never spoken.

Each agent's scratch state (``ctx.state``) is kept per session and agent between
turns, so cancelling a handoff-with-return keeps the specialist's partial state.
All session data lives in the :class:`SessionStore`; nothing is shared between
sessions. Thread-safety: turns of different sessions may run concurrently.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Generator, Mapping
from typing import Any

from edgevox.agents.base import Agent, AgentBase, AgentResult, AgentStream, context_or_new
from edgevox.agents.run import drain, run_child, stream_child
from edgevox.orchestration.delivery import DeliveryStrategy
from edgevox.orchestration.events import Routed, SupervisorObserved, TurnAnswered, UserTurn
from edgevox.orchestration.handoff import HandoffHandler
from edgevox.orchestration.routing import ConversationRouter
from edgevox.orchestration.state import ConversationState, SessionStore
from edgevox.orchestration.workflows import Workflow
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

Turn = Generator[Event, None, AgentResult]
Strategy = Agent | str | None
"""A strategy (any agent: a Pipeline, Swarm, Supervisor, Loop...), ``Coordinator.ROUTE``, or None."""


def _turn_result(
    text: str, agent: str, *, why: str, state: ConversationState | None = None, step: AgentResult | None = None
) -> AgentResult:
    """The coordinator's answer to one turn: ``text`` is what the user hears, ``agent`` who
    answered ("" if nobody did); ``data["why"]`` (affinity, rule:<name>, default, strategy,
    human, agent-output, no-agent) and ``data["state"]`` (the session's state afterwards)."""
    ok, error = (step.ok, step.error) if step is not None else (True, "")
    steps = [step] if step is not None else []
    return AgentResult(text, agent=agent, ok=ok, error=error, steps=steps, data={"why": why, "state": state})


class Coordinator(AgentBase):
    """Routes turns between agents, applies handoffs, and runs strategies per session."""

    ROUTE = "route"
    """Strategy value meaning "route turn by turn" (overrides a runtime-wide strategy per session)."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        *,
        router: ConversationRouter | None = None,
        handoff: HandoffHandler | None = None,
        store: SessionStore | None = None,
        strategy: Strategy = None,
        name: str = "orchestrator",
        bus: EventBus | None = None,
        timeout_s: float | None = None,
        delivery: DeliveryStrategy | None = None,
    ) -> None:
        self.name = name
        self.delivery = delivery
        """Delivery strategy for background results (what async strategies submit to)."""
        self.agents = dict(agents)
        self.store = store or SessionStore()
        self.router = router or ConversationRouter(self.agents, default_agent=next(iter(self.agents)))
        missing = set(self.router.agents) - set(self.agents)
        if missing:
            raise ValueError(f"router names agents that were not given: {sorted(missing)}")
        self.bus = bus
        self.handoff = handoff or HandoffHandler(self.agents, self.store, publish=self._publish)
        self.timeout_s = timeout_s
        self._strategy = strategy
        self._session_strategies: dict[str, Agent | str] = {}
        self._lock = threading.Lock()

    # -- strategies --------------------------------------------------------------------------

    def set_strategy(self, strategy: Strategy) -> None:
        """The runtime-wide strategy (None = route between agents turn by turn)."""
        with self._lock:
            self._strategy = strategy

    def set_session_strategy(self, session_id: str, strategy: Strategy) -> None:
        """Override the strategy for one session (None removes the override; :attr:`ROUTE`
        routes that session turn by turn even when a runtime-wide strategy is set)."""
        if isinstance(strategy, str) and strategy != self.ROUTE:
            raise ValueError(f"session strategy {strategy!r}: a strategy object, None, or Coordinator.ROUTE")
        with self._lock:
            if strategy is None:
                self._session_strategies.pop(session_id, None)
            else:
                self._session_strategies[session_id] = strategy

    def strategy_for(self, session_id: str) -> Agent | None:
        with self._lock:
            strategy = self._session_strategies.get(session_id, self._strategy)
        return None if isinstance(strategy, str) else strategy

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for strategies' background work (async supervisor answers, background
        delegations) to finish; names of threads still running at the deadline."""
        with self._lock:
            candidates = [self._strategy, *self._session_strategies.values()]
        unique = {id(s): s for s in candidates if isinstance(s, Workflow)}
        deadline = time.monotonic() + timeout_s
        left: list[str] = []
        for strategy in unique.values():
            left += strategy.close(max(0.0, deadline - time.monotonic()))
        return left

    # -- the agent protocol -------------------------------------------------------------------

    def next_turn_tools(self) -> list[Any]:
        """Every member agent's tools: routing picks the agent at the turn, so STT is biased
        toward all of them (:class:`edgevox.voice.vocabulary.VocabularySource`)."""
        from edgevox.voice.vocabulary import tools_of  # loaded only by the voice loop that asks

        return [tool for agent in self.agents.values() for tool in tools_of(agent)]

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        """The agent streaming protocol: the answering agent's events as it runs (its reply
        as ``ReplyDelta`` pieces while it is generated, so the voice loop speaks at once)."""
        return AgentStream(self._turn(task, context_or_new(ctx)))

    def state(self, session_id: str) -> ConversationState:
        return self.store.state(session_id)

    # -- one turn ------------------------------------------------------------------------------

    def handle(self, text: str, ctx: AgentContext, *, intent: str | None = None, source: str = "user") -> AgentResult:
        """Answer one user turn of ``ctx.session_id`` (on the calling thread)."""
        return drain(self._turn(text, ctx, intent=intent, source=source))

    def _turn(self, text: str, ctx: AgentContext, *, intent: str | None = None, source: str = "user") -> Turn:
        """One turn as a generator: yields the answering agent's events, returns the result."""
        session = ctx.session_id
        turn = UserTurn(source=source, session_id=session, text=text, intent=intent)
        if self.router.is_agent_output(turn):
            return _turn_result("", "", why="agent-output")
        strategy = self.strategy_for(session)
        if strategy is not None:
            outcome = yield from stream_child(strategy, text, ctx, timeout_s=self.timeout_s)
            self._reply(session, strategy.name, outcome.text, outcome.ok)
            return _turn_result(outcome.text, outcome.agent, why="strategy", step=outcome)

        self.handoff.begin_turn(session)
        state = self.store.state(session)
        decision = self.router.route(turn, state)
        self._publish(
            Routed(
                source=self.name, session_id=session, agent=decision.agent or "", why=decision.why, phase=state.phase
            )
        )
        if decision.agent is None:
            return _turn_result("", "", why=decision.why, state=state)
        agent = decision.agent

        def activate(s: ConversationState) -> ConversationState:
            if s.active_agent != agent:
                s = s.transition(to_agent=agent, reason=decision.why)
            return s

        state = self.store.update(session, activate)
        context, state = state.take_context()
        self.store.save_state(state)
        task = f"{context}\n\nUser: {text}" if context else text
        scratch_key = f"scratch/{agent}"
        scratch = self.store.get_record(session, scratch_key) or {}
        try:
            outcome = yield from stream_child(
                self.agents[agent],
                task,
                ctx,
                timeout_s=self.timeout_s,
                handoff=self.handoff,
                state=scratch,
            )
        except GeneratorExit:
            # The listener stopped reading (barge-in): the agent's turn is over, and a
            # handoff it made before its reply still stands.
            self.store.put_record(session, scratch_key, _jsonable(scratch))
            self.handoff.commit(session)
            raise
        self.store.put_record(session, scratch_key, _jsonable(scratch))
        new_state = self.handoff.commit(session) or self.store.state(session)
        self._reply(session, agent, outcome.text, outcome.ok)
        self._observe(text, agent, outcome, ctx)
        return _turn_result(outcome.text, outcome.agent, why=decision.why, state=new_state, step=outcome)

    def cancel_workflow(self, session_id: str, reason: str = "cancelled") -> ConversationState | None:
        """Cancel the session's open handoff-with-return, keeping the specialist's scratch state."""
        state = self.store.state(session_id)
        partial = self.store.get_record(session_id, f"scratch/{state.active_agent}") if state.active_agent else None
        return self.handoff.cancel_workflow(session_id, partial=partial, reason=reason)

    def resume_workflow(self, session_id: str) -> dict[str, Any] | None:
        partial = self.handoff.resume_workflow(session_id)
        state = self.store.state(session_id)
        if partial is not None and state.active_agent:
            self.store.put_record(session_id, f"scratch/{state.active_agent}", partial)
        return partial

    # -- internals -------------------------------------------------------------------------------

    def _observe(self, text: str, agent: str, outcome: AgentResult, ctx: AgentContext) -> None:
        sup = self.router.supervisor
        if sup is None or sup == agent:
            return
        note = run_child(
            self.agents[sup],
            f"Observe this exchange and note any problem in one sentence.\nUser: {text}\n{agent}: {outcome.text}",
            ctx,
            timeout_s=self.timeout_s,
        )
        self._publish(
            SupervisorObserved(source=sup, session_id=ctx.session_id, supervisor=sup, agent=agent, note=note.text)
        )

    def _reply(self, session: str, agent: str, text: str, ok: bool) -> None:
        self._publish(TurnAnswered(source=agent, session_id=session, agent=agent, text=text, ok=ok))

    def _publish(self, event: Event) -> None:
        if self.bus is not None and not self.bus.closed:
            self.bus.publish(event)


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    """Keep the JSON-serialisable entries of an agent's scratch state (the rest cannot persist)."""
    out = {}
    for key, item in value.items():
        try:
            json.dumps(item)
        except (TypeError, ValueError):
            continue
        out[str(key)] = item
    return out
