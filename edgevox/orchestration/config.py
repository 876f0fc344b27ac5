"""The ``orchestration`` section of the config, and building it into objects.

::

    orchestration:
      strategy: pipeline          # single | conversation | pipeline | swarm | supervisor | loop
      pipeline: {agents: [triage, handler, resolver]}
      sessions: {kiosk: loop}     # per-session override (a strategy configured here too)
      delegation: {max_depth: 5, max_concurrency: 2}
      delivery: {strategy: wait_for_idle, buffer_s: 1.0, timeout_s: 20.0}

``strategy`` picks the runtime-wide strategy; its section must be present.
``conversation`` routes turn by turn through phases (``conversation.stages``)
with handoffs; ``single`` sends every turn to the application's main agent.

This module must not import :mod:`edgevox.config.schema` (the schema imports it),
so it repeats the schema's conventions: unknown keys are errors, scalars are strict.
:func:`build_orchestration` turns a validated section and a ``{name: agent}`` dict
into a :class:`~edgevox.orchestration.coordinator.Coordinator`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from edgevox.config.fields import Seconds
from edgevox.config.fields import Section as _Section
from edgevox.errors import ConfigError

Name = Annotated[StrictStr, Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")]
PosInt = Annotated[StrictInt, Field(ge=1, le=1000)]
PosFloat = Seconds
NonNegFloat = Annotated[StrictFloat, Field(ge=0, le=3600)]
StrategyName = Literal["single", "conversation", "pipeline", "swarm", "supervisor", "loop"]


class PipelineSection(_Section):
    """Agents in order; each gets the request and the previous agent's answer."""

    agents: list[Name] = Field(min_length=1, description="Agents in the order they run.")
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")


class SwarmSection(_Section):
    """Peers handing the turn to each other with `handoff_conversation`."""

    agents: list[Name] = Field(min_length=1, description="Agents of the swarm (give each the handoff tool).")
    entry: Name | None = Field(None, description="Agent that answers first; null = the first agent.")
    max_handoffs: PosInt = Field(5, description="Handoffs allowed within one turn.")
    aliases: dict[StrictStr, Name] = Field(default_factory=dict, description="Other names agents may use for a target.")


class SupervisorSection(_Section):
    """A supervising agent and its workers (the orchestrator pattern)."""

    supervisor: Name = Field(description="The agent that delegates and answers.")
    workers: list[Name] = Field(min_length=1, description="Worker agents.")
    strategy: Literal["sequential", "parallel"] = Field(
        "sequential", description="Run workers one after another or at once."
    )
    auto_delegate: StrictBool = Field(
        True, description="Ask every worker (true) or let the supervisor use the `delegate` tool (false)."
    )
    refine_task: StrictBool = Field(False, description="Let the supervisor rewrite the request for the workers first.")
    async_delivery: StrictBool = Field(
        False, description="Answer at once and deliver the result later (see `delivery`)."
    )
    timeout_s: PosFloat | None = Field(
        None, description="Per-agent time limit in seconds; a worker over it is reported missing."
    )


class LoopSection(_Section):
    """A writer revised until reviewers say APPROVED."""

    agent: Name = Field(description="The agent that writes the answer.")
    reviewers: list[Name] = Field(min_length=1, description="Agents that review each draft.")
    strategy: Literal["all", "any", "majority"] = Field("all", description="How many reviewers must approve.")
    max_iterations: PosInt = Field(3, description="Drafts at most.")
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")


class StageSection(_Section):
    phase: StrictStr = Field(min_length=1, description="Phase name (intake, handling, ... or your own).")
    agent: Name = Field(description="Agent that owns the phase.")
    next: StrictStr | None = Field(None, description="Phase that follows; null = next in the list.")
    can_return_to: list[StrictStr] = Field(
        default_factory=list, description="Earlier phases this one may hand back to."
    )


class ConversationSection(_Section):
    """Turn-by-turn routing through phases, with handoffs between their agents."""

    stages: list[StageSection] = Field(min_length=1, description="Phases in order, each owned by an agent.")
    aliases: dict[StrictStr, Name] = Field(
        default_factory=dict, description="Other names agents may use for a handoff target."
    )
    supervisor: Name | None = Field(None, description="Agent that observes every exchange (never answers).")


