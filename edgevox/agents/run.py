"""Running a child agent: the one place, with the one failure policy.

Every workflow, strategy, delegation and handoff runs a sub-agent through
:func:`run_child` (blocking) or :func:`stream_child` (``result = yield from
stream_child(...)``, passing the child's events through so its reply can be spoken
while it is generated). Both run the child on the calling thread.

The failure policy:

* the child runs in ``ctx.child(agent_name=<child>, depth=ctx.depth + 1, **child_fields)``
  (the one place contexts are made): same bus, blackboard, session, hooks and deps,
  and a child cancel token;
* the child raises an exception -> ``AgentResult(ok=False, error="<child>: <Type>: <message>")``;
* the child reports a failure -> its result, the error prefixed ``"<child>: "``;
* ``timeout_s`` passes -> the *child's* token is cancelled (a cooperative agent
  stops at its next check) and the result has ``ok=False, timed_out=True`` and the
  text generated so far; the caller's token is never touched;
* the caller's token is cancelled (barge-in, safety stop) -> :class:`~edgevox.errors.Cancelled`
  propagates, before, during or after the child's run, so a cancelled composite stops
  at once and can keep its partial state.

``duration_s`` is always set. The child's result names the agent that spoke.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import Agent, AgentResult, Handoff
from edgevox.agents.events import HandoffEvent, ReplyDelta
from edgevox.errors import Cancelled, HandoffError
from edgevox.runtime.agent import agent_name
from edgevox.runtime.timers import Deadline

if TYPE_CHECKING:
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.events import Event

ChildRun = Generator["Event", None, AgentResult]


def child_name(agent: Agent) -> str:
    """The agent's name, or a TypeError saying which part of the contract is missing."""
    return agent_name(agent, method="stream")


def stream_child(
    agent: Agent, task: str, ctx: AgentContext, *, timeout_s: float | None = None, **child_fields: Any
) -> ChildRun:
    """Run ``agent`` on ``task`` in a child of ``ctx``, yielding its events; returns its result.

    Closing the generator (the listener stopped reading: barge-in) closes the child's stream.
    """
    name = child_name(agent)
    ctx.cancel_token.raise_if_cancelled()
    fields: dict[str, Any] = {"agent_name": name, "depth": ctx.depth + 1, **child_fields}
    child = ctx.child(**fields)
    started = time.monotonic()
    parts: list[str] = []
    deadline = Deadline(child.cancel_token, timeout_s, name=f"timeout-{name}")
    result: AgentResult | None = None
    error = ""
    try:
        with deadline:
            stream = agent.stream(task, child)
            try:
                for event in stream:
                    if isinstance(event, ReplyDelta):
                        parts.append(event.text)
                    yield event
                result = stream.result()
            except Cancelled:
                if ctx.cancelled:
                    raise
                error = "" if deadline.fired.is_set() else "cancelled"
            except Exception as exc:  # noqa: BLE001 - the policy: a failing child becomes a result
                error = f"{type(exc).__name__}: {first_line(exc)}"
            finally:
                stream.close()
    finally:
        child.cancel_token.detach()
    if ctx.cancelled:
        raise Cancelled(ctx.cancel_token.reason)
    duration_s = time.monotonic() - started
    if result is None:
        result = AgentResult(text="".join(parts), agent=name, ok=False, cancelled=error == "cancelled")
    result = replace(result, agent=result.agent or name, duration_s=duration_s)
    if deadline.fired.is_set():
        result = replace(result, ok=False, cancelled=False, timed_out=True, error=f"timed out after {timeout_s:g} s")
    elif error:
        result = replace(result, ok=False, error=error)
    if not result.ok or result.error:
        result = replace(result, ok=False, error=prefixed(name, result.error or "failed"))
    return result


def run_child(
    agent: Agent, task: str, ctx: AgentContext, *, timeout_s: float | None = None, **child_fields: Any
) -> AgentResult:
    """:func:`stream_child` run to its end on the calling thread, its events dropped."""
    return drain(stream_child(agent, task, ctx, timeout_s=timeout_s, **child_fields))


