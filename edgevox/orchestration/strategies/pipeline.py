"""The ``Pipeline`` strategy: RoomKit's linear handoff chain.

The first stage's agent answers the user. When its part is done it hands the conversation
to the next stage with ``handoff_conversation`` (each agent is given, per run, that tool
with a ``target`` enum of exactly the agents it may reach: its ``next`` stage and its
``can_return_to`` stages); the handoff is applied when the turn ends, and the *next* user
turn goes to the new agent, which reads ``Context from the previous agent: <summary>``.
The session remembers who holds the conversation (its :class:`ConversationState`, in the
blackboard under the session id), so a turn runs one agent, never every agent.

``supervisor_id`` (RoomKit's name) names an agent that observes every exchange: its note is
published as :class:`SupervisorObserved`, never spoken. A turn cancelled mid-way (a safety
stop) hands nothing on: the session stays with the agent that was answering. When the agent
holding the session (not the entry agent) fails or times out, the entry agent takes the
conversation back and says what happened (:class:`HandoffFailed`), as under a Coordinator.

Running every agent in order and feeding each answer to the next is a different pattern:
the workflow :class:`edgevox.orchestration.workflows.Sequence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name
from edgevox.errors import Cancelled
from edgevox.orchestration.handoff import HandoffHandler
from edgevox.orchestration.handoff_context import HandoffOptions
from edgevox.orchestration.pipeline import ConversationPipeline, PipelineStage
from edgevox.orchestration.routing import observe_exchange
from edgevox.orchestration.state import ConversationState
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.strategies.handback import hand_back
from edgevox.orchestration.workflows import Run
from edgevox.runtime.context import AgentContext


class Pipeline(Orchestration):
    """Agents chained by handoffs: the holder of the session answers, then hands on.

    ``agents``: the stages in order (each agent's phase is its name, its ``next`` the
    following agent), unless ``stages`` (:class:`PipelineStage`, naming agents) gives the
    phases with their ``next`` and ``can_return_to`` (a stage may name itself as ``next``).
    ``supervisor_id``: the agent (one of ``agents``, or ``supervisor``) that observes every
    exchange and is no stage. ``aliases``: other names agents may use for a target.
    ``entry``: the agent that answers a session first (default: the first stage's).
    ``routing`` (RoomKit's keyword hints, ``{agent: [keywords]}``): shown with that agent in the
    handoff tool of the agents that may reach it ("when the user mentions: ..."), never a rule.
    """

    name = "pipeline"

    def __init__(
        self,
        agents: Sequence[Agent],
        routing: Mapping[str, Sequence[str]] | None = None,
        *,
        stages: Sequence[PipelineStage] | None = None,
        supervisor_id: str | None = None,
        supervisor: Agent | None = None,
        aliases: Mapping[str, str] | None = None,
        entry: str | None = None,
        handoff_options: HandoffOptions | None = None,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        members = {child_name(a): a for a in check_agents("Pipeline", agents)}
        self.supervisor: Agent | None = None
        if supervisor is not None:
            if supervisor_id is not None and supervisor_id != child_name(supervisor):
                raise ValueError(
                    f"Pipeline: supervisor_id {supervisor_id!r} is not the supervisor agent's name "
                    f"{child_name(supervisor)!r}; give one of them"
                )
            supervisor_id, self.supervisor = child_name(supervisor), supervisor
            members.pop(supervisor_id, None)
        elif supervisor_id is not None:
            if supervisor_id not in members:
                raise ValueError(
                    f"Pipeline: supervisor_id {supervisor_id!r} is not one of the agents {sorted(members)}; "
                    "add it to agents or pass it as supervisor="
                )
            self.supervisor = members.pop(supervisor_id)
        if not members:
            raise ValueError("Pipeline needs at least one stage agent besides its supervisor")
        self.supervisor_id = supervisor_id
        self.pipeline = ConversationPipeline(
            list(stages) if stages is not None else [PipelineStage(n, n) for n in members], name=self.name
        )
        staged = set(self.pipeline.agents)
        if staged - set(members):
            raise ValueError(
                f"Pipeline: stages name agents that were not given: {sorted(staged - set(members))}; "
                f"agents: {sorted(members)}"
            )
        if set(members) - staged:
            raise ValueError(f"Pipeline: agents {sorted(set(members) - staged)} own no stage; give each a stage")
        self.agents = members
        if entry is not None and entry not in members:
            raise ValueError(f"Pipeline: entry {entry!r} is not one of its stage agents {sorted(members)}")
        self.entry = entry or self.pipeline.first.agent
        self.aliases = dict(aliases or {})
        self.handoff_options = handoff_options
        """Recent turns a handoff carries and the notification spoken (None: the defaults)."""
        unknown = set(routing or {}) - set(members)
        if unknown:
            raise ValueError(f"Pipeline: routing names agents that are no stage: {sorted(unknown)}")
        descriptions = {n: str(getattr(a, "description", "") or "") for n, a in members.items()}
        for n, words in (routing or {}).items():
            hint = f"when the user mentions: {', '.join(words)}"
            descriptions[n] = f"{descriptions[n]}, {hint}" if descriptions[n] else hint
        self.handoff_tools = self.pipeline.handoff_tools(descriptions=descriptions, owner=f"Pipeline {self.name!r}")

    def holder(self, ctx: AgentContext) -> str:
        """The agent that answers the session's next turn."""
        state = self.store_for(ctx).state(ctx.session_id)
        return state.active_agent if state.active_agent in self.agents else self.entry

    def _activate(self, state: ConversationState) -> ConversationState:
        agent = state.active_agent if state.active_agent in self.agents else self.entry
        owners = self.pipeline.get_phase_owners()
        phase = state.phase if owners.get(state.phase) == agent else self.pipeline.phase_of(agent)
        if state.active_agent == agent and state.phase == phase:
            return state
        return state.transition(to_phase=phase, to_agent=agent, reason=self.name)

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """The holder's reply streams as it is generated; its handoff applies when the turn ends."""
        store = self.store_for(ctx)
        session = ctx.session_id
        handler = self.pipeline.handoff_handler(
            store, aliases=self.aliases, publish=ctx.publish, options=self.handoff_options
        )
        handler.begin_turn(session, text=task)
        state = store.update(session, self._activate)
        context, state = state.take_context()
        store.save_state(state)
        name = state.active_agent or self.entry
        agent = self.agents[name]
        agent_task = f"{context}\n\nUser: {task}" if context else task
        try:
            outcome = yield from self.stream_call(
                agent, agent_task, ctx, handoff=handler, tools=self.handoff_tools.for_agent(name, agent)
            )
        except Cancelled:
            handler.begin_turn(session)  # a stopped turn hands nothing on
            raise
        except GeneratorExit:
            handler.commit(session)  # the listener stopped reading (barge-in): a handoff made stands
            raise
        if not outcome.ok and not outcome.cancelled and name != self.entry:
            return (yield from self._recover(task, name, outcome, ctx, handler))
        after = handler.commit(session, reply=outcome.text) or store.state(session)
        reply = outcome.text
        notice = handler.take_notice(session)  # "Connecting you with <next agent>...", once
        if notice is not None:
            yield notice
            reply = f"{reply} {notice.text.strip()}".strip()
        self._observe(task, name, outcome, ctx)
        return AgentResult(
            reply,
            agent=name,
            ok=outcome.ok,
            error=outcome.error,
            timed_out=outcome.timed_out,
            steps=[outcome],
            data={"phase": after.phase, "next_agent": after.active_agent or ""},
        )

    def _recover(self, task: str, name: str, outcome: AgentResult, ctx: AgentContext, handler: HandoffHandler) -> Run:
        """The agent holding the session (not the entry agent) failed or timed out: the entry
        agent takes the conversation back and says what happened (never silence on later turns)."""
        handler.begin_turn(ctx.session_id)  # a handoff the failed agent made is not applied
        entry = self.entry
        sentence = hand_back(
            self.store_for(ctx),
            ctx,
            failed=name,
            outcome=outcome,
            to_agent=entry,
            phase=self.pipeline.phase_of(entry),
        )
        yield ReplyDelta(source=self.name, agent=entry, text=f" {sentence}" if outcome.text else sentence)
        self._observe(task, name, outcome, ctx)
        return AgentResult(
            f"{outcome.text} {sentence}".strip(),
            agent=entry,
            ok=False,
            error=outcome.error,
            timed_out=outcome.timed_out,
            steps=[outcome],
            data={"phase": self.pipeline.phase_of(entry), "next_agent": entry, "failed_agent": name},
        )

    def _observe(self, text: str, agent: str, outcome: AgentResult, ctx: AgentContext) -> None:
        """The supervisor observes the exchange (the same note the Coordinator's router supervisor writes)."""
        if self.supervisor is None or self.supervisor_id is None:
            return
        observe_exchange(
            self.supervisor,
            self.supervisor_id,
            text,
            agent,
            outcome,
            ctx,
            publish=ctx.publish,
            timeout_s=self.timeout_s,
        )
