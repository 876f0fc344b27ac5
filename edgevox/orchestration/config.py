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

This module must not import :mod:`edgevox.config.schema` (the schema imports it); its
models share the schema's base and types from :mod:`edgevox.config.fields` (unknown keys
are errors, scalars are strict).
:func:`edgevox.config.build_orchestration.build_orchestration` (with every other
config-to-object mapping, in :mod:`edgevox.config`) turns a validated section and a
``{name: agent}`` dict into a :class:`~edgevox.orchestration.coordinator.Coordinator`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from edgevox.config.fields import Name, Seconds, Section

PosInt = Annotated[StrictInt, Field(ge=1, le=1000)]
PosFloat = Seconds
NonNegFloat = Annotated[StrictFloat, Field(ge=0, le=3600)]
StrategyName = Literal["single", "conversation", "pipeline", "swarm", "supervisor", "loop"]


class PipelineSection(Section):
    """Agents in order; each gets the request and the previous agent's answer."""

    agents: list[Name] = Field(min_length=1, description="Agents in the order they run.")
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")


class SwarmSection(Section):
    """Peers handing the turn to each other with `handoff_conversation`."""

    agents: list[Name] = Field(min_length=1, description="Agents of the swarm (give each the handoff tool).")
    entry: Name | None = Field(None, description="Agent that answers first; null = the first agent.")
    max_handoffs: PosInt = Field(5, description="Handoffs allowed within one turn.")
    aliases: dict[StrictStr, Name] = Field(default_factory=dict, description="Other names agents may use for a target.")


class SupervisorSection(Section):
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


class LoopSection(Section):
    """A writer revised until reviewers say APPROVED."""

    agent: Name = Field(description="The agent that writes the answer.")
    reviewers: list[Name] = Field(min_length=1, description="Agents that review each draft.")
    strategy: Literal["all", "any", "majority"] = Field("all", description="How many reviewers must approve.")
    max_iterations: PosInt = Field(3, description="Drafts at most.")
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")


class StageSection(Section):
    phase: StrictStr = Field(min_length=1, description="Phase name (intake, handling, ... or your own).")
    agent: Name = Field(description="Agent that owns the phase.")
    next: StrictStr | None = Field(None, description="Phase that follows; null = next in the list.")
    can_return_to: list[StrictStr] = Field(
        default_factory=list, description="Earlier phases this one may hand back to."
    )


class ConversationSection(Section):
    """Turn-by-turn routing through phases, with handoffs between their agents."""

    stages: list[StageSection] = Field(min_length=1, description="Phases in order, each owned by an agent.")
    aliases: dict[StrictStr, Name] = Field(
        default_factory=dict, description="Other names agents may use for a handoff target."
    )
    supervisor: Name | None = Field(None, description="Agent that observes every exchange (never answers).")


class DelegationSection(Section):
    max_depth: PosInt = Field(5, description="Longest delegation chain.")
    max_concurrency: PosInt = Field(2, description="Delegated agents running at once, at most.")


class DeliverySection(Section):
    """How results produced in the background reach the voice channel."""

    strategy: Literal["immediate", "wait_for_idle", "queued"] = Field(
        "wait_for_idle", description="When background results are spoken."
    )
    buffer_s: NonNegFloat = Field(
        1.0, description="wait_for_idle: silence needed; queued: batching window, in seconds."
    )
    timeout_s: PosFloat = Field(30.0, description="wait_for_idle: deliver anyway after waiting this long, in seconds.")


class OrchestrationConfig(Section):
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
