"""An :class:`~edgevox.agents.llm_agent.LLMAgent`'s tools: the set it offers, and running the calls it decided on.

:func:`collect_tools` builds the set once (plain functions wrapped, skills' tools, one
``handoff_to_<name>`` tool per handoff target) and refuses a string where a list belongs.

One decision may carry several calls (a model that answers
``[{"name": "light_on", ...}, {"name": "light_on", ...}]``). They run in order, on the
agent's thread, each between the ``before_tool`` and ``after_tool`` hooks and announced
by ``ToolCallStarted`` / ``ToolCallFinished``. Every call the model asked for ends up
in ``AgentResult.tool_calls``: with its result, or refused with an explicit
``"not run because ..."`` error (``error_kind="not_run"``) when the turn was cancelled,
a hook ended it, the conversation was handed off, or the turn already made
``max_tool_hops`` calls. Rejected alternative: running only the first call, which
made the rest vanish without a trace.

A tool runs inline (with its deadline); a skill starts a goal and returns at once;
``handoff_to_<agent>`` runs that agent in ``ctx.child(...)`` and ends the run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import AgentResult, Handoff
from edgevox.agents.events import ToolCallFinished, ToolCallStarted
from edgevox.agents.hooks import HookPoint, run_hooks
from edgevox.agents.parsing import looks_like_call
from edgevox.agents.run import stream_handoff
from edgevox.agents.skills import Skill
from edgevox.agents.tool_result import value_in_words
from edgevox.agents.tools import Tool, ToolCall, ToolResult, build_tool
from edgevox.errors import ArgumentError, ToolArgumentError
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

if TYPE_CHECKING:
    from edgevox.agents.llm_agent import LLMAgent

HANDOFF_PREFIX = "handoff_to_"
NOT_RUN = "not_run"
"""``ToolResult.error_kind`` of a call the model asked for that was refused (the error says why)."""


def handoff_name(agent: Any) -> str:
    """The tool name that hands the conversation to ``agent``: ``handoff_to_<name>``."""
    return HANDOFF_PREFIX + re.sub(r"\W+", "_", str(agent.name)).strip("_").lower()


def handoff_tool(tool_name: str, agent: Any) -> Tool:
    desc = getattr(agent, "description", "") or f"the {agent.name} agent"

    def handoff(reason: str = "") -> str:
        return str(agent.name)

    return build_tool(handoff, name=tool_name, description=f"Hand the conversation to {agent.name}: {desc}")


def collect_tools(
    agent: str, tools: Iterable[Any] | None, skills: Iterable[Any] | None, handoffs: Iterable[Any] | None
) -> tuple[list[Tool], dict[str, Skill], dict[str, Any]]:
    """An agent's tool list (tools, skills' tools, ``handoff_to_<name>`` tools), its skills and its
    handoff targets by tool name. Tool names must be unique."""
    out: list[Tool] = []
    by_skill: dict[str, Skill] = {}
    for t in [*listed(agent, "tools", tools), *listed(agent, "skills", skills)]:
        if isinstance(t, Skill):
            by_skill[t.name] = t
            out.append(t.tool)
        else:
            out.append(t if isinstance(t, Tool) else build_tool(t))
    targets: dict[str, Any] = {}
    for target in listed(agent, "handoffs", handoffs):
        tname = handoff_name(target)
        targets[tname] = target
        out.append(handoff_tool(tname, target))
    names = [t.name for t in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ArgumentError(f"agent {agent!r}: tool names must be unique; duplicated: {dupes}")
    return out, by_skill, targets


def listed(agent: str, what: str, value: Iterable[Any] | None) -> list[Any]:
    """``tools``/``skills``/``handoffs``/``hooks`` as a list; None is none. A string (or a single
    object) is refused: iterating ``tools="move"`` would make one tool per letter."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"agent {agent!r}: {what} must be a list, got {kind_of(value)}; write {what}=[...]")
    return list(value)


def kind_of(value: Any) -> str:
    """``value`` named for an error message: its type and (the start of) its repr."""
    return f"{type(value).__name__} {value!r}"[:80]


def run_calls(
    agent: LLMAgent, calls: Sequence[ToolCall], decided_by: str, task: str, ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, list[str] | None]:
    """Run ``calls`` in order (see the module docstring). Returns the notes the reply prompt
    gets (one per call, in words), or None when the run is over: a reply was emitted, the
    conversation was handed off, or the turn was cancelled."""
    room = agent.max_tool_hops - len(result.tool_calls)
    ran: list[ToolResult] = []
    stopped = ""  # why the remaining calls are not run
    ended_text: str | None = None
    for i, call in enumerate(calls):
        if not stopped and ctx.cancelled:
            stopped = "the turn was cancelled"
        if not stopped and i >= room:
            stopped = f"the turn already made {agent.max_tool_hops} tool calls (max_tool_hops)"
        if stopped:
            ran.append((yield from _refuse(agent, call, stopped, ctx, result)))
            continue
        ended, value = run_hooks(agent.hooks_for(ctx), HookPoint.BEFORE_TOOL, call, ctx)
        by = decided_by
        tr: ToolResult | None = None
        if ended:
            tr, by = ToolResult(call, ok=True, value=value), "hook"
        elif isinstance(value, ToolCall):
            call = value
        event = ToolCallStarted(
            agent=agent.name, tool=call.name, arguments=dict(call.arguments), call_id=call.id, decided_by=by
        )
        ctx.publish(event)
        yield event
        t0 = time.monotonic()
        if call.name in agent.handoffs:
            yield from _handoff(agent, call, task, ctx, result)
            for rest in calls[i + 1 :]:
                yield from _refuse(agent, rest, f"the conversation was handed to {result.handoff}", ctx, result)
            return None
        if tr is None:
            tr = execute(agent, call, ctx, result)
        ended_after, tr_or_text = run_hooks(agent.hooks_for(ctx), HookPoint.AFTER_TOOL, tr, ctx)
        if not ended_after and isinstance(tr_or_text, ToolResult):
            tr = tr_or_text
        yield from _finish(agent, tr, time.monotonic() - t0, ctx, result)
        ran.append(tr)
        if ended_after:
            ended_text, stopped = str(tr_or_text), "a hook ended the turn"
        elif tr.error_kind == "cancelled":
            stopped = "the turn was cancelled"
    if ended_text is not None:
        yield from agent.emit_text(ended_text, ctx, result)
        return None
    if ctx.cancelled or any(tr.error_kind == "cancelled" for tr in ran):
        return None
    if agent.speak_tool_results and all(_speakable(tr) for tr in ran):
        # (A result that is data - JSON, markup - is phrased by the model instead.)
        yield from agent.emit_text(" ".join(value_in_words(tr.value) for tr in ran), ctx, result)
        return None
    return [tool_note(tr) for tr in ran]


