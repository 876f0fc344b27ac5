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
3. lets the supervisor agent (if the router has one) observe the exchange - every
   one: routed turns, strategy turns, handoffs, cancels, recoveries and turns a human
   holds (RoomKit's router supervisor); its note is published, never spoken.

Each agent's scratch state (``ctx.state``) is kept per session and agent between
turns, so cancelling a handoff-with-return keeps the specialist's partial state; a
workflow with return starts and ends with a fresh scratch state.

Around that, per session:

* **cancel by voice or text**: during a workflow with return, "cancel" / "never mind" /
  "stop that" cancels it like :meth:`cancel_workflow` and confirms; "cancel my order" goes
  to the agent; when unsure the coordinator asks (:mod:`edgevox.orchestration.cancel`);
* **failure recovery**: an agent other than the main one that fails or times out gives the
  conversation back to the main agent, which says so in one sentence and offers another
  way (:class:`~edgevox.orchestration.events.HandoffFailed`);
* **escalation**: a handoff to ``human`` publishes
  :class:`~edgevox.orchestration.events.Escalated` naming the turn's channel and tells the
  user who picks up where;
* **orchestration off**: :meth:`disable_orchestration` (YAML ``sessions: {id: single}``)
  sends every turn of that session to the main agent; :meth:`enable_orchestration` undoes it;
* **progress**: a turn longer than ``progress_interval_s`` publishes
  :class:`~edgevox.orchestration.events.OrchestrationProgress` heartbeats (and says
  ``still_working`` once); at ``timeout_s`` it answers with what was finished
  (:mod:`edgevox.orchestration.progress`, one timer wheel for all sessions).

All session data lives in the :class:`SessionStore`; nothing is shared between
sessions. Thread-safety: turns of different sessions may run concurrently.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import Agent, AgentBase, AgentResult, AgentStream, context_or_new
from edgevox.agents.run import drain
from edgevox.errors import ArgumentError
from edgevox.orchestration.delivery import DeliveryStrategy
from edgevox.orchestration.events import (
    Routed,
    SessionModeChanged,
    TurnAnswered,
    UserTurn,
)
from edgevox.orchestration.handoff import SCRATCH_RECORD, HandoffHandler
from edgevox.orchestration.progress import run_strategy, watched
from edgevox.orchestration.recovery import escalate, recover, spoken_cancel, turn_result
from edgevox.orchestration.routing import HUMAN_KEY, ConversationRouter, observe_exchange
from edgevox.orchestration.state import ConversationState, SessionStore
from edgevox.orchestration.workflows import Workflow
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event
from edgevox.runtime.limits import duration
from edgevox.runtime.timers import TimerWheel

if TYPE_CHECKING:
    from edgevox.orchestration.cancel import CancelMatcher
    from edgevox.orchestration.tools import HandoffTools

Turn = Generator[Event, None, AgentResult]
Strategy = Agent | str | None
"""A strategy (any agent: a Pipeline, Swarm, Supervisor, Loop...), ``Coordinator.ROUTE``,
``Coordinator.SINGLE``, or None."""


class Coordinator(AgentBase):
    """Routes turns between agents, applies handoffs, and runs strategies per session."""

    ROUTE = "route"
    """Strategy value meaning "route turn by turn" (overrides a runtime-wide strategy per session)."""
    SINGLE = "single"
    """Strategy value meaning "orchestration off": the main agent answers every turn of the session."""

    FAILURE_MESSAGE = "Sorry, {agent} {what} and could not finish that. {main} here again: shall I try another way, or can I help with something else?"
    """What the main agent says when the agent holding the conversation failed ({agent}, {what}, {main})."""
    CANCELLED_MESSAGE = "OK, I cancelled that. {main} here again: what would you like to do?"
    ASK_MESSAGE = 'Do you want me to stop what {agent} is doing? Say yes to stop it, or no and {agent} will take "{said}" as a request.'
    ESCALATION_MESSAGE = "I'm handing you over to a person; they will pick up on {where}."

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
        main_agent: str | None = None,
        cancel_phrases: Iterable[str] | None = None,
        progress_interval_s: float | None = None,
        still_working: str = "",
        timers: TimerWheel | None = None,
        handoff_tools: HandoffTools | None = None,
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
        self.main_agent = main_agent or self.router.default_agent or next(iter(self.agents))
        """The agent that answers when orchestration is off and takes the conversation back after a failure."""
        if self.main_agent not in self.agents:
            raise ArgumentError(f"main agent {self.main_agent!r} is not one of the agents: {sorted(self.agents)}")
        self.entry_agent = self.router.default_agent if self.router.default_agent in self.agents else self.main_agent
        """The agent that takes the conversation back when the agent holding it fails (the entry agent)."""
        self.handoff_tools = handoff_tools
        """Each routed agent's ``handoff_conversation`` tool (target enum = the agents it may reach)."""
        self.bus = bus
        self.handoff = handoff or HandoffHandler(self.agents, self.store, publish=self.publish)

        def seconds(what: str, value: float | None) -> float | None:
            if value is None:
                return None
            return duration(what, value, owner="Coordinator", above_minimum=True, none_hint="or None for none")

        self.timeout_s = seconds("timeout_s", timeout_s)
        self.progress_interval_s = seconds("progress_interval_s", progress_interval_s)
        self.still_working = still_working
        self._timers = timers
        self._own_timers: TimerWheel | None = None
        self._cancel: CancelMatcher | None = None
        if cancel_phrases is None or list(cancel_phrases):
            from edgevox.orchestration.cancel import CANCEL_PHRASES, CancelMatcher

            self._cancel = CancelMatcher(CANCEL_PHRASES if cancel_phrases is None else cancel_phrases)
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
        routes that session turn by turn even when a runtime-wide strategy is set;
        :attr:`SINGLE` turns orchestration off for it)."""
        if isinstance(strategy, str) and strategy not in (self.ROUTE, self.SINGLE):
            raise ValueError(
                f"session strategy {strategy!r}: a strategy object, None, Coordinator.ROUTE or Coordinator.SINGLE"
            )
        with self._lock:
            if strategy is None:
                self._session_strategies.pop(session_id, None)
            else:
                self._session_strategies[session_id] = strategy

    def disable_orchestration(self, session_id: str) -> None:
        """Orchestration off for one session (RoomKit: a room created with ``orchestration=None``):
        every turn goes to :attr:`main_agent`, no routing, handoffs or strategy. The session's
        state is kept for :meth:`enable_orchestration`."""
        self.set_session_strategy(session_id, self.SINGLE)
        self.publish(SessionModeChanged(source=self.name, session_id=session_id, mode="single"))

    def enable_orchestration(self, session_id: str) -> None:
        """Undo :meth:`disable_orchestration`: the session follows the configured strategy again."""
        with self._lock:
            if self._session_strategies.get(session_id) == self.SINGLE:
                del self._session_strategies[session_id]
        self.publish(SessionModeChanged(source=self.name, session_id=session_id, mode="orchestrated"))

    def orchestration_enabled(self, session_id: str) -> bool:
        with self._lock:
            return self._session_strategies.get(session_id) != self.SINGLE

    def strategy_for(self, session_id: str) -> Agent | None:
        with self._lock:
            strategy = self._session_strategies.get(session_id, self._strategy)
        return None if isinstance(strategy, str) else strategy

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for strategies' background work (async supervisor answers, background
        delegations) to finish and stop the coordinator's own timer thread; names of
        threads still running at the deadline."""
        with self._lock:
            candidates = [self._strategy, *self._session_strategies.values()]
            wheel, self._own_timers = self._own_timers, None
        unique = {id(s): s for s in candidates if isinstance(s, Workflow)}
        deadline = time.monotonic() + timeout_s
        left: list[str] = []
        for strategy in unique.values():
            left += strategy.close(max(0.0, deadline - time.monotonic()))
        if wheel is not None:
            left += wheel.close(max(0.0, deadline - time.monotonic()))
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

    def handle(
        self, text: str, ctx: AgentContext, *, intent: str | None = None, source: str = "user", channel: str = ""
    ) -> AgentResult:
        """Answer one user turn of ``ctx.session_id`` (on the calling thread). ``channel``: where
        the turn came from (voice, text, ros2 ...; default ``ctx.channel``)."""
        return drain(self._turn(text, ctx, intent=intent, source=source, channel=channel))

    def _turn(
        self, text: str, ctx: AgentContext, *, intent: str | None = None, source: str = "user", channel: str = ""
    ) -> Turn:
        """One turn as a generator: yields the answering agent's events, returns the result."""
        session = ctx.session_id
        channel = channel or ctx.channel
        turn = UserTurn(source=source, session_id=session, text=text, intent=intent, channel=channel)
        if self.router.is_agent_output(turn):
            return turn_result("", "", why="agent-output")
        if not self.orchestration_enabled(session):
            main = self.main_agent
            outcome = yield from watched(self, self.agents[main], text, ctx, label=main, strategy=self.SINGLE)
            self.reply_event(session, main, outcome.text, outcome.ok)
            self.observe(text, main, outcome, ctx)
            return turn_result(outcome.text, outcome.agent, why="single", step=outcome)
        strategy = self.strategy_for(session)
        if strategy is not None:
            outcome = yield from run_strategy(self, strategy, text, ctx)
            self.reply_event(session, outcome.agent or strategy.name, outcome.text, outcome.ok, strategy=strategy.name)
            self.observe(text, outcome.agent or strategy.name, outcome, ctx)
            return turn_result(outcome.text, outcome.agent, why="strategy", step=outcome)

        cancelled = yield from spoken_cancel(self, text, ctx)
        if cancelled is not None:
            return cancelled
        self.handoff.begin_turn(session, text=text)
        state = self.store.state(session)
        decision = self.router.route(turn, state)
        self.publish(
            Routed(
                source=self.name, session_id=session, agent=decision.agent or "", why=decision.why, phase=state.phase
            )
        )
        if decision.agent is None:
            self.observe(text, "human" if state.data.get(HUMAN_KEY) else "nobody", AgentResult(""), ctx)
            return turn_result("", "", why=decision.why, state=state)
        agent = decision.agent

        def activate(s: ConversationState) -> ConversationState:
            if s.active_agent != agent:
                s = s.transition(to_agent=agent, reason=decision.why)
            return s

        state = self.store.update(session, activate)
        context, state = state.take_context()
        self.store.save_state(state)
        task = f"{context}\n\nUser: {text}" if context else text
        scratch_key = SCRATCH_RECORD.format(agent=agent)
        tools = self.handoff_tools.for_agent(agent, self.agents[agent]) if self.handoff_tools is not None else ()
        scratch = self.store.get_record(session, scratch_key) or {}
        try:
            outcome = yield from watched(
                self,
                self.agents[agent],
                task,
                ctx,
                label=agent,
                strategy=self.ROUTE,
                handoff=self.handoff,
                state=scratch,
                tools=tools,
            )
        except GeneratorExit:
            # The listener stopped reading (barge-in): the agent's turn is over, and a
            # handoff it made before its reply still stands.
            self.store.put_record(session, scratch_key, _jsonable(scratch))
            self.commit_turn(session, agent, "")
            raise
        self.store.put_record(session, scratch_key, _jsonable(scratch))
        if not outcome.ok and not outcome.cancelled and agent != self.entry_agent:
            return (yield from recover(self, text, agent, outcome, ctx))
        pending = self.handoff.pending(session)
        new_state = self.commit_turn(session, agent, outcome.text) or self.store.state(session)
        reply = outcome.text
        notice = self.handoff.take_notice(session)  # "Connecting you with <target>...", once
        if notice is not None:
            yield notice
            reply = (reply + notice.text).strip()  # the notice is spaced as a sentence of its own
        if pending is not None and new_state.data.get(HUMAN_KEY):
            reply = yield from escalate(self, pending, agent, reply, channel, session)
        self.reply_event(session, agent, reply, outcome.ok)
        handed = f" [handed off to {pending.target}: {pending.reason}]" if pending is not None else ""
        self.observe(text, agent, replace(outcome, text=reply + handed), ctx)
        return turn_result(reply, outcome.agent, why=decision.why, state=new_state, step=outcome)

    def cancel_workflow(self, session_id: str, reason: str = "cancelled") -> ConversationState | None:
        """Cancel the session's open handoff-with-return, keeping the specialist's scratch state
        (in the suspended record; the specialist's own scratch starts fresh next time)."""
        state = self.store.state(session_id)
        key = SCRATCH_RECORD.format(agent=state.active_agent) if state.active_agent else None
        partial = self.store.get_record(session_id, key) if key else None
        after = self.handoff.cancel_workflow(session_id, partial=partial, reason=reason)
        if after is not None and key:
            self.store.put_record(session_id, key, None)
        return after

    def resume_workflow(self, session_id: str) -> dict[str, Any] | None:
        partial = self.handoff.resume_workflow(session_id)
        state = self.store.state(session_id)
        if partial is not None and state.active_agent:
            self.store.put_record(session_id, SCRATCH_RECORD.format(agent=state.active_agent), partial)
        return partial

    # -- internals -------------------------------------------------------------------------------

    def commit_turn(self, session: str, agent: str, reply: str) -> ConversationState | None:
        """Apply this turn's handoff; a workflow with return starts and ends with fresh scratch
        state (a second workflow never continues the first one's)."""
        before = self.store.state(session).return_stack
        after = self.handoff.commit(session, reply=reply)
        if after is not None and after.return_stack != before:
            if len(after.return_stack) > len(before) and after.active_agent:
                self.store.put_record(session, SCRATCH_RECORD.format(agent=after.active_agent), None)  # starts
            elif len(after.return_stack) < len(before):
                self.store.put_record(session, SCRATCH_RECORD.format(agent=agent), None)  # handed back: done
        return after

    def timer_wheel(self) -> TimerWheel:
        """The timer wheel of heartbeats and deadlines (the injected one, else the coordinator's own)."""
        with self._lock:
            if self._timers is not None:
                return self._timers
            if self._own_timers is None:
                self._own_timers = TimerWheel(f"{self.name}-turns")
            return self._own_timers

    def say_later(self, session: str, label: str) -> Callable[[str], None] | None:
        """``say(text)`` speaking through the coordinator's delivery (None without one)."""
        if self.delivery is None:
            return None
        delivery = self.delivery
        return lambda text: delivery.submit(text, session_id=session, source=label)

    def observe(self, text: str, agent: str, outcome: AgentResult, ctx: AgentContext) -> None:
        sup = self.router.supervisor
        if sup is None or sup == agent or sup not in self.agents:
            return
        observe_exchange(
            self.agents[sup], sup, text, agent, outcome, ctx, publish=self.publish, timeout_s=self.timeout_s
        )

    def reply_event(self, session: str, agent: str, text: str, ok: bool, *, strategy: str = "") -> None:
        self.publish(TurnAnswered(source=agent, session_id=session, agent=agent, strategy=strategy, text=text, ok=ok))

    def publish(self, event: Event) -> None:
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
