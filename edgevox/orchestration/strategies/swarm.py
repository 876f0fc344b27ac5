"""The ``Swarm`` strategy: one agent answers; with ``handoff_conversation`` it may pass the turn
to a peer, who answers the same request with the summary as context. The swarm remembers
per session who holds the conversation.

Each agent is given, per run (``ctx.tools``), ``handoff_conversation`` whose ``target`` enum
lists exactly its peers. When the peer handed to fails, the handing-off agent's own words are
spoken after all, followed by a sentence saying what happened, and the conversation stays with
the handing-off agent; when the peer holding the session from earlier turns fails, the entry
agent takes it back and says so: the user is never left in silence.

Handoffs are bounded per turn by the one limit (:func:`~edgevox.agents.tool_calls.handoff_limit`,
``orchestration.handoff.max_handoffs_per_turn``), counted together with any handoff that led to
the swarm (``ctx.handoff_chain``), and each peer's ``handoff_to_<name>`` tools count on: a
handoff past it is not applied, the session stays with the agent that asked, and the turn ends
with :data:`~edgevox.agents.tool_calls.HANDOFF_LIMIT_REPLY`. A handoff to a human is never
refused for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name
from edgevox.agents.tool_calls import (
    DEFAULT_MAX_HANDOFFS_PER_TURN,
    HANDOFF_LIMIT_REPLY,
    check_max_handoffs,
    handoff_limit,
)
from edgevox.orchestration.handoff import HUMAN, HandoffHandler
from edgevox.orchestration.handoff_context import HandoffOptions
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.strategies.handback import hand_back
from edgevox.orchestration.tools import HandoffTools
from edgevox.orchestration.workflows import Run
from edgevox.runtime.context import AgentContext


class Swarm(Orchestration):
    """Peers that hand the turn to each other with ``handoff_conversation``: a same-turn handoff,
    the target answers the same request at once with the handoff's context."""

    name = "swarm"

    def __init__(
        self,
        agents: Sequence[Agent],
        entry: str | None = None,
        *,
        max_handoffs: int | None = None,
        aliases: Mapping[str, str] | None = None,
        handoff_options: HandoffOptions | None = None,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        self.agents = {child_name(a): a for a in check_agents("Swarm", agents)}
        self.entry = entry or next(iter(self.agents))
        if self.entry not in self.agents:
            raise ValueError(f"Swarm entry {self.entry!r} is not one of {sorted(self.agents)}")
        self.max_handoffs = None if max_handoffs is None else check_max_handoffs(max_handoffs, "Swarm max_handoffs")
        """Handoffs one turn may make; None: ``handoff_options.max_handoffs_per_turn``."""
        self.aliases = dict(aliases or {})
        self.handoff_options = handoff_options
        """Recent turns a handoff carries and the notification spoken (None: the defaults)."""
        self.handoff_tools = HandoffTools(
            {n: [p for p in self.agents if p != n] for n in self.agents},
            descriptions={n: str(getattr(a, "description", "") or "") for n, a in self.agents.items()},
            owner=f"Swarm {self.name!r}",
        )

    def handler(self, ctx: AgentContext) -> HandoffHandler:
        return HandoffHandler(
            self.agents,
            self.store_for(ctx),
            aliases=self.aliases,
            publish=ctx.publish,
            timing="same_turn",
            options=self.handoff_options,
        )

    @property
    def max_handoffs_per_turn(self) -> int:
        """Handoffs one turn may make: ``max_handoffs``, else the handoff options' limit."""
        if self.max_handoffs is not None:
            return self.max_handoffs
        options = self.handoff_options
        return options.max_handoffs_per_turn if options is not None else DEFAULT_MAX_HANDOFFS_PER_TURN

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """The answering agent's reply streams as it is generated; the words of an agent that
        hands the turn on are held back (spoken only if that ends the turn: a handoff to a
        human). Bounded: each hop either ends the turn or adds an agent to ``visited``, and
        :func:`handoff_limit` refuses the handoff that would pass the limit."""
        handler = self.handler(ctx)
        store = handler.store
        state = store.state(ctx.session_id)
        current = state.active_agent if state.active_agent in self.agents else self.entry
        steps: list[AgentResult] = []
        held: list[ReplyDelta] = []
        handed_from: tuple[str, list[ReplyDelta]] | None = None  # who handed this turn to ``current``, and its words
        visited: list[str] = []  # the agents that had this turn, in order
        while True:
            handler.begin_turn(ctx.session_id, text=None if visited else task)
            state = store.update(
                ctx.session_id,
                lambda s, c=current: s if s.active_agent == c else s.transition(to_agent=c, reason="swarm"),
            )
            context, state = state.take_context()
            store.save_state(state)
            agent_task = f"{context}\n\nUser: {task}" if context else task
            held = []
            agent = self.agents[current]
            visited.append(current)
            # Never back to an agent that already had this turn: it passed the request on, and a
            # small model would otherwise bounce it between two peers until max_handoffs.
            tools = self.handoff_tools.for_agent(current, agent, exclude=visited)
            chain = (*ctx.handoff_chain, *visited[:-1])  # who handed this turn on before ``current``
            events = self.stream_call(agent, agent_task, ctx, handoff=handler, tools=tools, handoff_chain=chain)
            try:
                while True:
                    try:
                        event = next(events)
                    except StopIteration as stop:
                        outcome = stop.value
                        break
                    if isinstance(event, ReplyDelta) and handler.pending(ctx.session_id) is not None:
                        held.append(event)  # this agent hands the turn on: its words wait
                    else:
                        yield event
            finally:
                events.close()
            steps.append(outcome)
            pending = handler.pending(ctx.session_id)
            over = ""
            if pending is not None and outcome.ok and pending.target != HUMAN:
                over = handoff_limit(ctx, (*chain, current), pending.target, self.max_handoffs_per_turn)
            if over:
                handler.begin_turn(ctx.session_id)  # not applied: the session stays with ``current``
                handler.commit(ctx.session_id, reply=HANDOFF_LIMIT_REPLY)
                yield ReplyDelta(source=self.name, agent=current, text=HANDOFF_LIMIT_REPLY)
                return AgentResult(
                    HANDOFF_LIMIT_REPLY,
                    agent=current,
                    ok=False,
                    error=f"{self.name}: more than {self.max_handoffs_per_turn} handoffs in one turn; {over}",
                    steps=steps,
                )
            new_state = handler.commit(ctx.session_id, reply=outcome.text)
            if not outcome.ok and not outcome.cancelled and (handed_from is not None or current != self.entry):
                # Back to who handed to it this turn; the holder of earlier turns failed: to the entry agent.
                back_to = handed_from if handed_from is not None else (self.entry, [])
                return (yield from self._target_failed(ctx, current, outcome, back_to, held, steps))
            if new_state is None or not outcome.ok or new_state.active_agent is None:
                # No handoff, a failure, or a handoff to a human: these words are the answer.
                yield from held
                return AgentResult(outcome.text, agent=current, ok=outcome.ok, error=outcome.error, steps=steps)
            handed_from = (current, held)
            current = new_state.active_agent
            notice = handler.take_notice(ctx.session_id)  # "Connecting you with <target>...", once
            if notice is not None:
                yield notice

    def _target_failed(
        self,
        ctx: AgentContext,
        target: str,
        outcome: AgentResult,
        handed_from: tuple[str, list[ReplyDelta]],
        held: list[ReplyDelta],
        steps: list[AgentResult],
    ) -> Run:
        """The agent holding the turn failed: the words of the agent that handed to it this turn
        are spoken after all, then what happened (the Coordinator's words), and the conversation
        goes back to that agent (to the entry agent when the failed one held it from earlier turns)."""
        previous, its_words = handed_from
        yield from its_words
        yield from held  # what the failed agent said before failing (none was held if it handed on)
        notice = hand_back(self.store_for(ctx), ctx, failed=target, outcome=outcome, to_agent=previous)
        yield ReplyDelta(source=self.name, agent=previous, text=f" {notice}")
        said = [e.text for e in its_words] + [outcome.text, notice]
        return AgentResult(
            " ".join(t.strip() for t in said if t.strip()),
            agent=previous,
            ok=False,
            error=outcome.error or f"{target} failed",
            timed_out=outcome.timed_out,
            steps=steps,
            data={"failed_agent": target},
        )
