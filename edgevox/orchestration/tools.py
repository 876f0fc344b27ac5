"""The tools agents call to take part in orchestration.

* ``handoff_conversation`` - hand the conversation to another agent (or a human).
  Intercepted by the :class:`~edgevox.orchestration.handoff.HandoffHandler` found in
  ``ctx.handoff`` (the coordinator and the Swarm strategy put it there).
* ``delegate`` - ask another agent to do a sub-task and get its answer back,
  through the :class:`~edgevox.orchestration.delegation.Delegator` in
  ``ctx.delegator``.

Both return a JSON object as text (``{"ok": true, ...}`` / ``{"ok": false, "error": ...}``),
which is exactly what the calling model reads as the tool result. Add them to an
agent's tools (``edgevox.orchestration.tools:handoff_conversation`` in a config).
"""

from __future__ import annotations

import json

from edgevox.agents.tools import tool
from edgevox.errors import HandoffError
from edgevox.orchestration.delegation import delegate_via_context
from edgevox.runtime.context import AgentContext


@tool(
    examples=(
        (
            "I need to talk to a person",
            {"target": "human", "reason": "user asked for a person", "summary": "wants a human"},
        ),
    )
)
def handoff_conversation(
    target: str,
    reason: str,
    summary: str,
    next_phase: str | None = None,
    with_return: bool = False,
    ctx: AgentContext = None,  # type: ignore[assignment]  # injected by the tool runner, never None in a call
) -> str:
    """Hand this conversation to another agent (who answers from the next turn, or at once in a swarm).

    Args:
        target: Name of the agent to hand over to, "human" for a person, or "return" to hand back.
        reason: Why the conversation is handed over.
        summary: What the next agent needs to know, in one or two sentences.
        next_phase: The conversation phase to move to, if it changes.
        with_return: True if the conversation should come back to you afterwards.
    """
    handler = ctx.handoff if ctx is not None else None
    if handler is None:
        return json.dumps({"ok": False, "error": "handoff is not available here (no handoff handler in the context)"})
    try:
        handoff = handler.request(
            session_id=ctx.session_id,
            from_agent=ctx.agent_name,
            target=target,
            reason=reason,
            summary=summary,
            next_phase=next_phase,
            with_return=with_return,
            turn_id=ctx.turn_id,
        )
    except HandoffError as exc:
        return json.dumps({"ok": False, "error": str(exc)})
    return json.dumps({"ok": True, "message": handler.accepted_message(handoff)})


@tool
def delegate(agent: str, task: str, ctx: AgentContext = None) -> str:  # type: ignore[assignment]  # injected by the tool runner
    """Ask another agent to do a sub-task and return its answer.

    Args:
        agent: Name of the agent to ask.
        task: The sub-task, in one clear sentence.
    """
    return json.dumps(delegate_via_context(ctx, agent, task))
