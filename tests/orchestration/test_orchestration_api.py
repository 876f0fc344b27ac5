from __future__ import annotations

import edgevox
import edgevox.orchestration as orch

REQUIRED = {
    "ConversationState",
    "ConversationPhase",
    "PhaseTransition",
    "ConversationRouter",
    "RoutingRule",
    "RoutingConditions",
    "HandoffHandler",
    "ConversationPipeline",
    "PipelineStage",
    "Pipeline",
    "Swarm",
    "Supervisor",
    "Loop",
    "Orchestration",
    "AgentRegistry",
    "Immediate",
    "WaitForIdle",
    "Queued",
}


def test_public_names_are_importable_and_pinned():
    assert REQUIRED <= set(orch.__all__)
    assert sorted(orch.__all__) == sorted(
        {
            *REQUIRED,
            "Coordinator",
            "DelegationHandle",
            "Delegator",
            "DeliveryStrategy",
            "DeliveryWorker",
            "OrchestrationConfig",
            "OrchestrationResult",
            "SessionStore",
            "TurnResult",
            "VoiceActivityState",
            "build_orchestration",
        }
    )
    for name in orch.__all__:
        assert getattr(orch, name) is not None


def test_strategy_names_do_not_shadow_the_workflow_loop_or_the_runtime_supervisor():
    from edgevox.agents import workflows

    assert orch.Loop is not getattr(workflows, "Loop", None)
    assert orch.Loop.__module__ == "edgevox.orchestration.strategies"
    assert orch.Supervisor.__module__ == "edgevox.orchestration.strategies"
    for name in ("Loop", "Supervisor"):
        top = getattr(edgevox, name, None)
        assert top is None or top.__module__ != "edgevox.orchestration.strategies"
