"""A conversation pipeline: phases in order, each owned by one agent.

A :class:`ConversationPipeline` is the declarative form of "triage -> handler ->
resolver": each :class:`PipelineStage` names its phase, the agent that owns it,
the phase that normally follows (``next``) and the earlier phases it may hand
back to (``can_return_to``). It is validated at construction (unique phases,
every reference resolves) and produces what the rest of the layer needs: the
phase map, the allowed transitions for :class:`~edgevox.orchestration.handoff.HandoffHandler`
(:meth:`ConversationPipeline.handoff_handler` checks both the agent a handoff names and the
phase it moves to), the per-agent ``handoff_conversation`` tools
(:meth:`ConversationPipeline.handoff_tools`) and a
:class:`~edgevox.orchestration.routing.ConversationRouter`. As in RoomKit, a stage may name
itself as ``next`` (a phase that repeats) and :meth:`~ConversationPipeline.get_phase_map` is
``{agent: phase}``; :meth:`~ConversationPipeline.get_phase_owners` is ``{phase: agent}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edgevox.orchestration.routing import ConversationRouter, RoutingConditions, RoutingRule
from edgevox.orchestration.state import ConversationPhase, SessionStore, phase_name

if TYPE_CHECKING:
    from edgevox.agents.base import HandoffTiming
    from edgevox.orchestration.handoff import HandoffHandler
    from edgevox.orchestration.handoff_context import HandoffOptions
    from edgevox.orchestration.tools import HandoffTools


@dataclass(frozen=True)
class PipelineStage:
    """One phase of a pipeline."""

    phase: str
    agent: str
    next: str | None = None
    """Phase that follows this one (None = last stage)."""
    can_return_to: tuple[str, ...] = ()
    """Earlier phases this stage may hand the conversation back to."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "phase", phase_name(self.phase))
        if self.next is not None:
            object.__setattr__(self, "next", phase_name(self.next))
        object.__setattr__(self, "can_return_to", tuple(phase_name(p) for p in self.can_return_to))


