"""What a ``Pipeline`` or a ``Swarm`` does when the agent a handoff gave the conversation to fails.

The conversation goes back to another agent (the entry agent, or in a Swarm's same-turn
handoff the agent that handed off), which says what happened in the Coordinator's words
(:attr:`Coordinator.FAILURE_MESSAGE`) and offers another way;
:class:`~edgevox.orchestration.events.HandoffFailed` records it. Without this, a session
held by a failing agent stays with it and the user hears nothing on every later turn.
"""

from __future__ import annotations

from edgevox.agents.base import AgentResult
from edgevox.orchestration.events import HandoffFailed
from edgevox.orchestration.state import ConversationState, SessionStore
from edgevox.runtime.context import AgentContext


def hand_back(
    store: SessionStore,
    ctx: AgentContext,
    *,
    failed: str,
    outcome: AgentResult,
    to_agent: str,
    phase: str | None = None,
) -> str:
    """Give ``ctx``'s session to ``to_agent`` (in ``phase``, if given) because ``failed`` failed;
    returns the sentence ``to_agent`` says."""
    from edgevox.orchestration.coordinator import Coordinator  # the one wording of the message

    def back(state: ConversationState) -> ConversationState:
        return state.transition(to_phase=phase, to_agent=to_agent, reason=f"{failed} failed", context="")

    store.update(ctx.session_id, back)
    ctx.publish(
        HandoffFailed(
            source=to_agent,
            session_id=ctx.session_id,
            agent=failed,
            error=outcome.error,
            timed_out=outcome.timed_out,
            returned_to=to_agent,
        )
    )
    what = "took too long" if outcome.timed_out else "ran into a problem"
    return Coordinator.FAILURE_MESSAGE.format(agent=failed, what=what, main=to_agent)
