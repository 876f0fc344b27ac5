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

from pydantic import AliasChoices, Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from edgevox.config.fields import Name, Period, Seconds, Section

PosInt = Annotated[StrictInt, Field(ge=1, le=1000)]
PosFloat = Seconds
NonNegFloat = Annotated[StrictFloat, Field(ge=0, le=3600)]
StrategyName = Literal["single", "conversation", "pipeline", "swarm", "supervisor", "loop"]


class StageSection(Section):
    """One phase of a `conversation` or a `pipeline`, owned by one agent."""

    phase: StrictStr = Field(min_length=1, description="Phase name (intake, handling, ... or your own).")
    agent: Name = Field(description="Agent that owns the phase.")
    next: StrictStr | None = Field(
        None, description="Phase that follows (may be itself: it repeats); null on every stage = the list order."
    )
    can_return_to: list[StrictStr] = Field(
        default_factory=list, description="Earlier phases this one may hand back to."
    )


class PipelineSection(Section):
    """RoomKit's Pipeline, a handoff chain: the first stage's agent answers and hands the conversation
    on with `handoff_conversation`; the next turn goes to the agent handed to."""

    agents: list[Name] = Field(
        default_factory=list, description="Stage agents in order, each handing off to the next; or give `stages`."
    )
    stages: list[StageSection] = Field(
        default_factory=list, description="Phases with their agent, `next` and `can_return_to` (instead of `agents`)."
    )
    supervisor_id: Name | None = Field(
        None, description="Agent that observes every exchange (never answers; not a stage)."
    )
    entry: Name | None = Field(None, description="Agent that answers a session first; null = the first stage's.")
    routing: dict[Name, list[StrictStr]] = Field(
        default_factory=dict,
        description="Keyword hints per agent (RoomKit's `routing`), shown in the handoff tool of agents that reach it.",
    )
    aliases: dict[StrictStr, Name] = Field(
        default_factory=dict, description="Other names agents may use for a handoff target."
    )
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")

    @model_validator(mode="after")
    def _agents_or_stages(self) -> PipelineSection:
        if bool(self.agents) == bool(self.stages):
            raise ValueError("pipeline: give `agents: [...]` (a chain in order) or `stages: [...]`, exactly one")
        return self

    def stage_agents(self) -> list[str]:
        return list(self.agents) if self.agents else list(dict.fromkeys(s.agent for s in self.stages))


class SwarmSection(Section):
    """Peers handing the turn to each other with `handoff_conversation` (each is given it, listing its peers)."""

    agents: list[Name] = Field(min_length=1, description="Agents of the swarm; each may hand the turn to every other.")
    entry: Name | None = Field(None, description="Agent that answers first; null = the first agent.")
    max_handoffs: Annotated[StrictInt, Field(ge=1, le=32)] | None = Field(
        None, description="Handoffs allowed within one turn; null = `orchestration.handoff.max_handoffs_per_turn`."
    )
    aliases: dict[StrictStr, Name] = Field(default_factory=dict, description="Other names agents may use for a target.")


class SupervisorSection(Section):
    """A supervising agent and its workers (RoomKit's Supervisor: same options, same defaults)."""

    supervisor: Name = Field(description="The agent that delegates and answers.")
    workers: list[Name] = Field(min_length=1, description="Worker agents.")
    strategy: Literal["sequential", "parallel"] | None = Field(
        None,
        description="null: the supervisor decides, with a `delegate_to_<worker>` tool per worker; "
        "sequential/parallel: how the team runs (a `delegate_workers` tool, or every turn with `auto_delegate`).",
    )
    auto_delegate: StrictBool = Field(
        False, description="Run the team on every turn without a tool (needs `strategy`)."
    )
    refine_task: StrictBool = Field(
        True, description="auto_delegate: the supervisor first reduces the request to its topic for the workers."
    )
    refine_instruction: StrictStr | None = Field(
        None, description="What `refine_task` asks the supervisor; null = the topic-only default."
    )
    async_delivery: StrictBool = Field(
        False,
        description="The team runs in the background from a `delegate_workers` tool; the answer comes later "
        "through `delivery` (needs `strategy`).",
    )
    delegation_message: StrictStr | None = Field(
        "I'm dispatching my team to work on this.",
        description="Said at once when a background delegation starts; null = nothing.",
    )
    wait_for_result: StrictBool = Field(
        True, description="strategy null: a `delegate_to_<worker>` call waits for the worker (false: background)."
    )
    timeout_s: PosFloat | None = Field(
        None, description="Per-agent time limit in seconds; a worker over it is reported missing."
    )

    @model_validator(mode="after")
    def _modes(self) -> SupervisorSection:
        if self.strategy is None and (self.auto_delegate or self.async_delivery):
            option = "auto_delegate" if self.auto_delegate else "async_delivery"
            raise ValueError(f"supervisor: `{option}: true` needs `strategy: sequential` or `strategy: parallel`")
        return self


