from __future__ import annotations

import pytest

from edgevox.orchestration import ConversationPipeline, ConversationState, PipelineStage
from edgevox.orchestration.events import UserTurn


def make():
    return ConversationPipeline(
        [
            PipelineStage("intake", "triage", next="handling"),
            PipelineStage("handling", "handler", next="resolution", can_return_to=("intake",)),
            PipelineStage("resolution", "resolver"),
        ]
    )


def test_phase_map_and_allowed_transitions():
    p = make()
    # RoomKit's direction: agent -> phase (was phase -> agent, now get_phase_owners()).
    assert p.get_phase_map() == {"triage": "intake", "handler": "handling", "resolver": "resolution"}
    assert p.get_phase_owners() == {"intake": "triage", "handling": "handler", "resolution": "resolver"}
    assert p.get_allowed_transitions() == {
        "intake": ("handling",),
        "handling": ("resolution", "intake"),
        "resolution": (),
    }
    assert p.agent_transitions() == {
        "triage": frozenset({"handler"}),
        "handler": frozenset({"resolver", "triage"}),
        "resolver": frozenset(),
    }


def test_stages_without_next_are_chained_in_order():
    p = ConversationPipeline([PipelineStage("a", "x"), PipelineStage("b", "y")])
    assert p.get_allowed_transitions() == {"a": ("b",), "b": ()}


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        ([], "at least one stage"),
        ([PipelineStage("a", "x"), PipelineStage("a", "y")], "declared twice"),
        ([PipelineStage("a", "x", next="zzz")], "next='zzz'"),
        ([PipelineStage("a", "x", next="b"), PipelineStage("b", "y", can_return_to=("q",))], "can_return_to 'q'"),
    ],
)
def test_invalid_pipelines_are_rejected_at_construction(stages, message):
    with pytest.raises(ValueError, match=message):
        ConversationPipeline(stages)


def test_to_router_routes_each_phase_to_its_agent():
    router = make().to_router()
    assert router.route(UserTurn(text="x"), ConversationState()).agent == "triage"
    assert router.route(UserTurn(text="x"), ConversationState(phase="resolution")).agent == "resolver"