class ConversationPipeline:
    """Stages in order. Raises ``ValueError`` naming the bad stage when invalid.

    If no stage sets ``next``, stages are chained in declaration order.
    """

    def __init__(
        self, stages: Sequence[PipelineStage], *, name: str = "pipeline", default_phase: str | None = None
    ) -> None:
        if not stages:
            raise ValueError(f"pipeline {name!r}: needs at least one stage")
        self.name = name
        stages = list(stages)
        if all(s.next is None for s in stages):
            stages = [
                PipelineStage(s.phase, s.agent, stages[i + 1].phase if i + 1 < len(stages) else None, s.can_return_to)
                for i, s in enumerate(stages)
            ]
        phases = [s.phase for s in stages]
        seen: set[str] = set()
        for stage in stages:
            if not stage.phase or not stage.agent:
                raise ValueError(f"pipeline {name!r}: every stage needs a phase and an agent, got {stage!r}")
            if stage.phase in seen:
                raise ValueError(f"pipeline {name!r}: phase {stage.phase!r} is declared twice")
            seen.add(stage.phase)
        for stage in stages:
            if stage.next is not None and stage.next not in seen:
                raise ValueError(
                    f"pipeline {name!r}: stage {stage.phase!r} has next={stage.next!r}, "
                    f"which is not a phase of this pipeline; phases: {phases}"
                )
            for back in stage.can_return_to:
                if back not in seen:
                    raise ValueError(
                        f"pipeline {name!r}: stage {stage.phase!r} can_return_to {back!r}, "
                        f"which is not a phase of this pipeline; phases: {phases}"
                    )
        self.stages: tuple[PipelineStage, ...] = tuple(stages)
        if default_phase is not None and phase_name(default_phase) not in seen:
            raise ValueError(f"pipeline {name!r}: default_phase {default_phase!r} is not one of its phases: {phases}")
        self.default_phase = phase_name(default_phase) if default_phase is not None else stages[0].phase
        """Where a conversation starts (RoomKit's ``default_phase``; default: the first stage)."""

    @property
    def first(self) -> PipelineStage:
        """The stage a conversation starts in (``default_phase``)."""
        return self.stage(self.default_phase)

    @property
    def agents(self) -> list[str]:
        """Agent names in stage order, without duplicates."""
        return list(dict.fromkeys(s.agent for s in self.stages))

    def stage(self, phase: str | ConversationPhase) -> PipelineStage:
        name = phase_name(phase)
        for s in self.stages:
            if s.phase == name:
                return s
        raise KeyError(f"pipeline {self.name!r} has no phase {name!r}; phases: {[s.phase for s in self.stages]}")

    def get_phase_map(self) -> dict[str, str]:
        """``{agent: its phase}`` (RoomKit's direction: the phase a handoff to the agent moves
        to; an agent owning several phases maps to its first, as :meth:`phase_of`)."""
        return {agent: phase for agent in self.agents if (phase := self.phase_of(agent)) is not None}

    def get_phase_owners(self) -> dict[str, str]:
        """``{phase: the agent that owns it}``."""
        return {s.phase: s.agent for s in self.stages}

    def get_allowed_transitions(self) -> dict[str, tuple[str, ...]]:
        """``{phase: phases it may move to}`` (``next`` first, then ``can_return_to``)."""
        return {s.phase: ((s.next,) if s.next else ()) + s.can_return_to for s in self.stages}

    def agent_transitions(self) -> dict[str, frozenset[str]]:
        """``{agent: agents it may hand off to}``, derived from the phase transitions."""
        phase_map = self.get_phase_owners()
        out: dict[str, set[str]] = {a: set() for a in self.agents}
        for phase, targets in self.get_allowed_transitions().items():
            out[phase_map[phase]].update(phase_map[t] for t in targets)
        return {a: frozenset(t - {a}) for a, t in out.items()}

    def reachable_agents(self) -> dict[str, tuple[str, ...]]:
        """``{agent: agents it may hand off to}`` in stage order (``next`` first, then
        ``can_return_to``): the ``target`` enum of its handoff tool."""
        owners = self.get_phase_owners()
        out: dict[str, dict[str, None]] = {a: {} for a in self.agents}
        for s in self.stages:
            for phase in ((s.next,) if s.next else ()) + s.can_return_to:
                if owners[phase] != s.agent:
                    out[s.agent][owners[phase]] = None
        return {a: tuple(t) for a, t in out.items()}

    def handoff_handler(
        self,
        store: SessionStore,
        *,
        agents: Sequence[str] = (),
        aliases: Mapping[str, str] | None = None,
        publish: Callable[[Any], Any] | None = None,
        timing: HandoffTiming = "next_turn",
        options: HandoffOptions | None = None,
    ) -> HandoffHandler:
        """A :class:`HandoffHandler` over the stages' agents (and ``agents``) that allows exactly
        this pipeline's transitions: the agent a handoff names and the phase it moves to."""
        from edgevox.orchestration.handoff import HandoffHandler

        return HandoffHandler(
            list(dict.fromkeys([*self.agents, *agents])),
            store,
            aliases=aliases,
            allowed_transitions=self.agent_transitions(),
            phase_of=self.phase_of,
            phase_transitions=self.get_allowed_transitions(),
            publish=publish,
            timing=timing,
            options=options,
        )

    def handoff_tools(
        self, *, descriptions: Mapping[str, str] | None = None, owner: str = "pipeline", human: bool = False
    ) -> HandoffTools:
        """Each stage agent's ``handoff_conversation`` tool: ``target`` lists exactly the agents
        of its ``next`` and ``can_return_to`` phases (and ``human``, a person, with ``human=True``),
        ``next_phase`` exactly those phases."""
        from edgevox.orchestration.handoff import HUMAN
        from edgevox.orchestration.tools import HandoffTools

        phases: dict[str, list[str]] = {a: [] for a in self.agents}
        for s in self.stages:
            for phase in ((s.next,) if s.next else ()) + s.can_return_to:
                if phase not in phases[s.agent]:
                    phases[s.agent].append(phase)
        reachable = {a: t + ((HUMAN,) if human else ()) for a, t in self.reachable_agents().items()}
        described = {**({HUMAN: "a person takes the conversation"} if human else {}), **(descriptions or {})}
        return HandoffTools(reachable, descriptions=described, phases=phases, owner=owner)

    def phase_of(self, agent: str) -> str | None:
        """The first phase owned by ``agent``."""
        for s in self.stages:
            if s.agent == agent:
                return s.phase
        return None

    def to_router(self, *, supervisor: str | None = None, extra_agents: Sequence[str] = ()) -> ConversationRouter:
        """A router sending each phase to its agent; the first stage's agent is the default."""
        rules = [
            RoutingRule(agent=s.agent, conditions=RoutingConditions(phase=s.phase), name=f"phase:{s.phase}")
            for s in self.stages
        ]
        agents = set(self.agents) | set(extra_agents) | ({supervisor} if supervisor else set())
        return ConversationRouter(agents, rules=rules, default_agent=self.first.agent, supervisor=supervisor)