class LoopSection(Section):
    """A writer revised until reviewers approve (RoomKit's Loop)."""

    agent: Name = Field(description="The agent that writes the answer.")
    reviewers: list[Name] = Field(
        default_factory=list, description="Agents that review each draft (or one `reviewer`)."
    )
    reviewer: Name | None = Field(None, description="The one reviewer (RoomKit's shorthand for `reviewers: [x]`).")
    strategy: Literal["sequential", "parallel"] = Field(
        "sequential",
        description="How reviewers run: one after another, each seeing earlier feedback, or all at once on the same draft.",
    )
    approval: Literal["all", "any", "majority"] = Field("all", description="How many reviewers must approve a draft.")
    max_iterations: PosInt = Field(3, description="Drafts at most.")
    timeout_s: PosFloat | None = Field(None, description="Per-agent time limit in seconds; null = none.")

    @model_validator(mode="before")
    @classmethod
    def _vote_words_moved(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("strategy") in ("all", "any", "majority"):
            raise ValueError(
                f"loop.strategy = {data['strategy']!r}: strategy is how reviewers run (sequential or "
                f"parallel, as in RoomKit); write `approval: {data['strategy']}` for how many must approve"
            )
        return data

    @model_validator(mode="after")
    def _one_reviewer_list(self) -> LoopSection:
        if self.reviewers and self.reviewer is not None:
            raise ValueError("loop: give `reviewers: [...]` or `reviewer: x`, not both")
        if not self.reviewers and self.reviewer is None:
            raise ValueError("loop: no reviewer; add `reviewers: [...]` or `reviewer: x`")
        return self

    def reviewer_names(self) -> list[str]:
        return [self.reviewer] if self.reviewer is not None else list(self.reviewers)


ChannelName = Literal["voice", "text", "ros2", "ros1"]
"""Where a user turn came from: spoken, typed (``submit_text``), a ROS 2 / ROS 1 bridge's text input."""


class RuleSection(Section):
    """One routing rule: turns matching every condition given go to `agent`."""

    agent: Name = Field(description="The agent that answers matching turns.")
    priority: StrictInt = Field(0, description="Lower numbers are tried first (as in RoomKit); ties in list order.")
    name: StrictStr = Field("", description="Shown in `Routed.why` as rule:<name>; default agent@priority.")
    phases: list[StrictStr] = Field(default_factory=list, description="Match only in these phases; [] = any.")
    intents: list[StrictStr] = Field(default_factory=list, description="Match only these intent labels; [] = any.")
    channel_types: list[ChannelName] = Field(
        default_factory=list, description="Match only turns from these channels (voice, text, ros2, ros1); [] = any."
    )


class RoutingSection(Section):
    """Routing rules for turns no strategy answers (RoomKit's `ConversationRouter` rules)."""

    rules: list[RuleSection] = Field(min_length=1, description="Rules, tried in ascending `priority`.")
    default: Name | None = Field(
        None, description="Agent for turns no rule matches; null = the conversation's first stage or the main agent."
    )


class ConversationSection(Section):
    """Turn-by-turn routing through phases, with handoffs between their agents."""

    stages: list[StageSection] = Field(min_length=1, description="Phases in order, each owned by an agent.")
    aliases: dict[StrictStr, Name] = Field(
        default_factory=dict, description="Other names agents may use for a handoff target."
    )
    supervisor: Name | None = Field(None, description="Agent that observes every exchange (never answers).")
    escalation: StrictBool = Field(
        False, description="Add `human` (a person takes the conversation) to every agent's handoff targets."
    )


class DelegationSection(Section):
    """Limits of delegation (supyagent's): for a Supervisor's workers and for agents given a
    `delegates:` list (`agents.<name>.delegates`)."""

    max_depth: PosInt = Field(
        5, description="Longest delegation chain; past it the model reads `Maximum delegation depth (N) reached`."
    )
    max_concurrency: PosInt = Field(
        2, description="Delegated agents running at once, at most (parallel `delegate` calls and background ones)."
    )
    timeout_s: PosFloat | None = Field(
        None, description="Time limit of one delegation in seconds, for `delegates:` agents; null = none."
    )


class ToolLimitsSection(Section):
    """supyagent's `limits` of one agent; a call over one is not run and the model reads why."""

    max_tool_calls_per_turn: Annotated[StrictInt, Field(ge=0, le=10_000)] | None = Field(
        None, description="Tool calls one turn may make (0 = none); null = only `max_tool_hops`."
    )
    max_total_tool_calls: Annotated[StrictInt, Field(ge=0, le=1_000_000)] | None = Field(
        None, description="Tool calls one conversation (session) may make in all; null = no limit."
    )


class DeliverySection(Section):
    """How results produced in the background reach the voice channel (RoomKit's strategies)."""

    strategy: Literal["immediate", "wait_for_idle", "queued"] = Field(
        "wait_for_idle",
        description="immediate: at once; wait_for_idle: when nobody is talking; queued: like wait_for_idle, "
        "delivering what piled up as one batch.",
    )
    buffer_s: NonNegFloat = Field(
        1.0,
        validation_alias=AliasChoices("buffer_s", "buffer"),
        description="Silence needed before speaking, in seconds (`buffer`, RoomKit's spelling, is accepted).",
    )
    timeout_s: PosFloat = Field(
        30.0,
        validation_alias=AliasChoices("timeout_s", "playback_timeout"),
        description="Deliver anyway after waiting this long, in seconds (`playback_timeout` is accepted).",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: object) -> object:
        if isinstance(data, dict):
            for ours, roomkits in (("buffer_s", "buffer"), ("timeout_s", "playback_timeout")):
                if ours in data and roomkits in data:
                    raise ValueError(f"delivery: give `{ours}` or `{roomkits}` (RoomKit's spelling), not both")
        return data


class HandoffSection(Section):
    """What a handoff carries to the receiving agent and what the user hears (OmniForge)."""

    history_turns: Annotated[StrictInt, Field(ge=0, le=50)] = Field(
        6,
        description="Recent user/assistant messages the receiving agent gets with the summary, so the user never "
        "repeats themselves (0: the summary only).",
    )
    max_handoffs_per_turn: Annotated[StrictInt, Field(ge=1, le=32)] = Field(
        8,
        description="Handoffs one user turn may make, counted over every agent that had it (`handoff_to_<name>` "
        "tools and a swarm's peers alike); one more ends the turn saying the agents could not settle who handles it.",
    )
    notify: StrictBool = Field(
        True, description="Say a short notification naming the target when a handoff is accepted, before it speaks."
    )
    notification: StrictStr = Field(
        "Connecting you with {target}...",
        description="The notification; {target} is the target's friendly name ({source} and {reason} may be used too).",
    )
    names: dict[Name, StrictStr] = Field(
        default_factory=dict,
        description="Friendly names of agents for the notification (default: the name in words, `billing_agent` -> "
        "'billing agent').",
    )

    @model_validator(mode="after")
    def _notification_valid(self) -> HandoffSection:
        from edgevox.errors import ArgumentError
        from edgevox.orchestration.handoff_context import HandoffOptions

        try:
            HandoffOptions(**self.model_dump())
        except ArgumentError as exc:
            raise ValueError(str(exc)) from None
        return self


class CoordinatorSection(Section):
    """How the coordinator answers each user turn: cancelling a workflow by voice or text,
    heartbeats of long turns and the overall time limit."""

    timeout_s: PosFloat | None = Field(
        None,
        description="Overall time limit of one turn in seconds; at it the user hears what was finished "
        "and which agents did not finish. null = none.",
    )
    progress_interval_s: Period | None = Field(
        None, description="Publish a progress event this often while a turn runs, in seconds; null = never."
    )
    still_working: StrictStr = Field(
        "",
        description="Said once when a turn outlasts `progress_interval_s` (e.g. 'Still working on it.'); '' = nothing.",
    )
    cancel_phrases: list[StrictStr] | None = Field(
        None,
        description="Phrases that cancel a workflow with return when said or typed; null = the defaults "
        "(cancel, never mind, stop that, forget it, abort); [] = off.",
    )


class OrchestrationConfig(Section):
    """Multi-agent orchestration: which strategy answers user turns."""

    strategy: StrategyName = Field("single", description="Runtime-wide strategy; its section below must be present.")
    pipeline: PipelineSection | None = Field(None, description="The pipeline strategy.")
    swarm: SwarmSection | None = Field(None, description="The swarm strategy.")
    supervisor: SupervisorSection | None = Field(None, description="The supervisor strategy.")
    loop: LoopSection | None = Field(None, description="The writer/reviewers loop strategy.")
    routing: RoutingSection | None = Field(None, description="Routing rules for turns routed between agents.")
    conversation: ConversationSection | None = Field(None, description="Phase routing with handoffs.")
    sessions: dict[StrictStr, StrategyName] = Field(
        default_factory=dict,
        description="Per-session strategy overrides; `single` turns orchestration off for that session "
        "(the main agent answers every turn).",
    )
    coordinator: CoordinatorSection = Field(
        default_factory=CoordinatorSection, description="Cancel phrases, heartbeats and the time limit of a turn."
    )
    delegation: DelegationSection = Field(default_factory=DelegationSection, description="Delegation limits.")
    delivery: DeliverySection = Field(default_factory=DeliverySection, description="Delivery of background results.")
    handoff: HandoffSection = Field(
        default_factory=HandoffSection, description="What a handoff carries and the notification the user hears."
    )

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
            names |= set(self.pipeline.stage_agents()) | set(self.pipeline.aliases.values())
            if self.pipeline.supervisor_id:
                names.add(self.pipeline.supervisor_id)
        if self.swarm:
            names |= set(self.swarm.agents) | set(self.swarm.aliases.values())
        if self.supervisor:
            names |= {self.supervisor.supervisor, *self.supervisor.workers}
        if self.loop:
            names |= {self.loop.agent, *self.loop.reviewer_names()}
        if self.routing:
            names |= {r.agent for r in self.routing.rules} | ({self.routing.default} if self.routing.default else set())
        if self.conversation:
            names |= {s.agent for s in self.conversation.stages} | set(self.conversation.aliases.values())
            if self.conversation.supervisor:
                names.add(self.conversation.supervisor)
        return names
