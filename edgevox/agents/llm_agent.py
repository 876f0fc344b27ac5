"""``LLMAgent``: an LLM that answers, calls tools, starts skills and hands off - and, with no
tools, the plain chat agent that drives the voice loop by default. (Over 400 lines because one
run's steps, decided in one loop, read best in one place; tool calls and replies are split out.)

One run (on the caller's thread)::

    for hop in 0..max_tool_hops:
        decision = decoder.decide(...)          # schema fast path / grammar-constrained LLM
        if no call: break                       # (no tools: no decision at all)
        run the calls in order (tool_calls.py): a tool runs inline; a skill starts a goal
        and returns at once; handoff_to_<agent> runs that agent in ctx.child(...) and ends
        if speak_tool_results and the tools returned text: that text is the reply; stop
        if a handoff_conversation was accepted: no more decisions (same turn: end, the target answers)
    stream the reply from the LLM token by token (ReplyDelta events)

Memory is the one conversation memory of :mod:`edgevox.agents.memory` (``ctx.memory``
if the runtime shares one, else the agent's own): one bounded history per
``ctx.session_id``, trimmed in blocks so the llama.cpp prompt cache keeps the system
prompt and history evaluated between turns (:meth:`LLMAgent.warmup` fills it before the
first user speaks). An exchange is stored when the run ended, was cancelled or was cut
off by its consumer (a barge-in closes the stream), never when it failed; after a
barge-in the voice loop calls :meth:`LLMAgent.truncate_reply` with what was actually
spoken.

Speculation: the voice loop may start a run on a speculative transcript. What it
publishes is held and every action (tool, skill, memory, clarification) waits for
``ctx.may_act()``: a discarded guess leaves nothing behind.

Cancellation: the run's token (a child of ``ctx.cancel_token``) is passed to every
LLM call, so a cancel stops generation between tokens; skills started by the run
hold tokens below it, so the same cancel stops them mid-flight. ``ctx.llm_lock``,
if set, is held around each LLM call (one inference at a time across agents).

Every step is published on ``ctx.bus`` as the typed events of ``events.py`` and
yielded from :meth:`LLMAgent.stream` in the same order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any

from edgevox.agents.base import CONTEXT_PREFIX, AgentBase, AgentResult, AgentStream
from edgevox.agents.decoders import (
    DECLINED_REPLY,
    GARBLED_CALL_REPLY,
    Clarifications,
    Decision,
    DecisionRequest,
    PendingCall,
    SchemaFirstDecoder,
    ToolDecoder,
)
from edgevox.agents.events import AgentReply, AgentStarted, ReplyDelta
from edgevox.agents.hooks import HookPoint, run_hooks
from edgevox.agents.memory import MemoryStore, clean_turn_text
from edgevox.agents.parsing import spoken_text
from edgevox.agents.reply import stream_reply
from edgevox.agents.skills import Skill, SkillExecutor
from edgevox.agents.tool_calls import (
    DEFAULT_MAX_HANDOFFS_PER_TURN,
    ToolLimits,
    check_max_handoffs,
    collect_tools,
    kind_of,
    listed,
    run_calls,
)
from edgevox.agents.tools import Tool
from edgevox.errors import AgentError, ArgumentError, EdgeVoxError
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

DEFAULT_SYSTEM_PROMPT = (
    "You are EdgeVox, a friendly voice assistant running on a robot. "
    "Answer in one or two short spoken sentences. Use plain words: no lists, no markdown, no emoji."
)

DEFAULT_MAX_TURNS = 8
"""Exchanges an agent's own memory keeps (then halved in one block; see ``memory.py``)."""


