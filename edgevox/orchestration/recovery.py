"""What the Coordinator does when a workflow is cancelled by voice or text, or an agent fails.

:func:`spoken_cancel`: during a workflow with return, a turn the
:class:`~edgevox.orchestration.cancel.CancelMatcher` classifies as a cancel cancels it like
:meth:`Coordinator.cancel_workflow` and confirms; an unclear one gets a question, and the
answer on the next turn decides (yes: cancel; no: the agent takes the turn).

:func:`recover`: the agent holding the conversation (not the main agent) failed or timed
out: the main agent takes it back (active agent reset, return stack cleared, the failed
agent's pending handoff dropped), says what happened in one sentence and offers another
way; :class:`~edgevox.orchestration.events.HandoffFailed` records it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from edgevox.agents.base import AgentResult, Handoff
from edgevox.agents.events import ReplyDelta
from edgevox.orchestration.events import Escalated, HandoffFailed, WorkflowCancelled
from edgevox.orchestration.state import ConversationState
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

if TYPE_CHECKING:
    from edgevox.orchestration.coordinator import Coordinator

Turn = Generator[Event, None, AgentResult]

CANCEL_QUESTION = "cancel_question"
"""Session record: the turn the coordinator asked about ("stop the workflow, or pass it on?")."""


def spoken_cancel(coord: Coordinator, text: str, ctx: AgentContext) -> Generator[Event, None, AgentResult | None]:
    """A turn that cancels (or asks about cancelling) the open workflow with return; None
    when the turn is for the agent."""
    session = ctx.session_id
    state = coord.store.state(session)
    question = coord.store.get_record(session, CANCEL_QUESTION)
    if coord._cancel is None or not state.return_stack or not state.active_agent:
        if question is not None:
            coord.store.put_record(session, CANCEL_QUESTION, None)
        return None
    agent = state.active_agent
    if question is not None:
        coord.store.put_record(session, CANCEL_QUESTION, None)
        answer = coord._cancel.answer(text)
        if answer is False:
            return None  # the agent takes the turn (the user's "no" and what they say next)
        decision = "cancel" if answer else None
    else:
        topic = [t.reason for t in state.history if t.to_agent == agent]
        decision = coord._cancel.classify(text, agent=agent, topic=topic)
    if decision is None:
        return None
    if decision == "ask":
        coord.store.put_record(session, CANCEL_QUESTION, {"said": text})
        reply = coord.ASK_MESSAGE.format(agent=agent, said=text)
        why = "cancel-question"
    else:
        after = coord.cancel_workflow(session, reason=f"user said {text!r}")
        main = after.active_agent if after is not None and after.active_agent else coord.entry_agent
        coord.publish(
            WorkflowCancelled(source=coord.name, session_id=session, agent=agent, returned_to=main, said=text)
        )
        reply = coord.CANCELLED_MESSAGE.format(main=main)
        agent, why = main, "cancelled"
    yield ReplyDelta(agent=agent, text=reply)
    coord.reply_event(session, agent, reply, True)
    coord.observe(text, agent, AgentResult(reply, agent=agent), ctx)
    return turn_result(reply, agent, why=why, state=coord.store.state(session))


def recover(coord: Coordinator, text: str, agent: str, outcome: AgentResult, ctx: AgentContext) -> Turn:
    """``agent`` failed or timed out: the main agent takes the conversation back and says so."""
    session, main = ctx.session_id, coord.entry_agent
    coord.handoff.begin_turn(session)  # a handoff the failed agent made is not applied
    phase = coord.handoff.phase_of(main)

    def back(s: ConversationState) -> ConversationState:
        return s.transition(to_phase=phase, to_agent=main, reason=f"{agent} failed", return_stack=(), context="")

    state = coord.store.update(session, back)
    coord.publish(
        HandoffFailed(
            source=main,
            session_id=session,
            agent=agent,
            error=outcome.error,
            timed_out=outcome.timed_out,
            returned_to=main,
        )
    )
    what = "took too long" if outcome.timed_out else "ran into a problem"
    reply = coord.FAILURE_MESSAGE.format(agent=agent, what=what, main=main)
    yield ReplyDelta(agent=main, text=reply)
    coord.reply_event(session, main, reply, True)
    coord.observe(text, agent, outcome, ctx)
    return turn_result(reply, main, why="recovered", state=state, step=outcome)


def turn_result(
    text: str, agent: str, *, why: str, state: ConversationState | None = None, step: AgentResult | None = None
) -> AgentResult:
    """The coordinator's answer to one turn: ``text`` is what the user hears, ``agent`` who
    answered ("" if nobody did); ``data["why"]`` (affinity, rule:<name>, default, strategy,
    single, cancelled, recovered, human, agent-output, no-agent) and ``data["state"]`` (the
    session's state afterwards)."""
    ok, error = (step.ok, step.error) if step is not None else (True, "")
    steps = [step] if step is not None else []
    return AgentResult(text, agent=agent, ok=ok, error=error, steps=steps, data={"why": why, "state": state})


def escalate(
    coord: Coordinator, handoff: Handoff, agent: str, reply: str, channel: str, session: str
) -> Generator[Event, None, str]:
    """``agent`` handed the conversation to a human: publish :class:`Escalated` naming the turn's
    channel and tell the user who picks up where. Returns the reply with that line."""
    line = coord.ESCALATION_MESSAGE.format(where=f"the {channel} channel" if channel else "this channel")
    coord.publish(
        Escalated(
            source=agent,
            session_id=session,
            from_agent=agent,
            channel=channel,
            reason=handoff.reason,
            summary=handoff.summary,
        )
    )
    yield ReplyDelta(agent=agent, text=(" " if reply else "") + line)
    return f"{reply} {line}".strip()
