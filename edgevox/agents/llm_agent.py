"""``LLMAgent``: an LLM that answers, calls tools, starts skills and hands off.

One run (on the caller's thread)::

    for hop in 0..max_tool_hops:
        decision = decoder.decide(...)          # schema fast path / grammar-constrained LLM
        if no call: break
        run the call (hooks around it): a tool runs inline; a skill starts a goal and
        returns at once; handoff_to_<agent> runs that agent in ctx.child(...) and ends
        if speak_tool_results and the tool returned text: that text is the reply; stop
    stream the reply from the LLM token by token (ReplyDelta events)

Cancellation: the run's token (a child of ``ctx.cancel_token``) is passed to every
LLM call, so a cancel stops generation between tokens; skills started by the run
hold tokens below it, so the same cancel stops them mid-flight. ``ctx.llm_lock``,
if set, is held around each LLM call (one inference at a time across agents).

Every step is published on ``ctx.bus`` as the typed events of ``events.py`` and
yielded from :meth:`LLMAgent.stream` in the same order.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Generator, Iterable, Sequence
from typing import Any

from edgevox.agents.base import AgentResult, AgentStream, Handoff
from edgevox.agents.decoders import GARBLED_CALL_REPLY, Decision, DecisionRequest, SchemaFirstDecoder, ToolDecoder
from edgevox.agents.events import AgentReply, AgentStarted, ReplyDelta, ToolCallFinished, ToolCallStarted
from edgevox.agents.hooks import HookPoint, run_hooks
from edgevox.agents.memory import MemoryStore, clean_turn_text
from edgevox.agents.parsing import calls_tool_by_name, looks_like_call, parse_reply
from edgevox.agents.run import stream_handoff
from edgevox.agents.skills import Skill, SkillExecutor
from edgevox.agents.tools import Tool, ToolCall, ToolResult, build_tool, value_in_words
from edgevox.errors import AgentError, EdgeVoxError, ToolArgumentError
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event
from edgevox.voice.speechtext import clean_for_speech

HANDOFF_PREFIX = "handoff_to_"


def _handoff_name(agent: Any) -> str:
    return HANDOFF_PREFIX + re.sub(r"\W+", "_", str(agent.name)).strip("_").lower()


class LLMAgent:
    """An agent over an :class:`~edgevox.engines.base.LLM`.

    Args:
        name: Agent name (event ``source``, handoff tool suffix).
        instructions: System prompt.
        tools: ``@tool`` objects (or plain functions, wrapped with ``build_tool``).
        skills: ``@skill`` objects (``tools`` may also contain skills).
        handoffs: Agents this one may hand the conversation to (``handoff_to_<name>`` tools).
        hooks: :class:`~edgevox.agents.hooks.Hook` objects (``ctx.hooks`` are added per run).
        llm: The engine. Required to generate replies or when the schema fast path is unsure.
        max_tool_hops: Tool calls per run before the agent must answer.
        memory: A :class:`MemoryStore` (default: a private one with a 1024-token budget).
        few_shot: ``(utterance, None)`` examples answered in words (tools carry their own).
        decoder: How the next step is decided (default :class:`SchemaFirstDecoder`).
        speak_tool_results: If a tool returns a string, that is the reply (no LLM hop).
        reply_max_tokens: Budget of the final reply.
        executor: Runs skills; default a private 2-worker pool closed by :meth:`close`.
        description: One line saying what the agent does (shown to routers and handoffs).
        tool_timeout_s: Deadline of one tool call unless the tool sets its own
            (``@tool(timeout_s=...)``); a call past it is reported and its late result discarded.
    """

    supports_speculation = True
    """The voice loop may start this agent on a speculative transcript: what it publishes is
    held and every action (tool, skill, memory, clarification) waits for the commit."""

    def __init__(
        self,
        name: str,
        instructions: str = "",
        tools: Iterable[Any] = (),
        skills: Iterable[Skill] = (),
        handoffs: Iterable[Any] = (),
        hooks: Iterable[Any] = (),
        llm: Any = None,
        max_tool_hops: int = 3,
        memory: MemoryStore | None = None,
        few_shot: Sequence[tuple[str, Any]] = (),
        decoder: ToolDecoder | None = None,
        speak_tool_results: bool = False,
        reply_max_tokens: int = 160,
        executor: SkillExecutor | None = None,
        description: str = "",
        tool_timeout_s: float | None = 10.0,
    ) -> None:
        self.name = name
        self.instructions = instructions
        self.description = description or instructions[:120]
        self.llm = llm
        self.max_tool_hops = max_tool_hops
        self.hooks = tuple(hooks)
        self.memory = memory or MemoryStore(1024, getattr(llm, "count_tokens", None))
        self.few_shot = tuple(few_shot)
        self.decoder: ToolDecoder = decoder or SchemaFirstDecoder()
        self.speak_tool_results = speak_tool_results
        self.reply_max_tokens = reply_max_tokens
        if tool_timeout_s is not None and not 0 < tool_timeout_s < 86400:
            raise ValueError(f"agent {name!r}: tool_timeout_s = {tool_timeout_s}: must be > 0 and < 86400 seconds")
        self.tool_timeout_s = tool_timeout_s
        self.deps: dict[str, Any] = {}
        """Merged into ``ctx.deps`` for this agent's tools."""
        self._executor = executor
        self._owns_executor = executor is None
        self._executor_lock = threading.Lock()
        self.skills: dict[str, Skill] = {}
        self.tools: list[Tool] = []
        for t in [*tools, *skills]:
            if isinstance(t, Skill):
                self.skills[t.name] = t
                self.tools.append(t.tool)
            else:
                self.tools.append(t if isinstance(t, Tool) else build_tool(t))
        self.handoffs: dict[str, Any] = {}
        for agent in handoffs:
            tname = _handoff_name(agent)
            self.handoffs[tname] = agent
            self.tools.append(_handoff_tool(tname, agent))
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"agent {name!r}: tool names must be unique; duplicated: {dupes}")
        self._by_name = {t.name: t for t in self.tools}

    # -- public --------------------------------------------------------------------------

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult:
        return self.stream(task, ctx).result()

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return AgentStream(self._run(task, ctx or AgentContext()))

    def decide(self, task: str, ctx: AgentContext | None = None) -> Decision:
        """Only the first decision for ``task`` (no tool runs, no reply): used by evaluations."""
        ctx = ctx or AgentContext()
        messages = self._prompt(task, ctx)
        return self.decoder.decide(self._request(task, messages, ctx, 0))

    @property
    def executor(self) -> SkillExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = SkillExecutor(name=f"edgevox-skill-{self.name}")
            return self._executor

    def close(self, timeout_s: float = 5.0) -> bool:
        """Cancel running skills and stop the agent's own skill workers."""
        with self._executor_lock:
            ex, owns = self._executor, self._owns_executor
            if owns:
                self._executor = None
        if ex is None:
            return True
        return ex.shutdown(timeout_s) if owns else ex.cancel_all("agent closed") >= 0

    # -- the run -------------------------------------------------------------------------

    def _run(self, task: str, outer: AgentContext) -> Generator[Event, None, AgentResult]:
        task = clean_turn_text(task)  # lone surrogates from non-UTF-8 input would fail every later turn
        ctx = outer.child(agent_name=self.name, deps={**outer.deps, **self.deps})
        result = AgentResult(agent=self.name)
        try:
            yield from self._steps(task, ctx, result)
        except _EndRun as end:  # an after_llm hook ended the run
            yield from self._emit_text(end.text, ctx, result)
        except EdgeVoxError as exc:
            if ctx.cancelled:
                result.cancelled = True
            else:
                result.ok, result.error = False, str(exc)
        finally:
            # The run's token stays linked to the caller's while its skills run (so a stop
            # reaches them), and is unlinked when the last one finishes (parents never grow).
            skills = list(result.skills)
            if not skills:
                ctx.cancel_token.detach()
            for h in skills:
                h.add_done_callback(lambda _h: all(g.done for g in skills) and ctx.cancel_token.detach())
        if ctx.cancelled:
            result.cancelled = True
        final = AgentReply(
            agent=self.name,
            text=result.text,
            ok=result.ok,
            cancelled=result.cancelled,
            error=result.error,
            handoff=result.handoff or "",
        )
        ctx.publish(final)
        yield final
        if result.ok and not result.cancelled and result.handoff is None and ctx.may_act():
            turn = [{"role": "user", "content": task}, {"role": "assistant", "content": result.text}]
            self._memory(ctx).add_turn(ctx.session_id, turn)
        return result

    def _steps(self, task: str, ctx: AgentContext, result: AgentResult) -> Generator[Event, None, None]:
        started = AgentStarted(agent=self.name, task=task)
        ctx.publish(started)
        yield started
        messages = self._prompt(task, ctx)
        # Clarifications: a question asked last turn is answered by this one ("yes" runs the
        # proposed call, "no" drops it, a value completes it; anything else is a new turn).
        from edgevox.agents.decoders import DECLINED_REPLY, Clarifications

        clarifications: Clarifications = self.__dict__.setdefault("_clarifications", Clarifications())
        if clarifications.pending(ctx.session_id) is not None and not ctx.may_act():
            return  # answering the pending question consumes it: never on a discarded guess
        answer = clarifications.answer(ctx.session_id, task, self.tools)
        if answer.kind == "declined":
            result.data["decided_by"] = "clarified"
            yield from self._emit_text(DECLINED_REPLY, ctx, result)
            return
        for hop in range(self.max_tool_hops + 1):
            if ctx.cancelled:
                return
            if hop == self.max_tool_hops:
                break  # out of hops: answer in words
            if hop == 0 and answer.call is not None:
                decision = Decision(answer.call, decided_by="clarified")
            else:
                decision = self.decoder.decide(self._request(task, messages, ctx, hop))
            result.data.setdefault("decided_by", decision.decided_by)
            if decision.clarify is not None:  # likely but uncertain: ask, never guess
                clarifications.ask(ctx.session_id, decision)
                result.data["clarify"] = decision.clarify
                yield from self._emit_text(decision.clarify, ctx, result)
                return
            if decision.call is None:
                if decision.reply is not None:
                    yield from self._emit_text(decision.reply, ctx, result)
                    return
                break
            call = decision.call
            if not ctx.may_act():  # decided on a speculative transcript that was discarded
                return
            ended, value = run_hooks(self._hooks(ctx), HookPoint.BEFORE_TOOL, call, ctx)
            decided_by = decision.decided_by
            if ended:
                tr = ToolResult(call, ok=True, value=value)
                decided_by = "hook"
            elif isinstance(value, ToolCall):
                call = value
            event = ToolCallStarted(
                agent=self.name, tool=call.name, arguments=dict(call.arguments), call_id=call.id, decided_by=decided_by
            )
            ctx.publish(event)
            yield event
            t0 = time.monotonic()
            if call.name in self.handoffs:
                yield from self._handoff(call, task, ctx, result)
                return
            if not ended:
                tr = self._execute(call, ctx, result)
            ended_after, tr_or_text = run_hooks(self._hooks(ctx), HookPoint.AFTER_TOOL, tr, ctx)
            if not ended_after and isinstance(tr_or_text, ToolResult):
                tr = tr_or_text
            result.tool_calls.append(tr)
            done = ToolCallFinished(
                agent=self.name,
                tool=call.name,
                call_id=call.id,
                ok=tr.ok,
                result=tr.as_text() if tr.ok else "",
                error=tr.error,
                error_kind=tr.error_kind,
                duration_s=time.monotonic() - t0,
            )
            ctx.publish(done)
            yield done
            if ended_after:
                yield from self._emit_text(str(tr_or_text), ctx, result)
                return
            if tr.error_kind == "cancelled" or ctx.cancelled:
                return
            if (
                self.speak_tool_results
                and tr.ok
                and isinstance(tr.value, str)
                and not _looks_like_machine_text(tr.value)
            ):
                # (A result that is data - JSON, markup - is phrased by the model instead.)
                yield from self._emit_text(value_in_words(tr.value), ctx, result)
                return
            # The result goes to the model in plain words inside the user's turn: a JSON assistant
            # message is what a small model then copies into its reply, and a "tool" message
            # without a real tool call is rejected by strict chat templates.
            note = _tool_note(call, tr)
            last = messages[-1]
            messages = [*messages[:-1], {**last, "content": f"{last['content']}\n{note}"}]
        yield from self._reply(messages, ctx, result)

    # -- pieces --------------------------------------------------------------------------

    def _memory(self, ctx: AgentContext) -> MemoryStore:
        return ctx.memory if isinstance(ctx.memory, MemoryStore) else self.memory

    def _hooks(self, ctx: AgentContext) -> tuple[Any, ...]:
        return (*self.hooks, *ctx.hooks)

    def _prompt(self, task: str, ctx: AgentContext) -> list[dict[str, Any]]:
        self._memory(ctx).check_turn(task)  # one clear error, not a context-window failure in the LLM
        system = self.instructions
        summary = ctx.deps.get("handoff_summary") if isinstance(ctx.deps, dict) else None
        if summary:
            system = f"{system}\nContext from the previous agent: {summary}".strip()
        sys_msgs = [{"role": "system", "content": system}] if system else []
        return self._memory(ctx).build(ctx.session_id, sys_msgs, [{"role": "user", "content": task}])

    def _request(self, task: str, messages: list[dict[str, Any]], ctx: AgentContext, hop: int) -> DecisionRequest:
        def generate(msgs: list[dict[str, Any]], *, grammar: str | None = None, max_tokens: int = 64) -> str:
            return "".join(self._llm_stream(msgs, ctx, grammar=grammar, max_tokens=max_tokens))

        return DecisionRequest(
            text=task,
            messages=messages,
            tools=self.tools,
            generate=generate,
            instructions=self.instructions,
            hop=hop,
            reply_examples=[u for u, a in self.few_shot if a is None],
        )

    def _llm_stream(
        self, messages: list[dict[str, Any]], ctx: AgentContext, *, grammar: str | None, max_tokens: int
    ) -> Generator[str, None, None]:
        """Pieces of one LLM call, with hooks, the LLM lock and the run's cancel token."""
        ended, value = run_hooks(self._hooks(ctx), HookPoint.BEFORE_LLM, messages, ctx)
        if ended:
            yield str(value)
            return
        if self.llm is None:
            raise AgentError(f"agent {self.name!r} needs an LLM for this request; pass llm=...")
        lock = ctx.llm_lock if ctx.llm_lock is not None else contextlib.nullcontext()
        pieces: list[str] = []
        with lock, track(ctx, "generation", self.name, ctx.cancel_token):
            gen = self.llm.stream(value, max_tokens=max_tokens, grammar=grammar, cancel=ctx.cancel_token)
            try:
                for piece in gen:
                    pieces.append(piece)
                    yield piece
            finally:
                close = getattr(gen, "close", None)
                if close is not None:
                    close()
        ended, text = run_hooks(self._hooks(ctx), HookPoint.AFTER_LLM, "".join(pieces), ctx)
        if ended:
            raise _EndRun(str(text))

    def _reply(
        self, messages: list[dict[str, Any]], ctx: AgentContext, result: AgentResult
    ) -> Generator[Event, None, None]:
        """Stream the reply. A reply that starts like machine text (``{ [ < ```) is held back;
        after a tool call, one that is machine text or empty is replaced by the tool's own
        words (:func:`_fallback_reply`), so raw call JSON is never spoken or remembered."""
        parts: list[str] = []
        held: list[str] = []
        holding = True  # until the first visible character says prose or machine text
        for piece in self._llm_stream(messages, ctx, grammar=None, max_tokens=self.reply_max_tokens):
            parts.append(piece)
            text = "".join(parts).strip()
            if holding:
                held.append(piece)
                if not text or text[0] in _MACHINE_START or self._may_be_call(text):
                    continue
                holding, piece = False, "".join(held)
            result.text = text  # what was said so far, if cancelled
            delta = ReplyDelta(agent=self.name, text=piece)
            ctx.publish(delta)
            yield delta
        if not holding or ctx.cancelled:
            return
        text = "".join(parts).strip()
        if result.tool_calls and (not text or _looks_like_machine_text(text)):
            text = _fallback_reply(result.tool_calls[-1])
        elif text and looks_like_call(text, self.tools):
            # Asked for words, the model wrote a call or data: its {"reply": ...} if that is
            # what it is, its words if any are left once the markup is gone, else a question.
            # Nothing runs: only the decoder's calls are executed.
            reply = parse_reply(text)
            if reply is not None:
                text = reply
            elif calls_tool_by_name(text, self.tools) or not re.search(r"\w", clean_for_speech(text)):
                text = GARBLED_CALL_REPLY
        if text:
            yield from self._emit_text(text, ctx, result)

    def _may_be_call(self, text: str) -> bool:
        """``text`` begins a call of one of this agent's tools by name (``move`` ... ``move(``)."""
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\()?", text)
        if match is None or (match.end() < len(text) and not match.group(2)):
            return False
        name = match.group(1)
        if match.group(2):
            return name in self._by_name
        return any(tool_name.startswith(name) for tool_name in self._by_name)

    def _emit_text(self, text: str, ctx: AgentContext, result: AgentResult) -> Generator[Event, None, None]:
        result.text = text
        delta = ReplyDelta(agent=self.name, text=text)
        ctx.publish(delta)
        yield delta

    def _execute(self, call: ToolCall, ctx: AgentContext, result: AgentResult) -> ToolResult:
        t = self._by_name.get(call.name)
        if t is None:
            return ToolResult(
                call,
                ok=False,
                error=f"unknown tool {call.name!r}; known: {', '.join(self._by_name)}",
                error_kind="unknown_tool",
            )
        sk = self.skills.get(call.name)
        if sk is None:
            return t.invoke(call.arguments, ctx, call_id=call.id, timeout_s=self.tool_timeout_s)
        try:
            handle = sk.start(call.arguments, ctx, self.executor)
        except ToolArgumentError as exc:
            return ToolResult(call, ok=False, error=str(exc), error_kind="arguments")
        result.skills.append(handle)
        args = ", ".join(str(v) for v in call.arguments.values())
        return ToolResult(call, ok=True, value=f"Okay, {call.name.replace('_', ' ')} {args}.".replace(" .", "."))

    def _handoff(
        self, call: ToolCall, task: str, ctx: AgentContext, result: AgentResult
    ) -> Generator[Event, None, None]:
        target = self.handoffs[call.name]
        history = self._memory(ctx).history(ctx.session_id)
        handoff = Handoff(
            from_agent=self.name,
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


class _EndRun(Exception):  # noqa: N818 - control flow, not an error
    def __init__(self, text: str) -> None:
        self.text = text


_MACHINE_START = "{[<`"


def _looks_like_machine_text(text: str) -> bool:
    """A tool call, JSON or markup rather than words for a person (or no words at all)."""
    return looks_like_call(text) or not re.search(r"\w", re.sub(r"<[^>]*>|\{.*?\}", " ", text))


def _tool_note(call: ToolCall, tr: ToolResult) -> str:
    """What a tool call did, in words, for the reply prompt."""
    what = call.name.replace("_", " ")
    if tr.ok:
        return f"(The {what} tool ran. Result: {value_in_words(tr.value) or 'done'}. Tell me about it in one short sentence.)"
    return f"(The {what} tool failed: {tr.error}. Tell me in one short sentence.)"


def _fallback_reply(tr: ToolResult) -> str:
    """The reply when the model's words after a tool call are unusable."""
    if tr.ok and isinstance(tr.value, str) and tr.value.strip() and not _looks_like_machine_text(tr.value.strip()):
        return value_in_words(tr.value)
    return "Done." if tr.ok else "Sorry, I could not do that."


def _handoff_tool(tool_name: str, agent: Any) -> Tool:
    desc = getattr(agent, "description", "") or f"the {agent.name} agent"

    def handoff(reason: str = "") -> str:
        return agent.name

    return build_tool(handoff, name=tool_name, description=f"Hand the conversation to {agent.name}: {desc}")