class LLMAgent(AgentBase):
    """An agent over an :class:`~edgevox.engines.base.LLM`; with no tools, a chat agent.

    Args:
        name: Agent name (event ``source``, handoff tool suffix).
        instructions: System prompt (default :data:`DEFAULT_SYSTEM_PROMPT`; ``""`` for none).
        tools: ``@tool`` objects (or plain functions, wrapped with ``build_tool``); None = none.
        skills: ``@skill`` objects (``tools`` may also contain skills).
        handoffs: Agents this one may hand the conversation to (``handoff_to_<name>`` tools).
        hooks: :class:`~edgevox.agents.hooks.Hook` objects (``ctx.hooks`` are added per run).
        llm: The engine. Required to generate replies or when the schema fast path is unsure.
        max_tool_hops: Tool calls per run before the agent must answer.
        memory: A :class:`MemoryStore` (default: a private one with a 1024-token budget and
            :data:`DEFAULT_MAX_TURNS` exchanges per session).
        few_shot: ``(utterance, None)`` examples answered in words (tools carry their own).
        decoder: How the next step is decided (default :class:`SchemaFirstDecoder`).
        speak_tool_results: If a tool returns a string, that is the reply (no LLM hop).
        reply_max_tokens: Budget of the final reply.
        temperature: Sampling temperature of the reply (decisions are always greedy).
        executor: Runs skills; default a private 2-worker pool closed by :meth:`close`.
        description: One line saying what the agent does (shown to routers and handoffs).
        tool_timeout_s: Deadline of one tool call unless the tool sets its own
            (``@tool(timeout_s=...)``); a call past it is reported and its late result discarded.
        deps: Merged into ``ctx.deps`` for this agent's tools (a mapping).
        limits: ``{"max_tool_calls_per_turn": n, "max_total_tool_calls": n}`` (supyagent's; or a
            ``ToolLimits``): a call over one is refused and the model reads why.
        max_handoffs_per_turn: Handoffs one user turn may make, counted over every agent that
            had it (1 to 32); a ``handoff_to_<name>`` call past it ends the turn with an apology
            (``orchestration.handoff.max_handoffs_per_turn``).
    """

    supports_speculation = True
    """The voice loop may start this agent on a speculative transcript: what it publishes is
    held and every action (tool, skill, memory, clarification) waits for the commit."""

    def __init__(
        self,
        name: str,
        instructions: str | None = None,
        tools: Iterable[Any] | None = (),
        skills: Iterable[Skill] | None = (),
        handoffs: Iterable[Any] | None = (),
        hooks: Iterable[Any] | None = (),
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
        temperature: float = 0.0,
        deps: Mapping[str, Any] | None = None,
        limits: ToolLimits | Mapping[str, Any] | None = None,
        max_handoffs_per_turn: int = DEFAULT_MAX_HANDOFFS_PER_TURN,
    ) -> None:
        self.name = name
        self.instructions = DEFAULT_SYSTEM_PROMPT if instructions is None else instructions
        self.description = description or (instructions or "")[:120]
        self.llm = llm
        self.max_tool_hops = max_tool_hops
        self.hooks = tuple(listed(name, "hooks", hooks))
        self.memory = memory or MemoryStore(1024, getattr(llm, "count_tokens", None), max_turns=DEFAULT_MAX_TURNS)
        self.few_shot = tuple(few_shot)
        self.decoder: ToolDecoder = decoder or SchemaFirstDecoder()
        self.speak_tool_results = speak_tool_results
        self.reply_max_tokens = reply_max_tokens
        self.temperature = temperature
        if tool_timeout_s is not None and not 0 < tool_timeout_s < 86400:
            raise ArgumentError(f"agent {name!r}: tool_timeout_s = {tool_timeout_s}: must be > 0 and < 86400 seconds")
        self.tool_timeout_s = tool_timeout_s
        if deps is not None and not isinstance(deps, Mapping):
            raise TypeError(f"agent {name!r}: deps must be a mapping (a dict of name -> object), got {kind_of(deps)}")
        self.deps: dict[str, Any] = dict(deps or {})
        """Merged into ``ctx.deps`` for this agent's tools."""
        self.limits = ToolLimits.of(name, limits)
        self.max_handoffs_per_turn = check_max_handoffs(max_handoffs_per_turn, f"agent {name!r}: max_handoffs_per_turn")
        self._executor = executor
        self._owns_executor = executor is None
        self._executor_lock = threading.Lock()
        self._clarifications = Clarifications()
        self.tools, self.skills, self.handoffs = collect_tools(name, tools, skills, handoffs)
        self._by_name = {t.name: t for t in self.tools}

    # -- public --------------------------------------------------------------------------

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return AgentStream(self._run(task, ctx or AgentContext()))

    def pending_question(self, session_id: str) -> PendingCall | None:
        """The call a question asked in ``session_id`` proposes, until it is answered or expires."""
        return self._clarifications.pending(session_id)

    def decide(self, task: str, ctx: AgentContext | None = None) -> Decision:
        """Only the first decision for ``task`` (no tool runs, no reply): used by evaluations."""
        ctx = ctx or AgentContext()
        messages = self._prompt(task, ctx)
        return self.decoder.decide(self._request(task, messages, ctx, 0))

    def warmup(self) -> None:
        """Evaluate the system prompt once, so the first turn finds it in the LLM's prompt cache."""
        warm = getattr(self.llm, "warmup", None)
        if callable(warm):  # LlamaCppLLM.warmup(system_prompt) evaluates it into the KV cache
            warm(self.instructions)
            return
        if self.llm is not None:  # any engine: one token of a prompt that starts the same way
            pieces = self.llm.stream(self._prompt("Hi", AgentContext()), max_tokens=1)
            next(iter(pieces), None)
            _close(pieces)

    def history(self, session_id: str = "default") -> list[dict[str, Any]]:
        """The remembered messages of ``session_id`` in the agent's own memory."""
        return self.memory.history(session_id)

    def truncate_reply(self, ctx: AgentContext, spoken_text: str) -> None:
        """After a barge-in or stop: the reply this ``ctx``'s run stored becomes what was
        actually spoken (removed if nothing was heard). Called by the voice loop."""
        self.memory_for(ctx).truncate_reply(ctx.session_id, spoken_text, owner=ctx)

    def tool(self, name: str, ctx: AgentContext | None = None) -> Tool | None:
        """The tool called ``name`` in a run with ``ctx`` (its per-run ``ctx.tools`` first)."""
        if ctx is not None:
            for t in ctx.tools:
                if t.name == name:
                    return t
        return self._by_name.get(name)

    def tools_for(self, ctx: AgentContext) -> list[Tool]:
        """The tools offered in a run with ``ctx``: the agent's own, with the per-run tools an
        orchestration gives (``ctx.tools``) added, replacing the agent's tool of the same name."""
        if not ctx.tools:
            return self.tools
        given = {t.name for t in ctx.tools}
        return [t for t in self.tools if t.name not in given] + list(ctx.tools)

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

    def memory_for(self, ctx: AgentContext) -> MemoryStore:
        return ctx.memory if isinstance(ctx.memory, MemoryStore) else self.memory

    def hooks_for(self, ctx: AgentContext) -> tuple[Any, ...]:
        return (*self.hooks, *ctx.hooks)

    # -- the run -------------------------------------------------------------------------

    def _run(self, task: str, outer: AgentContext) -> Generator[Event, None, AgentResult]:
        task = clean_turn_text(task)  # lone surrogates from non-UTF-8 input would fail every later turn
        if not isinstance(outer.deps, Mapping):
            raise TypeError(f"agent {self.name!r}: ctx.deps must be a mapping, got {kind_of(outer.deps)}")
        ctx = outer.child(agent_name=self.name, deps={**outer.deps, **self.deps}, tools=outer.tools)
        result = AgentResult(agent=self.name)
        try:
            yield from self._steps(task, ctx, result)
        except _EndRun as end:  # an after_llm hook ended the run
            yield from self.emit_text(end.text, ctx, result)
        except EdgeVoxError as exc:
            if ctx.cancelled:
                result.cancelled = True
            else:
                result.ok, result.error = False, str(exc)
        except GeneratorExit:  # the consumer stopped reading (barge-in, stop): what was said happened
            result.cancelled = True
            self._remember(task, result, ctx, outer)
            raise
        finally:
            # The run's token stays linked to the caller's while its skills run (so a stop
            # reaches them), and is unlinked when the last one finishes (parents never grow).
            skills = list(result.skills)
            if not skills:
                ctx.cancel_token.detach()

            def unlink_when_all_done(_h: Any) -> None:
                if all(g.done for g in skills):
                    ctx.cancel_token.detach()

            for h in skills:
                h.add_done_callback(unlink_when_all_done)
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
        self._remember(task, result, ctx, outer)
        return result

    def _remember(self, task: str, result: AgentResult, ctx: AgentContext, outer: AgentContext) -> None:
        """Store the exchange unless the run failed, handed off (the target stores it) or ran
        on a guess that was discarded. ``outer`` is what ``truncate_reply`` will be given."""
        if not result.ok or result.handoff is not None or not ctx.may_act():
            return
        turn = [{"role": "user", "content": task}]
        if result.text.strip():
            turn.append({"role": "assistant", "content": result.text.strip()})
        self.memory_for(ctx).add_turn(ctx.session_id, turn, owner=outer)

    def _steps(self, task: str, ctx: AgentContext, result: AgentResult) -> Generator[Event, None, None]:
        started = AgentStarted(agent=self.name, task=task)
        ctx.publish(started)
        yield started
        messages = self._prompt(task, ctx)
        # Clarifications: a question asked last turn is answered by this one ("yes" runs the
        # proposed call, "no" drops it, a value completes it; anything else is a new turn).
        clarifications = self._clarifications
        if clarifications.pending(ctx.session_id) is not None and not ctx.may_act():
            return  # answering the pending question consumes it: never on a discarded guess
        tools = self.tools_for(ctx)
        answer = clarifications.answer(ctx.session_id, task, tools)
        if answer.kind == "declined":
            result.data["decided_by"] = "clarified"
            yield from self.emit_text(DECLINED_REPLY, ctx, result)
            return
        decide_on = answer.text if answer.kind == "restate" else task  # "turn" + "left, ninety degrees"
        for hop in range(self.max_tool_hops + 1):
            if ctx.cancelled:
                return
            if hop == self.max_tool_hops:
                break  # out of hops: answer in words
            if hop == 0 and answer.call is not None:
                decision = Decision(answer.call, more=answer.more, decided_by="clarified")
            elif not tools:
                break  # a chat agent: straight to the reply, no decision to make
            else:
                decision = self.decoder.decide(self._request(decide_on, messages, ctx, hop))
            result.data.setdefault("decided_by", decision.decided_by)
            if decision.clarify is not None:  # likely but uncertain: ask, never guess
                clarifications.ask(ctx.session_id, decision, decide_on)
                result.data["clarify"] = decision.clarify
                yield from self.emit_text(decision.clarify, ctx, result)
                return
            if decision.call is None:
                if decision.reply is not None:
                    # The one seam between model text and speech: any decoder's words, cleaned.
                    yield from self.emit_text(spoken_text(decision.reply, tools) or GARBLED_CALL_REPLY, ctx, result)
                    return
                break
            if not ctx.may_act():  # decided on a speculative transcript that was discarded
                return
            calls = [decision.call, *decision.more]
            notes = yield from run_calls(self, calls, decision.decided_by, task, ctx, result)
            if notes is None:
                return
            last = messages[-1]
            messages = [*messages[:-1], {**last, "content": "\n".join([last["content"], *notes])}]
            handed = ctx.handoff.pending(ctx.session_id) if ctx.handoff is not None else None
            if handed is not None and handed.timing == "same_turn":
                return  # handed on: the target answers this request now (these words would go unheard)
            if handed is not None:
                break  # handed on from the next turn: a word to the user now, no more tool decisions
        pieces = self._llm_stream(
            messages, ctx, grammar=None, max_tokens=self.reply_max_tokens, temperature=self.temperature
        )
        yield from stream_reply(self, pieces, ctx, result)

    # -- pieces --------------------------------------------------------------------------

    def _prompt(self, task: str, ctx: AgentContext) -> list[dict[str, Any]]:
        memory = self.memory_for(ctx)
        memory.check_turn(task)  # one clear error, not a context-window failure in the LLM
        system = self.instructions
        if ctx.handoff_brief:
            system = f"{system}\n{CONTEXT_PREFIX}{ctx.handoff_brief}".strip()
        sys_msgs = [{"role": "system", "content": system}] if system else []
        return memory.build(ctx.session_id, sys_msgs, [{"role": "user", "content": task}])

    def _request(self, task: str, messages: list[dict[str, Any]], ctx: AgentContext, hop: int) -> DecisionRequest:
        def generate(msgs: list[dict[str, Any]], *, grammar: str | None = None, max_tokens: int = 64) -> str:
            return "".join(self._llm_stream(msgs, ctx, grammar=grammar, max_tokens=max_tokens))

        return DecisionRequest(
            text=task,
            messages=messages,
            tools=self.tools_for(ctx),
            generate=generate,
            instructions=self.instructions,
            hop=hop,
            reply_examples=[u for u, a in self.few_shot if a is None],
        )

    def _llm_stream(
        self,
        messages: list[dict[str, Any]],
        ctx: AgentContext,
        *,
        grammar: str | None,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> Generator[str, None, None]:
        """Pieces of one LLM call, with hooks, the LLM lock and the run's cancel token."""
        ended, value = run_hooks(self.hooks_for(ctx), HookPoint.BEFORE_LLM, messages, ctx)
        if ended:
            yield str(value)
            return
        if self.llm is None:
            raise AgentError(f"agent {self.name!r} needs an LLM for this request; pass llm=...")
        lock = ctx.llm_lock if ctx.llm_lock is not None else contextlib.nullcontext()
        pieces: list[str] = []
        with lock, track(ctx, "generation", self.name, ctx.cancel_token):
            gen = self.llm.stream(
                value, max_tokens=max_tokens, temperature=temperature, grammar=grammar, cancel=ctx.cancel_token
            )
            try:
                for piece in gen:
                    pieces.append(piece)
                    yield piece
            finally:
                _close(gen)
        ended, text = run_hooks(self.hooks_for(ctx), HookPoint.AFTER_LLM, "".join(pieces), ctx)
        if ended:
            raise _EndRun(str(text))

    def emit_text(self, text: str, ctx: AgentContext, result: AgentResult) -> Generator[Event, None, None]:
        """``text`` as the whole reply, in one ``ReplyDelta``."""
        result.text = text
        delta = ReplyDelta(agent=self.name, text=text)
        ctx.publish(delta)
        yield delta


class _EndRun(Exception):  # noqa: N818 - control flow, not an error
    def __init__(self, text: str) -> None:
        self.text = text


def _close(pieces: Any) -> None:
    """Close an engine's stream (a generator; an engine may also return a plain iterator)."""
    close = getattr(pieces, "close", None)
    if close is not None:
        close()
