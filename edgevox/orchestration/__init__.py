"""Multi-agent orchestration: conversation state, routing, handoffs, strategies,
delegation and voice-aware delivery. See ``docs/orchestration.md``.

The strategy classes ``Loop`` and ``Supervisor`` here are *orchestration* strategies;
the agent workflow ``Loop`` (``edgevox.agents.workflows``) and the runtime's OTP
supervisor (``edgevox.runtime.supervisor``) keep their own modules and are never
re-exported under these names at the package top level.
"""

from __future__ import annotations

from edgevox.orchestration.config import OrchestrationConfig, build_orchestration
from edgevox.orchestration.coordinator import Coordinator, TurnResult
from edgevox.orchestration.delegation import AgentRegistry, DelegationHandle, Delegator
from edgevox.orchestration.delivery import (
    DeliveryStrategy,
    DeliveryWorker,
    Immediate,
    Queued,
    VoiceActivityState,
    WaitForIdle,
)
from edgevox.orchestration.handoff import HandoffHandler
from edgevox.orchestration.pipeline import ConversationPipeline, PipelineStage
from edgevox.orchestration.routing import ConversationRouter, RoutingConditions, RoutingRule
from edgevox.orchestration.state import ConversationPhase, ConversationState, PhaseTransition, SessionStore
from edgevox.orchestration.strategies import Loop, Orchestration, OrchestrationResult, Pipeline, Supervisor, Swarm

__all__ = [
    "AgentRegistry",
    "ConversationPhase",
    "ConversationPipeline",
    "ConversationRouter",
    "ConversationState",
    "Coordinator",
    "DelegationHandle",
    "Delegator",
    "DeliveryStrategy",
    "DeliveryWorker",
    "HandoffHandler",
    "Immediate",
    "Loop",
    "Orchestration",
    "OrchestrationConfig",
    "OrchestrationResult",
    "PhaseTransition",
    "Pipeline",
    "PipelineStage",
    "Queued",
    "RoutingConditions",
    "RoutingRule",
    "SessionStore",
    "Supervisor",
    "Swarm",
    "TurnResult",
    "VoiceActivityState",
    "WaitForIdle",
    "build_orchestration",
]