class DelegationSection(_Section):
    max_depth: PosInt = Field(5, description="Longest delegation chain.")
    max_concurrency: PosInt = Field(2, description="Delegated agents running at once, at most.")


class DeliverySection(_Section):
    """How results produced in the background reach the voice channel."""

    strategy: Literal["immediate", "wait_for_idle", "queued"] = Field(
        "wait_for_idle", description="When background results are spoken."
    )
    buffer_s: NonNegFloat = Field(
        1.0, description="wait_for_idle: silence needed; queued: batching window, in seconds."
    )
    timeout_s: PosFloat = Field(30.0, description="wait_for_idle: deliver anyway after waiting this long, in seconds.")


class OrchestrationConfig(_Section):
    """Multi-agent orchestration: which strategy answers user turns."""

    strategy: StrategyName = Field("single", description="Runtime-wide strategy; its section below must be present.")
    pipeline: PipelineSection | None = Field(None, description="The pipeline strategy.")
    swarm: SwarmSection | None = Field(None, description="The swarm strategy.")
    supervisor: SupervisorSection | None = Field(None, description="The supervisor strategy.")
    loop: LoopSection | None = Field(None, description="The writer/reviewers loop strategy.")
    conversation: ConversationSection | None = Field(None, description="Phase routing with handoffs.")
    sessions: dict[StrictStr, StrategyName] = Field(default_factory=dict, description="Per-session strategy overrides.")
    delegation: DelegationSection = Field(default_factory=DelegationSection, description="Delegation limits.")
    delivery: DeliverySection = Field(default_factory=DeliverySection, description="Delivery of background results.")

    @model_validator(mode="after")
    def _sections_present(self) -> OrchestrationConfig:
        for where, name in [("strategy", self.strategy)] + [(f"sessions.{k}", v) for k, v in self.sessions.items()]:
            if name not in ("single", "conversation") and getattr(self, name) is None:
                raise ValueError(f"{where} = {name!r} but there is no `{name}:` section; add one")
        if "conversation" in [self.strategy, *self.sessions.values()] and self.conversation is None:
            raise ValueError("strategy 'conversation' needs a `conversation:` section with stages")
        return self

    def agent_names(self) -> set[str]:
        """Every agent name this section refers to (the app config checks they exist)."""
        names: set[str] = set()
        if self.pipeline:
            names |= set(self.pipeline.agents)
        if self.swarm:
            names |= set(self.swarm.agents) | set(self.swarm.aliases.values())
        if self.supervisor:
            names |= {self.supervisor.supervisor, *self.supervisor.workers}
        if self.loop:
            names |= {self.loop.agent, *self.loop.reviewers}
        if self.conversation:
            names |= {s.agent for s in self.conversation.stages} | set(self.conversation.aliases.values())
            if self.conversation.supervisor:
                names.add(self.conversation.supervisor)
        return names


def _agent(agents: Mapping[str, Any], name: str, where: str) -> Any:
    if name in agents:
        return agents[name]
    close = difflib.get_close_matches(name, list(agents), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"orchestration.{where}: no agent named {name!r}{hint} (defined: {', '.join(agents) or 'none'})")


def build_strategy(config: OrchestrationConfig, name: str, agents: Mapping[str, Any], *, delivery: Any = None) -> Any:
    """Build the strategy ``name`` from its section (None for single/conversation)."""
    from edgevox.orchestration.strategies import Loop, Pipeline, Supervisor, Swarm

    if name == "pipeline" and config.pipeline:
        sec = config.pipeline
        return Pipeline([_agent(agents, a, "pipeline.agents") for a in sec.agents], timeout_s=sec.timeout_s)
    if name == "swarm" and config.swarm:
        sw = config.swarm
        for alias_target in sw.aliases.values():
            _agent(agents, alias_target, "swarm.aliases")
        return Swarm(
            [_agent(agents, a, "swarm.agents") for a in sw.agents],
            sw.entry,
            max_handoffs=sw.max_handoffs,
            aliases=sw.aliases,
        )
    if name == "supervisor" and config.supervisor:
        su = config.supervisor
        return Supervisor(
            _agent(agents, su.supervisor, "supervisor.supervisor"),
            [_agent(agents, w, "supervisor.workers") for w in su.workers],
            strategy=su.strategy,
            auto_delegate=su.auto_delegate,
            refine_task=su.refine_task,
            async_delivery=su.async_delivery,
            delivery=delivery,
            max_concurrency=config.delegation.max_concurrency,
            max_depth=config.delegation.max_depth,
            timeout_s=su.timeout_s,
        )
    if name == "loop" and config.loop:
        lo = config.loop
        return Loop(
            _agent(agents, lo.agent, "loop.agent"),
            [_agent(agents, r, "loop.reviewers") for r in lo.reviewers],
            strategy=lo.strategy,
            max_iterations=lo.max_iterations,
            timeout_s=lo.timeout_s,
        )
    return None


