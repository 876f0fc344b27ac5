from __future__ import annotations

import pytest

from edgevox.orchestration import ConversationPhase, ConversationState, PhaseTransition, SessionStore
from edgevox.runtime.blackboard import Blackboard


def test_transition_returns_a_new_state_and_leaves_the_old_one_unchanged():
    s0 = ConversationState(session_id="s1")
    s1 = s0.transition(to_phase=ConversationPhase.HANDLING, to_agent="billing", reason="routed", timestamp=5.0)
    assert s0.phase == "intake" and s0.active_agent is None and s0.history == ()
    assert s1 is not s0
    assert s1.phase == "handling" and s1.active_agent == "billing"
    assert s1.history == (PhaseTransition("intake", "handling", None, "billing", "routed", 5.0),)


def test_handoff_transitions_are_counted_and_any_string_is_a_phase():
    s = ConversationState().transition(to_phase="diagnosis", to_agent="mechanic", handoff=True)
    s = s.transition(to_agent=None, handoff=True)
    assert s.phase == "diagnosis" and s.active_agent is None and s.handoff_count == 2


def test_state_round_trips_through_json():
    s = (
        ConversationState(session_id="abc")
        .transition(to_phase="qualification", to_agent="triage", reason="r1", timestamp=1.0)
        .transition(
            to_phase="handling", to_agent="handler", handoff=True, context="Context: x", return_stack=("triage",)
        )
        .with_data(ticket=42)
    )
    back = ConversationState.from_json(s.to_json())
    assert back == s
    assert back.history[1].from_agent == "triage"


def test_from_json_rejects_unknown_fields_by_name():
    with pytest.raises(ValueError, match="bogus"):
        ConversationState.from_dict({"session_id": "x", "bogus": 1})


def test_history_is_bounded():
    s = ConversationState(max_history=3)
    for i in range(10):
        s = s.transition(to_phase=f"p{i}")
    assert [t.to_phase for t in s.history] == ["p7", "p8", "p9"]


def test_store_keeps_states_per_session_in_the_blackboard():
    board = Blackboard()
    store = SessionStore(board)
    store.save_state(ConversationState(session_id="a").transition(to_agent="x"))
    assert store.state("a").active_agent == "x"
    assert store.state("b").active_agent is None
    assert any(k.startswith("orchestration/a/") for k in board.keys())
    # A second store over the same blackboard sees the same session state.
    assert SessionStore(board).state("a").active_agent == "x"
    board.close()