def _speakable(tr: ToolResult) -> bool:
    return tr.ok and isinstance(tr.value, str) and not looks_like_machine_text(tr.value)


def _finish(
    agent: LLMAgent, tr: ToolResult, duration_s: float, ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, None]:
    result.tool_calls.append(tr)
    done = ToolCallFinished(
        agent=agent.name,
        tool=tr.call.name,
        call_id=tr.call.id,
        ok=tr.ok,
        result=tr.as_text() if tr.ok else "",
        error=tr.error,
        error_kind=tr.error_kind,
        duration_s=duration_s,
    )
    ctx.publish(done)
    yield done


def _refuse(
    agent: LLMAgent, call: ToolCall, why: str, ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, ToolResult]:
    """A call that is not run: it still gets a result, and a ``ToolCallFinished`` saying why."""
    tr = ToolResult(call, ok=False, error=f"not run because {why}", error_kind=NOT_RUN)
    yield from _finish(agent, tr, 0.0, ctx, result)
    return tr


def execute(agent: LLMAgent, call: ToolCall, ctx: AgentContext, result: AgentResult) -> ToolResult:
    """Run one call: a tool inline (with its deadline), a skill started in the background."""
    t = agent.tool(call.name, ctx)
    if t is None:
        return ToolResult(
            call,
            ok=False,
            error=f"unknown tool {call.name!r}; known: {', '.join(x.name for x in agent.tools_for(ctx))}",
            error_kind="unknown_tool",
        )
    sk = agent.skills.get(call.name)
    if sk is None:
        return t.invoke(call.arguments, ctx, call_id=call.id, timeout_s=agent.tool_timeout_s)
    try:
        handle = sk.start(call.arguments, ctx, agent.executor)
    except ToolArgumentError as exc:
        return ToolResult(call, ok=False, error=str(exc), error_kind="arguments")
    result.skills.append(handle)
    args = ", ".join(str(v) for v in call.arguments.values())
    return ToolResult(call, ok=True, value=f"Okay, {call.name.replace('_', ' ')} {args}.".replace(" .", "."))


def _handoff(
    agent: LLMAgent, call: ToolCall, task: str, ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, None]:
    target = agent.handoffs[call.name]
    history = agent.memory_for(ctx).history(ctx.session_id)
    handoff = Handoff(
        from_agent=agent.name,
        target=target.name,
        timing="same_turn",
        reason=str(call.arguments.get("reason", "")).strip(),
        summary=f"user now asks: {task}",
        recent=tuple(f"{m['role']}: {m['content']}" for m in history[-6:]),
    )
    # The one place same-turn handoffs run (an isolated child through run_child's policy).
    sub_result = yield from stream_handoff(handoff, target, task, ctx)
    result.handoff = target.name
    result.text = sub_result.text
    result.tool_calls.extend(sub_result.tool_calls)
    result.skills.extend(sub_result.skills)
    result.ok, result.error, result.cancelled = sub_result.ok, sub_result.error, sub_result.cancelled


def looks_like_machine_text(text: str) -> bool:
    """A tool call, JSON or markup rather than words for a person (or no words at all)."""
    return looks_like_call(text) or not re.search(r"\w", re.sub(r"<[^>]*>|\{.*?\}", " ", text))


def tool_note(tr: ToolResult) -> str:
    """What a tool call did, in words, for the reply prompt. The result goes to the model inside
    the user's turn: a JSON assistant message is what a small model then copies into its reply,
    and a "tool" message without a real tool call is rejected by strict chat templates."""
    what = tr.call.name.replace("_", " ")
    if tr.ok:
        return f"(The {what} tool ran. Result: {value_in_words(tr.value) or 'done'}. Tell me about it in one short sentence.)"
    if tr.error_kind == NOT_RUN:
        return f"(The {what} tool was {tr.error}.)"
    return f"(The {what} tool failed: {tr.error}. Tell me in one short sentence.)"


def fallback_reply(tr: ToolResult) -> str:
    """The reply when the model's words after a tool call are unusable."""
    if tr.ok and isinstance(tr.value, str) and tr.value.strip() and not looks_like_machine_text(tr.value.strip()):
        return value_in_words(tr.value)
    return "Done." if tr.ok else "Sorry, I could not do that."
