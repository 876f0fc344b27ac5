"""Multi-agent orchestration: conversation state, routing, handoffs, strategies,
delegation and voice-aware delivery. See ``docs/orchestration.md``.

This is the one composition layer: the workflows (``Sequence``, ``Fallback``,
``Repeat``, ``Retry``, ``Timeout``, ``Router``, ``Parallel``) and the strategies
(``Pipeline``, ``Swarm``, ``Supervisor``, the review ``Loop``) share one base
(:class:`Workflow`), one result (:class:`~edgevox.agents.base.AgentResult`) and one
child runner (:func:`~edgevox.agents.run.run_child`). No two public classes share a
name: the runtime's OTP supervisor is ``edgevox.runtime.RestartSupervisor``.
"""

from __future__ import annotations

from edgevox.config.build_orchestration import build_orchestration
from edgevox.orchestration.config import OrchestrationConfig
from edgevox.orchestration.coordinator import Coordinator
from edgevox.orchestration.delegation import AgentRegistry, DelegationHandle, Delegator
from edgevox.orchestration.delegation_tools import delegation_tools
from edgevox.orchestration.delivery import (
    DeliveryStrategy,
    DeliveryWorker,
    Immediate,
    Queued,
    VoiceActivityState,
    WaitForIdle,
)
from edgevox.orchestration.handoff import HandoffHandler
from edgevox.orchestration.handoff_context import HandoffOptions
from edgevox.orchestration.pipeline import ConversationPipeline, PipelineStage
from edgevox.orchestration.remote_delegation import RemoteAgent, serve_delegations
from edgevox.orchestration.routing import ConversationRouter, RoutingConditions, RoutingRule
from edgevox.orchestration.state import ConversationPhase, ConversationState, PhaseTransition, SessionStore
from edgevox.orchestration.strategies import Loop, Orchestration, Pipeline, Supervisor, Swarm
from edgevox.orchestration.tools import HandoffTools
from edgevox.orchestration.verdict import Verdict, parse_verdict
from edgevox.orchestration.workflows import Fallback, Parallel, Repeat, Retry, Router, Sequence, Timeout, Workflow

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
    "Fallback",
    "HandoffHandler",
    "HandoffOptions",
    "HandoffTools",
    "Immediate",
    "Loop",
    "Orchestration",
    "OrchestrationConfig",
    "Parallel",
    "PhaseTransition",
    "Pipeline",
    "PipelineStage",
    "Queued",
    "RemoteAgent",
    "Repeat",
    "Retry",
    "Router",
    "RoutingConditions",
    "RoutingRule",
    "Sequence",
    "SessionStore",
    "Supervisor",
    "Swarm",
    "Timeout",
    "Verdict",
    "VoiceActivityState",
    "WaitForIdle",
    "Workflow",
    "build_orchestration",
    "delegation_tools",
    "parse_verdict",
    "serve_delegations",
]
