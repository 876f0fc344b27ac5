from __future__ import annotations

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
            "SessionStore",
            "Fallback",
            "Parallel",
            "Repeat",
            "Retry",
            "Router",
            "Sequence",
            "Timeout",
            "Workflow",
            "VoiceActivityState",
            "build_orchestration",
            "HandoffTools",
            "HandoffOptions",
            "Verdict",
            "parse_verdict",
            "RemoteAgent",
            "delegation_tools",
            "serve_delegations",
        }
    )
    for name in orch.__all__:
        assert getattr(orch, name) is not None


def test_no_two_public_classes_share_a_name():
    import edgevox.agents
    import edgevox.runtime
    from edgevox.orchestration import workflows

    assert not hasattr(workflows, "Loop") and workflows.Repeat.__name__ == "Repeat"
    assert edgevox.runtime.RestartSupervisor.__name__ == "RestartSupervisor"
    assert not hasattr(edgevox.runtime, "Supervisor") and not hasattr(edgevox.agents, "Supervisor")
    modules = (edgevox, edgevox.agents, edgevox.runtime, orch)
    owners: dict[str, set[str]] = {}
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type):
                owners.setdefault(obj.__name__, set()).add(f"{obj.__module__}.{obj.__qualname__}")
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}
    assert orch.Loop.__module__ == "edgevox.orchestration.strategies.loop"
    assert orch.Supervisor.__module__ == "edgevox.orchestration.strategies.supervisor"
    for name in ("Loop", "Supervisor"):
        top = getattr(edgevox, name, None)
        assert top is None or top.__module__ not in (
            "edgevox.orchestration.strategies.loop",
            "edgevox.orchestration.strategies.supervisor",
        )
