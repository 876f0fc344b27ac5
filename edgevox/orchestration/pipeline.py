"""A conversation pipeline: phases in order, each owned by one agent.

A :class:`ConversationPipeline` is the declarative form of "triage -> handler ->
resolver": each :class:`PipelineStage` names its phase, the agent that owns it,
the phase that normally follows (``next``) and the earlier phases it may hand
back to (``can_return_to``). It is validated at construction (unique phases,
every reference resolves) and produces what the rest of the layer needs: the
phase map, the allowed transitions for :class:`~edgevox.orchestration.handoff.HandoffHandler`
and a :class:`~edgevox.orchestration.routing.ConversationRouter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from edgevox.orchestration.routing import ConversationRouter, RoutingConditions, RoutingRule
from edgevox.orchestration.state import ConversationPhase, phase_name


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

    def __init__(self, stages: Sequence[PipelineStage], *, name: str = "pipeline") -> None:
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
            if stage.next == stage.phase:
                raise ValueError(f"pipeline {name!r}: stage {stage.phase!r} names itself as next")
            for back in stage.can_return_to:
                if back not in seen:
                    raise ValueError(
                        f"pipeline {name!r}: stage {stage.phase!r} can_return_to {back!r}, "
                        f"which is not a phase of this pipeline; phases: {phases}"
                    )
        self.stages: tuple[PipelineStage, ...] = tuple(stages)

    @property
    def first(self) -> PipelineStage:
        return self.stages[0]

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
        """``{phase: agent}``."""
        return {s.phase: s.agent for s in self.stages}

    def get_allowed_transitions(self) -> dict[str, tuple[str, ...]]:
        """``{phase: phases it may move to}`` (``next`` first, then ``can_return_to``)."""
        return {s.phase: ((s.next,) if s.next else ()) + s.can_return_to for s in self.stages}

    def agent_transitions(self) -> dict[str, frozenset[str]]:
        """``{agent: agents it may hand off to}``, derived from the phase transitions."""
        phase_map = self.get_phase_map()
        out: dict[str, set[str]] = {a: set() for a in self.agents}
        for phase, targets in self.get_allowed_transitions().items():
            out[phase_map[phase]].update(phase_map[t] for t in targets)
        return {a: frozenset(t - {a}) for a, t in out.items()}

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