def build_delivery(config: OrchestrationConfig, *, sink: Any = None, voice: Any = None, publish: Any = None) -> Any:
    from edgevox.orchestration.delivery import Immediate, Queued, WaitForIdle

    d = config.delivery
    if d.strategy == "immediate":
        return Immediate(sink, publish=publish)
    if d.strategy == "queued":
        return Queued(buffer_s=d.buffer_s, sink=sink, publish=publish)
    return WaitForIdle(voice, buffer_s=d.buffer_s, timeout_s=d.timeout_s, sink=sink, publish=publish)


def build_orchestration(
    config: OrchestrationConfig | Mapping[str, Any],
    agents: Mapping[str, Any],
    *,
    main_agent: str | None = None,
    bus: Any = None,
    blackboard: Any = None,
    sink: Any = None,
    voice: Any = None,
) -> Any:
    """A :class:`Coordinator` for ``config`` over ``agents`` (``{name: agent}``).

    ``main_agent`` answers under ``strategy: single`` (default: the first agent).
    ``bus``/``blackboard``: the runtime's (events, per-session state). ``sink(items)``
    speaks background results; ``voice`` is a :class:`VoiceActivityState` for
    ``wait_for_idle`` delivery. Raises :class:`ConfigError` for unknown agent names.
    """
    from pydantic import ValidationError

    from edgevox.orchestration.coordinator import Coordinator
    from edgevox.orchestration.handoff import HandoffHandler
    from edgevox.orchestration.pipeline import ConversationPipeline, PipelineStage
    from edgevox.orchestration.routing import ConversationRouter
    from edgevox.orchestration.state import SessionStore

    if not isinstance(config, OrchestrationConfig):
        try:
            config = OrchestrationConfig.model_validate(dict(config))
        except ValidationError as exc:
            raise ConfigError(f"orchestration: {exc}") from exc
    if not agents:
        raise ConfigError("orchestration: no agents were given to orchestrate")
    for name in sorted(config.agent_names()):
        _agent(agents, name, "agents")
    publish = bus.publish if bus is not None else None
    delivery = build_delivery(config, sink=sink, voice=voice, publish=publish)
    store = SessionStore(blackboard)
    router = handoff = None
    if config.conversation is not None:
        conv = config.conversation
        pipeline = ConversationPipeline(
            [PipelineStage(s.phase, s.agent, s.next, tuple(s.can_return_to)) for s in conv.stages], name="conversation"
        )
        router = pipeline.to_router(supervisor=conv.supervisor)
        router_agents = {n: agents[n] for n in router.agents}
        handoff = HandoffHandler(
            router_agents,
            store,
            aliases=conv.aliases,
            allowed_transitions=pipeline.agent_transitions(),
            phase_of=pipeline.phase_of,
            publish=publish,
        )
    elif main_agent is not None:
        _agent(agents, main_agent, "main agent")
        router = ConversationRouter(agents, default_agent=main_agent)
    coordinator = Coordinator(
        {n: agents[n] for n in router.agents} if router is not None else agents,
        router=router,
        handoff=handoff,
        store=store,
        strategy=build_strategy(config, config.strategy, agents, delivery=delivery),
        bus=bus,
        delivery=delivery,
    )
    for session_id, name in config.sessions.items():
        strategy = build_strategy(config, name, agents, delivery=delivery)
        coordinator.set_session_strategy(session_id, strategy if strategy is not None else Coordinator.ROUTE)
    return coordinator
