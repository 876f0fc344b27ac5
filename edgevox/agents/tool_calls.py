"""An :class:`~edgevox.agents.llm_agent.LLMAgent`'s tools: the set it offers, and running the calls it decided on.

(Over 400 lines because the calls of one decision - tools, skills, handoffs with the one
per-turn handoff limit, the tool limits - are one loop over one result; split candidate: the
handoff tool and its limit, next to ``run.stream_handoff``.)

:func:`collect_tools` builds the set once (plain functions wrapped, skills' tools, one
``handoff_to_<name>`` tool per handoff target) and refuses a string where a list belongs.

One decision may carry several calls (a model that answers
``[{"name": "light_on", ...}, {"name": "light_on", ...}]``). They run in order, on the
agent's thread, each between the ``before_tool`` and ``after_tool`` hooks and announced
by ``ToolCallStarted`` / ``ToolCallFinished``. Every call the model asked for ends up
in ``AgentResult.tool_calls``: with its result, or refused with an explicit
``"not run because ..."`` error (``error_kind="not_run"``) when the turn was cancelled,
a hook ended it, the conversation was handed off, the turn already made
``max_tool_hops`` calls, or a :class:`ToolLimits` limit was reached (supyagent's
``limits``: ``max_tool_calls_per_turn``, ``max_total_tool_calls`` per session). Rejected
alternative: running only the first call, which made the rest vanish without a trace.

Neighbouring calls of tools that may run concurrently (their function has a
``concurrent_calls(ctx) -> int`` attribute, the cap: the ``delegate`` tools) run at once,
at most that many at a time, each announced before and finished after the group, results
in call order; every other call keeps running alone, in order.

A tool runs inline (with its deadline); a skill starts a goal and returns at once;
``handoff_to_<agent>`` runs that agent in ``ctx.child(...)`` and ends the run. Handoffs are
counted per turn across every agent that had it (``ctx.handoff_chain``): one past the agent's
``max_handoffs_per_turn`` is refused by :func:`handoff_limit` and the turn ends with
:data:`HANDOFF_LIMIT_REPLY` (two agents that keep handing the turn to each other otherwise
recursed until Python's recursion limit, a hundred LLM calls later).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Generator, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import AgentResult, Handoff
from edgevox.agents.events import HandoffLimitReached, ToolCallFinished, ToolCallStarted
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

log = logging.getLogger(__name__)

HANDOFF_PREFIX = "handoff_to_"
DEFAULT_MAX_HANDOFFS_PER_TURN = 8
"""Handoffs one user turn may make, counted across every agent that had it
(``orchestration.handoff.max_handoffs_per_turn``)."""
MAX_HANDOFFS_PER_TURN = 32
"""The largest ``max_handoffs_per_turn`` accepted."""
HANDOFF_LIMIT_REPLY = "Sorry, we could not settle who should handle this. Please ask me again in other words."
"""Said when a turn was handed on ``max_handoffs_per_turn`` times and one more handoff was asked for."""
NOT_RUN = "not_run"
"""``ToolResult.error_kind`` of a call the model asked for that was refused (the error says why)."""


@dataclass
class ToolLimits:
    """supyagent's ``limits`` of one agent: ``max_tool_calls_per_turn`` (calls one run may make)
    and ``max_total_tool_calls`` (calls over a whole conversation, per ``ctx.session_id``);
    None = no limit beyond ``max_tool_hops``. A call over a limit is not run: the model reads
    why as its result. Counts are per agent (:meth:`of` always makes a fresh one)."""

    max_tool_calls_per_turn: int | None = None
    max_total_tool_calls: int | None = None
    _totals: dict[str, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_tool_calls_per_turn", "max_total_tool_calls"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ArgumentError(f"limits.{name} = {value!r}: must be a whole number >= 0, or None for no limit")

    @classmethod
    def of(cls, agent: str, limits: ToolLimits | Mapping[str, Any] | None) -> ToolLimits:
        """``limits`` as a fresh :class:`ToolLimits` (a mapping with supyagent's keys, or one)."""
        if limits is None:
            return cls()
        if isinstance(limits, ToolLimits):
            return cls(limits.max_tool_calls_per_turn, limits.max_total_tool_calls)
        if not isinstance(limits, Mapping):
            raise TypeError(f"agent {agent!r}: limits must be a mapping or ToolLimits, got {kind_of(limits)}")
        unknown = sorted(set(limits) - {"max_tool_calls_per_turn", "max_total_tool_calls"})
        if unknown:
            raise ArgumentError(
                f"agent {agent!r}: unknown limits {unknown}; use max_tool_calls_per_turn, max_total_tool_calls"
            )
        return cls(limits.get("max_tool_calls_per_turn"), limits.get("max_total_tool_calls"))

    def total(self, session_id: str) -> int:
        """Calls made so far in conversation ``session_id``."""
        with self._lock:
            return self._totals.get(session_id, 0)

    def reserve(self, session_id: str, made_this_turn: int) -> str:
        """Count one more call, or say why it may not run ("" when it may)."""
        per_turn, total = self.max_tool_calls_per_turn, self.max_total_tool_calls
        if per_turn is not None and made_this_turn >= per_turn:
            return f"the turn already made {made_this_turn} tool calls (limits.max_tool_calls_per_turn = {per_turn})"
        with self._lock:
            made = self._totals.get(session_id, 0)
            if total is not None and made >= total:
                return (
                    f"this conversation already made {made} tool calls (limits.max_total_tool_calls = {total}); "
                    "answer without tools"
                )
            self._totals[session_id] = made + 1
        return ""


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
    i = 0
    while i < len(calls):
        group, cap = _group(agent, calls, i, ctx)
        started: list[tuple[ToolCall, ToolResult | None]] = []  # in call order: to run, or a result
        to_run = 0
        for call in group:
            if not stopped and ctx.cancelled:
                stopped = "the turn was cancelled"
            if not stopped and i >= room:
                stopped = f"the turn already made {agent.max_tool_hops} tool calls (max_tool_hops)"
            i += 1
            refused = stopped or agent.limits.reserve(ctx.session_id, _made(result) + to_run)
            if refused:  # finished in call order below, with the calls that run
                started.append(
                    (call, ToolResult(call, ok=False, error=f"not run because {refused}", error_kind=NOT_RUN))
                )
                continue
            to_run += 1
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
            if call.name in agent.handoffs:
                yield from _handoff(agent, call, task, ctx, result)
                why = f"the conversation was handed to {result.handoff}" if result.handoff else "the turn ended"
                for rest in calls[i:]:
                    yield from _refuse(agent, rest, why, ctx, result)
                return None
            started.append((call, tr))
        t0 = time.monotonic()
        for tr in _execute_all(agent, started, cap, ctx, result):
            if tr.error_kind == NOT_RUN:
                yield from _finish(agent, tr, 0.0, ctx, result)
                ran.append(tr)
                continue
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


def _made(result: AgentResult) -> int:
    """Tool calls this run has made (refused ones do not count)."""
    return sum(1 for tr in result.tool_calls if tr.error_kind != NOT_RUN)


def _concurrency(agent: LLMAgent, call: ToolCall, ctx: AgentContext) -> int:
    """How many calls of ``call``'s tool may run at once (0: it runs alone)."""
    if call.name in agent.handoffs or call.name in agent.skills:
        return 0
    t = agent.tool(call.name, ctx)
    cap = getattr(t.func, "concurrent_calls", None) if t is not None else None
    return max(0, int(cap(ctx))) if callable(cap) else 0


def _group(agent: LLMAgent, calls: Sequence[ToolCall], i: int, ctx: AgentContext) -> tuple[list[ToolCall], int]:
    """The calls from ``i`` that run together (neighbouring concurrent calls), and their cap."""
    caps = []
    for call in calls[i:]:
        cap = _concurrency(agent, call, ctx)
        if not cap:
            break
        caps.append(cap)
    if len(caps) < 2:
        return [calls[i]], 1
    return list(calls[i : i + len(caps)]), min(caps)


def _execute_all(
    agent: LLMAgent,
    started: list[tuple[ToolCall, ToolResult | None]],
    cap: int,
    ctx: AgentContext,
    result: AgentResult,
) -> list[ToolResult]:
    """Run the announced calls (a hook's result stands in for its call): alone, or at most
    ``cap`` at once on ``edgevox-tools-<agent>`` threads; results in call order."""
    todo = [(call, tr) for call, tr in started if tr is None]
    if len(todo) < 2 or cap < 2:
        return [tr if tr is not None else execute(agent, call, ctx, result) for call, tr in started]
    with ThreadPoolExecutor(min(cap, len(todo)), thread_name_prefix=f"edgevox-tools-{agent.name}") as pool:
        futures = {
            i: pool.submit(execute, agent, call, ctx, result) for i, (call, tr) in enumerate(started) if tr is None
        }
        return [futures[i].result() if tr is None else tr for i, (_call, tr) in enumerate(started)]


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


def check_max_handoffs(value: Any, where: str) -> int:
    """``value`` if it is a valid ``max_handoffs_per_turn``, else an :class:`ArgumentError` naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_HANDOFFS_PER_TURN:
        raise ArgumentError(
            f"{where} = {value!r}: must be a whole number from 1 to {MAX_HANDOFFS_PER_TURN} "
            f"(handoffs one user turn may make; default {DEFAULT_MAX_HANDOFFS_PER_TURN})"
        )
    return value


def handoff_limit(ctx: AgentContext, chain: Sequence[str], target: str, limit: int) -> str:
    """The one limit on handoffs per turn. ``chain``: the agents that had this turn, oldest first,
    ending with the one asking to hand it to ``target``. "" while one more handoff is allowed;
    otherwise a :class:`HandoffLimitReached` event is published, a warning names the chain (a
    cycle shows as names repeating), and the error for the turn's result is returned. The caller
    then ends the turn saying :data:`HANDOFF_LIMIT_REPLY`."""
    made = len(chain) - 1
    if made < limit:
        return ""
    path = " -> ".join([*chain, target])
    cycle = " (a cycle)" if target in chain else ""
    error = (
        f"handoff limit reached: {path} refused{cycle}; the turn was already handed on {made} times "
        f"(max_handoffs_per_turn = {limit})"
    )
    log.warning("session %s: %s", ctx.session_id, error)
    ctx.publish(HandoffLimitReached(chain=tuple(chain), to_agent=target, max_handoffs=limit))
    return error


def _handoff(
    agent: LLMAgent, call: ToolCall, task: str, ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, None]:
    target = agent.handoffs[call.name]
    over = handoff_limit(ctx, (*ctx.handoff_chain, agent.name), str(target.name), agent.max_handoffs_per_turn)
    if over:
        yield from _finish(agent, ToolResult(call, ok=False, error=over, error_kind=NOT_RUN), 0.0, ctx, result)
        yield from agent.emit_text(HANDOFF_LIMIT_REPLY, ctx, result)
        result.ok, result.error = False, over
        return
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