def run_parallel(
    jobs: Sequence[tuple[Agent, str]],
    ctx: AgentContext,
    *,
    thread_name: str,
    timeout_s: float | None = None,
    unfinished: str = "did not finish",
) -> list[AgentResult]:
    """Run every ``(agent, task)`` at once, each with :func:`run_child` on its own thread
    (``<thread_name>-<i>``); all are joined, and the results come back in order. A branch the
    caller's cancellation stopped is reported (``cancelled=True``) like the others, never
    abandoned; the caller checks its own token afterwards."""
    results: list[AgentResult | None] = [None] * len(jobs)

    def branch(i: int, agent: Agent, task: str) -> None:
        try:
            results[i] = run_child(agent, task, ctx, timeout_s=timeout_s)
        except Cancelled as exc:
            results[i] = AgentResult(agent=child_name(agent), ok=False, cancelled=True, error=exc.reason)

    threads = [
        threading.Thread(target=branch, args=(i, a, t), name=f"{thread_name}-{i}", daemon=True)
        for i, (a, t) in enumerate(jobs)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [
        r if r is not None else AgentResult(agent=child_name(a), ok=False, error=unfinished)
        for r, (a, _task) in zip(results, jobs, strict=True)
    ]


def stream_handoff(handoff: Handoff, target: Agent, task: str, ctx: AgentContext) -> ChildRun:
    """Execute a same-turn handoff: publish a ``HandoffEvent``, then run ``target`` on ``task``
    through :func:`stream_child` with its own scratch state and :meth:`Handoff.brief` in
    ``ctx.handoff_brief`` (the LLM agent puts it, after ``CONTEXT_PREFIX``, in its
    system prompt) and the handing agent added to ``ctx.handoff_chain``. Returns the
    target's result with ``handoff`` set to the target's name.

    The target keeps its own per-session conversation memory across handoffs (an LLM agent's
    memory is keyed by ``ctx.session_id``), while its scratch ``ctx.state`` is its own, never
    the caller's. A handoff whose ``thread_id`` is not ``ctx.session_id`` is refused:
    :class:`~edgevox.errors.HandoffError` after a ``HandoffRejected`` event."""
    if handoff.timing != "same_turn":
        raise ValueError(f"stream_handoff runs same-turn handoffs; got timing={handoff.timing!r}")
    if handoff.thread_id and handoff.thread_id != ctx.session_id:
        refuse_thread(handoff, ctx)
    handoff = replace(handoff, thread_id=ctx.session_id)
    event = HandoffEvent(from_agent=handoff.from_agent, to_agent=handoff.target, summary=handoff.brief())
    ctx.publish(event)
    yield event
    chain = (*ctx.handoff_chain, handoff.from_agent)  # counted by the one limit per turn (tool_calls.py)
    result = yield from stream_child(target, task, ctx, handoff_brief=handoff.brief(), state={}, handoff_chain=chain)
    return replace(result, handoff=handoff.target)


def refuse_thread(handoff: Handoff, ctx: AgentContext) -> None:
    """Publish ``HandoffRejected`` and raise :class:`HandoffError`: ``handoff`` belongs to
    another conversation than ``ctx``'s."""
    from edgevox.orchestration.events import HandoffRejected  # the orchestration layer's event

    why = (
        f"handoff to {handoff.target!r} refused: its thread id {handoff.thread_id!r} is not this "
        f"conversation's ({ctx.session_id!r}); a handoff can only move the conversation it is requested in"
    )
    ctx.publish(HandoffRejected(from_agent=handoff.from_agent, requested_target=handoff.target, reason=why))
    raise HandoffError(why)


def drain(gen: Generator[Any, None, AgentResult]) -> AgentResult:
    """Run a generator to its end, dropping what it yields; its return value."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def prefixed(name: str, error: str) -> str:
    """``"<name>: <error>"`` (once: an error already naming ``name`` is kept)."""
    return error if error.startswith(f"{name}: ") else f"{name}: {error}"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
